"""A notebook someone else saved, opened in real JupyterLab before it is trusted: the views keep their colours.

JupyterLab sanitizes the outputs of a notebook it does not trust: every ``<style>`` block goes.
The colours that carry meaning (a piece's source kind, the answer's box, a run's status, an
error card's edge) are written on the elements themselves, so a colleague who opens a shared
notebook sees what its author saw before deciding to trust it. The executed lab tour is
written to the server's folder unsigned (as a file that arrived by mail or git would be), and
opened without running a cell.
"""

from __future__ import annotations

import nbformat
import pytest
from browser_kit import chromium, keep_evidence, rgb
from lab_server import place
from test_notebooks import executed

from footprint_lab.lab.views.page import KIND_COLOURS, STATUS_COLOURS

pytestmark = pytest.mark.browser


def test_an_untrusted_notebook_shows_its_views_and_cards_in_their_colours(lab_server):
    path = lab_server.root / "shared_tour.ipynb"
    nbformat.write(executed("lab_tour.ipynb"), path)  # no signature: this server has never seen it
    with chromium() as context:
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
        # ?reset: a fresh workspace, this notebook alone (another test's notebook may have been open)
        page.goto(f"{lab_server.url}/lab/tree/{path.name}?reset")
        try:
            shown = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)", has_text="A wrong answer, displayed")
            answer = shown.locator(".jp-OutputArea-output .fl-answer").first
            answer.wait_for(timeout=90_000)
            # every view drawn (the server draws every cell at once; each is also scrolled to, and waited for);
            # a chat's turns hold theirs in closed blocks, each opening to its view when its turn is clicked
            views = shown.locator(".jp-OutputArea-output .fl-view:not(details:not([open]) .fl-view)")
            page.wait_for_function("(panel) => panel.querySelectorAll('.jp-OutputArea-output .fl-view').length >= 3",
                                   arg=shown.element_handle(), timeout=60_000)
            for at in range(views.count()):
                views.nth(at).scroll_into_view_if_needed()
                views.nth(at).wait_for(state="visible")
            turn = shown.locator(".jp-OutputArea-output details.fl-chat-turn").first
            turn.locator("> summary").click()
            turn.locator("> .fl-view").wait_for(state="visible")
            # the sanitizer ran: no output kept its style sheet
            assert shown.locator(".jp-OutputArea-output style").count() == 0

            def computed(locator, prop: str) -> str:
                return locator.evaluate(f"(element) => getComputedStyle(element)['{prop}']")

            assert computed(answer, "borderLeftColor") == rgb("#0969da")
            # (the sanitizer also drops data-* attributes: the piece is found by the id it shows)
            fact = shown.locator(".jp-OutputArea-output details.fl-piece",
                                has=page.locator("summary > code", has_text="vip-override")).first
            assert computed(fact, "borderLeftColor") == rgb(KIND_COLOURS["fact"])
            assert computed(fact.locator("summary > i"), "color") == rgb(KIND_COLOURS["fact"])
            finished = shown.locator(".jp-OutputArea-output .fl-tag.fl-st-finished").first
            assert computed(finished, "backgroundColor") == rgb(STATUS_COLOURS["finished"])
            assert computed(finished, "color") == "rgb(255, 255, 255)"
            card = shown.locator(".jp-OutputArea-output .fl-card", has_text="ERR_UNKNOWN_RUN").first
            card.scroll_into_view_if_needed()
            assert computed(card, "borderLeftColor") == rgb("#cf222e")
            answer.scroll_into_view_if_needed()
            keep_evidence(page, "shared_tour_untrusted", console)  # the screenshot, for a person to look at
        except AssertionError as failure:
            raise AssertionError(f"{failure}; {keep_evidence(page, 'shared_tour_untrusted', console)}") from None


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "untrusted"])
def test_a_tree_draws_with_jupyterlabs_own_plotly_trusted_or_not(lab_server, trusted: bool):
    """No plotly.js rides in the notebook: JupyterLab's own plotly draws the figure's JSON, in a notebook it
    trusts and in one it does not (the SVG beside it is for readers with no plotly: GitHub, nbviewer, a page)."""
    import copy

    name = f"tree_{'trusted' if trusted else 'untrusted'}.ipynb"
    address = place(lab_server, copy.deepcopy(executed("lab_tour.ipynb")), name, trusted=trusted)
    with chromium() as context:
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
        page.goto(address)
        try:
            shown = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)", has_text="A wrong answer, displayed")
            cell = shown.locator(".jp-CodeCell", has_text="%fp_tree flow_run").first
            cell.wait_for(timeout=90_000)
            cell.scroll_into_view_if_needed()
            figure = cell.locator(".js-plotly-plot").first
            figure.wait_for(timeout=60_000)
            page.wait_for_function("(cell) => cell.querySelectorAll('.scatterlayer .points path').length >= 5",
                                   arg=cell.element_handle(), timeout=30_000)
            assert figure.locator(".scatterlayer .trace .points path").count() == 5  # one mark per run
            labels = {text.strip() for text in figure.locator(".scatterlayer .trace text").all_text_contents()}
            assert {"support", "triage", "route", "refunds", "summary"} <= labels
            assert cell.locator("svg.fl-svg").count() == 0  # one view of the tree, not two
            keep_evidence(page, f"tree_in_jupyterlab_{name}", console)  # the screenshot, for a person to look at
        except AssertionError as failure:
            raise AssertionError(f"{failure}; {keep_evidence(page, f'tree_in_jupyterlab_{name}', console)}") from None
