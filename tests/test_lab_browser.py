"""The executed lab tour, exported to HTML, in headless Chromium with JavaScript on and off.

On: the tree figure draws, one SVG mark per run of the composition, with plotly.js from the
page itself (every request but file:// is blocked). Off: clicking a piece of the answer opens
its chain of custody, and a member of the composition opens to its own answer view, through
``<details>`` alone.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from browser_kit import chromium, keep_evidence
from nbconvert import HTMLExporter
from test_notebooks import executed

pytestmark = pytest.mark.browser


@cache
def exported() -> Path:
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(executed("lab_tour.ipynb"))
    folder = Path(__file__).parent.parent / "test-artifacts"
    folder.mkdir(exist_ok=True)
    path = folder / "lab_tour.html"
    path.write_text(body, encoding="utf-8")
    return path


def test_with_javascript_the_tree_draws_one_mark_per_run():
    with chromium(javascript=True, offline=True) as context:
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        page.goto(exported().as_uri())
        try:
            figure = page.locator(".js-plotly-plot").first
            figure.wait_for(timeout=20_000)
            marks = figure.locator(".scatterlayer .trace .points path")
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot .scatterlayer .points path').length > 0")
            assert marks.count() == 5  # support, triage, route, refunds, summary
            labels = figure.locator(".scatterlayer .trace text").all_text_contents()
            assert {"support", "triage", "route", "refunds", "summary"} <= set(labels)
        except AssertionError as failure:
            raise AssertionError(f"{failure}; {keep_evidence(page, 'lab_tour_js', console)}") from None


def test_without_javascript_pieces_open_to_their_custody():
    with chromium(javascript=False, offline=True) as context:
        page = context.new_page()
        page.goto(exported().as_uri())
        try:
            assert page.locator(".js-plotly-plot svg").count() == 0
            piece = page.locator('details.fl-piece[data-fl-piece="vip-override"]').first
            born = piece.locator("li", has_text="BORN")
            assert not born.is_visible()
            piece.locator("summary").click()
            assert born.is_visible() and "define_fact('vip-override')" in born.inner_text()
            # a hop links to its step in the collapsed steps table, by an in-page anchor
            landed = piece.locator("li", has_text="LANDED").locator("a")
            target = landed.get_attribute("href")
            assert target is not None and page.locator(target).count() == 1
            # a member of the composition opens to its own answer view
            member = page.locator('details.fl-member:has(> summary b:text-is("summary"))').first
            answer = member.locator("[data-fl-answer]").first
            assert not answer.is_visible()
            member.locator("summary").first.click()
            assert answer.is_visible() and "Summary:" in answer.inner_text()
        except AssertionError as failure:
            raise AssertionError(f"{failure}; {keep_evidence(page, 'lab_tour_nojs', [])}") from None
