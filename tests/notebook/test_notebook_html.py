"""Offline HTML: one file that renders in Chromium with every outside request blocked, scripts on or off."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import plotly.graph_objects as go
import pytest
from browser_kit import chromium, keep_evidence, rgb

from footprint_lab import Agent, Sequence
from footprint_lab.errors import InvalidRunInputError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.lab.cards import error_card_html
from footprint_lab.markup import theme
from footprint_lab.notebook import export, to_html
from footprint_lab.notebook.cli import main as cli
from footprint_lab.providers import mock

HOSTILE = '<img src="http://example.invalid/pixel.png"><script>document.title = "pwned"</script><p>kept</p>'


def shared_notebook(tmp_path: Path) -> Path:
    """An export (a planted-fact run with notes, a composed run), plus a figure and hostile outputs."""
    run = planted_fact_agent().run_sync(REFUND_REQUEST)
    run.annotate("vip-override", "Planted <script>alert(1)</script>", tag="suspect")
    flow = Sequence([("draft", Agent(provider=mock(reply="draft"))), ("check", Agent(provider=mock(reply="ok")))])
    path = export([run, flow.run_sync("go")], tmp_path / "shared.ipynb", title="Refund audit")
    notebook = nbformat.read(path, as_version=4)
    figure = json.loads(go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2])).to_json())
    twice = [nbformat.v4.new_output("display_data", data={
        "application/vnd.plotly.v1+json": figure, "text/html": "<p>static copy of the figure</p>",
        "text/plain": "Figure"}) for _ in range(2)]
    hostile = nbformat.v4.new_output("display_data", data={"text/html": HOSTILE, "text/plain": "x"})
    try:
        flow.run_sync({"text": "not a message"})
    except InvalidRunInputError as refusal:
        card = nbformat.v4.new_output("display_data", data={"text/html": error_card_html(refusal), "text/plain": "x"})
    tree = nbformat.v4.new_output("display_data", data=flow.run_sync("go").tree()._repr_mimebundle_())
    notebook.cells.append(nbformat.v4.new_code_cell("figures", outputs=[*twice, hostile, card, tree]))
    forged = notebook.cells[2].outputs[0]["data"]  # the first run's output: its stored HTML is never trusted
    forged["text/html"] = HOSTILE
    nbformat.write(notebook, path)
    return path


def test_the_page_embeds_plotly_once_and_nothing_from_outside(tmp_path: Path) -> None:
    page = to_html(shared_notebook(tmp_path), tmp_path / "page.html").read_text()
    assert page.count("Plotly.newPlot") == 1 and page.count("plotly.js v") <= 2  # the bundle, once
    assert "cdn" not in page.lower().split("<script nonce")[0]
    assert "example.invalid" not in page and 'document.title = "pwned"' not in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "Planted &lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_console_script_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "cli.html"
    assert cli(["html", str(shared_notebook(tmp_path)), "--out", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.browser
@pytest.mark.parametrize("javascript", [True, False], ids=["js-on", "js-off"])
def test_the_page_renders_offline_in_chromium(tmp_path: Path, javascript: bool) -> None:
    html = to_html(shared_notebook(tmp_path), tmp_path / "page.html")
    with chromium(javascript=javascript, offline=True) as context:
        page = context.new_page()
        console: list[str] = []
        requests: list[str] = []
        page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
        page.on("request", lambda request: requests.append(request.url))
        page.goto(html.as_uri())
        page.wait_for_load_state("load")
        try:
            body = page.inner_text("body")
            assert requests == [html.as_uri()]  # nothing but the file itself was asked for
            assert "APPROVED: order A-1001 is refunded" in body  # the answer view, drawn from the recording
            every_text = page.locator("body").text_content() or ""  # closed <details> included
            assert "LANDED" in every_text and "BORN" in every_text  # the backtrack
            assert "sequence-step#2" in body  # the composed run's tree
            assert "Planted <script>alert(1)</script>" in body  # the note, as text
            assert page.title() == "Refund audit"
            if javascript:
                page.wait_for_selector(".fl-plot .main-svg", state="attached", timeout=10_000)
                assert page.locator(".fl-plot .main-svg").count() >= 2
                assert not [line for line in console if line.startswith("error")]
            else:
                assert "static copy of the figure" in body  # the no-script copy
                # the tree's copy: its picture, drawn in SVG with every member named, and its list
                assert page.locator(".fl-nojs summary", has_text="Runs as a list").count() >= 1
                picture = page.locator("noscript svg.fl-svg, svg.fl-svg").first
                box = picture.bounding_box()
                assert box is not None and box["height"] > 50, box
                drawn = picture.text_content() or ""
                assert all(words in drawn for words in ("draft", "check", "agent · ✓ finished")), drawn
                assert page.locator(".fl-plot .main-svg").count() == 0
            assert body.count("kept") == 1  # the hostile output, made inert; the forged run HTML not shown
            card = page.locator(".fl-card", has_text="ERR_INVALID_RUN_INPUT")  # its <style> dropped, its box kept
            red = rgb(theme.plain(theme.RED))
            assert card.evaluate("(card) => getComputedStyle(card).borderLeft") == f"4px solid {red}"
            assert card.evaluate("(card) => getComputedStyle(card).backgroundColor") == rgb(theme.plain(theme.RED_TINT))
        except AssertionError as failure:
            raise AssertionError(f"{failure}; {keep_evidence(page, f'offline-html-{javascript}', console)}") from None


#: every painted shape of the page's plotly drawings whose fill is black, the SVG default a shape falls back to
#: when the style attribute plotly.js colours it through is gone
_BLACK_SHAPES = """() => Array.from(document.querySelectorAll('.fl-plot svg rect, .fl-plot svg path'))
  .filter((shape) => { const box = shape.getBoundingClientRect(); return box.width * box.height > 400; })
  .filter((shape) => getComputedStyle(shape).fill === 'rgb(0, 0, 0)' && getComputedStyle(shape).fillOpacity !== '0')
  .length"""


@pytest.mark.browser
def test_the_drawn_figures_keep_their_colours_when_every_style_is_stripped(tmp_path: Path) -> None:
    """A reader mode or a strict sanitizer that strips every ``<style>`` and ``style`` attribute from the
    drawn page leaves plotly's SVG without the colours plotly.js gave it through style attributes: the
    page writes them as SVG presentation attributes too, so the tree reads, not as black boxes."""
    html = to_html(shared_notebook(tmp_path), tmp_path / "page.html")
    with chromium(javascript=True, offline=True) as context:
        page = context.new_page()
        page.goto(html.as_uri())
        page.wait_for_selector(".fl-plot .main-svg", state="attached", timeout=10_000)
        page.wait_for_function("() => document.querySelectorAll('.fl-plot .main-svg [fill]').length > 0")
        try:
            assert page.evaluate(_BLACK_SHAPES) == 0
            page.evaluate("""() => {
              document.querySelectorAll('style, link[rel=stylesheet]').forEach((sheet) => sheet.remove());
              document.querySelectorAll('[style]').forEach((element) => element.removeAttribute('style'));
            }""")
            assert page.locator("[style]").count() == 0
            assert page.evaluate(_BLACK_SHAPES) == 0
            words = page.locator(".fl-plot").first.text_content() or ""
            assert "sequence" in words or "draft" in words, words
        except AssertionError as failure:
            raise AssertionError(f"{failure}; {keep_evidence(page, 'stripped-figures', [])}") from None


@pytest.mark.parametrize("name", ["<!--<script>", "</script><p>out</p>", "a&amp;b<!--"])
def test_figure_data_cannot_end_or_hide_its_block_and_the_page_after_it_reads_on(tmp_path: Path, name: str) -> None:
    # an HTML parser reads "<!--<script>" inside a script element as the start of an escaped block that never
    # ends: every later part of the page (the drawing scripts, the cells after) would be swallowed by it
    from bleach._vendor import html5lib  # the HTML5 parsing algorithm, as a browser reads the page

    figure = json.loads(go.Figure(go.Scatter(x=[1, 2], y=[2, 1], name=name)).to_json())
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("fig", outputs=[nbformat.v4.new_output("display_data", data={
            "application/vnd.plotly.v1+json": figure, "text/plain": "Figure"})]),
        nbformat.v4.new_markdown_cell("the cell after the figure")])
    path = tmp_path / "figure.ipynb"
    nbformat.write(notebook, path)
    page = to_html(path, tmp_path / "figure.html").read_text()
    # plotly.js (megabytes) left out of what the pure-Python parser reads; its script element is kept
    page = re.sub(r'(<script nonce="[^"]*">).{100000,}?(?=</script>)', r"\1/* plotly.js */", page, count=1, flags=re.S)
    tree = html5lib.parse(page, namespaceHTMLElements=False)
    (block,) = [s for s in tree.iter("script") if s.get("type") == "application/json"]
    assert "<" not in (block.text or "") and json.loads(block.text)["data"][0]["name"] == name
    assert len([s for s in tree.iter("script") if s.get("nonce")]) == 2  # plotly.js and the drawing, both read
    assert "the cell after the figure" in "".join(tree.find("body").itertext())
