"""The same round trip against a live model, when one is named; skipped otherwise.

Set ``FOOTPRINT_LIVE_PROVIDER`` to a provider string (``ollama:llama3.2``,
``openai:gpt-4o-mini``, ``anthropic:claude-haiku-4-5``) and, for a self-hosted server,
``FOOTPRINT_LIVE_BASE_URL``. Keys come from the usual environment variables.
"""

from __future__ import annotations

import os

import pytest

from footprint_lab import Agent, define_tool
from footprint_lab.providers import provider_from_string

SPEC = os.environ.get("FOOTPRINT_LIVE_PROVIDER")
pytestmark = pytest.mark.skipif(not SPEC, reason="set FOOTPRINT_LIVE_PROVIDER to run against a live model")


def live_provider() -> object:
    assert SPEC is not None
    base_url = os.environ.get("FOOTPRINT_LIVE_BASE_URL")
    return provider_from_string(SPEC, **({"base_url": base_url} if base_url else {}), timeout=120.0)


async def test_a_live_model_answers_and_the_exchange_is_recorded() -> None:
    tokens: list[str] = []
    run = await Agent(provider=live_provider(), system="Answer in one short sentence.").run(
        "What is the capital of France?", on_event=lambda e: tokens.append(e.payload["text"]) if e.type == "token"
        else None)
    assert run.answer and "paris" in run.answer.lower()
    exchange = run.recording.exchanges[0]
    assert exchange.wire is not None and exchange.wire["response"]["status"] == 200
    assert exchange.response.usage.output_tokens > 0 and not exchange.response.usage.estimated
    assert "".join(tokens) == run.answer


async def test_a_live_model_uses_a_tool() -> None:
    add = define_tool(
        name="add", description="Add two integers and return the sum.",
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                      "required": ["a", "b"]},
        fn=lambda a, b: a + b,
    )
    agent = Agent(provider=live_provider(), tools=[add], system="Always use the add tool for arithmetic.")
    run = await agent.run("What is 1234 + 4321? Use the tool.")
    calls = [c for x in run.recording.exchanges for c in x.response.tool_calls]
    assert calls and calls[0].name == "add"
    assert "5555" in (run.answer or "").replace(",", "")
