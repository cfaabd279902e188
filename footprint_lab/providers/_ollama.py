"""Ollama's native chat wire (``POST /api/chat``), streamed as newline-delimited JSON.

Every line of a streamed reply is one JSON object: ``message.content`` carries a text delta,
``message.tool_calls`` carries whole tool calls (arguments already an object), and the last
line has ``"done": true`` with ``done_reason`` and the token counts ``prompt_eval_count``
(input) and ``eval_count`` (output). A line ``{"error": ...}`` is the server failing
mid-reply. Ollama streams unless told otherwise, so ``stream`` is always sent.

Generation settings (``temperature``, ``num_ctx``, ``seed``...) travel in the request's
``options`` object; ``max_tokens`` becomes ``num_predict``. No key is needed for a local
server; ``OLLAMA_HOST`` (as the ``ollama`` command reads it) or ``base_url`` says where it
listens, ``OLLAMA_API_KEY`` or ``api_key`` is sent as a bearer token when given.
"""

from __future__ import annotations

import os
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
    token_choices,
)


class OllamaProvider(HttpProvider):
    """Ollama's ``/api/chat`` over httpx. Build it with :func:`ollama`."""

    name: ClassVar[str] = "ollama"
    key_env: ClassVar[str | None] = "OLLAMA_API_KEY"
    key_required: ClassVar[bool] = False
    base_url_env: ClassVar[str | None] = "OLLAMA_HOST"
    default_base_url: ClassVar[str] = "http://localhost:11434"
    path: ClassVar[str] = "/api/chat"
    framing: ClassVar[str] = "ndjson"

    def hints(self) -> Hints:
        return Hints(
            env_var=self.key_env,
            model_fix="Download it with `ollama pull {model}`; `ollama list` shows the models installed.",
            endpoint_fix="base_url is the Ollama server's root (http://localhost:11434 by default), without "
                         "/api or /v1.",
            unreachable_fix="Start Ollama with `ollama serve` (or open the Ollama app), or point base_url (or "
                            "OLLAMA_HOST) at the machine where it runs.",
            context_fix=" Ollama sets the window per request: raise num_ctx in options=... if the model allows.",
        )

    def _base_url(self, base_url: str | None) -> str:
        if base_url is None:
            host = os.environ.get("OLLAMA_HOST", "").strip()
            if host and "://" not in host:
                # the ollama command accepts host[:port] without a scheme, and 11434 as the port
                base_url = f"http://{host}" if ":" in host else f"http://{host}:11434"
        return super()._base_url(base_url)

    def encode(self, request: LLMRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend(_message(m) for m in request.messages)
        body: dict[str, Any] = {"model": request.model or self.model, "messages": messages, "stream": self.stream}
        if request.tools:
            body["tools"] = function_tools(request.tools)
        options = {**self.options, **request.options}
        if self.max_tokens is not None:
            options["num_predict"] = self.max_tokens
        if self.logprobs is not None:
            body["logprobs"] = True
            body["top_logprobs"] = self.logprobs
        if request.seed is not None:
            options["seed"] = request.seed
        if options:
            body["options"] = options
        return body

    def decode(self, payload: Any, request: LLMRequest) -> LLMResponse:
        if isinstance(payload, dict) and "error" in payload:
            raise ServerError(payload)
        message = require(payload, "message")
        calls = _calls(message.get("tool_calls") or (), request, 0)
        return LLMResponse(
            content=message.get("content") if message.get("content") or not calls else None, tool_calls=calls,
            usage=_usage(payload), stop_reason=stop_reason(payload.get("done_reason"), bool(calls)),
            model=payload.get("model"), logprobs=token_choices(payload["logprobs"]) if "logprobs" in payload else None,
        )

    def parser(self, request: LLMRequest, on_token: TokenCallback | None) -> _Stream:
        return _Stream(request, on_token)


class _Stream:
    """Assembles NDJSON chat lines until the one marked ``done``."""

    __slots__ = ("calls", "final", "logprobs", "on_token", "request", "text")

    def __init__(self, request: LLMRequest, on_token: TokenCallback | None) -> None:
        self.request = request
        self.on_token = on_token
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.final: dict[str, Any] | None = None
        self.logprobs: list[TokenChoice] | None = None

    def feed(self, event: str | None, data: Any) -> None:
        if not isinstance(data, dict):
            raise Missing("a JSON object on a stream line")
        if "error" in data:
            raise ServerError(data)
        message = data.get("message") or {}
        text = message.get("content")
        if text:
            self.text.append(text)
            if self.on_token is not None:
                self.on_token(text)
        if data.get("logprobs"):
            self.logprobs = self.logprobs if self.logprobs is not None else []
            self.logprobs.extend(token_choices(data["logprobs"]))
        if message.get("tool_calls"):
            self.calls.extend(_calls(message["tool_calls"], self.request, len(self.calls)))
        if data.get("done"):
            self.final = data

    def finish(self) -> LLMResponse:
        if self.final is None:
            raise Missing('the last line ("done": true)', cut=True)
        final = self.final
        return LLMResponse(
            content="".join(self.text) if self.text or not self.calls else None, tool_calls=self.calls,
            usage=_usage(final), stop_reason=stop_reason(final.get("done_reason"), bool(self.calls)),
            model=final.get("model"), logprobs=self.logprobs,
        )


def _calls(raw_calls: Any, request: LLMRequest, start: int) -> list[ToolCall]:
    calls = []
    for k, raw in enumerate(raw_calls, start):
        name = require(raw, "function", "name")
        calls.append(ToolCall(id=raw.get("id") or call_id(request, k), name=name,
                              args=parse_args(raw["function"].get("arguments"), name)))
    return calls


def _message(message: dict[str, Any]) -> dict[str, Any]:
    role = message["role"]
    out: dict[str, Any] = {"role": role, "content": message.get("content") or ""}
    if role == "tool":
        out["tool_name"] = message.get("name") or ""
    elif message.get("tool_calls"):
        out["tool_calls"] = [{"function": {"name": c["name"], "arguments": c["args"]}} for c in message["tool_calls"]]
    return out


def _usage(final: dict[str, Any]) -> Usage:
    return Usage(input_tokens=final.get("prompt_eval_count") or 0, output_tokens=final.get("eval_count") or 0)


def ollama(model: str | None = None, /, **settings: Unpack[Settings]) -> OllamaProvider:
    """A provider for a local (or remote) Ollama server's native chat API.

    ``ollama("llama3.2")`` talks to ``http://localhost:11434`` (or ``OLLAMA_HOST``); no key
    is needed. Pull the model first (``ollama pull llama3.2``). The other settings are those
    of :class:`~footprint_lab.providers._base.HttpProvider`.
    """
    return built(OllamaProvider, model, settings)
