"""Small builders shared by the conversation, pause and redaction tests (mocks only at the LLM edge)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from footprint_lab import Agent, ask_human, define_tool
from footprint_lab.core.tools import Tool
from footprint_lab.providers import mock
from footprint_lab.providers.types import LLMRequest, LLMResponse

SECRET = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3"


def counted_tool(name: str, calls: list[str], result: str = "ok") -> Tool:
    """A tool that notes every time it runs."""

    def run() -> str:
        calls.append(name)
        return result

    return define_tool(name=name, description=f"The {name} tool.", fn=run)


def asking_tool(question: str = "Refund 120 EUR to this card?", calls: list[str] | None = None) -> Tool:
    """A tool that stops the run to ask a person."""

    def confirm() -> str:
        if calls is not None:
            calls.append("confirm")
        ask_human(question, choices=["yes", "no"])

    return define_tool(name="confirm", description="Ask a person to confirm.", fn=confirm)


class Seen:
    """A mock provider that remembers every request it answered."""

    def __init__(self, answer: Callable[[LLMRequest], Any]) -> None:
        self.requests: list[LLMRequest] = []
        self._answer = answer
        self.provider = mock(respond=self._respond)

    def _respond(self, request: LLMRequest) -> Any:
        self.requests.append(request)
        return self._answer(request)


def scripted(*replies: Any) -> Seen:
    """Answer by the turn's LLM call index (a resumed leg keeps counting where its run stopped)."""
    script = list(replies)
    return Seen(lambda request: script[request.call_index])


def pausing_agent(calls: list[str], **keywords: Any) -> tuple[Agent, Seen]:
    """lookup, then a batch of [confirm (asks a person), notify], then a final answer."""
    seen = scripted(
        {"tool": "lookup", "args": {}},
        [{"tool": "confirm", "args": {}}, {"tool": "notify", "args": {}}],
        "Refund sent.",
    )
    tools = [counted_tool("lookup", calls), asking_tool(calls=calls), counted_tool("notify", calls)]
    return Agent(provider=seen.provider, tools=tools, **keywords), seen


class Streaming:
    """A provider that streams its reply in the chunks it is given."""

    name = "streaming"

    def __init__(self, chunks: list[str]) -> None:
        self.chunks = chunks

    async def complete(self, request: LLMRequest, on_token: Any = None) -> LLMResponse:
        for chunk in self.chunks:
            if on_token is not None:
                on_token(chunk)
        return LLMResponse(content="".join(self.chunks), stop_reason="end_turn")
