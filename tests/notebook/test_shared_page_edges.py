"""Edges of sharing: an exported heading shows a run id as typed, ``export`` names what it refuses by its own
shape, and a shared page draws every figure it can."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from browser_kit import chromium

from footprint_lab import Agent
from footprint_lab.notebook import SharingConfigError, export, to_html
from footprint_lab.providers import mock

#: a run id as a recording read from a file (or a trace's ``footprint_lab.run_id`` attribute) may hold it
MARKDOWN_ID = "run-1 [verified by audit](https://evil.example/ok) ![](https://evil.example/pixel.png) *x*"


def test_a_run_id_holding_markdown_is_shown_as_typed_in_the_exported_heading(tmp_path: Path) -> None:
    """A run id (from a recording read from a file, or a trace's attribute) is shown as typed: never a live link, an
    image (a tracking pixel when the shared notebook is opened in Jupyter) or emphasis, in the notebook or its page."""
    run = Agent(provider=mock(reply="hi")).run_sync("go")
    recording = run.recording.model_copy(update={"run_id": MARKDOWN_ID})
    path = export(recording, tmp_path / "shared.ipynb", title="Shared")
    heading = nbformat.read(path, as_version=4).cells[1].source
    import mistune

    drawn = str(mistune.html(heading))
    assert "<a " not in drawn and "<img" not in drawn and "<em>" not in drawn, drawn
    page = to_html(path, tmp_path / "page.html").read_text()
    assert 'href="https://evil.example' not in page


@pytest.mark.parametrize("runs", [bytearray(b"ab"), memoryview(b"ab"), range(2)],
                         ids=["bytearray", "memoryview", "range"])
def test_a_sequence_of_non_runs_is_refused_by_its_own_shape(tmp_path: Path, runs: object) -> None:
    """``export`` reads a sequence of runs item by item, but bytes and ranges are refused by their own shape, not by
    one of their items ("received an int")."""
    with pytest.raises(SharingConfigError) as refused:
        export(runs, tmp_path / "x.ipynb", title="t")  # type: ignore[arg-type]
    assert "an int" not in str(refused.value)
    assert type(runs).__name__ in str(refused.value)


@pytest.mark.browser
def test_one_malformed_figure_leaves_the_other_figures_drawn(tmp_path: Path) -> None:
    """A figure plotly cannot draw (its layout is not an object) leaves every other figure on the page drawn."""
    good = {"data": [{"type": "scatter", "x": [1, 2], "y": [1, 2]}], "layout": {}}
    bad = {"data": [], "layout": "not an object"}
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell("figures", outputs=[
        nbformat.v4.new_output("display_data", data={"application/vnd.plotly.v1+json": json.loads(json.dumps(f)),
                                                     "text/plain": "a figure"}) for f in (bad, good)]))
    source = tmp_path / "figures.ipynb"
    nbformat.write(notebook, source)
    html = to_html(source, tmp_path / "page.html")
    assert len(re.findall(r'class="fl-plot"', html.read_text())) == 2
    with chromium(javascript=True, offline=True) as context:
        page = context.new_page()
        page.goto(html.as_uri())
        page.wait_for_load_state("load")
        page.wait_for_timeout(1000)
        assert page.locator("#fl-figure-2 svg").count() > 0  # the well-formed figure after the bad one is drawn
        assert "could not be drawn" in page.locator("#fl-figure-1").inner_text()  # the bad one says so


def test_a_direction_control_in_an_output_or_a_markdown_cell_is_drawn_as_its_mark(tmp_path: Path) -> None:
    """An output's HTML and a markdown cell keep their markup, but a right-to-left override or a control character in
    them is drawn as a visible mark on the shared page, as every recorded value is: a line cannot read reversed."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_markdown_cell("# Refunds\u202e report\n\nok\x07 then"))
    notebook.cells.append(nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": "<p>total \u202e 001$</p>", "text/plain": "x"})]))
    source = tmp_path / "marks.ipynb"
    nbformat.write(notebook, source)
    page = to_html(source, tmp_path / "page.html").read_text()
    assert "\u202e" not in page and "\x07" not in page  # (the HTML parser drops a bell; a control it keeps is marked)
    assert page.count("\u27e8RLO\u27e9") >= 2  # the heading (in the title too) and the output


def test_a_run_set_or_a_generator_of_runs_exports_in_order_and_a_set_is_refused(tmp_path: Path) -> None:
    """``export`` takes what an analyst holds: a ``RunSet`` of an evaluation, or a generator of runs, written in their
    order; a set (no order) is refused by its own shape, naming the fix."""
    from footprint_lab.batch import RunSet

    runs = [Agent(provider=mock(reply=f"answer {n}"), name=f"agent-{n}").run_sync("go") for n in range(3)]
    for given in (RunSet.from_runs(runs), (run for run in runs), (runs[0], runs[1].recording, runs[2])):
        path = export(given, tmp_path / "set.ipynb", title="Eval")
        headings = [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.source.startswith("## ")]
        assert [heading.split(". ")[1].split(" ")[0] for heading in headings] == ["agent-0", "agent-1", "agent-2"]
    with pytest.raises(SharingConfigError) as refused:
        export({runs[0]}, tmp_path / "x.ipynb", title="t")
    assert "a set" in str(refused.value) and "list (or RunSet)" in str(refused.value)
