"""The OpenAI Chat Completions wire, spoken by OpenAI and every OpenAI-compatible server.

``base_url`` is all that changes between OpenAI and Ollama's ``/v1``, llama.cpp's
``llama-server``, vLLM, LM Studio, Together or Groq. The system prompt is the first
message; tools go out as ``{"type": "function", ...}``; an assistant turn carries its
``tool_calls`` with JSON-string arguments (and ``content: ""`` when it said nothing: llama.cpp's
Python server refuses ``null``) and each tool result is a ``role: tool`` message.

A streamed reply arrives as ``chat.completion.chunk`` events: text deltas, and tool-call
deltas that carry their ``index`` (the id and name first, the argument JSON in pieces), so
calls are assembled by index, never by arrival order. ``stream_options.include_usage``
asks for a last chunk with the token counts; ``data: [DONE]`` closes the stream.

A stream is whole only when a chunk says why the reply stopped (``finish_reason``):
llama.cpp's Python server, interrupted by another request, ends a reply it cut short with
``[DONE]`` alone, and that reply is refused as cut rather than taken as the model's answer
(the wire sends it again while none of its text has reached the run).
A server that reports no token counts (the same server ignores ``include_usage``) leaves
the call's usage estimated, and marked so, rather than recorded as zero. A stream with no
event at all is a server that failed after its 200 (that same server does so for a
conversation over its window, or a streamed reply that may call a tool): it is refused as
such, not retryable, since the same request fails the same way.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Unpack

from footprint_lab.providers._base import HttpProvider, Settings, built, call_id, function_tools, stop_reason
from footprint_lab.providers._wire_format import Missing, ServerError, parse_args, require
from footprint_lab.providers.failures import Hints
from footprint_lab.providers.types import (
    LLMRequest,
    LLMResponse,
    TokenCallback,
    TokenChoice,
    ToolCall,
    Usage,
    estimated_usage,
    token_choices,
)


class OpenAIProvider(HttpProvider):
    """Chat Completions over httpx. Build it with :func:`openai`."""

    name: ClassVar[str] = "openai"
    key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    base_url_env: ClassVar[str | None] = "OPENAI_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    path: ClassVar[str] = "/chat/completions"

    def hints(self) -> Hints:
        return Hints(
            env_var=self.key_env,
            model_fix="Check the model name against the models the key can use (GET /models); a local "
                      "OpenAI-compatible server only knows the names it was started with.",
            endpoint_fix="An OpenAI-compatible server's base_url usually ends in /v1 (Ollama: "
                         "http://localhost:11434/v1, llama-server: http://localhost:8080/v1).",
            unreachable_fix="Check base_url; a local server has to be started first (for example `ollama serve`, "
                            "`llama-server -m model.gguf` or `vllm serve`).",
        )

    def encode(self, request: LLMRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend(_message(m) for m in request.messages)
        body: dict[str, Any] = {"model": request.model or self.model, "messages": messages}
        if request.tools:
            body["tools"] = function_tools(request.tools)
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = self.logprobs
        body.update(self.options)
        body.update(request.options)
        if request.seed is not None:  # a rerun's own seed wins over a fixed one in options: reruns must differ
            body["seed"] = request.seed
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def decode(self, payload: Any, request: LLMRequest) -> LLMResponse:
        if isinstance(payload, dict) and "error" in payload:
            raise ServerError(payload)
        choice = require(payload, "choices", 0)
        message = require(payload, "choices", 0, "message")
        calls = [
            ToolCall(id=raw.get("id") or call_id(request, k), name=(name := require(raw, "function", "name")),
                     args=parse_args(raw["function"].get("arguments"), name))
            for k, raw in enumerate(message.get("tool_calls") or ())
        ]
        logprobs = choice.get("logprobs")
        reply = LLMResponse(
            content=message.get("content"), tool_calls=calls,
            stop_reason=stop_reason(choice.get("finish_reason"), bool(calls)), model=payload.get("model"),
            logprobs=token_choices(logprobs.get("content")) if isinstance(logprobs, dict) else None,
        )
        reply.usage = _usage(payload.get("usage"), request, reply)
        return reply

    def parser(self, request: LLMRequest, on_token: TokenCallback | None) -> _Stream:
        return _Stream(request, on_token)


class _Stream:
    """Assembles ``chat.completion.chunk`` events; tool calls by their ``index``."""

    __slots__ = ("calls", "done", "events", "finish_reason", "logprobs", "model", "on_token", "request", "text",
                 "usage")

    def __init__(self, request: LLMRequest, on_token: TokenCallback | None) -> None:
        self.request = request
        self.on_token = on_token
        self.text: list[str] = []
        self.calls: dict[int, list[Any]] = {}  # index -> [id, name, argument pieces]
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.done = False
        self.events = 0
        self.logprobs: list[TokenChoice] | None = None

    def feed(self, event: str | None, data: Any) -> None:
        self.events += 1
        if data == "[DONE]":
            self.done = True
            return
        if not isinstance(data, dict):
            raise Missing("a JSON object in a stream event")
        if "error" in data:
            raise ServerError(data)
        self.model = data.get("model") or self.model
        if data.get("usage"):
            self.usage = data["usage"]
        for choice in data.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if text:
                self.text.append(text)
                if self.on_token is not None:
                    self.on_token(text)
            logprobs = choice.get("logprobs")
            if isinstance(logprobs, dict) and logprobs.get("content"):
                self.logprobs = self.logprobs if self.logprobs is not None else []
                self.logprobs.extend(token_choices(logprobs["content"]))
            for piece in delta.get("tool_calls") or ():
                slot = self.calls.setdefault(piece.get("index", 0), [None, None, []])
                slot[0] = slot[0] or piece.get("id")
                function = piece.get("function") or {}
                slot[1] = slot[1] or function.get("name")
                if function.get("arguments"):
                    slot[2].append(function["arguments"])
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def finish(self) -> LLMResponse:
        if not self.events:  # a 200 and then nothing: the server failed once it had answered
            raise Missing("any event (the server ended the stream without sending one)",
                          fix="A server that fails once it has answered 200 does this (llama.cpp's Python server "
                              "does, for a conversation over its context window or a streamed reply that may call "
                              "a tool), and the same request fails the same way: the server's log says why, and "
                              "with stream=False the server can answer with its error.")
        if self.finish_reason is None:
            ended = "with [DONE] " if self.done else ""
            raise Missing(f"a finish_reason (the stream ended {ended}before any chunk said why the reply stopped: "
                          "the reply was cut short)", cut=True)
        calls = []
        for k, index in enumerate(sorted(self.calls)):
            sent_id, name, pieces = self.calls[index]
            if not name:
                raise Missing(f"the function name of streamed tool call {index}")
            calls.append(ToolCall(id=sent_id or call_id(self.request, k), name=name,
                                  args=parse_args("".join(pieces), name)))
        reply = LLMResponse(
            content="".join(self.text) if self.text or not calls else None, tool_calls=calls,
            stop_reason=stop_reason(self.finish_reason, bool(calls)), model=self.model, logprobs=self.logprobs,
        )
        reply.usage = _usage(self.usage, self.request, reply)
        return reply


def _message(message: dict[str, Any]) -> dict[str, Any]:
    role = message["role"]
    if role == "tool":
        return {"role": "tool", "tool_call_id": message["tool_call_id"], "content": message.get("content") or ""}
    out: dict[str, Any] = {"role": role, "content": message.get("content")}
    if message.get("tool_calls"):
        # A turn of calls that said nothing goes as "": llama.cpp's Python server refuses null and
        # its function-calling template fails on a missing content; OpenAI takes either.
        out["content"] = out["content"] or ""
        out["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c["args"], ensure_ascii=False)}}
            for c in message["tool_calls"]
        ]
    return out


def _usage(raw: Any, request: LLMRequest, reply: LLMResponse) -> Usage:
    """The token counts the server reported; estimated (and marked so) when it reported none."""
    if not isinstance(raw, dict):
        return estimated_usage(request, reply)
    details = raw.get("prompt_tokens_details") or {}
    return Usage(input_tokens=raw.get("prompt_tokens") or 0, output_tokens=raw.get("completion_tokens") or 0,
                 cache_read_tokens=details.get("cached_tokens") or 0)


def openai(model: str | None = None, /, **settings: Unpack[Settings]) -> OpenAIProvider:
    """A provider for OpenAI's Chat Completions or any OpenAI-compatible server.

    ``openai("gpt-4o-mini")`` reads the key from ``OPENAI_API_KEY``;
    ``openai("llama3.2", base_url="http://localhost:11434/v1")`` talks to a local server
    (no key needed when ``base_url`` is given). The other settings are those of
    :class:`~footprint_lab.providers._base.HttpProvider`.
    """
    return built(OpenAIProvider, model, settings)
