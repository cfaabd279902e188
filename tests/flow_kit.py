"""Builders shared by the composition pause tests (mocks only at the LLM edge).

Everything here builds a fresh composition on every call, as a second process would.
"""

from __future__ import annotations

from typing import Any

from footprint_lab import Agent, Loop, Parallel, Sequence, ToolContext, ask_human, tool
from footprint_lab.providers import LLMRequest, mock


def approver(seen: list[ToolContext] | None = None, *, name: str = "approver", **keywords: Any) -> Agent:
    """Asks a person before answering; answers ``approved: <what the person said>``."""

    @tool
    def ask(ctx: ToolContext) -> str:
        """Ask a person to approve the refund."""
        if seen is not None:
            seen.append(ctx)
        ask_human("Refund 120 EUR?")

    def respond(request: LLMRequest) -> Any:
        last = request.messages[-1]
        return {"tool": "ask", "args": {}} if last["role"] == "user" else f"approved: {last['content']}"

    return Agent(provider=mock(respond=respond), tools=[ask], name=name, **keywords)


def echo(tag: str) -> Agent:
    """Answers ``tag(<its message>)``, so every answer shows the path it took."""
    return Agent(provider=mock(respond=lambda r: f"{tag}({r.messages[-1]['content']})"), name=tag)


def nested_flow(seen: list[ToolContext] | None = None) -> Sequence:
    """Three deep: Sequence > Parallel > Loop > Sequence > the asking agent."""
    deep = Loop(Sequence({"approve": approver(seen)}), times=1)
    fan = Parallel({"side": echo("side"), "deep": deep}, merge=lambda a: f"{a['side']} | {a['deep']}")
    return Sequence({"first": echo("first"), "fan": fan})
