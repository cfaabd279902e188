"""The doors where saved files come back in (issue 24): nesting, where files are written, member-run
trees and schema versions, each refused by name and tried in several shapes.

- JSON nested past ``MAX_NESTING`` levels (lists or objects; in metadata, in an output's data, in
  a recording inside a notebook, in a widget trait, in JSON text an output carries) is refused
  by every reader, where a few thousand levels used to raise ``RecursionError``;
- a path to write whose folder does not exist, that names a folder, or that cannot be written is
  refused before anything is written, naming the argument and never the path's text;
- a member run that repeats a path (a copy of the top run or of an ancestor, two siblings alike),
  does not extend its parent's path, or sits too many levels down is refused by the recording door;
- the schema version is a whole number; a newer one is skipped by ``load_runs`` with a warning
  naming the cell and the version, while the other recordings load.

The console script's exit codes are in ``test_cli_exit_codes.py``.
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from notebook_kit import OPENAI_KEY, PASSWORD, composed_run, leaky_run, notebook_with, rich_notebook

from footprint_lab import Redaction, Run, load_recording, seal
from footprint_lab.base.saved_json import MAX_NESTING, NestingTooDeep, nesting, parse_json
from footprint_lab.errors import InvalidRecordingError, RecordingVersionError
from footprint_lab.lab.views import answer_view
from footprint_lab.notebook import (
    NotebookFileError,
    RecordingSkippedWarning,
    check_widget_state,
    export,
    load_runs,
    scan,
    scrub,
    to_html,
    verify_file,
)
from footprint_lab.record.recording import RECORDING_MIME, Recording
from footprint_lab.record.recording_door import MAX_MEMBER_DEPTH
from footprint_lab.record.schema import SCHEMA_VERSION

POLICY = Redaction.standard()
MARK = "zq-folder-never-named"


def deep_text(levels: int, shape: str) -> str:
    return "[" * levels + "]" * levels if shape == "list" else '{"k":' * levels + "0" + "}" * levels


def saved_with(path: Path, data: dict[str, Any], place: Callable[[dict[str, Any]], tuple[Any, Any]],
               text: str) -> Path:
    """``data`` saved at ``path`` with the JSON ``text`` written at ``place`` (spliced in as text:
    ``json.dumps`` of a value that deep would itself recurse)."""
    data = copy.deepcopy(data)
    holder, key = place(data)
    holder[key] = "\x00spliced\x00"
    path.write_text(json.dumps(data).replace(json.dumps("\x00spliced\x00"), text, 1), encoding="utf-8")
    return path


def outputs_holding_recordings(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    return [output["data"] for cell in notebook["cells"] for output in cell.get("outputs", [])
            if RECORDING_MIME in output.get("data", {})]


def every_reader(path: Path, folder: Path) -> dict[str, Callable[[], Any]]:
    return {
        "load_runs": lambda: load_runs(path),
        "scan": lambda: scan(path, redact=POLICY),
        "scrub": lambda: scrub(path, redact=POLICY, out=folder / "scrubbed.ipynb"),
        "to_html": lambda: to_html(path, folder / "page.html"),
        "verify_file": lambda: verify_file(path),
        "check_widget_state": lambda: check_widget_state(path),
    }


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = rich_notebook(tmp_path_factory.mktemp("shared") / "rich.ipynb")
    return json.loads(path.read_text(encoding="utf-8"))


# -- nesting ------------------------------------------------------------------------------------
PLACES: dict[str, Callable[[dict[str, Any]], tuple[Any, Any]]] = {
    "a cell's metadata": lambda nb: (nb["cells"][0]["metadata"], "tags"),
    "the notebook's metadata": lambda nb: (nb["metadata"], "extra"),
    "an output's data": lambda nb: (outputs_holding_recordings(nb)[0], "application/json"),
    "a recording's meta": lambda nb: (outputs_holding_recordings(nb)[0][RECORDING_MIME].setdefault("meta", {}), "x"),
    "a tool call's args in a recording": lambda nb: (
        outputs_holding_recordings(nb)[0][RECORDING_MIME]["exchanges"][0]["response"]["tool_calls"][0], "args"),
    "a widget's trait": lambda nb: (
        nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]["panel"]["state"], "deep"),
}


@pytest.mark.parametrize("where", list(PLACES))
@pytest.mark.parametrize(("levels", "shape"), [(MAX_NESTING + 1, "dict"), (3_000, "list"), (200_000, "dict")])
def test_a_notebook_nested_too_deep_is_refused_by_every_reader(shared: dict[str, Any], tmp_path: Path, where: str,
                                                               levels: int, shape: str) -> None:
    path = saved_with(tmp_path / "deep.ipynb", shared, PLACES[where], deep_text(levels, shape))
    for reader, read in every_reader(path, tmp_path).items():
        with pytest.raises(NotebookFileError) as refused:
            read()
        assert (refused.value.reason, refused.value.argument) == ("too-deep", "path"), reader
        assert str(MAX_NESTING) in str(refused.value)
    assert not (tmp_path / "scrubbed.ipynb").exists() and not (tmp_path / "page.html").exists()


def test_the_bound_is_exact_a_notebook_at_the_bound_reads(shared: dict[str, Any], tmp_path: Path) -> None:
    # the notebook, its cells, cell 0, its metadata: the value under "tags" starts at level 5
    tags = PLACES["a cell's metadata"]
    at_bound = saved_with(tmp_path / "at.ipynb", shared, tags, deep_text(MAX_NESTING - 4, "list"))
    assert nesting(json.loads(at_bound.read_text())) == MAX_NESTING
    assert len(load_runs(at_bound)) == 2 and scan(at_bound, redact=Redaction(keys=["absent"])) == []
    over = saved_with(tmp_path / "over.ipynb", shared, tags, deep_text(MAX_NESTING - 3, "list"))
    with pytest.raises(NotebookFileError, match="deeper than"):
        load_runs(over)


def test_json_text_nested_too_deep_inside_a_notebook_is_refused_where_it_is_read(shared: dict[str, Any],
                                                                                 tmp_path: Path) -> None:
    deep = json.dumps(deep_text(5_000, "list"))  # the text itself, as a JSON string
    # as a stream's text (a tool result printed as its JSON): scan refuses, naming the cell and output
    notebook = copy.deepcopy(shared)
    stream_cell = len(notebook["cells"]) - 1
    path = saved_with(tmp_path / "stream.ipynb", notebook, lambda nb: (nb["cells"][-1]["outputs"][0], "text"), deep)
    for sweep in (lambda: scan(path, redact=POLICY), lambda: scrub(path, redact=POLICY)):
        with pytest.raises(NotebookFileError) as refused:
            sweep()
        assert refused.value.reason == "too-deep" and f"cell {stream_cell}, output 0" in str(refused.value)
    assert len(load_runs(path)) == 2  # the recordings themselves are sound
    # as a recording given as text: that recording is skipped, by name, and the others load
    path = saved_with(tmp_path / "text.ipynb", shared, lambda nb: (outputs_holding_recordings(nb)[0], RECORDING_MIME),
                      deep)
    with pytest.warns(RecordingSkippedWarning, match="nests deeper than"):
        assert len(load_runs(path)) == 1


@pytest.mark.parametrize("shape", ["list", "dict"])
def test_a_saved_recording_nested_too_deep_is_refused_as_text_bytes_or_data(tmp_path: Path, shape: str) -> None:
    data = json.loads(leaky_run().recording.model_dump_json())
    text = json.dumps({**data, "meta": "\x00m\x00"}).replace(json.dumps("\x00m\x00"), deep_text(50_000, shape))
    path = tmp_path / "run.json"
    path.write_text(text)
    for saved in (text, text.encode(), path):
        with pytest.raises(InvalidRecordingError) as refused:
            load_recording(saved) if not isinstance(saved, Path) else verify_file(saved)
        assert (refused.value.field, refused.value.problem) == ("recording", f"nests deeper than {MAX_NESTING} levels")
    value: Any = {}
    for _ in range(MAX_NESTING + 5):  # data made in Python, never through a parser
        value = {"k": value}
    with pytest.raises(InvalidRecordingError, match="nests deeper"):
        load_recording({**data, "meta": value})


def test_nesting_is_measured_without_recursion_and_stops_at_the_bound() -> None:
    value: Any = []
    for _ in range(300_000):
        value = [value]
    assert nesting(value) == MAX_NESTING + 1  # counted up to the bound, then stopped
    assert nesting(value, stop=10**6) == 300_001
    assert [nesting(v) for v in (1, "x", [], {}, [{}], {"a": [1, {"b": []}]})] == [0, 0, 1, 1, 2, 4]
    for raw in (deep_text(MAX_NESTING + 1, "list"), deep_text(10**6, "dict").encode()):
        with pytest.raises(NestingTooDeep):
            parse_json(raw)


def test_text_holding_a_lone_surrogate_is_not_json_but_a_pair_is_a_character() -> None:
    assert parse_json(r'["\ud83d\ude00", "\\ud800"]') == ["\U0001f600", "\\ud800"]  # a pair, an escaped backslash
    for raw in (r'["\ud800"]', r'{"\udfff": 1}', b'["a\\udc00"]', '["\udc00"]'):
        with pytest.raises(ValueError, match="lone surrogate"):
            parse_json(raw)


def test_a_notebook_holding_a_lone_surrogate_is_refused_not_crashed_on(shared: dict[str, Any], tmp_path: Path) -> None:
    path = saved_with(tmp_path / "odd.ipynb", shared, PLACES["an output's data"], r'"\ud800"')
    for reader, read in every_reader(path, tmp_path).items():
        with pytest.raises(NotebookFileError) as refused:
            read()
        assert refused.value.reason == "not-json", reader


# -- where files are written ----------------------------------------------------------------------
def writers(source: Path, out: Path) -> dict[str, tuple[str, Callable[[], Any]]]:
    run = leaky_run()
    return {
        "export": ("path", lambda: export([run], out, title="Audit")),
        "to_html": ("out", lambda: to_html(source, out)),
        "scrub": ("out", lambda: scrub(source, redact=POLICY, out=out)),
    }


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return notebook_with([leaky_run()], tmp_path / "source.ipynb")


def unwritable_path(tmp_path: Path) -> Path:
    """A path in a folder that exists but where this process may not create a file."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        return locked / "out.ipynb"
    return Path("/sys") / f"{MARK}.ipynb"  # root may write anywhere but sysfs


@pytest.mark.parametrize("case", ["no folder", "a file as folder", "a folder", "not writable", "a NUL in the name"])
def test_a_path_to_write_that_cannot_be_written_is_refused_by_its_role(source: Path, tmp_path: Path,
                                                                      case: str) -> None:
    blocker = tmp_path / f"{MARK}.txt"
    blocker.write_text("a file")
    (tmp_path / MARK).mkdir()
    out, reason = {
        "no folder": (tmp_path / MARK / "missing" / "out.ipynb", "no-folder"),
        "a file as folder": (blocker / "out.ipynb", "no-folder"),
        "a folder": (tmp_path / MARK, "is-a-folder"),
        "not writable": (unwritable_path(tmp_path), "not-writable"),
        "a NUL in the name": (tmp_path / f"{MARK}\x00.ipynb", "not-writable"),
    }[case]
    before = source.read_bytes()
    for name, (argument, write) in writers(source, out).items():
        with pytest.raises(NotebookFileError) as refused:
            write()
        error = refused.value
        assert (error.argument, error.reason) == (argument, reason), name
        assert MARK not in str(error) and MARK not in repr(error.evidence()), name
    assert source.read_bytes() == before and sorted(p.name for p in (tmp_path / MARK).iterdir()) == []
    if case == "no folder":
        assert "the folder to write into does not exist" in str(error)


def test_a_notebook_that_cannot_be_read_is_refused_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder.ipynb"
    folder.mkdir()
    for path, reason in ((tmp_path / "missing.ipynb", "missing"), (folder, "missing"),
                         (tmp_path / "nul\x00.ipynb", "unreadable")):
        for read in (load_runs, lambda p: scan(p, redact=POLICY), verify_file):
            with pytest.raises(NotebookFileError) as refused:
                read(path)
            assert refused.value.reason == reason


# -- member runs that do not nest -------------------------------------------------------------------
def chain(data: dict[str, Any], depth: int) -> None:
    """Replace the members of ``data`` by a chain ``depth`` members deep, each path extending its parent's."""
    leaf = copy.deepcopy(data["children"][0])
    leaf["children"] = []
    member = data
    for level in range(depth):
        child = copy.deepcopy(leaf)
        child["path"] = "/".join(f"mount#{k}" for k in range(level + 1))
        member["children"] = [child]
        member = child


def member_edits() -> dict[str, Callable[[dict[str, Any]], None]]:
    return {
        "a member that is a copy of the top run": lambda d: d["children"].__setitem__(0, copy.deepcopy(d)),
        "a grandchild that is a copy of its parent": lambda d: d["children"][1]["children"].__setitem__(
            0, copy.deepcopy(d["children"][1])),
        "two siblings at one path": lambda d: d["children"].__setitem__(1, copy.deepcopy(d["children"][0])),
        "a member whose path leaves its parent's": lambda d: d["children"][1]["children"][0].update(
            path="elsewhere#9"),
        "a member at its parent's own path": lambda d: d["children"][1]["children"][0].update(
            path=d["children"][1]["path"]),
        "a member below the top run with no path": lambda d: d["children"][0].update(path=""),
        "members nested too deep": lambda d: chain(d, MAX_MEMBER_DEPTH + 1),
    }


FIELDS = {
    "a member that is a copy of the top run": "children.0.path",
    "a grandchild that is a copy of its parent": "children.1.children.0.path",
    "two siblings at one path": "children.1.path",
    "a member whose path leaves its parent's": "children.1.children.0.path",
    "a member at its parent's own path": "children.1.children.0.path",
    "a member below the top run with no path": "children.0.path",
    "members nested too deep": "children.0." * MAX_MEMBER_DEPTH + "children",
}


@pytest.fixture(scope="module")
def composed() -> dict[str, Any]:
    return json.loads(composed_run().recording.model_dump_json())


@pytest.mark.parametrize("case", list(FIELDS))
def test_a_member_tree_that_does_not_nest_is_refused_naming_the_field(composed: dict[str, Any], case: str) -> None:
    data = copy.deepcopy(composed)
    member_edits()[case](data)
    for door, load in (("load_recording", lambda: load_recording(data)),
                       ("load_recording", lambda: load_recording(json.dumps(data))),
                       ("Run.from_recording", lambda: Run.from_recording(Recording.model_validate(data)))):
        with pytest.raises(InvalidRecordingError) as refused:
            load()
        assert (refused.value.door, refused.value.field) == (door, FIELDS[case])


def test_members_nested_to_the_bound_load_and_every_view_draws(composed: dict[str, Any]) -> None:
    data = copy.deepcopy(composed)
    chain(data, MAX_MEMBER_DEPTH)
    run = Run.from_recording(load_recording(json.dumps(data)))
    assert len(run.tree().nodes) > MAX_MEMBER_DEPTH
    assert "mount#0" in answer_view(run.recording) and str(run.backtrack())


def test_a_notebook_holding_a_tree_that_does_not_nest_skips_only_that_recording(tmp_path: Path) -> None:
    path = notebook_with([leaky_run(), composed_run()], tmp_path / "shared.ipynb")
    notebook = json.loads(path.read_text())
    held = outputs_holding_recordings(notebook)[1]
    held[RECORDING_MIME]["children"][0] = copy.deepcopy(held[RECORDING_MIME])
    path.write_text(json.dumps(notebook))
    with pytest.warns(RecordingSkippedWarning) as caught:
        runs = load_runs(path)
    assert len(runs) == 1 and "children.0.path" in str(caught[0].message)
    page = to_html(path, tmp_path / "page.html").read_text()
    assert page.count('class="fl-skipped"') == 1 and "children.0.path" in page
    verdicts = [verdict for _, verdict in verify_file(path)]
    assert [v.status for v in verdicts] == ["unsealed", "broken"] and verdicts[1].field == "children.0.path"


# -- schema versions --------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["1", True, 1.0, [1], None, 0, -1])
def test_a_schema_version_that_is_not_the_whole_number_1_is_refused_top_or_member(composed: dict[str, Any],
                                                                                  version: Any) -> None:
    for where, edit in (("schema_version", lambda d: d.update(schema_version=version)),
                        ("children.1.schema_version", lambda d: d["children"][1].update(schema_version=version))):
        data = copy.deepcopy(composed)
        edit(data)
        for saved in (data, json.dumps(data)):
            with pytest.raises(InvalidRecordingError) as refused:
                load_recording(saved)
            assert refused.value.field == where and not isinstance(refused.value, RecordingVersionError)


@pytest.mark.parametrize("version", [SCHEMA_VERSION + 1, 999, 10**30])
def test_a_newer_schema_version_is_its_own_refusal_naming_the_version(composed: dict[str, Any], version: int) -> None:
    for saved in ({**composed, "schema_version": version}, json.dumps({**composed, "schema_version": version})):
        with pytest.raises(RecordingVersionError) as refused:
            load_recording(saved)
        error = refused.value
        assert (error.code, error.field, error.version) == ("ERR_RECORDING_VERSION", "schema_version", version)
        assert isinstance(error, InvalidRecordingError)
        assert (str(version) in str(error)) == (version < 10**6) and len(str(error)) < 400


def test_a_notebook_with_a_newer_recording_loads_the_others_and_every_reader_agrees(tmp_path: Path) -> None:
    first, newer, last = leaky_run(), leaky_run(), composed_run(sealed=True)
    path = notebook_with([first, newer, last], tmp_path / "shared.ipynb")
    notebook = json.loads(path.read_text())
    outputs_holding_recordings(notebook)[1][RECORDING_MIME]["schema_version"] = 999
    path.write_text(json.dumps(notebook))
    with pytest.warns(RecordingSkippedWarning) as caught:
        runs = load_runs(path)
    assert [run.run_id for run in runs] == [first.run_id, last.run_id]
    warning = caught[0].message
    assert isinstance(warning, RecordingSkippedWarning)
    assert (warning.cell, warning.field) == (2, "schema_version") and "cell 2" in str(warning) and "999" in str(warning)
    # to_html: not drawn, its place says why; the others are drawn from their recordings
    page = to_html(path, tmp_path / "page.html").read_text()
    assert page.count('class="fl-skipped"') == 1 and "999" in page and "schema_version" in page
    # verify_file: not checked (not broken); the sealed one still holds
    verdicts = [verdict for _, verdict in verify_file(path)]
    assert [v.status for v in verdicts] == ["unsealed", "unsupported", "holds"]
    assert "not checked" in str(verdicts[1]) and "999" in str(verdicts[1])
    # scan and scrub read it as data: its secrets are found and masked, its version is left alone
    assert any(f.cell == 2 and f.where == "recording" for f in scan(path, redact=POLICY))
    scrub(path, redact=POLICY)
    kept = outputs_holding_recordings(json.loads(path.read_text()))[1][RECORDING_MIME]
    assert kept["schema_version"] == 999 and OPENAI_KEY not in json.dumps(kept)
    with pytest.warns(RecordingSkippedWarning, match="999"):
        assert [run.run_id for run in load_runs(path)] == [first.run_id, last.run_id]


def test_a_saved_json_recording_of_a_newer_version_is_not_checked(tmp_path: Path) -> None:
    recording = seal(leaky_run().recording)
    path = tmp_path / "run.json"
    path.write_text(json.dumps({**json.loads(recording.model_dump_json()), "schema_version": 7}))
    [(where, verdict)] = verify_file(path)
    assert (where, verdict.status, verdict.field) == ("recording", "unsupported", "schema_version")


def test_a_fault_only_the_recording_door_sees_skips_that_recording_instead_of_failing_the_notebook(
        tmp_path: Path) -> None:
    """A message with no role passed the notebook's own checks and then made load_runs raise."""
    path = notebook_with([leaky_run(), leaky_run()], tmp_path / "shared.ipynb")
    notebook = json.loads(path.read_text())
    outputs_holding_recordings(notebook)[0][RECORDING_MIME]["messages"][0].pop("role")
    path.write_text(json.dumps(notebook))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert len(load_runs(path)) == 1
    assert [str(w.message) for w in caught if w.category is RecordingSkippedWarning] == [
        "cell 1, output 1: recording skipped, field 'messages.0.role' is missing or not text"]
    assert PASSWORD not in str(caught[0].message)
