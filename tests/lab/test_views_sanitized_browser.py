"""Every view reads the same in Chromium as it is, with scripts off, and with every style stripped away.

A strict sanitizer (a mail client, a wiki, a review tool) drops ``<style>`` sheets, ``<link>``
sheets and every ``style`` attribute; GitHub and nbviewer run no script. What is left must still
say everything: fields apart by real text (not by a flex gap), a status in a word and a symbol
beside its colour, an absent value as "-" (never ``NaN``), a tree as a picture with its words.
Each view is opened in the three states and read as a reader gets it (``innerText``); a
screenshot of each lands in ``test-artifacts/views/``.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_kit import ARTIFACTS, chromium, keep_evidence, screenshot

from footprint_lab import Agent, Conditional, LLMCall, Parallel, Sequence, define_tool, lint_tools
from footprint_lab.errors import InvalidRunInputError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import ask, bisect_culprits, compare_runs, localize
from footprint_lab.lab import panels
from footprint_lab.lab.cards import error_card_html
from footprint_lab.lab.views import slots_view
from footprint_lab.notebook import export, to_html
from footprint_lab.providers import mock

pytestmark = pytest.mark.browser

STATES = ("normal", "scripts-off", "stripped")
#: what a strict sanitizer removes, done in the page before it is read
STRIP = """() => {
  document.querySelectorAll('style, link[rel=stylesheet]').forEach((sheet) => sheet.remove());
  document.querySelectorAll('[style]').forEach((element) => element.removeAttribute('style'));
}"""
#: what no view may show a reader, whatever the state
NEVER = ("NaN", "None", "factvip-override", "basesystem-prompt", "<script", "undefined")


def _lint_catalog() -> list[Any]:
    def tool(name: str, description: str) -> Any:
        return define_tool(name=name, description=description, fn=lambda order_id: "ok",
                           input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}})

    return [tool("get_order", "Returns the order's status, total and items."),
            tool("fetch_order", "Returns the order's status, total and line items."),
            tool("x", "")]


async def _views(folder: Path) -> dict[str, tuple[str, list[str]]]:
    """Each view's HTML, and the phrases a reader must find in it in every state."""
    agent = planted_fact_agent()
    run = await agent.run(REFUND_REQUEST)
    flow = Sequence({"triage": LLMCall(provider=mock(reply="refund request")),
                     "route": Conditional([("refunds", lambda text: "refund" in text, planted_fact_agent())],
                                          otherwise=("general", Agent(provider=mock(reply="Forwarded.")))),
                     "checks": Parallel({"billing": LLMCall(provider=mock(reply="ok")),
                                         "legal": LLMCall(provider=mock(reply="ok"))}, merge=lambda a: "ok")},
                    name="support")
    flow_run = await flow.run(REFUND_REQUEST)
    localized = await localize(run, rerun=agent, samples=1, top=2, progress=False)
    redundant = planted_fact_agent(variant="redundant")
    culprits = await bisect_culprits(await redundant.run(REFUND_REQUEST), rerun=redundant, samples=3)
    replies = [{"tool": "list_calls", "args": {}}, "Approved because of [call-llm#6], not [call-llm#9]."]
    explanation = await ask(run, "Why was the refund approved?", provider=mock(replies=replies))
    try:
        await agent.run(["not", "a", "message"])
    except InvalidRunInputError as refusal:
        card = error_card_html(refusal)
    exported = to_html(export([run, flow_run], folder / "shared.ipynb", title="Refund audit"), folder / "page.html")
    without = await planted_fact_agent().without(["vip-override"]).run(REFUND_REQUEST)
    difference = compare_runs(run, without)
    differed = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("compare_runs(good, bad)")])
    differed.cells[0].outputs = [nbformat.v4.new_output("display_data", data=difference._repr_mimebundle_())]
    nbformat.write(differed, folder / "difference.ipynb")
    difference_page = to_html(folder / "difference.ipynb", folder / "difference.html")
    answering = run.recording.exchanges[-1].step_id
    row = "fact · vip-override · The customer holds"
    return {
        "answer view": (run._repr_mimebundle_()["text/html"],
                        ["✓ finished", "APPROVED: order A-1001", row, "base · system-prompt · You decide",
                         "Integrity: no findings."]),
        "backtrack (%fp_why)": (run.backtrack()._repr_mimebundle_()["text/html"], [row]),
        "context (%fp_context)": (slots_view(run.recording, run.recording.exchanges[0], left_out=True),
                                  ["base · system-prompt · You decide", "What call-llm#3 was given"]),
        "suspects (%fp_suspects)": (run.suspects()[["rank", "source_kind", "source_id", "removal_id"]]
                                    .set_index("rank")._repr_html_(), ["user\tuser-message\t-"]),
        "verdicts (localize)": (localized._repr_mimebundle_()["text/html"],
                                ["fact\tvip-override\tCONFIRMED", "lookup_order\tNOT CONFIRMED"]),
        "integrity": (run.integrity()._repr_mimebundle_()["text/html"],
                      ["duplicate_tool_call\t✓ passed", "ungrounded_tool\t– not applicable"]),
        "lint": (lint_tools(_lint_catalog())[["severity", "check", "tool", "other"]]._repr_html_(),
                 ["confusable\tget_order\tfetch_order", "missing-description\tx\t-"]),
        "culprits": (culprits._repr_mimebundle_()["text/html"], ["CONFIRMED", "manager-exception"]),
        "explanation": (explanation._repr_mimebundle_()["text/html"],
                        ["Q: Why was the refund approved?", "call-llm#9 ?"]),
        "tree (%fp_tree)": (flow_run.tree()._repr_mimebundle_()["text/html"],
                            ["route → refunds", "refunds", "agent · ✓ finished", "parallel · ✓ finished",
                             "Runs as a list (7)"]),
        "error card": (card, ["Refused: InvalidRunInputError ERR_INVALID_RUN_INPUT", "Nothing ran"]),
        "call panel (Lab)": (panels.call_panel(run.recording, answering), [row, "Find dropped context"]),
        "exported page": (exported.read_text(encoding="utf-8"), [row, "route → refunds", "✓ finished"]),
        "difference (compare_runs)": (difference._repr_mimebundle_()["text/html"],
                                      ["vip-override", "APPROVED: order A-1001", "DECLINED: order A-1001"]),
        "difference, exported": (difference_page.read_text(encoding="utf-8"),
                                 ["vip-override", "APPROVED: order A-1001", "DECLINED: order A-1001"]),
    }


def reads(text: str, phrase: str) -> bool:
    """Whether ``text`` holds ``phrase``'s fields in order, each apart from the next by real text: the
    phrase's own " · " or tab, or any whitespace (a laid-out row reads as one field a line, a table's cells
    by tabs); never by nothing, so "factvip-override" does not read as "fact · vip-override"."""
    fields = [field for field in re.split(r" · |\t", phrase)]
    pattern = r"(?:\s*·\s*|\s+)".join(re.escape(field) for field in fields)
    return re.search(pattern, text) is not None


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[str]]]:
    folder = tmp_path_factory.mktemp("views")
    written = {}
    for name, (html, phrases) in asyncio.run(_views(folder)).items():
        page = folder / f"{name.split(' ')[0]}-{len(written)}.html"
        whole = html if html.startswith("<!DOCTYPE") else f'<!DOCTYPE html><meta charset="utf-8"><body>{html}</body>'
        page.write_text(whole, encoding="utf-8")
        written[name] = (page, phrases)
    return written


@pytest.mark.parametrize("state", STATES)
def test_every_view_reads_the_same_in_every_state(pages, state: str) -> None:
    shots = ARTIFACTS / "views"
    shots.mkdir(parents=True, exist_ok=True)
    with chromium(javascript=state != "scripts-off", offline=True) as context:
        for name, (path, phrases) in pages.items():
            page = context.new_page()
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            try:
                if state == "stripped":
                    page.evaluate(STRIP)
                    assert page.locator("style, [style]").count() == 0
                text = page.inner_text("body")
                screenshot(page, shots / f"{path.stem}-{state}.png")
                for phrase in phrases:
                    assert reads(text, phrase), (name, phrase, text[:3000])
                for never in NEVER:
                    assert never not in text, (name, never)
            except AssertionError as failure:
                raise AssertionError(f"{failure}; {keep_evidence(page, f'view-{path.stem}-{state}', [])}") from None
            finally:
                page.close()


#: the WCAG AA contrast of every text a view draws, against what it is drawn on, as Chromium computes both
CONTRASTS = """() => {
  const parse = (text) => { const m = text.match(/[\\d.]+/g) || []; return m.map(Number); };
  const lum = ([r, g, b]) => [r, g, b]
    .map((c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, c, k) => sum + c * [0.2126, 0.7152, 0.0722][k], 0);
  const ground = (node) => {
    for (let at = node; at && at.nodeType === 1; at = at.parentElement) {
      const [r, g, b, a = 1] = parse(getComputedStyle(at).backgroundColor);
      if (a > 0) return [r, g, b];
    }
    return [255, 255, 255];
  };
  const found = [];
  for (const node of document.querySelectorAll('body *')) {
    const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    const box = node.getBoundingClientRect();
    if (!own || box.width === 0 || box.height === 0 || getComputedStyle(node).visibility === 'hidden') continue;
    if (node.closest('.js-plotly-plot')) continue;  // plotly draws on its own light paper, inside its svg
    const style = getComputedStyle(node);
    const [r, g, b, a = 1] = parse(node instanceof SVGElement ? style.fill : style.color);
    const under = ground(node instanceof SVGElement ? node.closest('svg') : node);
    const fg = [r, g, b].map((c, k) => c * a + under[k] * (1 - a));
    const [hi, lo] = [lum(fg), lum(under)].sort((x, y) => y - x);
    found.push({text: node.textContent.trim().slice(0, 40), tag: node.tagName, colour: style.color,
                ratio: (hi + 0.05) / (lo + 0.05)});
  }
  return found;
}"""
#: a page as JupyterLab's themes draw it: the dark one says so on the body and draws light text on near black
THEMES = {"light": '<body data-jp-theme-light="true" style="background:#ffffff;color:rgba(0,0,0,0.87)">',
          "dark": '<body data-jp-theme-light="false" style="background:#111111;color:rgba(255,255,255,0.87)">',
          # a dark page that says nothing of its theme, read in quirks mode (no doctype): a view keeps its own light
          # palette there, and a table in it must not take the page's light text (quirks tables do, unless told)
          "unmarked dark": '<body style="background:#111111;color:#eeeeee">'}


@pytest.mark.parametrize("look", list(THEMES))
def test_every_view_reads_at_4_5_to_1_in_the_light_and_the_dark_theme(pages, look: str) -> None:
    shots = ARTIFACTS / "views"
    shots.mkdir(parents=True, exist_ok=True)
    # scripts off, the exported page draws each figure's static copy, sanitized: it must read as well
    for javascript, chosen in ((True, pages), (False, {"exported page": pages["exported page"]})):
        _contrasts(look, javascript, chosen, shots)


def _contrasts(look: str, javascript: bool, pages: dict[str, tuple[Path, list[str]]], shots: Path) -> None:
    with chromium(offline=True, javascript=javascript) as context:
        for name, (path, _) in pages.items():
            if name.startswith(("suspects", "lint")):
                continue  # pandas' own tables: no colour of ours
            html = path.read_text(encoding="utf-8")
            themed = path.with_name(f"{path.stem}-{look}.html")
            if html.startswith("<!DOCTYPE html><meta"):
                html = html.replace("<body>", THEMES[look], 1)
                if look == "unmarked dark":
                    html = html.removeprefix("<!DOCTYPE html>")
            themed.write_text(html, encoding="utf-8")
            page = context.new_page()
            page.emulate_media(color_scheme="light" if look == "light" else "dark")  # the exported page follows it
            page.goto(themed.as_uri())
            page.wait_for_load_state("load")
            # every box opened: what a reader finds one click away (a timeline, a call's messages) is measured too
            page.evaluate("() => document.querySelectorAll('details').forEach((box) => { box.open = true; })")
            screenshot(page, shots / f"{path.stem}-{look}{'' if javascript else '-scripts-off'}.png")
            low = [item for item in page.evaluate(CONTRASTS) if item["ratio"] < 4.5]
            assert low == [], (name, look, javascript, low[:8])
            page.close()
