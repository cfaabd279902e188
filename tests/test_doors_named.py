"""Regression tests for the doors issue 17 found reaching raw exceptions: each refuses by name now."""

from __future__ import annotations

from typing import Any

import pytest

from footprint_lab import Agent, Loop, Parallel, Refusal
from footprint_lab.errors import (
    AnnotationError,
    CompositionConfigError,
    ExplainConfigError,
    ListenerError,
    MockScriptError,
)
from footprint_lab.explain import ranking_confidence, suspects
from footprint_lab.providers import mock


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


@pytest.mark.parametrize("note", [None, "text", 5, [("a", 1)], {1: "x"}])
def test_annotate_refuses_a_note_that_is_not_a_dict_of_named_fields(note: Any):
    run = _agent().run_sync("go")
    with pytest.raises(AnnotationError) as caught:
        run.annotate(note)
    assert isinstance(caught.value, Refusal) and run.recording.annotations == []
