"""Regression tests for the doors issue 17 found reaching raw exceptions: each refuses by name now."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from footprint_lab import Agent, LLMCall, Loop, Parallel, Refusal, tool
from footprint_lab.errors import (
    AgentConfigError,
    CompositionConfigError,
    ExplainConfigError,
    InvalidAnnotationError,
    ListenerError,
    MockScriptError,
    ToolDefinitionError,
)
from footprint_lab.explain import ranking_confidence, suspects
from footprint_lab.providers import MockProvider, mock


def _agent() -> Agent:
    return Agent(provider=mock(reply="ok"))


def test_loop_refuses_an_explicit_none_for_until_and_a_missing_body():
    with pytest.raises(CompositionConfigError) as caught:
        Loop(_agent(), times=2, until=None)
    assert caught.value.setting == "until" and "leave it out" in str(caught.value)
    with pytest.raises(CompositionConfigError) as caught:
        Loop(times=2)
    assert caught.value.setting == "body"
    assert Loop(_agent(), times=2).run_sync("go").answer == "ok"  # leaving until out runs every pass


def test_a_predicate_of_the_wrong_arity_is_refused_when_built_not_mid_run():
    with pytest.raises(CompositionConfigError) as caught:
        Loop(_agent(), times=2, until=lambda: True)
    assert "cannot be called with 1 argument" in caught.value.received
    with pytest.raises(CompositionConfigError):
        Parallel({"a": _agent()}, merge=lambda first, second: "x")
    with pytest.raises(MockScriptError):
        mock(respond=lambda: "x")


@pytest.mark.parametrize("listener", [5, "print", None.__class__, lambda: None, lambda a, b: None])
def test_a_listener_that_cannot_take_an_event_is_refused_where_it_is_handed_over(listener: Any):
    agent = _agent()
    with pytest.raises(ListenerError) as caught:
        agent.subscribe(listener)
    assert caught.value.door == "Agent.subscribe" and caught.value.code == "ERR_LISTENER"
    with pytest.raises(ListenerError) as caught:
        agent.run_sync("go", on_event=listener)
    assert caught.value.door == "Agent.run"
    with pytest.raises(ListenerError):
        Loop(_agent(), times=1).run_sync("go", on_event=listener)


def test_a_refused_listener_leaves_the_conversation_as_it_was():
    agent = _agent()
    agent.run_sync("first")
    held = agent.checkpoint()
    with pytest.raises(ListenerError):
        agent.run_sync("second", on_event=5)  # type: ignore[arg-type]
    assert agent.checkpoint() == held
    seen: list[Any] = []
    agent.subscribe(seen.append)
    assert agent.run_sync("third").answer == "ok" and seen


def test_ranking_confidence_and_suspects_name_their_own_door():
    for door, function, setting in ((ranking_confidence, "ranking_confidence", "ranked"),
                                    (suspects, "suspects", "run")):
        with pytest.raises(ExplainConfigError) as caught:
            door(None)
        assert caught.value.function == function and caught.value.setting == setting
        assert str(caught.value).startswith(f"{function}:")


@pytest.mark.parametrize("target", [None, 5, [("a", 1)], {1: "x"}, "no-such-step"])
def test_annotate_refuses_a_target_that_names_nothing_in_the_run(target: Any):
    run = _agent().run_sync("go")
    with pytest.raises(InvalidAnnotationError) as caught:
        run.annotate(target, "a note")
    assert isinstance(caught.value, Refusal) and run.recording.annotations == []


@pytest.mark.parametrize("tools", [None, 5, "lookup", {"lookup": 1}, [5]])
def test_agent_tools_must_be_a_list_of_tools(tools: Any):
    with pytest.raises(ToolDefinitionError) as caught:
        Agent(provider=mock(reply="ok"), tools=tools)
    assert caught.value.problem == "tools" and "received" in str(caught.value)


def test_a_single_tool_is_refused_with_the_list_to_write_instead():
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return order_id

    with pytest.raises(ToolDefinitionError) as caught:
        Agent(provider=mock(reply="ok"), tools=lookup)  # type: ignore[arg-type]
    assert "tools=[lookup]" in str(caught.value)


def test_a_provider_class_is_refused_before_any_run():
    for runner in (Agent, LLMCall):
        with pytest.raises(AgentConfigError) as caught:
            runner(provider=MockProvider)
        assert caught.value.setting == "provider" and caught.value.received == "a class"


def test_an_input_guard_that_cannot_take_the_message_is_refused_when_built():
    with pytest.raises(AgentConfigError) as caught:
        Agent(provider=mock(reply="ok"), input_guard=lambda: None)
    assert caught.value.setting == "input_guard"


@pytest.mark.parametrize("factory", [dict, lambda: None, lambda message: None])
def test_a_rerun_factory_that_takes_no_exclude_is_refused_before_any_rerun(factory: Any):
    from footprint_lab.explain import localize

    run = _agent().run_sync("go")
    with pytest.raises(ExplainConfigError) as caught:
        asyncio.run(localize(run, rerun=factory, samples=1))
    assert caught.value.code == "ERR_EXPLAIN_CONFIG" and "factory(exclude=[...])" in str(caught.value)
