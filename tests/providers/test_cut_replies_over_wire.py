"""A reply the server cut short is sent again, while none of its text has reached the run.

llama.cpp's stock Python server ends a reply it interrupts with ``[DONE]`` alone and drops
the connection; other servers drop connections under load. Such a reply is retried inside
the wire like a 429 (bounded by ``max_retries``), each attempt read by a fresh stream parser,
unless streamed text was already handed to the run's ``on_token``: text shown live is never
shown twice, so that cut is raised and the run is what is tried again.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_cases import make_request
from wire_server import Reply, WireServer, stream_reply

from footprint_lab import Agent
from footprint_lab.providers.errors import ProviderResponseError

ANSWER = "The sum is 5."
FIXTURE = {"openai": "openai_stream_text.sse", "anthropic": "anthropic_stream_text.sse",
           "ollama": "ollama_stream_text.ndjson"}
#: How many events of each fixture come before its first text delta.
BEFORE_TEXT = {"openai": 1, "anthropic": 3, "ollama": 0}


def done_alone() -> Reply:
    """How llama.cpp's stock server ends a reply it interrupted: ``[DONE]`` and nothing else."""
    return Reply(chunks=["data: [DONE]\n\n"], content_type="text/event-stream")


def cut_before_text(kind: str, *, socket_closed: bool) -> Reply:
    whole = stream_reply(FIXTURE[kind])
    assert whole.chunks is not None
    return Reply(chunks=whole.chunks[:BEFORE_TEXT[kind]], content_type=whole.content_type, cut=socket_closed)


@pytest.mark.parametrize("kind", ["openai", "anthropic", "ollama"])
@pytest.mark.parametrize("socket_closed", [True, False], ids=["socket-closed", "body-ended"])
async def test_a_stream_cut_before_any_text_is_sent_again_and_the_run_gets_the_whole_answer(
    build: Any, server: WireServer, kind: str, socket_closed: bool,
) -> None:
    server.queue(cut_before_text(kind, socket_closed=socket_closed), stream_reply(FIXTURE[kind]))
    run = await Agent(provider=build(kind)).run("What is 2+3?")
    assert run.answer == ANSWER and len(server.received) == 2
    assert server.received[0].body == server.received[1].body  # the same request, sent again
    wire = run.recording.exchanges[0].wire
    assert wire is not None and wire["attempts"] == 2
    streamed = "".join(e.payload["text"] for e in run.recording.events if e.type == "token")
    assert streamed == ANSWER  # the run saw the answer once, from the attempt that finished


async def test_the_stock_llama_cpp_cut_done_alone_is_sent_again(build: Any, server: WireServer) -> None:
    server.queue(done_alone(), done_alone(), stream_reply(FIXTURE["openai"]))
    tokens: list[str] = []
    reply = await build("openai").complete(make_request(), tokens.append)
    assert reply.content == ANSWER and "".join(tokens) == ANSWER
    assert reply.wire is not None and reply.wire["attempts"] == 3 and len(server.received) == 3


async def test_a_whole_reply_whose_connection_closed_mid_body_is_sent_again(build: Any, server: WireServer) -> None:
    server.queue(Reply(chunks=['{"id": "chatcmpl-1", "choi'], cut=True),
                 Reply(body={"id": "c", "object": "chat.completion", "model": "m", "choices": [
                     {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ANSWER}}]}))
    reply = await build("openai", stream=False).complete(make_request())
    assert reply.content == ANSWER and len(server.received) == 2


@pytest.mark.parametrize("kind", ["openai", "anthropic", "ollama"])
async def test_a_cut_after_text_reached_the_run_is_not_sent_again(build: Any, server: WireServer,
                                                                  kind: str) -> None:
    whole = stream_reply(FIXTURE[kind])
    assert whole.chunks is not None
    server.queue(Reply(chunks=whole.chunks[:-3], content_type=whole.content_type), stream_reply(FIXTURE[kind]))
    tokens: list[str] = []
    with pytest.raises(ProviderResponseError) as caught:
        await build(kind).complete(make_request(), tokens.append)
    assert len(server.received) == 1  # the whole reply queued next was never asked for
    assert tokens and ANSWER.startswith("".join(tokens))  # shown once, as far as it got
    assert caught.value.retryable is True and caught.value.wire is not None
    assert caught.value.wire["attempts"] == 1


async def test_without_a_token_callback_a_cut_after_text_is_sent_again_and_read_afresh(
    build: Any, server: WireServer,
) -> None:
    # Nothing was shown, so nothing can be shown twice; the second attempt's parser starts empty
    # (the first one's partial text would otherwise lead the answer).
    whole = stream_reply(FIXTURE["openai"])
    assert whole.chunks is not None
    server.queue(Reply(chunks=whole.chunks[:-3], content_type=whole.content_type, cut=True),
                 stream_reply(FIXTURE["openai"]))
    reply = await build("openai").complete(make_request())
    assert reply.content == ANSWER and len(server.received) == 2


@pytest.mark.parametrize("max_retries", [0, 2])
async def test_cut_replies_are_sent_again_at_most_max_retries_times(build: Any, server: WireServer,
                                                                    max_retries: int) -> None:
    server.fallback = done_alone()
    with pytest.raises(ProviderResponseError) as caught:
        await build("openai", max_retries=max_retries).complete(make_request(), [].append)
    error = caught.value
    assert len(server.received) == max_retries + 1
    assert error.retryable is True and "cut short" in error.missing
    assert error.wire is not None and error.wire["attempts"] == max_retries + 1
    assert ("the last of 3 attempts" in str(error)) is (max_retries == 2)


async def test_a_model_reply_that_cannot_be_read_is_still_not_sent_again(build: Any, server: WireServer) -> None:
    # Only a cut is retried in the wire: broken tool-call JSON is the model's answer, not the server's fault.
    broken = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {
        "name": "add", "arguments": '{"a": 2,'}}]}, "finish_reason": "tool_calls"}]}
    server.queue(Reply(chunks=[f"data: {json.dumps(broken)}\n\n", "data: [DONE]\n\n"],
                       content_type="text/event-stream"), stream_reply(FIXTURE["openai"]))
    with pytest.raises(ProviderResponseError) as caught:
        await build("openai").complete(make_request())
    assert "tool 'add'" in caught.value.missing and len(server.received) == 1
