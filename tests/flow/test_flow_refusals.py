"""Build-time refusals: a composition that could not run correctly is never built."""

from __future__ import annotations

from typing import Any

import pytest

import footprint_lab
from footprint_lab import Agent, Conditional, Graph, Loop, Parallel, Sequence, Workflow, step
from footprint_lab.errors import (
    CompositionConfigError,
    DuplicateStepError,
    EmptyCompositionError,
    GraphCycleError,
    LoopBudgetError,
    Refusal,
)
from footprint_lab.providers import mock

SECRET = "sk-live-0123456789abcdefghij"


def agent() -> Agent:
    return Agent(provider=mock(reply="ok"))


def node(name: str, needs: Any = ()) -> Any:
    return step(name, agent(), needs=needs)


@pytest.mark.parametrize("build", [
    lambda: Sequence({}),
    lambda: Sequence([]),
    lambda: Parallel({}, merge=lambda a: ""),
    lambda: Conditional([], otherwise=("n", agent())),
    lambda: Workflow([]),
    lambda: Graph([]),
])
def test_an_empty_composition_is_refused(build: Any) -> None:
    with pytest.raises(EmptyCompositionError) as caught:
        build()
    assert caught.value.code == "ERR_EMPTY_COMPOSITION"
    assert "at least one named runner" in str(caught.value)


@pytest.mark.parametrize(("build", "composition"), [
    (lambda: Sequence([("a", agent()), ("a", agent())]), "Sequence"),
    (lambda: Parallel([("a", agent()), ("a", agent())], merge=lambda a: ""), "Parallel"),
    (lambda: Conditional([("a", lambda m: True, agent())], otherwise=("a", agent())), "Conditional"),
    (lambda: Workflow([node("a"), node("a")]), "Workflow"),
    (lambda: Graph([node("a"), node("a")]), "Graph"),
])
def test_duplicate_step_names_are_refused_by_name(build: Any, composition: str) -> None:
    with pytest.raises(DuplicateStepError) as caught:
        build()
    assert caught.value.code == "ERR_DUPLICATE_STEP"
    assert caught.value.evidence() == {"composition": composition, "step_name": "a"}
    assert "rename one" in str(caught.value)


@pytest.mark.parametrize(("times", "received"), [
    (None, "no budget"), (0, "0 passes"), (501, "501 passes"), (True, "a bool"), ("5", "a str"), (2.5, "a float"),
])
def test_a_loop_without_a_usable_budget_is_refused(times: Any, received: str) -> None:
    with pytest.raises(LoopBudgetError) as caught:
        Loop(agent(), times=times)
    assert caught.value.code == "ERR_LOOP_BUDGET"
    assert caught.value.evidence() == {"received": received, "cap": 500}
    assert "times=5" in str(caught.value)


def test_the_hard_cap_itself_is_a_valid_budget() -> None:
    assert Loop(agent(), times=500).times == 500


@pytest.mark.parametrize(("build", "setting"), [
    (lambda: Sequence({"a": SECRET}), "a"),
    (lambda: Sequence(SECRET), "members"),
    (lambda: Sequence([("a", agent(), "extra")]), "members"),
    (lambda: Sequence({"input": agent()}), "input"),
    (lambda: Sequence({"": agent()}), "name"),
    (lambda: Sequence({"a/b": agent()}), "name"),
    (lambda: Sequence({"a": agent()}, name=7), "name"),  # type: ignore[arg-type]
    (lambda: Parallel({"a": agent()}), "merge"),
    (lambda: Parallel({"a": agent()}, merge=SECRET), "merge"),
    (lambda: Parallel({"merge": agent()}, merge=lambda a: ""), "merge"),
    (lambda: Parallel({"a": agent()}, merge=lambda a: "", tolerant="yes"), "tolerant"),
    (lambda: Conditional([("u", lambda m: True, agent())]), "otherwise"),
    (lambda: Conditional([("u", lambda m: True, agent())], otherwise=agent()), "otherwise"),
    (lambda: Conditional([("u", SECRET, agent())], otherwise=("n", agent())), "u"),
    (lambda: Loop(SECRET, times=3), "body"),
    (lambda: Loop(agent(), times=3, until=SECRET), "until"),
    (lambda: Workflow([node("a", needs="b"), node("b")]), "a"),
    (lambda: Workflow([node("a", needs="nowhere")]), "a"),
    (lambda: Workflow([node("a"), node("b"), node("c", needs=["a", "b"])]), "c"),
    (lambda: Graph([node("a", needs="nowhere")]), "a"),
    (lambda: Graph([node("a"), node("b")]), "answer"),
    (lambda: Graph([node("a")], answer="b"), "answer"),
    (lambda: step("a", agent(), needs=[1]), "needs"),
    (lambda: step("a", agent(), map=SECRET), "map"),
])
def test_unusable_settings_are_refused_naming_the_setting(build: Any, setting: str) -> None:
    with pytest.raises(CompositionConfigError) as caught:
        build()
    assert caught.value.code == "ERR_COMPOSITION_CONFIG"
    assert caught.value.setting == setting
    assert SECRET not in str(caught.value) and SECRET not in repr(caught.value.evidence())


def test_a_later_step_named_as_a_need_is_called_later_not_unknown() -> None:
    with pytest.raises(CompositionConfigError, match="a later step"):
        Workflow([node("a", needs="b"), node("b")])


@pytest.mark.parametrize(("nodes", "cycle"), [
    ([node("a", needs="c"), node("b", needs="a"), node("c", needs="b"), node("end", needs="c")],
     ["a", "c", "b", "a"]),
    ([node("solo", needs="solo")], ["solo", "solo"]),
])
def test_a_graph_cycle_is_refused_naming_the_cycle(nodes: list[Any], cycle: list[str]) -> None:
    with pytest.raises(GraphCycleError) as caught:
        Graph(nodes)
    assert caught.value.code == "ERR_GRAPH_CYCLE"
    assert caught.value.cycle == cycle
    assert " -> ".join(cycle) in str(caught.value)


def test_every_flow_refusal_is_public_and_a_refusal() -> None:
    names = ["CompositionConfigError", "DuplicateStepError", "EmptyCompositionError", "GraphCycleError",
             "LoopBudgetError", "ParentRunRefusedError", "MemberIdentityError", "ResumeRequestConflictError"]
    for name in names:
        cls = getattr(footprint_lab.errors, name)
        assert issubclass(cls, Refusal) and cls.code.startswith("ERR_") and cls.fields
        assert name in footprint_lab.errors.__all__
