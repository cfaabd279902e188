"""A run that fails mid-way keeps what it did: RunCheckpointError and resume_on_error."""

from __future__ import annotations

import pytest
from conversation_kit import counted_tool

from footprint_lab import Agent
from footprint_lab.errors import InvalidCheckpointError, MockScriptError, NoConversationError, RunCheckpointError
from footprint_lab.providers import mock
from footprint_lab.providers.types import LLMRequest


class ProviderFailure(Exception):
    """Shaped like the provider errors: a status and a retryable flag."""

    def __init__(self, status: int | None, *, retryable: bool | None = None, text: str = "upstream said no") -> None:
        super().__init__(text)
        self.status = status
        if retryable is not None:
            self.retryable = retryable


class ContextWindowExceededError(Exception):
    pass


def failing_on(call: int, error: BaseException, then: str = "Recovered.") -> tuple[Agent, list[str], list[int]]:
    """lookup on the first call, a failure on call number ``call`` of the first run, answers after that."""
    tool_calls: list[str] = []
    failures: list[int] = []

    def respond(request: LLMRequest) -> object:
        if request.call_index == call and not failures:
            failures.append(call)
            raise error
        if request.call_index < 2:
            return {"tool": "lookup", "args": {}}
        return then

    agent = Agent(provider=mock(respond=respond), tools=[counted_tool("lookup", tool_calls)])
    return agent, tool_calls, failures


async def test_a_failure_after_a_completed_tool_round_keeps_the_work() -> None:
    cause = ProviderFailure(503, text="the wire mentioned hunter2")
    agent, tool_calls, _ = failing_on(2, cause)
    with pytest.raises(RunCheckpointError) as caught:
        await agent.run("Look it up twice")
    err = caught.value
    assert err.code == "ERR_RUN_CHECKPOINT"
    assert err.cause is cause and err.__cause__ is cause
    assert (err.stage, err.iteration, err.resumable) == ("call-llm", 3, True)
    assert err.step_id.startswith("call-llm#")
    assert [m["role"] for m in err.checkpoint.history] == ["user", "assistant", "tool", "assistant", "tool"]
    message = str(err)
    assert "iteration 3" in message and "calling the model" in message and "2 completed tool rounds" in message
    assert "resume_on_error" in message and "hunter2" not in message
    assert set(err.evidence()) == set(RunCheckpointError.fields)
    assert agent.last_run is not None and agent.last_run.status == "failed"
    assert agent.checkpoint() == err.checkpoint
    with pytest.raises(NoConversationError) as refused:
        await agent.follow_up("and?")
    assert refused.value.reason == "last-run-unfinished"
    resumed = await agent.resume_on_error(err.checkpoint)
    assert resumed.answer == "Recovered."
    assert tool_calls == ["lookup", "lookup"]  # no finished tool ran again
    assert resumed.recording.meta["continues"]["how"] == "resume_on_error"
    assert [s.iteration for s in resumed.recording.steps if s.stage == "call-llm"] == [3]


async def test_a_failure_on_the_first_llm_call_is_raised_as_it_is() -> None:
    cause = ProviderFailure(503)
    agent, _, _ = failing_on(0, cause)
    with pytest.raises(ProviderFailure):
        await agent.run("hi")
    assert agent.checkpoint() is None


async def test_a_refusal_after_a_completed_round_is_wrapped_and_marked_not_resumable() -> None:
    agent = Agent(provider=mock(replies=[{"tool": "lookup", "args": {}}]), tools=[counted_tool("lookup", [])])
    with pytest.raises(RunCheckpointError) as caught:
        await agent.run("hi")
    assert isinstance(caught.value.cause, MockScriptError)
    assert caught.value.resumable is False  # a refusal names its own fix; a resume alone cannot help


@pytest.mark.parametrize(
    ("cause", "why"),
    [
        (ProviderFailure(401), "credentials"),
        (ProviderFailure(403), "credentials"),
        (ProviderFailure(400), "status 400"),
        (ProviderFailure(404), "status 404"),
        (ProviderFailure(422), "status 422"),
        (ContextWindowExceededError("too long"), "context window"),
        (ProviderFailure(None, retryable=False), "not worth retrying"),
    ],
)
async def test_the_message_says_when_a_resume_cannot_help(cause: Exception, why: str) -> None:
    agent, _, _ = failing_on(1, cause)
    with pytest.raises(RunCheckpointError) as caught:
        await agent.run("hi")
    assert caught.value.resumable is False
    assert "would not help" in str(caught.value) and why in str(caught.value)


async def test_retryable_errors_say_a_resume_can_help() -> None:
    agent, _, _ = failing_on(1, ProviderFailure(None, retryable=True))
    with pytest.raises(RunCheckpointError) as caught:
        await agent.run("hi")
    assert caught.value.resumable is True and "would not help" not in str(caught.value)


async def test_a_failure_inside_a_tool_step_is_located_there() -> None:
    class Broken(Exception):
        pass

    def explode_on_second(request: LLMRequest) -> object:
        return {"tool": "lookup", "args": {}} if request.call_index < 2 else "done"

    calls: list[str] = []
    agent = Agent(provider=mock(respond=explode_on_second), tools=[counted_tool("lookup", calls)])
    original = agent._append

    def append(turn, message, *rest, **evidence):  # type: ignore[no-untyped-def]
        if message.get("role") == "tool" and len(calls) == 2:
            raise Broken()
        return original(turn, message, *rest, **evidence)

    agent._append = append  # type: ignore[method-assign]
    with pytest.raises(RunCheckpointError) as caught:
        await agent.run("hi")
    assert (caught.value.stage, caught.value.iteration) == ("tool", 2)
    assert "while running a tool" in str(caught.value)
    assert len(caught.value.checkpoint.history) == 3  # the first round only


async def test_resume_on_error_refuses_a_finished_conversation() -> None:
    agent = Agent(provider=mock(reply="ok"))
    await agent.run("hi")
    with pytest.raises(InvalidCheckpointError) as caught:
        await agent.resume_on_error(agent.checkpoint())
    assert caught.value.field == "history"
    assert caught.value.door == "Agent.resume_on_error"


async def test_the_provider_errors_own_retryable_flag_decides() -> None:
    from footprint_lab.errors import ContextWindowError, ProviderAuthError, ProviderUnavailableError

    cases = [
        (ProviderUnavailableError("busy", provider="openai", status=503, attempts=3), True, ""),
        (ContextWindowError("too long", provider="openai", model="m", status=400), False, "context window"),
        (ProviderAuthError("no", provider="openai", status=401, env_var="OPENAI_API_KEY"), False, "credentials"),
    ]
    for cause, resumable, why in cases:
        agent, _, _ = failing_on(1, cause)
        with pytest.raises(RunCheckpointError) as caught:
            await agent.run("hi")
        assert caught.value.resumable is resumable
        assert why in str(caught.value)
        if resumable:
            assert (await agent.resume_on_error(caught.value.checkpoint)).answer == "Recovered."
