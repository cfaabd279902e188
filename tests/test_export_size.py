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
