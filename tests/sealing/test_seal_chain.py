"""The seal's chain (``sha256-chain/6``): what it reads of each kind is the same whether worked out from
a finished run's columns (no model built), from its records or from its saved data, for runs of every
shape; an edit of a value a record nests (a routine event's payload, a commit entry, an exchange's usage)
is named at its record and field; a payload that does not fit its routine type is sealed as it is; a seal
of an earlier chain (of the unreleased 0.1) is refused by name."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_seal import ending_with, lookup_tool

from footprint_lab import Agent, LLMCall, Parallel, Redaction, Sequence, seal, verify
from footprint_lab.errors import RecordingVersionError
from footprint_lab.notebook import verify_file
from footprint_lab.providers import mock
from footprint_lab.record.build import build_recording
from footprint_lab.record.recorder import Recorder
from footprint_lab.record.recording import RECORDING_MIME, Recording
from footprint_lab.record.schema import ROUTINE_PAYLOADS, UNRELEASED_SEALS
from footprint_lab.sealing.seal import ALGORITHM

KINDS = ("steps", "reads", "commits", "decisions", "events", "context_pieces", "exchanges")


def agent_run(**settings: Any) -> Any:
    replies = [{"tool": "lookup", "args": {"order": "A-1"}}, [{"tool": "lookup", "args": {"order": "B-2"}},
               {"tool": "lookup", "args": {"order": "C-3"}}], "All three shipped."]
    return Agent(provider=mock(replies=replies, **settings.pop("mock", {})), tools=[lookup_tool()], **settings
                 ).run_sync("Where are A-1, B-2 and C-3?").recording


def ending_run(ending: str) -> Any:
    agent = Agent(provider=mock(respond=ending_with(ending)), tools=[lookup_tool()])
    with pytest.raises(BaseException):  # noqa: B017 - a failed run raises its failure, a cancelled one CancelledError
        agent.run_sync("Where is A-1?")
    assert agent.last_run is not None and agent.last_run.status == ending
    return agent.last_run.recording


def composed_run() -> Any:
    def echo(tag: str) -> Agent:
        return Agent(provider=mock(respond=lambda r: f"{tag}({r.messages[-1]['content']})"), name=tag)

    fan = Parallel({"x": echo("x"), "y": Sequence({"z": echo("z")})},
                   merge=lambda answers: " | ".join(answers.values()))
    return Sequence({"a": echo("a"), "fan": fan}).run_sync("hi").recording


def hand_made_run() -> Recording:
    """A capture no agent makes: writes outside any step and after the last commit, two steps opened side by
    side and closed out of order, a step left running, a decision, events of the runner's own."""
    rec = Recorder("run-hand")
    rec.begin("seed")
    rec.write(("input", "message"), "set", "go")
    rec.end()
    rec.write(("loose",), "set", 1)  # outside any step: in no commit
    rec.begin("route")
    rec.decide("first match", [("urgent", {"message": "go"}, True)], "urgent")
    rec.write(("route",), "set", "urgent")
    rec.end()
    left, _ = rec.open_step("left", 1, reads=[("input", "message")])
    right, _ = rec.open_step("right", 1, reads=[("route",)])
    rec.close_step(right, [(("out", "right"), "set", "R")])
    rec.close_step(left, [(("out", "left"), "append", {"n": 1})], status="error")
    rec.emit("tool_start", right, {"tool": "t", "args": {"k": [1, 2]}})
    rec.begin("late", 2)
    rec.read(("out", "left"))
    rec.write(("late",), "merge", {"a": 1})  # never committed: the step is left running
    return build_recording(rec, runner={"kind": "test"}, status="failed", input={"message": "go"}, answer=None,
                           ended_ns=rec.started_ns + 1000)


def otel_run() -> Any:
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("opentelemetry.sdk")
    from test_otel_import import _spans

    from footprint_lab.otel import from_spans

    (run,) = from_spans(_spans())
    return run.recording


SHAPES: dict[str, Callable[[], Any]] = {
    "agent": agent_run,
    "redacted": lambda: agent_run(redact=Redaction(patterns={"order": r"[ABC]-\d"})),
    "streamed": lambda: agent_run(mock={"stream": True}),
    "failed": lambda: ending_run("failed"),
    "cancelled": lambda: ending_run("cancelled"),
    "composition": composed_run,
    "llm call": lambda: LLMCall(provider=mock(reply="Short answer."), system="Be brief.").run_sync("Why?").recording,
    "hand made": hand_made_run,
    "otel": otel_run,
}


def every_recording(recording: Recording) -> list[Recording]:
    return [recording, *(member for child in recording.children for member in every_recording(child))]


def digests(recording: Recording) -> list[dict[str, str]]:
    return [dict(member.seal.kinds) for member in every_recording(recording) if member.seal is not None]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_chain_read_from_the_capture_is_the_chain_read_from_the_records(shape: str) -> None:
    recording = SHAPES[shape]()
    assert any(not getattr(r, kind).built for r in every_recording(recording) for kind in KINDS)
    from_capture = digests(seal(recording))
    assert recording.seal is not None and recording.seal.algorithm == ALGORITHM
    for member in every_recording(recording):  # every list made into models, as a view makes them
        for kind in KINDS:
            list(getattr(member, kind))
    assert digests(seal(recording)) == from_capture
    data = json.loads(recording.model_dump_json())
    loaded = Recording.model_validate(data)
    assert verify(loaded).holds
    # loaded and checked as columns: no record made a model (a long run's load builds none)
    assert not any(rows.built for member in every_recording(loaded) for kind in KINDS
                   if (rows := getattr(member, kind)))


def saved_agent_run() -> dict[str, Any]:
    recording = agent_run(seal=True)
    return json.loads(recording.model_dump_json())


def first(data: dict[str, Any], kind: str, test: Callable[[dict[str, Any]], bool]) -> int:
    return next(n for n, record in enumerate(data[kind]) if test(record))


@pytest.mark.parametrize(("kind", "pick", "change", "field"), [
    ("events", lambda e: e["type"] == "write", lambda e: e["payload"].update(path="slots.system"), "payload"),
    ("events", lambda e: e["type"] == "step_end", lambda e: e["payload"].update(status="error"), "payload"),
    ("events", lambda e: e["type"] == "commit", lambda e: e["payload"].update(paths="answer"), "payload"),
    ("events", lambda e: e["type"] == "read", lambda e: e["payload"].update(extra=1), "payload"),
    ("events", lambda e: e["type"] == "llm_end", lambda e: e["payload"].update(output_tokens=99), "payload"),
    ("events", lambda e: e["type"] == "tool_end", lambda e: e.update(run_id="run-other"), "run_id"),
    ("commits", lambda c: c["step_id"].startswith("tool"), lambda c: c["entries"][0].update(verb="set"), "entries"),
    ("exchanges", lambda x: x["iteration"] == 2, lambda x: x["response"]["usage"].update(input_tokens=7), "response"),
    ("exchanges", lambda x: x["iteration"] == 2, lambda x: x["response"]["tool_calls"].pop(), "response"),
])
def test_an_edit_of_a_nested_value_is_named_at_its_record(kind: str, pick: Any, change: Any,
                                                          field: str) -> None:
    data = saved_agent_run()
    if kind == "events":  # the saved form writes events as a table: edit the records the door reads back
        data = json.loads(Recording.model_validate(data).model_dump_json(exclude={"seal"})) | {"seal": data["seal"]}
    index = first(data, kind, pick)
    change(data[kind][index])
    verdict = verify(Recording.model_validate(data))
    assert (verdict.status, verdict.kind, verdict.index, verdict.field) == ("broken", kind, index, field)
    assert verdict.step_id == data[kind][index]["step_id"]


def test_a_payload_that_does_not_fit_its_routine_type_is_sealed_as_it_is_and_an_edit_of_it_is_named() -> None:
    data = json.loads(agent_run().model_dump_json())
    recording = Recording.model_validate(data)
    events = recording.events
    odd = next(n for n, event in enumerate(events) if event.type == "write")
    events[odd].payload = {**events[odd].payload, "note": "kept beside the path"}
    gone = next(n for n, event in enumerate(events) if event.type == "step_end")
    events[gone].payload = {}
    sealed = json.loads(seal(recording).model_dump_json())
    assert verify(Recording.model_validate(sealed)).holds
    edited = Recording.model_validate(sealed)
    edited.events[odd].payload["note"] = "changed"
    verdict = verify(edited)
    assert (verdict.kind, verdict.index, verdict.field) == ("events", odd, "payload")


def test_an_edited_run_id_is_named_at_its_event_when_events_held_other_run_ids_as_sealed() -> None:
    recording = Recording.model_validate(json.loads(agent_run().model_dump_json()))
    recording.events[2].run_id = "run-member"  # so it was sealed: the column is written whole
    edited = Recording.model_validate(json.loads(seal(recording).model_dump_json()))
    assert verify(edited).holds
    edited.events[7].run_id = "run-other"
    verdict = verify(edited)
    assert (verdict.kind, verdict.index, verdict.field) == ("events", 7, "run_id")


def test_the_recorder_writes_routine_events_itself_with_the_keys_the_schema_names() -> None:
    rec = Recorder("run-keys")
    step = rec.begin("work", 1)
    rec.read(("input", "message"))
    rec.write(("answer",), "set", "done")
    rec.end()
    made = {type_: rec.payload(type_, payload, ref) for _, type_, step_id, payload, ref in zip(
        rec.event_seqs, rec.event_types, rec.event_steps, rec.event_payloads, rec.event_refs, strict=True)}
    assert {type_: tuple(payload) for type_, payload in made.items()} == ROUTINE_PAYLOADS
    for type_ in ROUTINE_PAYLOADS:
        with pytest.raises(ValueError, match="written by the recorder"):
            rec.emit(type_, step, {})


@pytest.mark.parametrize("algorithm", UNRELEASED_SEALS)
def test_a_notebook_sealed_by_an_earlier_chain_is_not_checked_and_says_how_to_seal_it_again(
        tmp_path: Path, algorithm: str) -> None:
    """The chains before this one (``sha256-chain/2`` to ``/4``) belong to 0.1, never released: a notebook
    output whose recording claims one is not checked (never said to hold), its verdict naming the field."""
    import nbformat
    from notebook_kit import displayed

    output = displayed(Agent(provider=mock(reply="Shipped."), seal=True).run_sync("Where is A-1?"))
    output["data"][RECORDING_MIME]["seal"]["algorithm"] = algorithm
    cell = nbformat.v4.new_code_cell("run")
    cell.outputs = [output]
    path = tmp_path / "old.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    ((_, verdict),) = verify_file(path)
    assert (verdict.status, verdict.kind, verdict.field) == ("unsupported", "recording", "seal.algorithm")
    assert algorithm in str(verdict) and "unreleased" in str(verdict) and not verdict.holds


def shown_in_a_notebook(path: Path, change: Callable[[dict[str, Any]], Any]) -> tuple[Path, dict[str, Any]]:
    """A notebook showing a sealed run, its output's events table changed by ``change``, and that recording."""
    import nbformat
    from notebook_kit import displayed

    output = displayed(Agent(provider=mock(replies=[{"tool": "lookup", "args": {"order": "A-1"}}, "Shipped."]),
                             tools=[lookup_tool()], seal=True).run_sync("Where is A-1?"))
    carried = output["data"][RECORDING_MIME]
    assert isinstance(carried["events"], dict)  # a notebook output writes events as a table
    change(carried["events"])
    cell = nbformat.v4.new_code_cell("run")
    cell.outputs = [output]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    return path, carried


def test_a_saved_table_is_read_as_its_columns_and_an_edited_cell_is_named(tmp_path: Path) -> None:
    def edit(table: dict[str, Any]) -> None:
        at = table["columns"].index("type")
        row = next(row for row in table["rows"] if row[at] == "tool_end")
        row[at] = "tool_start"

    path, _ = shown_in_a_notebook(tmp_path / "edited.ipynb", edit)
    ((_, verdict),) = verify_file(path)
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "events", "type")
    untouched, _ = shown_in_a_notebook(tmp_path / "untouched.ipynb", lambda table: None)
    assert [v.holds for _, v in verify_file(untouched)] == [True]


@pytest.mark.parametrize(("change", "holds"), [
    # a column the model does not hold: the door refuses the recording, so it never holds
    (lambda table: [table["columns"].append("reviewed"), *(row.append("ok") for row in table["rows"])], False),
    # a field both written once and given as a column: the door reads the column, as sealed
    (lambda table: table.setdefault("same", {}).update(type="write"), True),
    # a column a record needs left out: the door refuses it
    (lambda table: [row.pop(table["columns"].index("seq")) for row in table["rows"]] and table["columns"].remove("seq"),
     False),
])
def test_a_table_not_as_the_saved_form_writes_it_is_read_or_refused_by_the_door(tmp_path: Path, change: Any,
                                                                           holds: bool) -> None:
    path, _ = shown_in_a_notebook(tmp_path / "n.ipynb", change)
    ((_, verdict),) = verify_file(path)
    assert verdict.holds is holds
    if not holds:
        assert (verdict.status, verdict.kind) == ("broken", "recording")


def test_values_a_provider_or_a_scorer_gives_in_other_types_are_sealed_as_a_saved_copy_reads_them() -> None:
    """A count given as 12.0, a flag as 1, a model name as a number, a score as numpy's float: the run goes on
    with each as the recording holds it, so its seal holds after a save, and the loaded copy reads them so."""
    import numpy as np

    from footprint_lab.context import define_rag
    from footprint_lab.providers.types import LLMResponse, Usage

    class Scores:
        def scores(self, query: str) -> list[Any]:
            return [np.float64(2.5e-05), np.float64(0.75)]

    class Scorer:
        name = "custom"

        def index(self, texts: list[str]) -> Scores:
            return Scores()

    rag = define_rag(id="docs", corpus=["Parcels ship daily.", "Invoices go out monthly."], scorer=Scorer(), top_k=2)
    odd = LLMResponse(content="Daily.", usage=Usage(12.0, True, 0, 0, 1), model=5)  # type: ignore[arg-type]
    recording = Agent(provider=mock(respond=lambda request: odd), context=[rag], seal=True).run_sync("When?").recording
    loaded = Recording.model_validate_json(recording.model_dump_json())
    assert verify(loaded).holds and verify(recording).holds
    response = loaded.exchanges[0].response
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.estimated) == (12, 1, True)
    assert response.model == "5"


def test_an_output_displaying_json_nested_past_the_reader_is_broken_not_a_crash(tmp_path: Path) -> None:
    import nbformat
    from notebook_kit import displayed

    output = displayed(Agent(provider=mock(reply="Shipped."), seal=True).run_sync("Where is A-1?"))
    output["data"]["application/json"] = "[" * 300 + "]" * 300  # a MIME type added, its JSON stored as text
    cell = nbformat.v4.new_code_cell("run")
    cell.outputs = [output]
    path = tmp_path / "deep.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    ((_, verdict),) = verify_file(path)
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "display", "application/json")


def test_a_seal_of_an_earlier_chain_is_refused_by_name_and_an_unknown_algorithm_is_the_seal_altered() -> None:
    from footprint_lab import load_recording

    data = saved_agent_run()
    for earlier in UNRELEASED_SEALS:
        data["seal"]["algorithm"] = earlier
        for refused_by in (lambda: load_recording(json.dumps(data)), lambda: verify(Recording.model_validate(data))):
            with pytest.raises(RecordingVersionError) as refused:
                refused_by()
            error = refused.value
            assert (error.code, error.field, error.version) == ("ERR_RECORDING_VERSION", "seal.algorithm", earlier)
            assert "unreleased" in str(error) and "seal=True" in str(error)
    data["seal"]["algorithm"] = "sha256-chain/9"
    verdict = verify(Recording.model_validate(data))
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "seal", "algorithm")


def test_a_run_id_set_back_to_the_recordings_own_is_named_at_its_event() -> None:
    recording = Recording.model_validate(json.loads(agent_run().model_dump_json()))
    recording.events[5].run_id = "run-member"
    edited = Recording.model_validate(json.loads(seal(recording).model_dump_json()))
    edited.events[5].run_id = edited.run_id  # every event the recording's own again: the column reads null
    verdict = verify(edited)
    assert (verdict.kind, verdict.index, verdict.field) == ("events", 5, "run_id")


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_number_json_cannot_write_reads_as_null_as_it_was_sealed(number: str) -> None:
    """footprint_lab saves a value that is no finite number as ``null`` (so does orjson, which the seal hashes
    with); its JSON door reads ``NaN``, ``Infinity`` and numbers past the float range as ``null`` too, so
    the value a reader loads is the value that was sealed, whatever stands in the file."""
    from footprint_lab import load_recording

    text = agent_run(seal=True).model_dump_json()
    data = json.loads(text)
    index, at = next((n, k) for n, commit in enumerate(data["commits"]) for k, entry in enumerate(commit["entries"])
                     if "value" in entry and entry["value"] is None)
    data["commits"][index]["entries"][at]["value"] = "NUMBER"
    edited = json.dumps(data).replace('"NUMBER"', number)
    loaded = load_recording(edited)
    assert loaded.commits[index].entries[at].value is None and verify(loaded).holds
