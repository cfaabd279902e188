"""Loaded recordings are checked once, at the door (issue 17, finding 6).

A hand-edited recording used to load and then crash a view (``IndexError`` in
``run.context()``, a broken ``to_html()``) or lie (piece ``-1`` showed another piece). Now
``load_recording`` and ``Run.from_recording`` refuse it with ``InvalidRecordingError``,
naming the field by its path and never quoting a value; hypothesis mutates a real
recording at random and every outcome is either a refusal by name or views that work.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from record_kit import edited_copy, paths

from footprint_lab import Agent, Redaction, Run, define_tool, load_recording
from footprint_lab.errors import InvalidRecordingError
from footprint_lab.providers import mock
from footprint_lab.record.recording import Recording

SECRET = "Qz-never-quoted-7731"


def sample_recording() -> Recording:
    tool = define_tool(name="lookup", description="Look an order up.",
                       input_schema={"type": "object", "properties": {"order": {"type": "string"}}},
                       fn=lambda order: {"order": order, "age_days": 47})
    agent = Agent(provider=mock(replies=[{"tool": "lookup", "args": {"order": "A-1"}}, "DECLINED"]),
                  system="Refunds within 30 days.", tools=[tool], redact=Redaction(keys=["password"]))
    return agent.run_sync("Refund order A-1?").recording


RECORDING = sample_recording()
DATA = RECORDING.model_dump(mode="json")


def refused(data: Any, *, door: str = "load_recording") -> InvalidRecordingError:
    with pytest.raises(InvalidRecordingError) as caught:
        load_recording(data)
    error = caught.value
    # a newer schema version is its own refusal (a subclass, with its own code)
    assert error.code in ("ERR_INVALID_RECORDING", "ERR_RECORDING_VERSION") and error.door == door
    assert SECRET not in str(error) and SECRET not in repr(error.evidence())
    return error


def edited(edit: Any) -> dict[str, Any]:
    data = copy.deepcopy(DATA)
    edit(data)
    return data


def test_a_saved_recording_loads_from_text_bytes_or_data_and_explains_itself() -> None:
    for saved in (RECORDING.model_dump_json(), RECORDING.model_dump_json().encode(), DATA):
        run = Run.from_recording(load_recording(saved))
        assert run.recording == RECORDING
        assert run.context().equals(Run.from_recording(RECORDING).context())


@pytest.mark.parametrize("value", [None, {"run_id": "x"}, "{}", 5, ["a"]])
def test_run_from_recording_refuses_anything_but_a_recording_by_name(value: Any) -> None:
    with pytest.raises(InvalidRecordingError) as caught:
        Run.from_recording(value)
    assert caught.value.field == "recording" and "load_recording" in str(caught.value)


def test_an_exchange_naming_a_piece_that_is_not_there_is_refused_with_its_path() -> None:
    last = len(DATA["exchanges"]) - 1
    for bad in (999, -1, 2.5):
        error = refused(edited(lambda d, bad=bad: d["exchanges"][-1].update(system_pieces=[bad])))
        assert error.field == f"exchanges.{last}.system_pieces.0"
    # the same edit made on a loaded object is caught by Run.from_recording, before any view runs
    recording = RECORDING.model_copy(deep=True)
    recording.exchanges[-1].system_pieces = [999]
    with pytest.raises(InvalidRecordingError) as caught:
        Run.from_recording(recording)
    assert caught.value.door == "Run.from_recording" and caught.value.field.endswith("system_pieces.0")


def test_tool_calls_that_are_not_tool_calls_and_a_broken_redaction_report_are_refused() -> None:
    at = next(n for n, m in enumerate(DATA["messages"]) if m.get("tool_calls"))
    error = refused(edited(lambda d: d["messages"][at].update(tool_calls=["x"])))
    assert error.field == f"messages.{at}.tool_calls.0"
    error = refused(edited(lambda d: d["redaction"].update(matched=[1, 2])))
    assert error.field == "redaction.matched"


def test_another_schema_version_is_refused_not_read_silently() -> None:
    for version in (99, 0, "1", None):
        assert refused(edited(lambda d, v=version: d.update(schema_version=v))).field == "schema_version"
    recording = RECORDING.model_copy(deep=True)
    recording.schema_version = 99
    with pytest.raises(InvalidRecordingError):
        Run.from_recording(recording)


def test_missing_and_extra_fields_are_refused_by_path_without_pydantics_error_or_the_values() -> None:
    error = refused(edited(lambda d: d.pop("run_id")))
    assert (error.field, error.problem) == ("run_id", "is missing")
    error = refused(edited(lambda d: d["steps"][0].update(smuggled=SECRET)))
    assert (error.field, error.problem) == ("steps.0.smuggled", "is not a field a recording has")
    error = refused(edited(lambda d: d["exchanges"][0].update(message_count=SECRET)))
    assert error.field == "exchanges.0.message_count"
    assert refused("{not json").field == "recording"


# -- random hand edits: refused by name, or every view works -------------------------------
PATHS = paths(DATA)
ODD_VALUES = st.one_of(st.none(), st.integers(-3, 1000), st.text(max_size=5), st.booleans(),
                       st.lists(st.integers(-2, 50), max_size=3), st.just(["x"]), st.just({}), st.just([{}]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.sampled_from(PATHS), value=ODD_VALUES, remove=st.booleans())
def test_a_randomly_edited_recording_is_refused_by_name_or_every_view_works(
    where: tuple[Any, ...], value: Any, remove: bool,
) -> None:
    data = edited_copy(DATA, where, value, remove=remove)
    try:
        recording = load_recording(json.dumps(data))
    except InvalidRecordingError as refusal:
        assert refusal.field and refusal.problem
        return
    run = Run.from_recording(recording)
    for call in range(len(recording.exchanges)):
        run.context(call, left_out=True)
    assert run.to_html()
    assert len(run.events) == len(recording.events) and len(run.steps) == len(recording.steps)
