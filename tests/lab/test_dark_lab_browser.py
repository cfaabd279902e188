"""The views in real JupyterLab under its Dark theme: every text, opened boxes included, reads at 4.5:1 or more.

The contrast tests of ``test_views_sanitized_browser`` draw each view on a page made to look like a
theme; this one opens an executed notebook in JupyterLab itself with "JupyterLab Dark" chosen in
its settings, trusted (the views keep their style sheets) and not (JupyterLab strips them), and
measures, in Chromium, every text of every output against what it is drawn on: the answer view
with its timeline and its call's messages opened, the timeline and the messages on their own,
a run set's table and two runs compared. Screenshots land in ``test-artifacts/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_kit import chromium, keep_evidence
from lab_server import place
from nbclient import NotebookClient
from test_views_sanitized_browser import CONTRASTS

pytestmark = pytest.mark.browser

CELLS = [
    "%load_ext footprint_lab",
    "from footprint_lab.batch import RunSet\n"
    "from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent\n"
    "from footprint_lab.explain import compare_runs\n"
    "run = planted_fact_agent().run_sync(REFUND_REQUEST)\n"
    "other = planted_fact_agent(variant='budget').run_sync(REFUND_REQUEST)\n"
    "run",
    "run.timeline()",
    "run.messages()",
    "runs = await RunSet.run(lambda: planted_fact_agent(), [REFUND_REQUEST, 'Please refund order A-1002.'])\n"
    "runs",
    "compare_runs(run, other)",
]
#: what each output must show (so an empty or failed output cannot pass for a readable one)
SHOWN = ("APPROVED", "Timeline", "Messages of", "cost", "vip-override")
#: the measure of ``test_views_sanitized_browser``, over the notebook's outputs only (JupyterLab's own chrome is not
#: ours to measure)
OUTPUT_CONTRASTS = CONTRASTS.replace("document.querySelectorAll('body *')",
                                     "document.querySelectorAll('.jp-OutputArea-output *')")


@pytest.fixture(scope="module")
def dark_lab(lab_server: Any) -> Iterator[Any]:
    """The test session's JupyterLab with "JupyterLab Dark" chosen, as a user chooses it (its settings file)."""
    themes = lab_server.root.parent / "settings" / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"
    themes.parent.mkdir(parents=True, exist_ok=True)
    themes.write_text(json.dumps({"theme": "JupyterLab Dark"}), encoding="utf-8")
    try:
        yield lab_server
    finally:
        themes.unlink()


@pytest.fixture(scope="module")
def views_notebook(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    folder: Path = tmp_path_factory.mktemp("dark")
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
def test_every_view_reads_at_4_5_to_1_in_jupyterlab_dark(dark_lab: Any, views_notebook: Any, trusted: bool) -> None:
    import copy

    name = f"dark_{'trusted' if trusted else 'untrusted'}.ipynb"
    address = place(dark_lab, copy.deepcopy(views_notebook), name, trusted=trusted)
    with chromium() as context:
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
        page.goto(address)
        evidence = f"dark_lab_{name.removesuffix('.ipynb')}"
        try:
            shown = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
            shown.locator(".jp-OutputArea-output .fl-answer").first.wait_for(timeout=90_000)
            assert page.evaluate("document.body.dataset.jpThemeLight") == "false"   # the Dark theme is on
            page.wait_for_function("(panel) => panel.querySelectorAll('.jp-OutputArea-output .fl-view').length >= 5",
                                   arg=shown.element_handle(), timeout=60_000)
            outputs = shown.locator(".jp-OutputArea-output")
            for at in range(outputs.count()):
                outputs.nth(at).scroll_into_view_if_needed()
            # every box opened: what a reader finds one click away is measured too
            page.evaluate("() => document.querySelectorAll('.jp-OutputArea-output details')"
                          ".forEach((box) => { box.open = true; })")
            said = outputs.all_inner_texts()
            for phrase in SHOWN:
                assert any(phrase in text for text in said), phrase
            measured = page.evaluate(OUTPUT_CONTRASTS)
            assert len(measured) > 200                    # the outputs' texts were reached, not an empty page
            low = [item for item in measured if item["ratio"] < 4.5]
            assert low == [], low[:8]
            keep_evidence(page, evidence, console)  # the screenshot, for a person to look at
        except AssertionError as failure:
            raise AssertionError(f"{failure}; {keep_evidence(page, evidence, console)}") from None
