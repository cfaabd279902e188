"""Errors that tell the truth (issue 17, finding 7): refused before running, or failed while running.

A 429 on the second call, after a tool already ran, used to be a ``Refusal`` whose card said
"Nothing ran". Now a failure during a run has its own root, ``RunFailure``, with the same
code/fields/fix shape, and its card says the run had started; a key missing when the
provider is built stays a ``Refusal``.
"""

from __future__ import annotations

from typing import Any

import pytest
from wire_server import Reply, WireServer, stream_reply

from footprint_lab import Agent, Refusal, RunFailure, define_tool
from footprint_lab.errors import RunCheckpointError
from footprint_lab.lab.cards import error_card_html
from footprint_lab.providers import openai
from footprint_lab.providers.errors import MissingApiKeyError, ProviderError, ProviderRateLimitError

RATE_LIMITED = Reply(status=429, body={"error": {"type": "requests", "message": "slow down", "code": None}},
                     headers={"retry-after": "0"})


def lookup_tool(ran: list[str]) -> Any:
    return define_tool(name="add", description="Add two integers.",
                       input_schema={"type": "object", "properties": {"a": {"type": "integer"},
                                                                      "b": {"type": "integer"}}},
                       fn=lambda a, b: ran.append("add") or a + b)


async def test_a_429_after_a_tool_ran_is_a_failure_while_running_and_its_card_says_so(
    build: Any, server: WireServer,
) -> None:
    server.queue(stream_reply("openai_stream_tools.sse"))
    server.fallback = RATE_LIMITED
    ran: list[str] = []
    agent = Agent(provider=build("openai", max_retries=1), tools=[lookup_tool(ran)])
    with pytest.raises(RunFailure) as caught:
        await agent.run("Add 2+3 and 10+20.")
    failure = caught.value
    assert ran == ["add", "add"]  # the tools did run: saying "nothing ran" would be false
    assert isinstance(failure, RunCheckpointError) and not isinstance(failure, Refusal)
    cause = failure.cause
    assert isinstance(cause, ProviderRateLimitError) and isinstance(cause, ProviderError)
    assert isinstance(cause, RunFailure) and not isinstance(cause, Refusal)
    assert cause.retryable is True and failure.resumable is True
    for error in (failure, cause):
        card = error_card_html(error)
        assert "Nothing ran" not in card and "Refused" not in card
        assert "Failed while running" in card and error.code in card and "calls may have been charged" in card
    card = error_card_html(failure)
    assert "a Checkpoint" in card and "ProviderRateLimitError (ERR_PROVIDER_RATE_LIMITED)" in card
    assert "Add 2+3" not in card  # the checkpoint's conversation is shown by shape, never quoted


async def test_a_429_on_the_first_call_is_a_failure_while_running_too(build: Any, server: WireServer) -> None:
    server.fallback = RATE_LIMITED
    agent = Agent(provider=build("openai", max_retries=1))
    with pytest.raises(ProviderRateLimitError) as caught:
        await agent.run("hello")
    assert isinstance(caught.value, RunFailure) and not isinstance(caught.value, Refusal)
    assert caught.value.retryable is True
    assert "Failed while running" in error_card_html(caught.value)


def test_a_key_missing_when_the_provider_is_built_stays_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(Refusal) as caught:
        openai("gpt-4o-mini")
    refusal = caught.value
    assert isinstance(refusal, MissingApiKeyError) and isinstance(refusal, ProviderError)
    assert not isinstance(refusal, RunFailure) and refusal.retryable is False
    card = error_card_html(refusal)
    assert "Refused: MissingApiKeyError" in card and "Nothing ran" in card
