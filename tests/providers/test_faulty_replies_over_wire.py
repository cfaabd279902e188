"""Replies a server should never send, on every wire, against a real local server (issue 46).

A reply of the wrong shape, nested too deep, kept alive without end or too long fails the call
as a typed provider failure (a ``RunFailure``) that says what was wrong without quoting the
reply, and the run keeps the failed call; none escapes as a raw ``AttributeError``,
``RecursionError`` or a hang.

Reaches providers._base and ._wire_format for the reply-size default and the wrong-shape message, which have
no public name.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from provider_cases import make_request
from wire_server import Reply, WireServer, json_reply, stream_reply

from footprint_lab import Agent, RunFailure
from footprint_lab.providers._base import DEFAULT_MAX_REPLY_BYTES
from footprint_lab.providers._wire_format import WRONG_SHAPE
from footprint_lab.providers.errors import (
    ProviderConfigError,
    ProviderResponseError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)

KINDS = ("openai", "anthropic", "ollama")
#: A string that stands for the reply's own content: it must never appear in an error message.
MARK = "MARK-7d1e-reply-content"
STREAM_FIXTURE = {"openai": "openai_stream_text.sse", "anthropic": "anthropic_stream_text.sse",
                  "ollama": "ollama_stream_text.ndjson"}

#: One event of each wire's stream with a value of the wrong kind, at several depths, objects and lists swapped.
WRONG_EVENTS: dict[str, list[Any]] = {
    "openai": [
        {"choices": MARK},
        {"choices": [MARK]},
        {"choices": {"0": {"delta": {"content": MARK}}}},
        {"choices": [[{"delta": {"content": MARK}}]]},
        {"choices": [{"index": 0, "delta": MARK}]},
        {"choices": [{"index": 0, "delta": {"content": 7}}]},
        {"choices": [{"index": 0, "delta": {"content": [MARK]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": {"index": 0, "id": MARK}}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": MARK}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": [0], "function": {"name": MARK}}]}}]},
    ],
    "anthropic": [
        {"type": "content_block_delta", "index": 0, "delta": MARK},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 7}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": {"t": MARK}}},
        {"type": "content_block_delta", "index": [0], "delta": {"type": "text_delta", "text": MARK}},
        {"type": "content_block_start", "index": 0, "content_block": [MARK]},
        {"type": "message_start", "message": [MARK]},
        {"type": "message_delta", "delta": MARK, "usage": {}},
        {"type": "message_delta", "delta": {}, "usage": [MARK]},
    ],
    "ollama": [
        {"message": MARK, "done": False},
        {"message": [{"content": MARK}], "done": False},
        {"message": {"role": "assistant", "content": 7}, "done": False},
        {"message": {"role": "assistant", "content": {"text": MARK}}, "done": False},
        {"message": {"role": "assistant", "content": "", "tool_calls": {"function": MARK}}, "done": False},
    ],
}

#: Whole (non-streamed) bodies with a value of the wrong kind.
WRONG_BODIES: dict[str, list[Any]] = {
    "openai": [
        {"choices": [{"index": 0, "message": MARK, "finish_reason": "stop"}]},
        {"choices": [{"index": 0, "message": {"content": "", "tool_calls": {"id": MARK}}, "finish_reason": "stop"}]},
        {"choices": [{"index": 0, "message": {"content": MARK}, "finish_reason": "stop"}],
         "usage": {"prompt_tokens": 1, "prompt_tokens_details": [MARK]}},
    ],
    "anthropic": [
        {"type": "message", "content": MARK},
        {"type": "message", "content": [7, MARK]},
        {"type": "message", "content": {"type": "text", "text": MARK}},
        {"type": "message", "content": [{"type": "text", "text": MARK}], "usage": [MARK]},
    ],
    "ollama": [
        {"model": "llama3.2", "message": [MARK], "done": True},
        {"model": "llama3.2", "message": MARK, "done": True},
    ],
}


def framed(kind: str, event: Any) -> str:
    """``event`` as the wire frames one stream event."""
    data = json.dumps(event)
    if kind == "ollama":
        return data + "\n"
    name = f"event: {event.get('type')}\n" if kind == "anthropic" and isinstance(event, dict) else ""
    return f"{name}data: {data}\n\n"


def with_event(kind: str, event: Any) -> Reply:
    """The wire's good text stream with ``event`` put in after its first event."""
    good = stream_reply(STREAM_FIXTURE[kind])
    assert good.chunks is not None
    return Reply(chunks=[good.chunks[0], framed(kind, event), *good.chunks[1:]], content_type=good.content_type)


def assert_unquoted(error: Exception) -> None:
    assert MARK not in str(error) and "Traceback" not in str(error)


def wrong_cases(table: dict[str, list[Any]]) -> list[Any]:
    return [pytest.param(kind, value, id=f"{kind}-{n}") for kind, values in table.items()
            for n, value in enumerate(values)]


# -- the wrong shape ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "event"), wrong_cases(WRONG_EVENTS))
async def test_a_stream_event_of_the_wrong_shape_is_a_provider_failure(build: Any, server: WireServer, kind: str,
                                                                       event: Any) -> None:
    server.queue(with_event(kind, event))
    tokens: list[str] = []
    with pytest.raises(ProviderResponseError) as caught:
        await build(kind).complete(make_request(), tokens.append)
    error = caught.value
    assert isinstance(error, RunFailure) and error.retryable is False
    assert_unquoted(error)
    assert all(isinstance(token, str) for token in tokens)  # the run is never handed a value that is no text
    assert error.wire is not None and error.wire["response"]["status"] == 200  # the exchange is kept, for who looks


@pytest.mark.parametrize(("kind", "body"), wrong_cases(WRONG_BODIES))
async def test_a_whole_reply_of_the_wrong_shape_is_a_provider_failure(build: Any, server: WireServer, kind: str,
                                                                      body: Any) -> None:
    server.queue(Reply(body=body))
    with pytest.raises(ProviderResponseError) as caught:
        await build(kind, stream=False).complete(make_request())
    assert caught.value.retryable is False
    assert_unquoted(caught.value)


@pytest.mark.parametrize(("kind", "event", "kind_named"), [
    ("openai", {"choices": [{"index": 0, "delta": MARK}]}, "a string"),
    ("anthropic", {"type": "message_delta", "delta": {}, "usage": [MARK]}, "a list"),
    ("ollama", {"message": {"role": "assistant", "content": 7}, "done": False}, "a number"),
])
async def test_the_failure_names_the_kind_of_value_found_never_the_value(build: Any, server: WireServer, kind: str,
                                                                        event: Any, kind_named: str) -> None:
    server.queue(with_event(kind, event))
    with pytest.raises(ProviderResponseError) as caught:
        await build(kind).complete(make_request(), lambda text: None)
    error = caught.value
    assert error.missing == WRONG_SHAPE and error.code == "ERR_PROVIDER_RESPONSE"
    assert f"it held {kind_named} where the wire has another kind of value" in str(error)
    assert "base_url" in str(error)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_run_keeps_the_call_that_failed_on_a_faulty_reply(build: Any, server: WireServer, kind: str) -> None:
    server.queue(with_event(kind, WRONG_EVENTS[kind][0]))
    agent = Agent(provider=build(kind))
    with pytest.raises(ProviderResponseError) as caught:
        await agent.run("What is 2+3?")
    assert isinstance(caught.value, RunFailure)
    run = agent.last_run
    assert run is not None and run.status == "failed"
    assert run.recording.error is not None and run.recording.error["code"] == "ERR_PROVIDER_RESPONSE"
    failed = [step for step in run.recording.steps if step.status == "error"]
    assert [step.stage for step in failed] == ["call-llm"]
    assert MARK not in str(caught.value)


async def test_an_error_raised_by_the_runs_own_token_callback_is_not_taken_for_a_faulty_reply(
    build: Any, server: WireServer,
) -> None:
    server.queue(stream_reply("openai_stream_text.sse"))

    def broken(text: str) -> None:
        raise AttributeError("the listener's own bug")

    with pytest.raises(AttributeError, match="the listener's own bug"):
        await build("openai").complete(make_request(), broken)


# -- nesting -------------------------------------------------------------------------------------------
def nested(depth: int, opening: str) -> str:
    closing = {"[": "]", '{"a":': "}"}[opening]
    return opening * depth + "1" + closing * depth


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("depth", [150, 200_000])
@pytest.mark.parametrize("opening", ["[", '{"a":'], ids=["arrays", "objects"])
async def test_a_whole_reply_nested_too_deep_is_a_provider_failure(build: Any, server: WireServer, kind: str,
                                                                   depth: int, opening: str) -> None:
    server.queue(Reply(body=nested(depth, opening)))
    with pytest.raises(ProviderResponseError) as caught:
        await build(kind, stream=False).complete(make_request())
    error = caught.value
    assert error.missing == "a reply nested at most 100 levels deep" and error.retryable is False
    assert "nests deeper than 100 levels" in str(error)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("depth", [150, 200_000])
async def test_a_stream_event_nested_too_deep_is_a_provider_failure(build: Any, server: WireServer, kind: str,
                                                                    depth: int) -> None:
    deep = '{"a":' + nested(depth, '{"a":') + "}"
    good = stream_reply(STREAM_FIXTURE[kind])
    assert good.chunks is not None
    event = deep + "\n" if kind == "ollama" else f"data: {deep}\n\n"
    server.queue(Reply(chunks=[good.chunks[0], event, *good.chunks[1:]], content_type=good.content_type))
    with pytest.raises(ProviderResponseError) as caught:
        await build(kind).complete(make_request(), lambda text: None)
    assert caught.value.missing == "a reply nested at most 100 levels deep"


async def test_an_error_body_nested_too_deep_still_fails_by_its_status(build: Any, server: WireServer) -> None:
    server.fallback = Reply(status=503, body=nested(200_000, "["))
    with pytest.raises(ProviderUnavailableError) as caught:
        await build("openai", max_retries=1).complete(make_request())
    assert caught.value.status == 503 and caught.value.wire is not None
    assert "nests deeper than 100 levels" in caught.value.wire["response"]["body"]


# -- a reply kept alive without end ------------------------------------------------------------------
KEEP_ALIVE = {"openai": ": keep-alive\n\n", "anthropic": 'event: ping\ndata: {"type": "ping"}\n\n',
              "ollama": "\n"}


@pytest.mark.parametrize("kind", KINDS)
async def test_keep_alives_that_never_end_meet_the_deadline(build: Any, server: WireServer, kind: str) -> None:
    good = stream_reply(STREAM_FIXTURE[kind])
    assert good.chunks is not None
    server.queue(Reply(chunks=[good.chunks[0], *[KEEP_ALIVE[kind]] * 200], delay=0.1,
                       content_type=good.content_type))
    started = time.monotonic()
    with pytest.raises(ProviderTimeoutError) as caught:
        await build(kind, timeout=0.5, deadline=1.0).complete(make_request(), lambda text: None)
    assert time.monotonic() - started < 5  # the silence limit alone never fires: a keep-alive comes every 0.1 s
    error = caught.value
    assert (error.phase, error.timeout, error.retryable) == ("deadline", 1.0, True)
    assert "deadline=" in str(error) and isinstance(error, RunFailure)
    assert len(server.received) == 1


@pytest.mark.parametrize("kind", KINDS)
async def test_a_reply_trickling_in_meets_the_deadline_and_keeps_what_reached_the_run(
    build: Any, server: WireServer, kind: str,
) -> None:
    good = stream_reply(STREAM_FIXTURE[kind])
    assert good.chunks is not None
    server.queue(Reply(chunks=[*good.chunks[:-3]] + [KEEP_ALIVE[kind]] * 200, delay=0.1,
                       content_type=good.content_type))
    tokens: list[str] = []
    with pytest.raises(ProviderTimeoutError) as caught:
        await build(kind, timeout=0.5, deadline=1.0).complete(make_request(), tokens.append)
    assert caught.value.phase == "deadline" and tokens  # the text that came before stays delivered
    assert len(server.received) == 1  # text already shown is never sent for again


async def test_the_deadline_bounds_the_retries_too(build: Any, server: WireServer) -> None:
    server.fallback = Reply(status=503, body={"error": {"message": "busy", "type": "server_error"}},
                            headers={"retry-after": "0.6"})
    started = time.monotonic()
    with pytest.raises(ProviderUnavailableError):
        await build("openai", deadline=1.0, max_retries=10, max_retry_wait=5).complete(make_request())
    assert time.monotonic() - started < 3 and len(server.received) < 5  # 10 retries at 0.6 s would take 6 s


async def test_a_reply_within_the_deadline_is_read_whole(build: Any, server: WireServer) -> None:
    good = stream_reply("openai_stream_text.sse")
    assert good.chunks is not None
    server.queue(Reply(chunks=[good.chunks[0], KEEP_ALIVE["openai"], *good.chunks[1:]], delay=0.05,
                       content_type=good.content_type))
    reply = await build("openai", timeout=0.5, deadline=5.0).complete(make_request())
    assert reply.content == "The sum is 5."


# -- a reply too long ----------------------------------------------------------------------------------
def assert_too_long(error: ProviderResponseError, limit: int) -> None:
    assert error.retryable is False and f"max_reply_bytes ({limit:,} bytes)" in str(error)
    assert "raise max_reply_bytes=" in str(error) and MARK not in str(error)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("framing", ["content-length", "chunked"])
async def test_a_whole_reply_past_the_cap_is_a_provider_failure(build: Any, server: WireServer, kind: str,
                                                                framing: str) -> None:
    reply = json_reply(f"{kind}_reply.json")
    text = json.dumps({**reply.body, "padding": MARK * 200})
    pieces = [text[k:k + 100] for k in range(0, len(text), 100)]
    server.queue(Reply(body=text) if framing == "content-length" else Reply(chunks=pieces))
    with pytest.raises(ProviderResponseError) as caught:
        await build(kind, stream=False, max_reply_bytes=2000).complete(make_request())
    assert_too_long(caught.value, 2000)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", ["one-line", "many-events"])
async def test_a_stream_past_the_cap_is_a_provider_failure(build: Any, server: WireServer, kind: str,
                                                           shape: str) -> None:
    good = stream_reply(STREAM_FIXTURE[kind])
    assert good.chunks is not None
    padding = (MARK * 400) if shape == "one-line" else None  # one line with no end, in one chunk
    extra = [padding] if padding else [good.chunks[1]] * 200
    server.queue(Reply(chunks=[good.chunks[0], *extra, *good.chunks[1:]], content_type=good.content_type))
    with pytest.raises(ProviderResponseError) as caught:
        await build(kind, max_reply_bytes=5000).complete(make_request(), lambda text: None)
    assert_too_long(caught.value, 5000)


async def test_the_default_cap_holds_a_huge_reply_off(build: Any, server: WireServer) -> None:
    huge = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * (20 << 20)},
                                    "finish_reason": "stop"}]})
    server.queue(Reply(body=huge))
    with pytest.raises(ProviderResponseError) as caught:
        await build("openai", stream=False).complete(make_request())
    assert_too_long(caught.value, DEFAULT_MAX_REPLY_BYTES)


async def test_an_error_body_past_the_cap_still_fails_by_its_status(build: Any, server: WireServer) -> None:
    server.queue(Reply(status=400, body=MARK * 1000))
    with pytest.raises(Exception) as caught:
        await build("openai", max_reply_bytes=1000).complete(make_request())
    error = caught.value
    assert getattr(error, "status", None) == 400 and MARK not in json.dumps(getattr(error, "wire", None))


async def test_a_reply_under_the_cap_is_read(build: Any, server: WireServer) -> None:
    server.queue(stream_reply("anthropic_stream_text.sse"))
    reply = await build("anthropic", max_reply_bytes=5000).complete(make_request())
    assert reply.content == "The sum is 5."


@pytest.mark.parametrize(("setting", "value"), [
    ("deadline", 0), ("deadline", "60"), ("deadline", True), ("max_reply_bytes", 0), ("max_reply_bytes", 1.5),
    ("max_reply_bytes", "1MB"), ("max_reply_bytes", None),
])
def test_unusable_deadline_and_cap_are_refused_by_name(setting: str, value: Any) -> None:
    from footprint_lab.providers import openai

    with pytest.raises(ProviderConfigError) as caught:
        openai("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", **{setting: value})
    assert caught.value.setting == setting
