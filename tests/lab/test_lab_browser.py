"""The executed lab tour, exported to HTML, in headless Chromium with JavaScript on and off.

nbconvert's page shows each output's HTML, and a tree's HTML is its picture in inline SVG (no
copy of plotly.js is in the notebook), so on and off alike the tree draws one node per run of the
composition, with its name. Off: clicking a piece of the answer opens its chain of custody, and
a member of the composition opens to its own answer view, through ``<details>`` alone.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from browser_kit import chromium, keep_evidence
from nbconvert import HTMLExporter
from paths_kit import ROOT
from test_notebooks import executed

pytestmark = pytest.mark.browser


@cache
def exported() -> Path:
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(executed("lab_tour.ipynb"))
    folder = ROOT / "test-artifacts"
    folder.mkdir(exist_ok=True)
    path = folder / "lab_tour.html"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.mark.parametrize("javascript", [True, False], ids=["js-on", "js-off"])
def test_the_tree_draws_one_node_per_run_with_no_plotly_js_in_the_page(javascript: bool):
    with chromium(javascript=javascript, offline=True) as context:
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        page.goto(exported().as_uri())
        try:
            picture = page.locator("svg.fl-svg").first
            picture.wait_for(timeout=20_000)
            nodes = picture.locator("g.fl-tree-node")
            assert nodes.count() == 5  # support, triage, route, refunds, summary
            names = [nodes.nth(at).locator("text").nth(-3).text_content() or "" for at in range(nodes.count())]
            assert [name.strip() for name in names] == ["support", "triage", "route", "refunds", "summary"]
            box = picture.bounding_box()
            assert box is not None and box["height"] > 100 and box["width"] > 300, box
            assert page.locator(".js-plotly-plot").count() == 0 and "plotly.js v" not in page.content()
        except AssertionError as failure:
            raise AssertionError(f"{failure}; {keep_evidence(page, f'lab_tour_tree_{javascript}', console)}") from None


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
