"""Properties of checkpoints: exact JSON round trips, and tampering that is refused by name or harmless."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from functools import cache
from typing import Any

from conversation_kit import asking_tool, counted_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from footprint_lab import Agent, Checkpoint, Redaction, define_tool
from footprint_lab.base.refusal import Refusal
from footprint_lab.errors import RunCheckpointError
from footprint_lab.providers import mock
from footprint_lab.providers.types import LLMRequest

SENTINEL = "ZQX-caller-data"
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12) | st.just(SENTINEL)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
texts = st.text(min_size=1, max_size=40).filter(str.strip)


def run_agent(agent: Agent, method: str, *args: Any, **keywords: Any) -> Any:
    return asyncio.run(getattr(agent, method)(*args, **keywords))


def tools() -> list[Any]:
    return [counted_tool("lookup", []), asking_tool(), counted_tool("notify", [])]


def scripted_agent(**keywords: Any) -> Agent:
    script = [{"tool": "lookup", "args": {}}, [{"tool": "confirm", "args": {}}, {"tool": "notify", "args": {}}], "ok"]
    return Agent(provider=mock(replies=script), tools=tools(), **keywords)


@cache
def base_checkpoints() -> dict[str, dict[str, Any]]:
    """One checkpoint of each kind: finished, paused, failed mid-run, and one under a policy."""
    finished_agent = Agent(provider=mock(replies=[{"tool": "lookup", "args": {"q": 1}}, "done"]),
                           tools=[counted_tool("lookup", [])], id="desk")
    run_agent(finished_agent, "run", "hello")
    paused = run_agent(scripted_agent(), "run", "refund please")

    def fail_late(request: LLMRequest) -> Any:
        if request.call_index == 0:
            return {"tool": "lookup", "args": {}}
        raise ConnectionError("reset")

    failing = Agent(provider=mock(respond=fail_late), tools=[counted_tool("lookup", [])])
    try:
        run_agent(failing, "run", "try")
    except RunCheckpointError as err:
        failed = err.checkpoint
    covered = run_agent(scripted_agent(redact=Redaction(keys=["password"], builtins=["openai_key"])), "run", "x")
    return {
        "finished": finished_agent.checkpoint().model_dump(mode="json"),  # type: ignore[union-attr]
        "paused": paused.checkpoint.model_dump(mode="json"),
        "failed": failed.model_dump(mode="json"),
        "covered": covered.checkpoint.model_dump(mode="json"),
    }


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from paths(value, (*prefix, index))


def mutate(data: dict[str, Any], draw: Any) -> dict[str, Any]:
    """One random edit: a string rewritten, a value replaced, a key or item removed, added or doubled."""
    data = copy.deepcopy(data)
    operation = draw(st.sampled_from(["retext", "replace", "delete", "add", "duplicate"]))

    def at(path: tuple[Any, ...]) -> Any:
        node: Any = data
        for step in path:
            node = node[step]
        return node

    candidates = [p for p in paths(data) if p and (operation != "retext" or isinstance(at(p), str))]
    *parent_path, last = draw(st.sampled_from(candidates))
    parent = at(tuple(parent_path))
    if operation == "retext":
        parent[last] = draw(texts | st.just(SENTINEL))
    elif operation == "delete":
        del parent[last]
    elif operation == "add" and isinstance(parent[last], dict):
        parent[last][draw(st.text(max_size=8))] = draw(json_values)
    elif operation == "add" and isinstance(parent[last], list):
        parent[last].insert(draw(st.integers(0, len(parent[last]))), draw(json_values))
    elif operation == "duplicate" and isinstance(parent, list):
        parent.insert(last, copy.deepcopy(parent[last]))
    else:
        parent[last] = draw(json_values)
    return data


@PROPERTY
@given(user=texts, result=texts, args=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
       answer=st.text(max_size=30))
def test_a_checkpoint_survives_json_round_trips_byte_for_byte(
    user: str, result: str, args: dict[str, Any], answer: str
) -> None:
    tool = define_tool(name="echo", description="Echo.", input_schema={"type": "object"}, fn=lambda **_: result)
    agent = Agent(provider=mock(replies=[{"tool": "echo", "args": args}, answer]), tools=[tool])
    run_agent(agent, "run", user)
    checkpoint = agent.checkpoint()
    assert checkpoint is not None
    text = checkpoint.model_dump_json()
    again = Checkpoint.model_validate_json(text)
    assert again == checkpoint
    assert again.model_dump_json() == text
    continued = run_agent(Agent(provider=mock(reply="ok"), tools=[tool]), "run", "more", continue_from=text)
    assert continued.recording.messages[: len(checkpoint.history)] == [
        {k: v for k, v in m.items()} for m in checkpoint.history
    ]


#: Each kind of checkpoint with the doors that continue it when it is intact.
DOORS = [("finished", "run"), ("failed", "run"), ("failed", "resume_on_error"), ("paused", "resume"),
         ("covered", "resume"), ("finished", "resume"), ("paused", "run")]


@PROPERTY
@given(data=st.data(), pair=st.sampled_from(DOORS))
def test_a_mutated_checkpoint_is_refused_by_name_or_continues_correctly(data: Any, pair: tuple[str, str]) -> None:
    base, door = pair
    original = base_checkpoints()[base]
    mutated = mutate(original, data.draw)
    agent = Agent(provider=mock(reply="ok"), tools=tools())
    arguments = {"run": ("next",), "resume": (mutated, "yes"), "resume_on_error": (mutated,)}[door]
    keywords = {"continue_from": mutated} if door == "run" else {}
    try:
        run = run_agent(agent, door, *arguments, **keywords)
    except Refusal as refused:
        assert refused.code.startswith("ERR_")
        assert SENTINEL not in str(refused)
        assert agent.checkpoint() is None and agent.last_run is None  # nothing ran, nothing moved
        return
    assert run.status == "finished" and run.answer == "ok"
    history = mutated["history"]
    if mutated["redaction"] is None:
        assert run.recording.messages[: len(history)] == history
    assert agent.checkpoint() is not None


@PROPERTY
@given(data=st.data(), pair=st.sampled_from(DOORS[:4]))
def test_rewritten_turn_texts_continue_with_exactly_that_history(data: Any, pair: tuple[str, str]) -> None:
    base, door = pair
    changed = copy.deepcopy(base_checkpoints()[base])
    for turn in changed["history"]:
        if isinstance(turn.get("content"), str):
            turn["content"] = data.draw(texts)
    agent = Agent(provider=mock(reply="ok"), tools=tools())
    arguments = {"run": ("next",), "resume": (changed, "yes"), "resume_on_error": (changed,)}[door]
    run = run_agent(agent, door, *arguments, **({"continue_from": changed} if door == "run" else {}))
    assert run.status == "finished" and run.answer == "ok"
    assert run.recording.messages[: len(changed["history"])] == changed["history"]
