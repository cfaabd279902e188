"""The Anthropic Messages wire (``POST /v1/messages``).

The system prompt is a top-level field, not a message; ``max_tokens`` is always sent (the
API requires it). An assistant turn is a list of content blocks, ``text`` and
``tool_use``; tool results go back as ``tool_result`` blocks in a user turn, and the
results of one batch of calls (consecutive tool turns) share a single user turn, as the
API expects.

A streamed reply is a sequence of server-sent events: ``message_start`` (model, input
usage), then per content block ``content_block_start`` / ``content_block_delta`` (text, or
the tool input's JSON in pieces) / ``content_block_stop``, then ``message_delta`` (stop
reason, final output usage) and ``message_stop``. ``ping`` is ignored; an ``error`` event
becomes a typed error. Usage reports cache reads and writes; ``input_tokens`` here counts
every input token the model read, cached or not, so it means the same on every provider.

The API refuses ``tool_use`` / ``tool_result`` blocks in a request that defines no tools. A
call made with the tools withheld (an agent's last call once its iteration budget is spent)
still carries its earlier tool rounds, so it names the tools those rounds used, with no
schema, and ``tool_choice: none``: the model can only answer in text, as the withheld call
intends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Unpack

from footprint_lab.providers._base import HttpProvider, Settings, built, call_id, stop_reason
from footprint_lab.providers._wire_format import Missing, ServerError, parse_args, require
from footprint_lab.providers.failures import Hints
from footprint_lab.providers.types import LLMRequest, LLMResponse, TokenCallback, ToolCall, Usage

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096


class AnthropicProvider(HttpProvider):
    """Messages API over httpx. Build it with :func:`anthropic`."""

    name: ClassVar[str] = "anthropic"
    key_env: ClassVar[str | None] = "ANTHROPIC_API_KEY"
    has_logprobs: ClassVar[bool] = False
    base_url_env: ClassVar[str | None] = "ANTHROPIC_BASE_URL"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    path: ClassVar[str] = "/v1/messages"
    reserved: ClassVar[frozenset[str]] = HttpProvider.reserved | {"max_tokens"}

    def hints(self) -> Hints:
        return Hints(
            env_var=self.key_env,
            model_fix="Check the model id against the models the key can use (GET /v1/models).",
            endpoint_fix="base_url is the root that /v1/messages is added to (https://api.anthropic.com by "
                         "default); a gateway's base_url must not already end in /v1/messages.",
            unreachable_fix="Check base_url (or ANTHROPIC_BASE_URL), and that the gateway or proxy it names "
                            "is running.",
        )

    def _auth_headers(self, key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if key:
            headers["x-api-key"] = key
        return headers

    def encode(self, request: LLMRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": self.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": _messages(request.messages),
        }
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = [
                {"name": t["name"], "description": t.get("description", ""),
                 "input_schema": t.get("input_schema") or {"type": "object", "properties": {}}}
                for t in request.tools
            ]
        used = [] if request.tools else _tools_used(request.messages)
        if used:
            body["tools"] = [{"name": name, "description": "Not available for this reply.",
                              "input_schema": {"type": "object", "properties": {}}} for name in used]
        body.update(self.options)
        body.update(request.options)
        if used:  # whatever the options say, a call made with its tools withheld cannot call one
            body["tool_choice"] = {"type": "none"}
        if self.stream:
            body["stream"] = True
        return body

    def decode(self, payload: Any, request: LLMRequest) -> LLMResponse:
        if isinstance(payload, dict) and payload.get("type") == "error":
            raise ServerError(payload)
        blocks = require(payload, "content")
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text") or "")
            elif kind == "tool_use":
                name = require(block, "name")
                calls.append(ToolCall(id=block.get("id") or call_id(request, len(calls)), name=name,
                                      args=parse_args(block.get("input"), name)))
        return LLMResponse(
            content="".join(texts) if texts or not calls else None, tool_calls=calls,
            usage=_usage(payload.get("usage") or {}), stop_reason=stop_reason(payload.get("stop_reason"), bool(calls)),
            model=payload.get("model"),
        )

    def parser(self, request: LLMRequest, on_token: TokenCallback | None) -> _Stream:
        return _Stream(request, on_token)


class _Stream:
    """Assembles Messages stream events into one reply, block by block."""

    __slots__ = ("blocks", "done", "model", "on_token", "request", "stop", "usage")

    def __init__(self, request: LLMRequest, on_token: TokenCallback | None) -> None:
        self.request = request
        self.on_token = on_token
        self.blocks: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, Any] = {}
        self.model: str | None = None
        self.stop: str | None = None
        self.done = False

    def feed(self, event: str | None, data: Any) -> None:
        if not isinstance(data, dict):
            raise Missing("a JSON object in a stream event")
        kind = data.get("type") or event
        if kind == "content_block_delta":
            delta = data.get("delta") or {}
            block = self._block(data.get("index", 0))
            if delta.get("type") == "text_delta":
                text = delta.get("text") or ""
                block["parts"].append(text)
                if text and self.on_token is not None:
                    self.on_token(text)
            elif delta.get("type") == "input_json_delta":
                block["parts"].append(delta.get("partial_json") or "")
        elif kind == "content_block_start":
            start = data.get("content_block") or {}
            block = self._block(data.get("index", 0))
            block.update(type=start.get("type"), id=start.get("id"), name=start.get("name"), input=start.get("input"))
            if start.get("text"):
                block["parts"].append(start["text"])
        elif kind == "message_start":
            message = data.get("message") or {}
            self.model = message.get("model")
            self.usage.update(message.get("usage") or {})
        elif kind == "message_delta":
            self.stop = (data.get("delta") or {}).get("stop_reason") or self.stop
            self.usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            raise ServerError(data)

    def _block(self, index: int) -> dict[str, Any]:
        block = self.blocks.get(index)
        if block is None:
            block = self.blocks[index] = {"type": "text", "parts": []}
        return block

    def finish(self) -> LLMResponse:
        if not self.done:
            raise Missing("message_stop (the end of the stream)", cut=True)
        texts: list[str] = []
        calls: list[ToolCall] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block["type"] == "text":
                texts.append("".join(block["parts"]))
            elif block["type"] == "tool_use":
                name = block.get("name")
                if not name:
                    raise Missing(f"the tool name of content block {index}")
                raw = "".join(block["parts"]) or block.get("input")
                calls.append(ToolCall(id=block.get("id") or call_id(self.request, len(calls)), name=name,
                                      args=parse_args(raw, name)))
        return LLMResponse(
            content="".join(texts) if texts or not calls else None, tool_calls=calls, usage=_usage(self.usage),
            stop_reason=stop_reason(self.stop, bool(calls)), model=self.model,
        )


def _messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None  # the tool_result blocks of the user turn being built
    for message in messages:
        role = message["role"]
        if role == "tool":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message["tool_call_id"],
                                     "content": message.get("content") or ""}
            if message.get("is_error"):
                block["is_error"] = True
            if results is None:
                results = []
                out.append({"role": "user", "content": results})
            results.append(block)
            continue
        results = None
        calls = message.get("tool_calls")
        if role == "assistant" and calls:
            text = message.get("content")
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            blocks.extend({"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls)
            out.append({"role": "assistant", "content": blocks})
        else:
            out.append({"role": role, "content": message.get("content") or ""})
    return out


def _tools_used(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The names of the tools the conversation's assistant turns called, in first-use order."""
    return list(dict.fromkeys(call["name"] for message in messages for call in message.get("tool_calls") or ()))


def _usage(raw: dict[str, Any]) -> Usage:
    read = raw.get("cache_read_input_tokens") or 0
    written = raw.get("cache_creation_input_tokens") or 0
    return Usage(input_tokens=(raw.get("input_tokens") or 0) + read + written,
                 output_tokens=raw.get("output_tokens") or 0, cache_read_tokens=read, cache_write_tokens=written)


def anthropic(model: str | None = None, /, **settings: Unpack[Settings]) -> AnthropicProvider:
    """A provider for Anthropic's Messages API (or a gateway that speaks it).

    ``anthropic("claude-sonnet-4-5")`` reads the key from ``ANTHROPIC_API_KEY``;
    ``base_url`` points it at a proxy or gateway. ``max_tokens`` defaults to 4096 (the API
    needs one on every call). The other settings are those of
    :class:`~footprint_lab.providers._base.HttpProvider`.
    """
    return built(AnthropicProvider, model, settings)
