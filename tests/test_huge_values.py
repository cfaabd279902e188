"""A huge value is drawn as its beginning and a note naming where all of it is; the run keeps it whole.

A 20 MB answer or a 5 MB tool result used to go into the answer view whole, and the recording
beside it holds the answer seven times over (a 160 MB display bundle). Each view now draws at
most ``markup.elements.TEXT_LIMIT`` characters of any one value, and the recording rides in the
bundle only while the whole bundle, every MIME type together, stays within 2 MB.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from footprint_lab import Agent, Lab, define_tool, load_recording
from footprint_lab.markup.elements import TEXT_LIMIT
from footprint_lab.notebook import export, load_runs
from footprint_lab.providers import mock
from footprint_lab.record.recording import RECORDING_MIME

MB = 1_000_000


def size(bundle: dict[str, Any]) -> int:
    """What a notebook stores for a bundle: its texts, and its JSON data as JSON."""
    return sum(len(value) if isinstance(value, str) else len(json.dumps(value)) for value in bundle.values())


@pytest.fixture(scope="module")
def huge_answer() -> Any:
    answer = "The answer begins here. " + "A" * (20 * MB)
    return Agent(provider=mock(reply=answer), name="verbose").run_sync("Say everything.")


@pytest.fixture(scope="module")
def huge_tool_result() -> Any:
    dump = define_tool(name="dump", description="Dump the table.", fn=lambda: "row-start " + "B" * (5 * MB))
    return Agent(provider=mock(replies=[{"tool": "dump", "args": {}}, "The table is large."]), tools=[dump],
                 name="dumper").run_sync("Dump the table.")


def test_a_20_mb_answer_displays_in_at_most_2_mb_showing_its_beginning_and_where_the_rest_is(huge_answer):
    bundle = huge_answer._repr_mimebundle_()
    assert size(bundle) <= 2 * MB
    html = bundle["text/html"]
    assert "The answer begins here. AAAA" in html
    assert f"[the first {TEXT_LIMIT:,} of {len(huge_answer.answer):,} characters; run.answer holds all of them]" in html
    # the recording (about 140 MB of JSON) is not in the notebook, and the view says how to save it whole
    assert RECORDING_MIME not in bundle
    assert "run.recording.model_dump_json() saves it whole" in html
    # ... which is one method away, as the whole answer is
    assert len(huge_answer.answer) == 20 * MB + len("The answer begins here. ")
    assert load_recording(huge_answer.recording.model_dump_json()).answer == huge_answer.answer


def test_a_5_mb_tool_result_displays_in_at_most_2_mb_and_run_context_holds_all_of_it(huge_tool_result):
    bundle = huge_tool_result._repr_mimebundle_()
    assert size(bundle) <= 2 * MB
    html = bundle["text/html"]
    call = huge_tool_result.recording.exchanges[-1].step_id
    assert "row-start BBBB" in html and f"run.context(&quot;{call}&quot;) holds all of them" in html
    [result] = [p for p in huge_tool_result.context_pieces(call) if p.source_kind == "tool_result"]
    assert result.content == "row-start " + "B" * (5 * MB)


def test_the_widget_state_stays_small_with_a_huge_answer(huge_answer):
    answer = huge_answer.answer
    lab = Lab(Agent(provider=mock(reply=answer), name="verbose"), message="Say everything.")
    lab.run = huge_answer
    lab._ended(huge_answer, "finished", "")
    state = json.dumps(lab.get_state(), default=str)          # what the notebook saves of the widget
    assert len(state) <= 2 * MB and "The answer begins here." in lab.answer_html
    assert len(lab._static_bundle()["text/html"]) <= 2 * MB   # the static copy beside the widget
    lab.open_answer()
    assert len(lab.panel_html) <= 2 * MB


def test_a_small_run_keeps_its_recording_in_the_bundle_and_a_value_just_under_the_limit_whole():
    value = "C" * TEXT_LIMIT
    run = Agent(provider=mock(reply=value)).run_sync("go")
    bundle = run._repr_mimebundle_()
    # the answer whole (the raw reply, its JSON a little longer than the value, may be cut: it says where the rest is)
    html = bundle["text/html"]
    assert RECORDING_MIME in bundle and value in html and "characters; run.answer" not in html
    longer = Agent(provider=mock(reply=value + "D")).run_sync("go")._repr_mimebundle_()["text/html"]
    assert value in longer and f"[the first {TEXT_LIMIT:,} of {TEXT_LIMIT + 1:,} characters; run.answer" in longer


def test_an_export_keeps_a_large_recording_whole(tmp_path: Path):
    answer = "start " + "E" * (3 * MB)  # its recording is over 20 MB of JSON: a display leaves it out, export keeps it
    run = Agent(provider=mock(reply=answer)).run_sync("go")
    assert RECORDING_MIME not in run._repr_mimebundle_()
    [loaded] = load_runs(export([run], tmp_path / "big.ipynb", title="A long answer"))
    assert loaded.answer == answer


def _views(run: Any, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Every view a reader can meet a run's answer in, as the MIME bundle (or page) it is shown by."""
    from footprint_lab.lab.views import slots_view
    from footprint_lab.notebook import to_html

    page = to_html(export([run], tmp_path / "huge.ipynb", title="Huge"), tmp_path / "huge.html")
    return {
        "answer view": run._repr_mimebundle_(),
        "backtrack (%fp_why)": run.backtrack()._repr_mimebundle_(),
        "context (%fp_context)": {"text/html": slots_view(run.recording, run.recording.exchanges[-1])},
        "suspects (%fp_suspects)": {"text/html": run.suspects()._repr_html_(), "text/plain": repr(run.suspects())},
        "integrity": run.integrity()._repr_mimebundle_(),
        "tree (%fp_tree)": run.tree()._repr_mimebundle_(),
        "exported page": {"text/html": page.read_text(encoding="utf-8")},
    }


#: the views that draw the answer itself, and the method each names for all of it
SHOWS_THE_ANSWER = {"answer view": "run.answer", "backtrack (%fp_why)": "bt.output", "tree (%fp_tree)": "run.answer",
                    "exported page": "run.answer"}


def test_every_view_of_a_20_mb_answer_stays_within_2_mb_and_names_where_all_of_it_is(huge_answer, tmp_path: Path):
    for name, bundle in _views(huge_answer, tmp_path).items():
        assert size(bundle) <= 2 * MB, (name, size(bundle))
        whole = SHOWS_THE_ANSWER.get(name)
        if whole is not None:
            html = bundle["text/html"]
            assert "The answer begins here. AAAA" in html, name
            assert f"of {len(huge_answer.answer):,} characters; {whole} holds all of them]" in html, name
