"""Spans from the real instrumentor packages, made against a scripted OpenAI-compatible server.

``ChatServer`` (tests/providers/wire_server.py underneath: real sockets, real HTTP) answers each
chat-completions request with the next scripted completion, as one JSON body or, when the request
asks for a stream, as server-sent events the way OpenAI sends them. ``instrumented`` runs an
instrumentor on a fresh SDK tracer provider with an in-memory exporter and uninstruments after.
"""

from __future__ import annotations

import json
import sys
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent / "providers"))

from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from wire_server import Reply, WireServer

SYSTEM = "Refunds are allowed within 30 days."
QUESTION = "Refund for order A-1?"
RESULT = {"order_id": "A-1", "age_days": 47}


def completion(content: str | None = None, calls: list[tuple[str, str, dict[str, Any]]] | None = None,
               model: str = "gpt-test") -> dict[str, Any]:
    """One chat completion as OpenAI's wire returns it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                                 for i, n, a in calls]
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28}}


def _events(reply: dict[str, Any]) -> list[str]:
    message = reply["choices"][0]["message"]
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": reply["model"]}
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": message["content"] or ""},
                                    "finish_reason": None}]}]
    chunks += [{**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": n, **call}]},
                                     "finish_reason": None}]}
               for n, call in enumerate(message.get("tool_calls") or [])]
    finish = reply["choices"][0]["finish_reason"]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append({**base, "choices": [], "usage": reply["usage"]})
    return [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]


class ChatServer(WireServer):
    """Answers each request with the next scripted completion (streamed when the request asks for a stream); a
    function in the script makes the completion from the request's body."""

    def __init__(self, *script: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        super().__init__()
        self.script = deque(script)

    def next_reply(self) -> Reply:
        if not self.script:
            return super().next_reply()
        reply = self.script.popleft()
        body = self.received[-1].body
        if callable(reply):
            reply = reply(body)
        if isinstance(body, dict) and body.get("stream"):
            return Reply(chunks=_events(reply), content_type="text/event-stream")
        return Reply(body=reply)


def tool_then_answer(answer: str = "DECLINED: the order is 47 days old.") -> ChatServer:
    """A server that asks for lookup_order once, then answers."""
    return ChatServer(completion(calls=[("call_1", "lookup_order", {"order_id": "A-1"})]), completion(answer))


@contextmanager
def instrumented(instrumentor: Any, limits: SpanLimits | None = None) -> Iterator[InMemorySpanExporter]:
    """``instrumentor`` instrumenting a fresh tracer provider (with the SDK's span ``limits``); yields its in-memory
    exporter, uninstruments after."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=limits)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        instrumentor.uninstrument()


def wire_messages(recording: Any, exchange: Any) -> list[tuple[Any, ...]]:
    """A recorded request's messages as OpenAI's wire carries them: (role, text, tool call ids, answered id)."""
    sent = [("system", exchange.system, (), None)] if exchange.system else []
    for message in recording.request_messages(exchange):
        calls = tuple(c["id"] for c in message.get("tool_calls") or ())
        sent.append((message["role"], message.get("content") or None, calls, message.get("tool_call_id")))
    return sent


def received_messages(body: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The messages a request's body carried, as :func:`wire_messages` writes a recorded one's."""
    return [(m["role"], m.get("content") or None, tuple(c["id"] for c in m.get("tool_calls") or ()),
             m.get("tool_call_id")) for m in body["messages"]]
