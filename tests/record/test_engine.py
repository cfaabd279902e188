"""The recorded engine: step ids, tracked reads, delta commits, decisions and events."""

from __future__ import annotations

import json
from typing import Any

import pytest

from footprint_lab import Agent, Parallel, Sequence, define_tool
from footprint_lab.providers import mock
from footprint_lab.record import EVENT_TYPES, Recorder, format_step_id, parse_step_id
from footprint_lab.record.build import build_recording


def test_step_ids_render_and_parse_in_one_place():
    assert format_step_id("call-llm", 3) == "call-llm#3"
    assert format_step_id("call-llm", 3, "review#2") == "review#2/call-llm#3"
    parsed = parse_step_id("sequence#1/review#2/call-llm#3")
    assert (parsed.path, parsed.stage, parsed.number) == ("sequence#1/review#2", "call-llm", 3)
    assert str(parsed) == "sequence#1/review#2/call-llm#3"
    for bad in ("call-llm", "#3", "call-llm#x", "", None):
        assert parse_step_id(bad) is None


def test_one_counter_per_run_and_one_commit_per_step():
    rec = Recorder("run-1")
    first = rec.begin("seed")
    rec.write(("a",), "set", 1)
    rec.write(("b",), "set", 2)
    rec.end()
    second = rec.begin("work")
    rec.end()
    assert (first, second) == ("seed#1", "work#2")
    assert [c[0] for c in rec.commits] == ["seed#1", "work#2"]
    assert rec.commit(0) == ("seed#1", ((("a",), "set", 1), (("b",), "set", 2)))
    assert rec.commit(1) == ("work#2", ())


def test_a_read_stamps_the_step_that_last_wrote_the_value():
    rec = Recorder("run-1")
    rec.begin("writer")
    rec.write(("x",), "set", "v1")
    rec.end()
    rec.begin("rewriter")
    rec.write(("x",), "set", "v2")
    rec.end()
    rec.begin("reader")
    assert rec.read(("x",)) == "v2"
    assert rec.read(("never",)) is None
    rec.end()
    assert rec.reads[0] == ("reader#3", ("x",), "rewriter#2", "v2")
    assert rec.reads[1][2] is None


def test_commits_are_deltas_not_state_copies():
    rec = Recorder("run-1")
    rec.begin("grow")
    for i in range(1000):
        rec.write(("items",), "append", i)
    rec.end()
    rec.begin("one-more")
    rec.write(("items",), "append", "last")
    rec.write(("cfg",), "merge", {"a": 1})
    rec.write(("cfg",), "merge", {"b": 2})
    rec.write(("gone",), "delete", None)
    rec.end()
    assert rec.commit(1)[1][0] == (("items",), "append", "last")
    assert len(rec.commit(1)[1]) == 4
    assert rec.state[("cfg",)] == {"a": 1, "b": 2}
    assert len(rec.state[("items",)]) == 1001


def test_unknown_verb_is_rejected():
    rec = Recorder("run-1")
    rec.begin("s")
    with pytest.raises(ValueError):
        rec.write(("x",), "upsert", 1)


def test_decisions_keep_their_evidence():
    rec = Recorder("run-1")
    rec.begin("route")
    rec.decide("first matching predicate", [("urgent", {"message": "help now"}, True)], "urgent")
    rec.end()
    recording = build_recording(rec, runner={"kind": "test"}, status="finished", input={"message": "m"},
                                answer=None, ended_ns=rec.started_ns)
    decision = recording.decisions[0]
    assert decision.step_id == "route#1" and decision.chosen == "urgent"
    assert decision.evidence[0].reads == {"message": "help now"} and decision.evidence[0].result is True


def test_listeners_get_events_in_order_and_a_raising_one_never_breaks_the_run():
    got = []

    def good(event):
        got.append(event)

    def bad(event):
        raise RuntimeError("subscriber bug")

    noop = define_tool(name="noop", description="x", input_schema={"type": "object"}, fn=lambda: "ok")
    agent = Agent(provider=mock(replies=[{"tool": "noop", "args": {}}, "done"]), tools=[noop])
    agent.subscribe(bad)
    run = agent.run_sync("go", on_event=good)
    assert run.answer == "done"
    assert [e.seq for e in got] == list(range(len(got)))
    assert all(e.run_id == run.run_id for e in got)
    recorded = run.recording.events
    assert [(e.seq, e.type, e.step_id) for e in got] == [(e.seq, e.type, e.step_id) for e in recorded]
    assert run.recording.listener_errors == len(got)


def test_event_types_and_order_of_a_tool_round():
    noop = define_tool(name="noop", description="x", input_schema={"type": "object"}, fn=lambda: "ok")
    run = Agent(provider=mock(replies=[{"tool": "noop", "args": {}}, "done"]), tools=[noop]).run_sync("go")
    types = [e.type for e in run.recording.events]
    assert set(types) <= set(EVENT_TYPES)
    assert types[0] == "run_start" and types[-1] == "run_end"
    for required in ("step_start", "step_end", "read", "write", "commit", "llm_start", "llm_end",
                     "tool_start", "tool_end"):
        assert required in types
    order = [t for t in types if t in ("llm_start", "llm_end", "tool_start", "tool_end")]
    assert order == ["llm_start", "llm_end", "tool_start", "tool_end", "llm_start", "llm_end"]
    # every step opens, commits exactly once, then closes
    for step in run.recording.steps:
        own = [e.type for e in run.recording.events if e.step_id == step.step_id and e.type in
               ("step_start", "commit", "step_end")]
        assert own == ["step_start", "commit", "step_end"]


def test_the_exact_event_sequence_of_one_tool_round():
    noop = define_tool(name="noop", description="x", input_schema={"type": "object"}, fn=lambda: "ok")
    live = []
    agent = Agent(provider=mock(replies=[{"tool": "noop", "args": {}}, "done"]), tools=[noop], system="S")
    run = agent.run_sync("go", on_event=live.append)

    def step(name, *middle):
        return [("step_start", name), *((kind, name) for kind in middle), ("commit", name), ("step_end", name)]

    def call(name):
        return step(name, "read", "read", "read", "llm_start", "llm_end", "write", "write")

    expected = [
        ("run_start", ""),
        *step("seed#1", "write", "write"),
        *step("assemble#2", "write", "write"),
        *call("call-llm#3"),
        ("step_start", "tool#4"), ("tool_start", "tool#4"), ("write", "tool#4"), ("tool_end", "tool#4"),
        ("commit", "tool#4"), ("step_end", "tool#4"),
        *step("assemble#5", "write", "write"),
        *call("call-llm#6"),
        *step("final#7", "read", "write"),
        ("run_end", ""),
    ]
    assert [(e.type, e.step_id) for e in run.recording.events] == expected
    assert [(e.seq, e.type, e.step_id) for e in live] == [(n, *pair) for n, pair in enumerate(expected)]
    reads = [e.payload for e in run.recording.events if e.type == "read"]
    assert reads[3:6] == [{"path": "slots.system", "writer": "assemble#5"}, {"path": "messages", "writer": "tool#4"},
                          {"path": "slots.tools", "writer": "assemble#5"}]
    assert reads[-1] == {"path": "last_response", "writer": "call-llm#6"}


async def test_member_runs_share_one_envelope_and_one_sequence_with_their_composition():
    live = []
    tree = Sequence({
        "first": Agent(provider=mock(reply="a"), name="first"),
        "fan": Parallel({"left": Agent(provider=mock(reply="l")), "right": Agent(provider=mock(reply="r"))},
                        merge=lambda answers: answers["left"] + answers["right"]),
    })
    run = await tree.run("go", on_event=live.append)
    assert run.answer == "lr"
    # one counter for the whole run: delivered in order, no number used twice, none skipped
    assert [e.seq for e in live] == list(range(len(live)))
    assert {e.run_id for e in live} == {run.run_id}

    def every_event(recording):
        yield from recording.events
        for child in recording.children:
            yield from every_event(child)

    # every recording of the tree keeps the numbers its events were delivered with
    recorded = sorted(every_event(run.recording), key=lambda e: e.seq)
    assert [(e.seq, e.type, e.step_id, e.payload) for e in recorded] == [
        (e.seq, e.type, e.step_id, e.payload) for e in live]
    # a member's run nests inside the step that mounted it
    by_step = {(e.type, e.step_id): e.seq for e in live}
    members = run.recording.children[0], *run.recording.children[1].children
    for member in members:
        seqs = [e.seq for e in member.events]
        assert seqs == sorted(seqs) and member.events[0].type == "run_start" and member.events[-1].type == "run_end"
        assert by_step[("step_start", member.path)] < seqs[0] < seqs[-1] < by_step[("step_end", member.path)]


def test_unsubscribe_stops_delivery():
    got = []
    agent = Agent(provider=mock(reply="x"))
    unsubscribe = agent.subscribe(got.append)
    agent.run_sync("one")
    count = len(got)
    unsubscribe()
    agent.run_sync("two")
    assert count > 0 and len(got) == count


def test_failed_step_is_closed_in_the_record():
    def explode(request):
        raise TimeoutError("slow")

    agent = Agent(provider=mock(respond=explode))
    with pytest.raises(TimeoutError):
        agent.run_sync("go")
    recording = agent.last_run.recording
    assert recording.status == "failed"
    failed = [s for s in recording.steps if s.status == "error"]
    assert [s.stage for s in failed] == ["call-llm"]
    assert recording.error["step_id"] == failed[0].step_id
    assert any(e.type == "error" for e in recording.events)


def test_steps_and_events_frames():
    run = Agent(provider=mock(reply="x")).run_sync("go")
    steps = run.steps
    assert list(steps["stage"]) == ["seed", "assemble", "call-llm", "final"]
    assert {"step_id", "stage", "status", "duration_ms"} <= set(steps.columns)
    events = run.events
    assert {"seq", "type", "step_id", "payload"} <= set(events.columns)
    assert list(events["seq"]) == sorted(events["seq"])


async def test_a_recordings_lists_are_built_on_first_use_and_read_and_dump_like_lists():
    import copy
    import json
    import pickle

    from footprint_lab import Conditional, Recording, Redaction
    from footprint_lab.examples.scenarios import planted_fact_agent

    flow = Conditional([("refunds", lambda message: "refund" in message, planted_fact_agent())],
                       otherwise=("other", Agent(provider=mock(reply="no"))))
    runs = [await planted_fact_agent().run("Please refund order A-1001."),
            await flow.run("Please refund order A-1001."),
            await Agent(provider=mock(reply="ok TCK-123456"), redact=Redaction(patterns={"t": r"TCK-\d{6}"}))
            .run("Ticket TCK-123456")]
    for run in runs:
        recording = run.recording
        dumped = recording.model_dump_json()
        # The JSON of a fresh recording (its lists not yet built) is that of plain lists of models,
        # field order included: loading it and dumping again gives the same bytes.
        again = Recording.model_validate_json(dumped)
        assert again.model_dump_json() == dumped == recording.model_dump_json()
        assert again == recording and recording == again
        assert len(recording.events) == len(json.loads(dumped)["events"])
        assert recording.events[0] == again.events[0] and recording.events[-1].seq == again.events[-1].seq
        assert recording.steps[:2] == again.steps[:2] and list(recording.reads) == again.reads
        assert pickle.loads(pickle.dumps(recording)) == recording == copy.deepcopy(recording)
    assert "TCK-123456" not in runs[2].recording.model_dump_json()
    assert runs[1].recording.decisions[0].chosen == "refunds"
    recording = runs[0].recording
    recording.annotations.append({"note": "checked"})
    recording.events.append(recording.events[0])  # a list to change, like any other
    assert recording.events[-1] == recording.events[0]


def test_a_recordings_rows_sort_and_add_like_lists():
    run = Agent(provider=mock(replies=[{"tool": "noop", "args": {}}, "done"]),
                tools=[define_tool(name="noop", description="x", input_schema={"type": "object"}, fn=lambda: "ok")]
                ).run_sync("go")
    events = run.recording.events
    newest_first = sorted(events, key=lambda e: -e.seq)
    events.sort(key=lambda e: -e.seq)
    assert list(events) == newest_first and events.index(newest_first[0]) == 0
    extra = newest_first[:1]
    assert (events + extra)[-1] == newest_first[0] and (extra + events)[1:] == newest_first


def test_captured_values_are_recorded_as_json_writes_them() -> None:
    """Whatever a tool or a state write holds is recorded as JSON-native data, keys sorted: read back
    from orjson when it can write it, else walked, with the same result for what both can write."""
    import dataclasses
    import enum
    import uuid

    from footprint_lab.record.records import jsonable

    class Colour(enum.Enum):
        RED = "red"

    @dataclasses.dataclass
    class Box:
        size: int

    ident = uuid.UUID(int=7)
    native = {"b": [1, (2, 3.5)], "a": {"z": Colour.RED, "y": ident, "x": float("nan")}, "c": None}
    expected = {"a": {"x": None, "y": str(ident), "z": "red"}, "b": [1, [2, 3.5]], "c": None}
    assert jsonable(native) == expected and list(jsonable(native)) == ["a", "b", "c"]
    walked = {**native, 1: {2, 1}}  # a key that is not text sends the whole value down the walk
    assert jsonable(walked) == {**expected, "1": [1, 2]} and list(jsonable(walked)) == ["1", "a", "b", "c"]
    assert jsonable({"s": "\ud800", "n": 2**70}) == {"n": 2**70, "s": "\ud800"}
    assert jsonable(Box(3)) == repr(Box(3)) and jsonable([float("inf")]) == [None]


def _captured_values() -> Any:
    import enum
    import uuid

    from hypothesis import strategies as st

    class Verdict(enum.Enum):
        KEPT = "kept"
        DROPPED = 2

    odd = st.sampled_from([Verdict.KEPT, Verdict.DROPPED, uuid.UUID(int=9), "\ud800"])
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=6), odd)
    keys = st.one_of(st.text(max_size=4), st.integers(-3, 3))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                        | st.dictionaries(keys, inner, max_size=3), max_leaves=10)


def test_the_fast_and_the_walked_way_record_any_value_alike() -> None:
    """``jsonable`` takes orjson's way when it can and walks the value otherwise: both give the same data,
    so what a record holds never depends on which way its value went."""
    import enum
    import uuid

    from hypothesis import example, given

    from footprint_lab.record.records import _walk, jsonable, jsonable_each

    class Kind(enum.Enum):
        TOOL = "tool"

    specials = [float("nan"), float("-inf"), Kind.TOOL, uuid.UUID(int=3), (1, "a")]

    @given(_captured_values())
    @example(specials)  # each written natively by orjson
    @example({0: specials, "b": {"a": 1}})  # the same, down the walk (a key that is not text)
    @example([2**70, specials])
    def check(value: Any) -> None:
        walked = json.dumps(_walk(value), allow_nan=False)  # JSON-native: no NaN left, keys sorted at every level
        assert json.dumps(jsonable(value)) == walked == json.dumps(json.loads(walked), sort_keys=True)
        assert json.dumps(jsonable_each([value, value])) == f"[{walked}, {walked}]"

    check()
