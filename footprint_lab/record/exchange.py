"""What one LLM call sent and received: the request as assembled, the response as it came.

Rule kept here: the engine's records (steps, reads, commits, events) are generic. The exchange is
the one record that knows what a model is sent (system text, messages, tools) and what it answers
(text, tool calls, usage, how close each tool choice was), so it lives apart from them.

Role: record layer (pydantic models, loaded with the first recording).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from footprint_lab.record.records import Data


class UsageRecord(Data):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False


class ToolCallRecord(Data):
    id: str
    name: str
    args: dict[str, Any]


class ToolMargin(Data):
    """How close one tool choice was, from the provider's log-probabilities (``explain.checks.tool_choice``).

    ``logprob`` is the deciding token's. ``runner_up`` is the best other token at that position, and
    ``runner_up_tool`` the offered tool it would have begun (``None`` when it begins none).
    ``margin`` is the difference in nats (``None`` when the provider listed no alternative).
    """

    call_id: str
    tool: str
    logprob: float
    runner_up: str | None = None
    runner_up_tool: str | None = None
    runner_up_logprob: float | None = None
    margin: float | None = None


class ResponseRecord(Data):
    content: str | None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    stop_reason: str | None = None
    model: str | None = None
    usage: UsageRecord = Field(default_factory=UsageRecord)
    #: per tool call, how close the choice was, when the provider reported log-probabilities
    tool_margins: list[ToolMargin] = Field(default_factory=list)


class LLMExchange(Data):
    """One LLM call: the request exactly as assembled, and the response as received.

    The request's messages are ``recording.messages[:message_count]`` followed by
    ``injected_messages``. Storing the prefix length keeps a long run linear in size.
    """

    step_id: str
    iteration: int | None
    model: str
    system: str
    message_count: int
    injected_messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    system_pieces: list[int] = Field(default_factory=list)
    message_pieces: list[int] = Field(default_factory=list)
    tool_pieces: list[int] = Field(default_factory=list)
    tools_withheld: bool = False
    response: ResponseRecord
    duration_ms: float = 0.0
    wire: dict[str, Any] | None = None
