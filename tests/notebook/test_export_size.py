"""An exported notebook holds a large value once per place the recording keeps it, and its views stay bounded
(issue 46, low): a 5 MB answer adds no more than its recording's size and a bounded view to the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from footprint_lab import Agent, define_tool
from footprint_lab.lab.views import recording_data
from footprint_lab.notebook import export, load_runs, verify_file
from footprint_lab.providers import mock

#: what the views beside the recording may add, whatever the values' size (an answer view, the backtrack's text)
VIEWS_BOUND = 1_000_000


def big_run(where: str) -> object:
    big = "evidence " * 600_000  # 5.4 MB
    if where == "answer":
        return Agent(provider=mock(reply=big), seal=True).run_sync("Say it all.")
    dump = define_tool(name="dump", description="Read the log.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: big)
    return Agent(provider=mock(replies=[{"tool": "dump", "args": {}}, "Read."]), tools=[dump],
                 seal=True).run_sync("Read the log.")


@pytest.mark.parametrize("where", ["answer", "tool-result"])
def test_a_large_value_is_not_multiplied_by_the_export(tmp_path: Path, where: str) -> None:
    run = big_run(where)
    recording = len(json.dumps(recording_data(run.recording), ensure_ascii=False, separators=(",", ":")))
    path = export([run], tmp_path / "big.ipynb", title="Big")
    assert path.stat().st_size <= recording + VIEWS_BOUND
    notebook = json.loads(path.read_text())
    views = sum(len(json.dumps(value)) for cell in notebook["cells"] for output in cell.get("outputs", [])
                for mime, value in output["data"].items() if "recording" not in mime)
    assert views <= VIEWS_BOUND
    (loaded,) = load_runs(path)
    assert loaded.recording.answer == run.recording.answer  # the recording rides whole
    assert all(verdict.holds for _, verdict in verify_file(path))


#: what a saved recording may weigh per character of the one large text it holds (issue 46, low: it was 5x)
SAVED_BOUND = 1.5


def large_runs() -> dict[str, object]:
    big = "evidence " * 600_000  # 5.4 MB
    agent = Agent(provider=mock(reply=big), seal=True)
    relay = Agent(provider=mock(respond=lambda request: request.messages[-1]["content"]))
    from footprint_lab import Sequence

    return {
        "answer": agent.run_sync("Say it all."),
        "tool result": big_run("tool-result"),
        "member answer": Sequence({"say": agent, "relay": relay}).run_sync("Say it all."),
        "nested member": Sequence({"outer": Sequence({"say": agent}), "relay": relay}).run_sync("Say it all."),
    }


@pytest.mark.parametrize("kind", ["answer", "tool result", "member answer", "nested member"])
def test_a_saved_recording_holds_a_large_text_once_and_reads_back_whole(kind: str) -> None:
    from footprint_lab import load_recording, verify

    run = large_runs()[kind]
    size = 5_400_000
    text = run.recording.model_dump_json()
    assert len(text) <= SAVED_BOUND * size
    assert len(json.dumps(recording_data(run.recording), separators=(",", ":"))) <= SAVED_BOUND * size
    back = load_recording(text)
    assert back == run.recording and back.model_dump() == run.recording.model_dump()
    assert verify(back).holds


def test_a_text_written_once_is_sealed_wherever_it_is_read() -> None:
    from footprint_lab import load_recording, verify
    from footprint_lab.errors import InvalidRecordingError

    data = json.loads(large_runs()["answer"].recording.model_dump_json())
    assert data["answer"].startswith("evidence") and data["messages"][-1]["content"] is None
    changed = {**data, "answer": data["answer"].replace("evidence", "evidenze", 1)}
    assert not verify(load_recording(changed)).holds  # the one copy changed: every place it is read changed
    moved = {**data, "copies": [{**data["copies"][0], "at": [["run_id"]]}]}  # a place that holds a value
    with pytest.raises(InvalidRecordingError) as refused:  # refused by name, never read as another recording
        load_recording(moved)
    assert refused.value.code == "ERR_INVALID_RECORDING"
