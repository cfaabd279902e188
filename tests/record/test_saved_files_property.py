"""A saved notebook or recording corrupted at random: every door that reads it back works or refuses by name.

One property per kind of file (issue 24). A real notebook (``notebook_kit.rich_notebook``: an
agent run with a tool, an identity and a note, a sealed three-level composition with its tree
figure, stream and error output, widget state carrying a recording) and a real saved recording
(a sealed composition's ``.json``) are corrupted by hypothesis: bytes cut, flipped or spliced in;
a value anywhere replaced (by text holding lone surrogates, huge integers, ``NaN``...), retyped or
deleted; a value nested thousands of levels deep; a member run replaced by a copy of an ancestor;
the schema version changed. Then ``load_runs`` (and the views of every run it gives), ``scan``,
``check_widget_state``, ``scrub`` (and ``load_runs`` of what it wrote), ``to_html`` and
``verify_file`` each either work or raise a ``Refusal``; any other exception fails the property,
and so does a door that takes longer than a generous bound (a hang, not a speed goal).
"""

from __future__ import annotations

import contextlib
import copy
import json
import signal
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from notebook_kit import POLICY_KEYS, composed_run, rich_notebook

from footprint_lab import Redaction, Refusal, load_recording, verify
from footprint_lab.lab.views import answer_view
from footprint_lab.notebook import check_widget_state, load_runs, scan, scrub, to_html, verify_file

#: a door that runs longer than this on one small file is stuck, not slow
BOUND_SECONDS = 60
POLICY = Redaction.standard().union(Redaction(keys=POLICY_KEYS))
#: stands for a deeply nested value, written into the text after ``json.dumps`` (which would recurse)
DEEP = "\x00deep-value\x00"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("saved")
    notebook = rich_notebook(folder / "rich.ipynb")
    recording = composed_run(sealed=True).recording
    return {"notebook": json.loads(notebook.read_text(encoding="utf-8")),
            "recording": json.loads(recording.model_dump_json())}


@contextlib.contextmanager
def bounded(what: str) -> Iterator[None]:
    def stuck(signum: int, frame: Any) -> None:
        raise AssertionError(f"{what} ran longer than {BOUND_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.setitimer(signal.ITIMER_REAL, BOUND_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def works_or_refuses(what: str, door: Callable[[], Any]) -> Any:
    """What ``door`` gives, or ``None`` when it refused by name; any other exception fails the test."""
    with bounded(what), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a skipped recording warns, by design
        try:
            given_back = door()
        except Refusal as refusal:
            assert refusal.code.startswith("ERR_") and str(refusal)
            event(f"{what}: refused ({refusal.code})")
            return None
    event(f"{what}: worked")
    return given_back


# -- corruptions -------------------------------------------------------------------------------
def slots(data: Any) -> list[tuple[Any, Any]]:
    """Every ``(container, key)`` in ``data``, in a fixed order, found without recursion."""
    found: list[tuple[Any, Any]] = []
    stack = [data]
    while stack:
        value = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            found.append((value, key))
            stack.append(item)
    return found


def recordings(data: Any) -> list[dict[str, Any]]:
    """Every recording-like object in ``data`` (it has a ``run_id`` and a ``runner``), members included."""
    return [container[key] for container, key in slots(data)
            if isinstance(container[key], dict) and {"run_id", "runner"} <= container[key].keys()]


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), st.sampled_from(["\ud800", "a\udfffb", "\ud83d", "[[[[", '{"run_id"', ""]),
)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


@st.composite
def corrupted(draw: st.DrawFn, data: Any) -> bytes:
    """``data`` saved as JSON text, corrupted once or a few times."""
    data = copy.deepcopy(data)
    deep: tuple[int, str] | None = None
    for _ in range(draw(st.integers(1, 3))):
        places = slots(data)
        container, key = places[draw(st.integers(0, len(places) - 1))]
        kind = draw(st.sampled_from(["replace", "retype", "delete", "deep", "member", "version"]))
        if kind == "replace":
            container[key] = draw(json_values)
        elif kind == "retype":
            value = container[key]
            container[key] = draw(st.sampled_from([str(value)[:40], [value], {"value": value}, None, 0]))
        elif kind == "delete":
            del container[key]
        elif kind == "deep" and deep is None:
            deep = (draw(st.sampled_from([99, 100, 101, 150, 999, 5000])), draw(st.sampled_from(["list", "dict"])))
            container[key] = DEEP
        elif kind in ("member", "version"):
            found = recordings(data)
            if found:
                recording = draw(st.sampled_from(found))
                if kind == "version":
                    recording["schema_version"] = draw(st.one_of(st.integers(-2, 10**7), json_values))
                else:  # a member run replaced by a copy of itself or of an ancestor
                    members = recording.setdefault("children", [])
                    members.append(copy.deepcopy(draw(st.sampled_from(found))))
    text = json.dumps(data)
    if deep is not None:
        levels, shape = deep
        nested = "[" * levels + "]" * levels if shape == "list" else '{"a":' * levels + "1" + "}" * levels
        text = text.replace(json.dumps(DEEP), nested, 1)
    raw = text.encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 2))):  # then, sometimes, the bytes themselves
        at = draw(st.integers(0, len(raw)))
        cut = draw(st.sampled_from(["truncate", "flip", "insert", "repeat"]))
        if cut == "truncate":
            raw = raw[:at]
        elif cut == "flip" and at < len(raw):
            raw = raw[:at] + bytes([raw[at] ^ draw(st.integers(1, 255))]) + raw[at + 1:]
        elif cut == "insert":
            raw = raw[:at] + draw(st.binary(min_size=1, max_size=8)) + raw[at:]
        else:
            raw = raw[:at] + raw[at:at + draw(st.integers(1, 64))] + raw[at:]
    return raw


# -- the properties ----------------------------------------------------------------------------
def views_work(runs: list[Any]) -> None:
    """Every view of every run a door let in draws (what a reader does next)."""
    for run in runs:
        answer_view(run.recording)
        run.tree()
        str(run.backtrack())
        run.context()
        verify(run)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_door_reads_a_corrupted_notebook_or_refuses_it_by_name(saved: dict[str, Any],
                                                                      data: st.DataObject) -> None:
    raw = data.draw(corrupted(saved["notebook"]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "shared.ipynb"
        path.write_bytes(raw)
        runs = works_or_refuses("load_runs", lambda: load_runs(path))
        if runs is not None:
            works_or_refuses("the views", lambda: views_work(runs))
        works_or_refuses("scan", lambda: scan(path, redact=POLICY))
        works_or_refuses("check_widget_state", lambda: check_widget_state(path))
        out = Path(folder) / "scrubbed.ipynb"
        if works_or_refuses("scrub", lambda: scrub(path, redact=POLICY, out=out)) is not None:
            again = works_or_refuses("load_runs after scrub", lambda: load_runs(out))
            if again is not None:
                works_or_refuses("the views after scrub", lambda: views_work(again))
        works_or_refuses("to_html", lambda: to_html(path, Path(folder) / "page.html"))
        works_or_refuses("verify_file", lambda: verify_file(path))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_corrupted_saved_recording_verifies_or_is_refused_by_name(saved: dict[str, Any], data: st.DataObject) -> None:
    raw = data.draw(corrupted(saved["recording"]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.json"
        path.write_bytes(raw)
        works_or_refuses("verify_file", lambda: verify_file(path))
        recording = works_or_refuses("load_recording", lambda: load_recording(raw))
        if recording is not None:
            from footprint_lab import Run

            works_or_refuses("the views", lambda: views_work([Run.from_recording(recording)]))
