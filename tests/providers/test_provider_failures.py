"""Every way a call can fail, against a real local server: typed, bounded, and naming the fix."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from provider_cases import MODELS, SECRET, make_request
from wire_server import Reply, WireServer, json_reply, stream_reply

from footprint_lab.providers.errors import (
    ContextWindowError,
    ModelNotFoundError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)

KINDS = ("openai", "anthropic", "ollama")
#: Each wire's error body for a given server error type and message.
ERROR_BODIES = {
    "openai": lambda kind, text, code=None: {"error": {"message": text, "type": kind, "param": None, "code": code}},
    "anthropic": lambda kind, text, code=None: {"type": "error", "error": {"type": kind, "message": text},
                                                "request_id": "req_011"},
    "ollama": lambda kind, text, code=None: {"error": text},
}


def error_reply(kind: str, status: int, error_type: str, text: str, code: str | None = None,
                **options: Any) -> Reply:
    return Reply(status=status, body=ERROR_BODIES[kind](error_type, text, code), **options)


async def fail(build: Any, kind: str, **settings: Any) -> ProviderError:
    provider = build(kind, **settings)
    with pytest.raises(ProviderError) as caught:
        await provider.complete(make_request())
    error = caught.value
    assert SECRET not in str(error) and SECRET not in json.dumps(error.wire or {})
    return error


# -- authentication -----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_401_names_the_variable_holding_the_key_never_the_key(build: Any, server: WireServer,
                                                                    kind: str) -> None:
    server.queue(error_reply(kind, 401, "authentication_error", f"Incorrect API key provided: {SECRET}",
                             "invalid_api_key"))
    error = await fail(build, kind)
    assert isinstance(error, ProviderAuthError)
    assert error.code == "ERR_PROVIDER_AUTH" and error.status == 401 and error.retryable is False
    env_var = "OPENAI_API_KEY" if kind == "openai" else "ANTHROPIC_API_KEY"
    assert error.env_var == env_var and env_var in str(error)
    assert len(server.received) == 1  # never retried


async def test_403_says_the_key_may_not_use_this_model(build: Any, server: WireServer) -> None:
    server.queue(error_reply("anthropic", 403, "permission_error", "not allowed"))
    error = await fail(build, "anthropic")
    assert isinstance(error, ProviderAuthError) and error.status == 403
    assert "claude-sonnet-4-5" in str(error) and "permission" in str(error)


# -- not found ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "error_type", "text", "code"), [
    ("openai", "invalid_request_error", "The model `gpt-4o-mini` does not exist", "model_not_found"),
    ("anthropic", "not_found_error", "model: claude-sonnet-4-5", None),
    ("ollama", None, 'model "llama3.2" not found, try pulling it first', None),
])
async def test_404_for_the_model_names_the_model(build: Any, server: WireServer, kind: str, error_type: Any,
                                                 text: str, code: Any) -> None:
    server.queue(error_reply(kind, 404, error_type, text, code))
    error = await fail(build, kind)
    assert isinstance(error, ModelNotFoundError)
    assert error.model == MODELS[kind] and f"'{MODELS[kind]}'" in str(error)
    assert error.retryable is False and len(server.received) == 1
    if kind == "ollama":
        assert "ollama pull llama3.2" in str(error)


@pytest.mark.parametrize("kind", KINDS)
async def test_404_without_a_model_error_points_at_base_url(build: Any, server: WireServer, kind: str) -> None:
    server.queue(Reply(status=404, body="404 page not found", content_type="text/plain"))
    error = await fail(build, kind)
    assert isinstance(error, ProviderRequestError) and error.status == 404
    assert "base_url" in str(error) and error.retryable is False


# -- rate limits --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
async def test_429_is_retried_after_the_wait_the_server_asks_for(build: Any, server: WireServer, kind: str) -> None:
    server.queue(error_reply(kind, 429, "rate_limit_error", "slow down", headers={"retry-after": "0.3"}),
                 json_reply(f"{kind}_reply.json"))
    started = time.monotonic()
    reply = await build(kind, stream=False).complete(make_request())
    assert time.monotonic() - started >= 0.3
    assert reply.content == "Paris is the capital of France."
    assert len(server.received) == 2 and reply.wire is not None and reply.wire["attempts"] == 2


async def test_429_retry_after_ms_is_honoured(build: Any, server: WireServer) -> None:
    server.queue(error_reply("openai", 429, "requests", "slow down", headers={"retry-after-ms": "250"}),
                 json_reply("openai_reply.json"))
    started = time.monotonic()
    await build("openai", stream=False).complete(make_request())
    assert time.monotonic() - started >= 0.25


async def test_429_retries_are_bounded_then_a_clear_error(build: Any, server: WireServer) -> None:
    server.fallback = error_reply("anthropic", 429, "rate_limit_error", "slow down", headers={"retry-after": "0"})
    error = await fail(build, "anthropic", max_retries=2)
    assert isinstance(error, ProviderRateLimitError)
    assert error.attempts == 3 and len(server.received) == 3
    assert error.retryable is True and "max_retries" in str(error)


async def test_a_retry_after_longer_than_max_retry_wait_is_not_waited_for(build: Any, server: WireServer) -> None:
    server.fallback = error_reply("openai", 429, "requests", "slow down", headers={"retry-after": "3600"})
    started = time.monotonic()
    error = await fail(build, "openai", max_retry_wait=5)
    assert time.monotonic() - started < 2
    assert isinstance(error, ProviderRateLimitError) and error.retry_after == 3600
    assert len(server.received) == 1 and "max_retry_wait" in str(error)


async def test_a_spent_quota_is_not_retried_and_not_retryable(build: Any, server: WireServer) -> None:
    server.fallback = error_reply("openai", 429, "insufficient_quota", "You exceeded your quota", "insufficient_quota")
    error = await fail(build, "openai")
    assert isinstance(error, ProviderRateLimitError)
    assert error.retryable is False and len(server.received) == 1 and "OPENAI_API_KEY" in str(error)


# -- failing servers and dropped connections --------------------------------------------------
@pytest.mark.parametrize(("kind", "status", "error_type"), [
    ("openai", 500, "server_error"), ("anthropic", 529, "overloaded_error"), ("ollama", 503, None),
])
async def test_a_server_failure_is_retried_and_can_succeed(build: Any, server: WireServer, kind: str, status: int,
                                                           error_type: Any) -> None:
    server.queue(error_reply(kind, status, error_type, "try later"), stream_reply(f"{kind}_stream_text."
                                                                                  + ("ndjson" if kind == "ollama"
                                                                                     else "sse")))
    reply = await build(kind).complete(make_request())
    assert reply.content == "The sum is 5." and len(server.received) == 2


async def test_a_server_that_keeps_failing_gives_up_after_the_bound(build: Any, server: WireServer) -> None:
    server.fallback = error_reply("openai", 502, "server_error", "bad gateway")
    error = await fail(build, "openai", max_retries=3)
    assert isinstance(error, ProviderUnavailableError)
    assert (error.status, error.attempts, len(server.received)) == (502, 4, 4)
    assert error.retryable is True


async def test_a_connection_reset_before_the_reply_is_retried(build: Any, server: WireServer) -> None:
    server.queue(Reply(drop=True), json_reply("ollama_reply.json"))
    reply = await build("ollama", stream=False).complete(make_request())
    assert reply.content == "Paris is the capital of France." and len(server.received) == 2


async def test_connection_resets_past_the_bound_are_unavailable(build: Any, server: WireServer) -> None:
    server.fallback = Reply(drop=True)
    error = await fail(build, "openai", max_retries=1)
    assert isinstance(error, ProviderUnavailableError)
    assert error.status is None and error.attempts == 2 and "dropped" in str(error)


# -- timeouts and nothing listening ------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
async def test_a_stalled_server_is_a_read_timeout_not_a_hang(build: Any, server: WireServer, kind: str) -> None:
    server.fallback = Reply(stall=True)
    started = time.monotonic()
    error = await fail(build, kind, timeout=0.3)
    assert time.monotonic() - started < 3
    assert isinstance(error, ProviderTimeoutError)
    assert (error.phase, error.timeout, error.retryable) == ("read", 0.3, True)
    assert "read timeout" in str(error) and "timeout=" in str(error)
    assert len(server.received) == 1  # a silent server is not asked again within the call


async def test_a_stream_that_goes_quiet_mid_reply_is_a_read_timeout(build: Any, server: WireServer) -> None:
    whole = stream_reply("openai_stream_text.sse")
    assert whole.chunks is not None
    server.queue(Reply(chunks=whole.chunks, content_type="text/event-stream", stall_after=3))
    tokens: list[str] = []
    with pytest.raises(ProviderTimeoutError) as caught:
        await build("openai", timeout=0.3).complete(make_request(), tokens.append)
    assert caught.value.phase == "read"
    assert tokens == ["The", " sum"]  # what came before the silence reached the run
    assert len(server.received) == 1  # and nothing is sent again once tokens are out


@pytest.fixture
def unanswered_port() -> Iterator[int]:
    """A port whose accept queue is full, so a new connection is never completed."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))  # in progress: the handshake never completes
        fillers.append(filler)
    time.sleep(0.05)
    yield port
    for sock in [*fillers, listener]:
        sock.close()


async def test_connect_timeout_is_named_apart_from_read_timeout(build: Any, unanswered_port: int) -> None:
    started = time.monotonic()
    error = await fail(build, "openai", base_url=f"http://127.0.0.1:{unanswered_port}/v1", connect_timeout=0.2,
                       max_retries=1)
    assert time.monotonic() - started < 3
    assert isinstance(error, ProviderTimeoutError)
    assert (error.phase, error.timeout, error.attempts) == ("connect", 0.2, 2)
    assert "connect timeout" in str(error) and "connect_timeout=" in str(error)


@pytest.fixture
def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


async def test_nothing_listening_for_ollama_says_ollama_serve(build: Any, closed_port: int) -> None:
    started = time.monotonic()
    error = await fail(build, "ollama", base_url=f"http://127.0.0.1:{closed_port}")
    assert time.monotonic() - started < 2
    assert isinstance(error, ProviderConnectionError)
    assert "ollama serve" in str(error) and error.base_url == f"http://127.0.0.1:{closed_port}"
    assert error.code == "ERR_PROVIDER_UNREACHABLE" and error.retryable is True


async def test_nothing_listening_for_a_compatible_server_says_check_base_url(build: Any, closed_port: int) -> None:
    error = await fail(build, "openai", base_url=f"http://user:pw@127.0.0.1:{closed_port}/v1")
    assert isinstance(error, ProviderConnectionError)
    assert "base_url" in str(error) and f"127.0.0.1:{closed_port}/v1" in str(error)
    assert "pw" not in str(error)  # credentials in a URL are never shown


# -- requests the server rejects -----------------------------------------------------------------
@pytest.mark.parametrize(("kind", "status", "error_type", "text", "code"), [
    ("openai", 400, "invalid_request_error",
     "This model's maximum context length is 128000 tokens. However, your messages resulted in 210000 tokens.",
     "context_length_exceeded"),
    ("anthropic", 400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", None),
    ("ollama", 400, None, "the input length of 210000 tokens exceeds the context length", None),
])
async def test_context_window_overflow_is_typed_and_never_retried(build: Any, server: WireServer, kind: str,
                                                                  status: int, error_type: Any, text: str,
                                                                  code: Any) -> None:
    server.fallback = error_reply(kind, status, error_type, text, code)
    error = await fail(build, kind)
    assert isinstance(error, ContextWindowError)
    assert error.model == MODELS[kind] and error.retryable is False
    assert len(server.received) == 1
    assert "210000" not in str(error)  # the server's own text is not quoted
    if kind == "ollama":
        assert "num_ctx" in str(error)


@pytest.mark.parametrize("status", [400, 413, 422])
async def test_a_rejected_request_is_not_retried_and_keeps_the_body_on_wire(build: Any, server: WireServer,
                                                                           status: int) -> None:
    server.fallback = error_reply("openai", status, "invalid_request_error", "Invalid value in USER-DATA-XYZ")
    error = await fail(build, "openai")
    assert isinstance(error, ProviderRequestError)
    assert (error.status, error.error_type, error.retryable) == (status, "invalid_request_error", False)
    assert "USER-DATA-XYZ" not in str(error)
    assert error.wire is not None and "USER-DATA-XYZ" in json.dumps(error.wire["response"]["body"])
    assert len(server.received) == 1


# -- unreadable replies ---------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "body", "missing"), [
    ("openai", {"id": "chatcmpl-1", "object": "chat.completion"}, "choices"),
    ("openai", {"choices": [{"index": 0, "finish_reason": "stop"}]}, "choices.0.message"),
    ("anthropic", {"id": "msg_1", "type": "message", "role": "assistant"}, "content"),
    ("ollama", {"model": "llama3.2", "done": True}, "message"),
    ("ollama", "<html>proxy error page</html>", "message"),
])
async def test_a_body_missing_a_field_names_the_field(build: Any, server: WireServer, kind: str, body: Any,
                                                      missing: str) -> None:
    server.queue(Reply(body=body))
    error = await fail(build, kind, stream=False)
    assert isinstance(error, ProviderResponseError)
    assert error.missing == missing and f"{missing} was missing" in str(error)
    assert error.retryable is False


async def test_unreadable_tool_arguments_name_the_tool(build: Any, server: WireServer) -> None:
    reply = json_reply("openai_tool_call.json")
    reply.body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"a": 2, "b":'
    server.queue(reply)
    error = await fail(build, "openai", stream=False)
    assert isinstance(error, ProviderResponseError)
    assert "tool 'add'" in error.missing and error.retryable is True


@pytest.mark.parametrize(("kind", "fixture", "missing"), [
    ("openai", "openai_stream_text.sse", "finish_reason"),
    ("anthropic", "anthropic_stream_text.sse", "message_stop"),
    ("ollama", "ollama_stream_text.ndjson", '"done": true'),
])
@pytest.mark.parametrize("cut", [True, False], ids=["socket-closed", "body-ended"])
async def test_a_stream_cut_short_is_an_error_naming_what_never_came(build: Any, server: WireServer, kind: str,
                                                                     fixture: str, missing: str, cut: bool) -> None:
    whole = stream_reply(fixture)
    assert whole.chunks is not None
    server.queue(Reply(chunks=whole.chunks[:-3], content_type=whole.content_type, cut=cut))
    tokens: list[str] = []
    with pytest.raises(ProviderResponseError) as caught:
        await build(kind).complete(make_request(), tokens.append)
    error = caught.value
    assert error.retryable is True and len(server.received) == 1
    if cut:
        assert "closed mid-reply" in error.missing
    else:
        assert missing in error.missing
    assert tokens  # what arrived before the cut did reach the run


async def test_an_error_event_mid_stream_is_typed(build: Any, server: WireServer) -> None:
    whole = stream_reply("anthropic_stream_text.sse")
    assert whole.chunks is not None
    error_event = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    overloaded = f"event: error\ndata: {json.dumps(error_event)}\n\n"
    server.queue(Reply(chunks=[*whole.chunks[:4], overloaded], content_type="text/event-stream"))
    error = await fail(build, "anthropic")
    assert isinstance(error, ProviderUnavailableError)
    assert error.retryable is True and "mid-reply" in str(error)


async def test_an_openai_compatible_error_chunk_mid_stream_is_typed(build: Any, server: WireServer) -> None:
    chunk = {"error": {"message": "context overflow: the context size was exceeded", "type": "invalid_request_error",
                       "code": "context_length_exceeded"}}
    server.queue(Reply(chunks=[f"data: {json.dumps(chunk)}\n\n"], content_type="text/event-stream"))
    error = await fail(build, "openai")
    assert isinstance(error, ContextWindowError) and error.status is None


async def test_one_failure_does_not_poison_the_next_call(build: Any, server: WireServer) -> None:
    server.queue(Reply(chunks=['data: {"choices": []}\n\n'], content_type="text/event-stream", cut=True),
                 stream_reply("openai_stream_text.sse"))
    provider = build("openai", max_retries=0)  # the cut is not sent again within the call
    with pytest.raises(ProviderResponseError):
        await provider.complete(make_request())
    reply = await asyncio.wait_for(provider.complete(make_request()), 5)
    assert reply.content == "The sum is 5."


async def test_a_redirect_is_not_followed_and_names_the_address(build: Any, server: WireServer) -> None:
    server.queue(Reply(status=301, body="", content_type="text/html",
                       headers={"location": "https://api.example.test/v1/chat/completions?token=abc"}))
    error = await fail(build, "openai")
    assert isinstance(error, ProviderRequestError) and error.status == 301
    assert "https://api.example.test/v1/chat/completions" in str(error) and "token=abc" not in str(error)
    assert "base_url" in str(error) and len(server.received) == 1


async def test_a_body_that_cannot_be_decoded_is_named(build: Any, server: WireServer) -> None:
    server.queue(Reply(body=b"\x00 not gzip at all", headers={"content-encoding": "gzip"}))
    error = await fail(build, "ollama", stream=False)
    assert isinstance(error, ProviderResponseError)
    assert error.missing == "a decodable body" and error.retryable is True
