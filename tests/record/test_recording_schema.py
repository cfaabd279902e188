"""The saved recording: each transcript message's text stored once (schema version 2); version 1, of the
unreleased 0.1, refused by name."""

from __future__ import annotations

import json
from typing import Any

import pytest

from footprint_lab import Agent, Recording, Sequence, load_recording, tool
from footprint_lab.errors import InvalidRecordingError, RecordingVersionError
from footprint_lab.providers import mock
from footprint_lab.record.saved_form import packed, unpacked
from footprint_lab.record.schema import MESSAGE_REF, SCHEMA_VERSION


def fetching_agent(result: str, calls: int = 1) -> Agent:
    @tool
    def fetch(q: str) -> str:
        """Fetch a page."""
        return result

    replies: list[Any] = [{"tool": "fetch", "args": {"q": str(n)}} for n in range(calls)]
    return Agent(provider=mock(replies=[*replies, "done"]), tools=[fetch], system="Answer briefly.")


@pytest.mark.parametrize(("size", "calls"), [(1_000_000, 1), (200_000, 3), (50_000, 2)])
def test_a_big_tool_result_is_saved_once(size: int, calls: int) -> None:
    result = "x" * size
    run = fetching_agent(result, calls).run_sync("go")
    saved = run.recording.model_dump_json()
    # once: in the transcript, not again in commits and pieces, and a later call's same result refers to it
    assert saved.count(result) == 1
    assert len(saved) < calls * size + 50_000
    assert len(json.dumps(packed(run.recording))) < calls * size + 50_000
    again = Recording.model_validate_json(saved)
    assert again == run.recording  # in memory every record holds its value again
    tool_pieces = [p for p in again.context_pieces if p.source_kind == "tool_result"]
    assert [p.content for p in tool_pieces] == [result] * calls
    entries = [e for c in again.commits for e in c.entries if e.path == ["messages"]]
    assert [e.value for e in entries] == again.messages


def test_a_member_runs_recording_is_saved_once_too() -> None:
    result = "y" * 300_000
    composed = Sequence([("fetch", fetching_agent(result)), ("echo", Agent(provider=mock(reply="ok")))]).run_sync("go")
    saved = composed.recording.model_dump_json()
    assert saved.count(result) == 1
    assert Recording.model_validate_json(saved) == composed.recording
    assert load_recording(json.dumps(packed(composed.recording))) == composed.recording


def test_the_saved_form_refers_to_messages_by_index_and_unpacked_reads_them_back() -> None:
    run = fetching_agent("the page").run_sync("go")
    data = json.loads(run.recording.model_dump_json())
    assert data["schema_version"] == SCHEMA_VERSION == 2
    refs = [e[MESSAGE_REF] for c in data["commits"] for e in c["entries"] if MESSAGE_REF in e]
    assert refs == list(range(len(data["messages"])))
    assert all("value" not in e for c in data["commits"] for e in c["entries"] if MESSAGE_REF in e)
    record_form = unpacked(data)
    assert [e["value"] for c in record_form["commits"] for e in c["entries"] if e["path"] == ["messages"]] \
        == data["messages"]
    assert all(isinstance(p["content"], str) for p in record_form["context_pieces"])


@pytest.mark.parametrize("reference", [99, -1, "0", None, 1.0])
def test_a_reference_that_names_no_message_is_refused_by_field(reference: Any) -> None:
    data = json.loads(fetching_agent("the page").run_sync("go").recording.model_dump_json())
    commit = next(n for n, c in enumerate(data["commits"]) if any(MESSAGE_REF in e for e in c["entries"]))
    entry = next(n for n, e in enumerate(data["commits"][commit]["entries"]) if MESSAGE_REF in e)
    data["commits"][commit]["entries"][entry][MESSAGE_REF] = reference
    with pytest.raises(InvalidRecordingError) as refused:
        load_recording(json.dumps(data))
    assert refused.value.field == f"commits.{commit}.entries.{entry}.{MESSAGE_REF}"


@pytest.mark.parametrize("where", ["top", "member"])
def test_a_version_1_recording_is_refused_by_name_as_a_format_never_released(where: str) -> None:
    """Schema version 1 was written by footprint_lab 0.1, never released: refused by name, saying what to do."""
    composed = Sequence([("fetch", fetching_agent("the page")), ("echo", Agent(provider=mock(reply="ok")))])
    data = json.loads(composed.run_sync("go").recording.model_dump_json())
    (data if where == "top" else data["children"][1])["schema_version"] = 1
    with pytest.raises(RecordingVersionError) as refused:
        load_recording(json.dumps(data))
    error = refused.value
    field = "schema_version" if where == "top" else "children.1.schema_version"
    assert (error.code, error.field, error.version) == ("ERR_RECORDING_VERSION", field, 1)
    assert "unreleased" in str(error) and "Record the run again" in str(error)
    assert isinstance(error, InvalidRecordingError)


@pytest.mark.parametrize("entry", [None, 5, "text", [1, 2]])
def test_an_entry_that_is_not_a_record_beside_a_reference_is_refused_by_field(entry: Any) -> None:
    data = json.loads(fetching_agent("the page").run_sync("go").recording.model_dump_json())
    commit = next(n for n, c in enumerate(data["commits"]) if any(MESSAGE_REF in e for e in c["entries"]))
    data["commits"][commit]["entries"].append(entry)
    where = len(data["commits"][commit]["entries"]) - 1
    with pytest.raises(InvalidRecordingError) as refused:
        load_recording(json.dumps(data))
    assert refused.value.field == f"commits.{commit}.entries.{where}"


@pytest.mark.parametrize("column", [["step_id"], {"a": 1}, 3, None])
def test_a_table_whose_columns_are_not_names_is_refused_by_field(column: Any) -> None:
    data = packed(fetching_agent("the page").run_sync("go").recording)
    data["steps"]["columns"][0] = column
    with pytest.raises(InvalidRecordingError) as refused:
        load_recording(json.dumps(data))
    assert refused.value.field.startswith("steps")
