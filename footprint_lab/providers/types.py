"""What a provider is handed and what it returns, independent of any wire format.

A provider is any object with an async ``complete(request, on_token=None)`` returning an
:class:`LLMResponse`. Messages are plain dicts in one neutral shape:
``{"role": "user" | "assistant" | "tool", "content": str | None}``, plus ``tool_calls``
(a list of ``{"id", "name", "args"}``) on assistant turns and ``tool_call_id`` and ``name``
on tool turns. Each wire adapter translates that shape to its own format and back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

TokenCallback = Callable[[str], None]


class ToolCall(NamedTuple):
    """A tool call the model asked for."""

    id: str
    name: str
    args: dict[str, Any]


@dataclass(slots=True)
class Usage:
    """Token counts for one call; ``estimated`` when no wire reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "estimated": self.estimated,
        }


@dataclass(slots=True)
class LLMRequest:
    """One call's request, exactly as the runner assembled it.

    ``system`` is the system slot's pieces joined with a blank line; ``messages`` the
    messages slot; ``tools`` the tools slot (JSON-schema tool definitions, each
    ``{"name", "description", "input_schema"}``). ``call_index`` counts this run's LLM
    calls from 0; ``iteration`` is the agent loop's iteration (1-based). ``input_chars``
    is the size of system plus messages, kept incrementally by the runner.
    """

    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    iteration: int = 1
    call_index: int = 0
    input_chars: int = 0
    seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class LLMResponse:
    """One call's response, assembled (a streamed reply arrives here whole)."""

    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    model: str | None = None
    #: The request and response as sent and received on the wire, for replay (real providers).
    wire: dict[str, Any] | None = None


@runtime_checkable
class Provider(Protocol):
    """What a runner needs of a provider."""

    name: str

    async def complete(self, request: LLMRequest, on_token: TokenCallback | None = None) -> LLMResponse:
        """Answer one request."""
        ...
