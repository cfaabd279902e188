"""Every public door refuses an odd value by name, before anything runs, without quoting it.

One property over every door and every parameter: put an odd value (None, numbers, bytes,
text, nested lists, dicts, classes, lambdas of the wrong arity...) where the door expects
something else. The door either accepts it (and then a run of what it built finishes or is
refused, never crashes mid-run) or raises a coded ``Refusal`` whose message does not repeat
the value. A raw ``TypeError``, ``AttributeError`` or ``IndexError`` fails the property.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from footprint_lab import (
    Agent,
    Conditional,
    Graph,
    Identity,
    LLMCall,
    Loop,
    Parallel,
    Redaction,
    Refusal,
    Sequence,
    Workflow,
    ask_human,
    define_tool,
    errors,
    merge_with_llm,
    step,
    tool,
)
from footprint_lab import context as fc
from footprint_lab import explain as fx
from footprint_lab.core.pause import HumanQuestion
from footprint_lab.core.runner import Runner
from footprint_lab.explain.provenance import influence
from footprint_lab.flow import _patterns as patterns
from footprint_lab.providers import MockProvider, anthropic, mock, ollama, openai, provider_from_string

MARK = "zqx"  # every text and bytes value carries it, so a message that quotes one is caught


class Opaque:
    """A class no door expects."""


def _text(body: str) -> str:
    return MARK + body


ODD: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True),
        st.text(max_size=12).map(_text),
        st.binary(max_size=8).map(lambda b: MARK.encode() + b),
        st.sampled_from([Opaque, Opaque(), object(), MockProvider, Agent, dict, int, print, ...]),
        st.sampled_from([lambda: None, lambda a, b, c: None, lambda *, k: None]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.sampled_from(["message", "tool", "args", "k"]), inner, max_size=3),
    ),
    max_leaves=6,
)


def _agent() -> Agent:
    return Agent(provider=mock(reply="ok"))


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


_RUN = _agent().run_sync("go")
def _sync(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def _agent_after_a_run() -> Agent:
    agent = _agent()
    agent.run_sync("go")
    return agent


_CHECKPOINT = _agent_after_a_run().checkpoint()
_SETTINGS = {"api_key": "k", "base_url": "http://127.0.0.1:9", "stream": False, "max_tokens": 10, "timeout": 5.0,
             "max_retries": 0, "headers": {"x-a": "b"}}

#: door name -> (the callable, the positional arguments that make a valid call, the keywords that do)
DOORS: dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = {
    "Agent": (Agent, (), {"provider": mock(reply="ok")}),
    "LLMCall": (LLMCall, (), {"provider": mock(reply="ok")}),
    "tool": (tool, (echo.fn,), {}),
    "define_tool": (define_tool, (), {"name": "t", "description": "d", "fn": lambda: "ok"}),
    "ask_human": (ask_human, ("Proceed?",), {}),
    "Identity": (Identity, (), {"tenant": "t"}),
    "Redaction": (Redaction, (), {}),
    "mock": (mock, (), {"reply": "ok"}),
    "openai": (openai, ("gpt-4o-mini",), _SETTINGS),
    "anthropic": (anthropic, ("claude",), _SETTINGS),
    "ollama": (ollama, ("llama3.2",), _SETTINGS),
    "Sequence": (Sequence, ([_agent()],), {}),
    "Parallel": (Parallel, ({"a": _agent(), "b": _agent()},), {"merge": lambda answers: "m"}),
    "Conditional": (Conditional, ([("yes", lambda message: True, _agent())],), {"otherwise": ("no", _agent())}),
    "Loop": (Loop, (_agent(),), {"times": 2}),
    "Workflow": (Workflow, ([step("a", _agent())],), {}),
    "Graph": (Graph, ([step("a", _agent())],), {}),
    "step": (step, ("a", _agent()), {}),
    "merge_with_llm": (merge_with_llm, (), {"provider": mock(reply="ok")}),
    "reflection": (patterns.reflection, (_agent(), _agent()), {}),
    "debate": (patterns.debate, (_agent(), _agent(), _agent()), {}),
    "self_consistency": (patterns.self_consistency, (_agent(),), {}),
    "swarm": (patterns.swarm, ({"a": _agent()},), {"entry": "a"}),
    "define_fact": (fc.define_fact, (), {"id": "f", "data": "x"}),
    "define_steering": (fc.define_steering, (), {"id": "s", "prompt": "x"}),
    "define_instruction": (fc.define_instruction, (), {"id": "i", "template": "x"}),
    "define_skill": (fc.define_skill, (), {"id": "k", "description": "d", "body": "b"}),
    "define_memory": (fc.define_memory, (), {"id": "m", "store": fc.InMemoryStore()}),
    "define_rag": (fc.define_rag, (), {"id": "r", "corpus": ["a"]}),
    "on_tool_return": (fc.on_tool_return, ("echo",), {}),
    "Runner.run_sync": (lambda *a, **k: _agent().run_sync(*a, **k), ("go",), {}),
    "Runner.subscribe": (lambda *a: _agent().subscribe(*a), (lambda event: None,), {}),
    "Agent.follow_up": (lambda *a, **k: _agent_after_a_run().follow_up_sync(*a, **k), ("and then?",), {}),
    "Agent.resume": (lambda *a, **k: _sync(_agent().resume(*a, **k)), (_CHECKPOINT, "yes"), {}),
    "Agent.resume_on_error": (lambda *a, **k: _sync(_agent().resume_on_error(*a, **k)), (_CHECKPOINT,), {}),
    "Agent.run continue_from": (lambda *a, **k: _agent().run_sync("go", *a, **k), (), {"continue_from": _CHECKPOINT}),
    "Agent.without": (lambda *a, **k: _agent().without(*a, **k), ("system-prompt",), {"seed": 1}),
    "Agent.with_forced": (lambda *a, **k: _agent().with_forced(*a, **k), ("system-prompt",), {"seed": 1}),
    "Composition.without": (lambda *a, **k: Sequence([_agent()]).without(*a, **k), ("system-prompt",), {}),
    "provider_from_string": (provider_from_string, ("openai:gpt-4o-mini",), {"api_key": "k"}),
    "Run.annotate": (_RUN.annotate, ("answer", "a note"), {"tag": "checked"}),
    "Run.context": (_RUN.context, (), {}),
    "Run.backtrack": (_RUN.backtrack, (), {}),
    "Run.suspects": (_RUN.suspects, (), {}),
    "backtrack": (fx.backtrack, (_RUN,), {}),
    "suspects": (fx.suspects, (_RUN,), {}),
    "ranking_confidence": (fx.ranking_confidence, (_RUN,), {}),
    "register_influence_strategy": (fx.register_influence_strategy, ("x", lambda **k: None, "d"), {}),
    "rerun_without": (lambda *a, **k: asyncio.run(fx.rerun_without(*a, **k)), (_RUN, "system-prompt"),
                      {"rerun": _agent()}),
    "localize": (lambda *a, **k: asyncio.run(fx.localize(*a, **k)), (_RUN,), {"rerun": _agent()}),
    "find_dropped_context": (lambda *a, **k: asyncio.run(fx.find_dropped_context(*a, **k)), (_RUN,), {}),
}


def _slots(name: str) -> list[tuple[str, int | str]]:
    """Every place an odd value can go in door ``name``: a positional index or a keyword."""
    door, args, keywords = DOORS[name]
    places: list[tuple[str, int | str]] = [(name, index) for index in range(len(args))]
    try:
        parameters = inspect.signature(door).parameters.values()
    except (TypeError, ValueError):
        parameters = []  # type: ignore[assignment]
    for parameter in parameters:
        if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD) and not any(
            parameter.name == p for _, p in places
        ):
            positional = [p.name for p in inspect.signature(door).parameters.values()][: len(args)]
            if parameter.name not in positional:
                places.append((name, parameter.name))
    places.extend((name, keyword) for keyword in keywords if (name, keyword) not in places)
    return places


SLOTS = [place for name in DOORS for place in _slots(name)]


def _call(name: str, slot: int | str, value: Any) -> Any:
    door, args, keywords = DOORS[name]
    if isinstance(slot, int):
        positional = list(args)
        positional[slot] = value
        return door(*positional, **keywords)
    return door(*args, **{**keywords, slot: value})


#: Where a string is the developer's own label for a member or step, which messages name on purpose
#: (it is what the step ids and the recording call that member).
LABELS = {("Sequence", 0), ("Parallel", 0), ("Conditional", 0), ("Conditional", "otherwise"), ("Workflow", 0),
          ("Graph", 0), ("step", 0), ("swarm", 0), ("define_tool", "name"), ("tool", "name")}


def _check_refusal(refusal: Refusal, door: str, slot: int | str) -> None:
    assert re.fullmatch(r"ERR_[A-Z_]+", refusal.code), refusal.code
    assert type(refusal).__name__ in errors.__all__
    if (door, slot) not in LABELS:
        assert MARK not in str(refusal), f"{type(refusal).__name__} quoted the value: {refusal}"


@pytest.mark.parametrize(("door", "slot"), SLOTS, ids=[f"{d}-{s}" for d, s in SLOTS])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=ODD)
def test_every_door_refuses_odd_values_by_name(door: str, slot: int | str, value: Any) -> None:
    # A strategy an example registers (its name carries MARK) is a developer's label, which the
    # strategy refusals list on purpose: it is dropped again so that no later example meets it.
    strategies = dict(influence._STRATEGIES)
    try:
        built = _call(door, slot, value)
        if isinstance(built, Runner):  # accepted: then a run of it must not fail on what was accepted
            built.run_sync("go")
    except HumanQuestion:  # ask_human accepted its question: it stops the run it is called from
        assert door == "ask_human"
    except Refusal as refusal:
        _check_refusal(refusal, door, slot)
    except errors.RunCheckpointError as failure:  # a tool-using run kept its work; its cause says why
        assert isinstance(failure.cause, Refusal), repr(failure.cause)
    finally:
        influence._STRATEGIES.clear()
        influence._STRATEGIES.update(strategies)
