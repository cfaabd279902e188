"""``Lab(runner)`` used as an analyst uses it: in real JupyterLab, in Debian's chromium, by clicking.

One JupyterLab server for the tier (started in a temporary home, stopped by its pid), one
notebook written here with a widget per scenario, executed once in the page. Each test then
drives its widget: types, presses Run, reads what appears, clicks into the answer. On failure
the page's screenshot and console log are kept under ``test-artifacts/`` and their paths printed.

Run the tier alone with ``pytest -m browser``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_kit import ARTIFACTS, chromium, keep_evidence
from lab_kit import PWNED, VAULT_PASSWORD
from lab_server import LabServer
from paths_kit import TESTS

pytestmark = pytest.mark.browser

SETUP = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from footprint_lab import Lab
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from lab_kit import approvals, desk, explainer, hostile, stock, vault
"""
CELLS = {
    "setup": SETUP,
    "refunds": "lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)\nlab",
    "pause": 'pause_lab = Lab(approvals(), message="Refund order A-1001.")\npause_lab',
    "slow": 'slow_lab = Lab(stock(), message="Is X-1 in stock?")\nslow_lab',
    "meanwhile": 'print("the kernel answers; the slow run is", slow_lab.status)',
    "refusal": "refusal_lab = Lab(planted_fact_agent())\nrefusal_lab",
    "composition": "desk_lab = Lab(desk(), message=REFUND_REQUEST)\ndesk_lab",
    "asking": "ask_lab = Lab(planted_fact_agent(), message=REFUND_REQUEST, explainer=explainer())\nask_lab",
    "recall": 'vault_lab = Lab(vault(), message="Log me in.")\nvault_lab',
    "chatting": "chat_lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)\nchat_lab",
    "hostile": "hostile_lab = hostile()\nhostile_lab",
    "imported": ("from footprint_lab.otel import from_spans, to_spans\n"
                 "from footprint_lab.providers import mock\n"
                 "from footprint_lab.examples.scenarios import refund_model\n"
                 "(imported,) = from_spans(to_spans([planted_fact_agent().run_sync(REFUND_REQUEST)]))\n"
                 "imported_lab = Lab(run=imported, replay=mock(respond=refund_model))\nimported_lab"),
}
ORDER = list(CELLS)


@pytest.fixture(scope="module")
def notebook(lab_server: LabServer) -> Iterator[tuple[Any, list[str], Path]]:
    """The test notebook open in chromium with every cell run once: ``(page, console, path)``."""
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(CELLS[name].strip()) for name in ORDER]
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = lab_server.root / "lab_widget.ipynb"
    nbformat.write(book, path)
    console: list[str] = []
    with chromium() as context:
        page = context.new_page()
        page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
        with evidence(page, console, "lab-notebook-open"):
            page.goto(f"{lab_server.url}/lab/tree/{path.name}?reset")  # no tab left open by an earlier test
            page.wait_for_selector("text=Python 3 (ipykernel) | Idle", timeout=90_000)
            page.locator(".jp-Cell").first.click()
            for _ in ORDER:
                page.keyboard.press("Shift+Enter")
            page.locator(".jp-Cell").nth(len(ORDER) - 1).locator(".fl-lab").wait_for(timeout=60_000)
        yield page, console, path


@contextmanager
def evidence(page: Any, console: list[str], name: str) -> Iterator[None]:
    """On failure, keep the page's screenshot and console log and say where they went."""
    try:
        yield
    except BaseException:
        print(f"browser evidence for {name}: {keep_evidence(page, name, console)}")
        raise


def widget(page: Any, name: str) -> Any:
    """The widget of cell ``name``, drawn and scrolled into view."""
    lab = page.locator(".jp-Cell").nth(ORDER.index(name)).locator(".fl-lab")
    lab.wait_for(timeout=60_000)
    lab.scroll_into_view_if_needed()
    return lab


def press_run(lab: Any, status: str) -> None:
    """Press Run (or Send) and wait until the widget says ``status``."""
    lab.locator(".fl-run-btn").click()
    wait_status(lab, status)


def wait_status(lab: Any, status: str, timeout: float = 30_000) -> None:
    lab.page.wait_for_function(
        "([lab, status]) => lab.dataset.status === status", arg=[lab.element_handle(), status], timeout=timeout)


def test_run_then_click_from_the_answer_to_the_planted_fact_and_its_custody(notebook):
    page, console, _ = notebook
    lab = widget(page, "refunds")
    with evidence(page, console, "lab-answer-custody"):
        press_run(lab, "finished")
        # the answer first: right under the message box, the steps after it and closed once the run ended
        assert lab.evaluate("lab => Boolean(lab.querySelector('.fl-answer-view').compareDocumentPosition("
                            "lab.querySelector('.fl-steps')) & Node.DOCUMENT_POSITION_FOLLOWING)")
        assert not lab.locator(".fl-steps").evaluate("box => box.open")
        lab.locator(".fl-steps > summary").click()
        assert lab.locator(".fl-step-id", has_text="call-llm#3").count() == 1   # the steps it took, one click away
        assert "lookup_order" in lab.locator(".fl-step-list").inner_text()
        answer = lab.locator(".fl-answer-view [data-fl-answer]")
        assert "APPROVED" in answer.inner_text()
        # keyboard: the answer is a button in the Tab order, and Enter opens its call as a click does
        assert (answer.get_attribute("tabindex"), answer.get_attribute("role")) == ("0", "button")
        answer.focus()
        page.keyboard.press("Enter")
        # the answering call as the model saw it: its messages, each naming its piece; the pieces themselves are
        # listed once, in the answer view, so the panel repeats none of them
        chat = lab.locator(".fl-panel .fl-chat")
        chat.wait_for()
        assert "What the answering call was given" in lab.locator(".fl-panel").inner_text()
        assert "VIP override" in chat.locator(".fl-role-system").inner_text()
        assert lab.locator(".fl-panel details[data-fl-piece]").count() == 0
        lab.locator(".fl-panel .fl-role-system [data-fl-piece='vip-override']").click()
        # the piece named there opens alone, its row open to its custody: the list of hops directly inside it
        custody = lab.locator(".fl-panel details[data-fl-piece='vip-override'][open] > ol")
        custody.wait_for()
        assert lab.locator(".fl-panel details[data-fl-piece]").count() == 1
        lab.locator(".fl-panel .fl-suspect").wait_for()
        chain = custody.inner_text()
        for hop in ("ANSWER", "READ", "LANDED", "ALLOWED", "BORN"):
            assert hop in chain
        assert "define_fact('vip-override')" in chain
        assert "suspect score" in lab.locator(".fl-panel .fl-suspect").inner_text()
        lab.locator("[data-fl-action='rerun']").click()
        after = lab.locator(".fl-panel .fl-rerun")
        after.wait_for()
        assert "DECLINED" in after.inner_text() and "the outcome changed" in after.inner_text()
        # while it tests, the badge says what runs (not "finished"): every text it shows is kept from here on
        lab.evaluate("lab => { const badge = lab.querySelector('.fl-status'); lab.flSeen = [];"
                     " new MutationObserver(() => lab.flSeen.push(badge.textContent))"
                     ".observe(badge, {childList: true, characterData: true, subtree: true}); }")
        lab.locator("[data-fl-action='localize'][data-fl-source='vip-override']").click()  # tests this piece
        verdicts = lab.locator(".fl-panel .fl-localize")
        verdicts.wait_for(timeout=60_000)
        row = verdicts.locator("tr", has_text="vip-override")
        assert "CONFIRMED" in row.inner_text() and "3/3" in row.inner_text()
        page.wait_for_function("lab => lab.querySelector('.fl-status').textContent === 'finished'",
                               arg=lab.element_handle())
        assert any(seen.startswith("Testing 'vip-override'") for seen in lab.evaluate("lab => lab.flSeen"))


def test_follow_up_turns_and_a_new_conversation(notebook):
    page, console, _ = notebook
    lab = widget(page, "refunds")
    with evidence(page, console, "lab-turns"):
        if lab.get_attribute("data-status") != "finished":
            press_run(lab, "finished")
        assert lab.locator(".fl-turn").inner_text() == "1 turn"
        assert lab.locator(".fl-run-btn").inner_text() == "Send"
        lab.locator(".fl-message").fill("And what about the VIP override?")
        lab.locator(".fl-run-btn").click()
        page.wait_for_function("lab => lab.querySelector('.fl-turn').textContent === '2 turns'",
                               arg=lab.element_handle(), timeout=30_000)
        wait_status(lab, "finished")
        assert lab.locator(".fl-step-id", has_text="seed#1").count() == 1
        lab.locator(".fl-new").click()
        page.wait_for_function("lab => lab.querySelector('.fl-turn').textContent === ''", arg=lab.element_handle())
        assert lab.locator(".fl-run-btn").inner_text() == "Run"


def test_a_pause_is_answered_in_the_widget_and_the_run_finishes(notebook):
    page, console, _ = notebook
    lab = widget(page, "pause")
    with evidence(page, console, "lab-pause"):
        press_run(lab, "paused")
        assert lab.locator(".fl-pause-question").inner_text() == "Refund 120 EUR?"
        lab.locator(".fl-choice", has_text="yes").click()
        wait_status(lab, "finished")
        assert "Refunded 120 EUR." in lab.locator(".fl-answer-view").inner_text()
        assert lab.locator(".fl-pause").inner_text() == ""
        lab.locator(".fl-message").fill("Refund order A-1002 too.")
        press_run(lab, "paused")                       # asks again: this time the question is dropped
        lab.locator(".fl-abandon").click()
        wait_status(lab, "abandoned")
        assert "dropped" in lab.locator(".fl-lab-note").inner_text()


def test_stop_cancels_a_slow_run_while_the_kernel_stays_responsive(notebook):
    page, console, _ = notebook
    lab = widget(page, "slow")
    with evidence(page, console, "lab-stop"):
        press_run(lab, "running")
        lab.locator(".fl-step-detail", has_text='check_stock({"sku": "X-1"})').wait_for()   # the tool call, live
        meanwhile = page.locator(".jp-Cell").nth(ORDER.index("meanwhile"))
        meanwhile.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Control+Enter")
        meanwhile.locator(".jp-OutputArea-output", has_text="the slow run is running").wait_for(timeout=30_000)
        lab.locator(".fl-stop").click()
        wait_status(lab, "cancelled")
        assert "cancelled" in lab.locator(".fl-lab-note").inner_text()


def test_a_refusal_shows_as_its_card_and_the_widget_stays_usable(notebook):
    page, console, _ = notebook
    lab = widget(page, "refusal")
    with evidence(page, console, "lab-refusal"):
        press_run(lab, "refused")                       # an empty message: refused at the door
        card = lab.locator(".fl-card-slot .fl-card")
        assert "ERR_INVALID_RUN_INPUT" in card.inner_text()
        lab.locator(".fl-message").fill("Please refund order A-1001.")
        press_run(lab, "finished")
        assert lab.locator(".fl-card-slot").inner_text() == ""
        assert "APPROVED" in lab.locator(".fl-answer-view").inner_text()


def test_a_composition_tree_node_opens_that_members_answer(notebook):
    page, console, _ = notebook
    lab = widget(page, "composition")
    with evidence(page, console, "lab-tree"):
        press_run(lab, "finished")
        nodes = lab.locator(".fl-lab-tree [data-fl-member]")
        assert nodes.count() == 3
        triage = lab.locator(".fl-lab-tree g[data-fl-member]", has_text="triage")
        triage.click()
        lab.locator(".fl-lab-member", has_text="A refund request.").wait_for()
        lab.locator(".fl-lab-tree g[data-fl-member]", has_text="refunds").click()
        lab.locator(".fl-lab-member", has_text="APPROVED").wait_for()


def test_the_saved_notebook_keeps_small_widget_state_and_a_static_answer(notebook):
    page, console, path = notebook
    lab = widget(page, "refunds")
    with evidence(page, console, "lab-saved"):
        lab.locator(".fl-message").fill("Please refund order A-1001.")
        press_run(lab, "finished")
        page.locator(".jp-Cell").first.click()
        page.keyboard.press("Control+s")
        page.wait_for_function(
            "() => !document.querySelector('.jp-mod-current .jp-mod-dirty')", timeout=30_000)
        page.wait_for_timeout(500)
        saved = nbformat.read(path, as_version=4)
        state = saved.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]
        assert "state" in state                                  # what GitHub's renderer requires
        assert len(json.dumps(state)) < 1_000_000
        outputs = saved.cells[ORDER.index("refunds")].outputs
        assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
        static = next(o.data["text/html"] for o in outputs
                      if "fl-static-copy" in o.get("data", {}).get("text/html", ""))
        assert "APPROVED" in static and "<script" not in static   # the copy a reader without a kernel sees
        # live, the widget's sheet hides the copy: nothing shows twice
        assert not page.locator(".jp-Cell").nth(ORDER.index("refunds")).locator(".fl-static-copy").is_visible()
        # reopened where the widget's model is gone (no kernel, no saved widget state): the copy shows instead
        saved.metadata.pop("widgets", None)
        reopened = path.with_name("lab_reopened.ipynb")
        nbformat.write(saved, reopened)
        other = page.context.new_page()
        other.goto(f"{page.url.split('/lab/')[0]}/lab/tree/{reopened.name}?reset")
        copy = other.locator(".jp-Cell").nth(ORDER.index("refunds")).locator(".fl-static-copy")
        copy.wait_for(timeout=60_000)
        assert copy.is_visible() and "APPROVED" in copy.inner_text() and "static copy" in copy.inner_text()
        ARTIFACTS.mkdir(exist_ok=True)
        copy.screenshot(path=str(ARTIFACTS / "lab-reopened-static-copy.png"))
        other.close()


def test_ask_why_shows_the_answer_and_a_cited_id_opens_its_piece(notebook):
    page, console, _ = notebook
    lab = widget(page, "asking")
    with evidence(page, console, "lab-ask"):
        press_run(lab, "finished")
        lab.locator(".fl-ask-question").fill("Why was the refund approved?")
        lab.locator(".fl-ask-question").press("Enter")
        answer = lab.locator(".fl-ask-answer")
        answer.wait_for(timeout=30_000)
        assert "Q: Why was the refund approved?" in answer.inner_text()
        assert "<b>alone</b>" in answer.locator(".fl-ask-text").inner_text()       # escaped: shown as text
        assert "call-llm#99" in answer.locator(".fl-ask-unsupported").first.inner_text()
        lab.locator(".fl-ask-text [data-fl-cite='vip-override']").click()
        lab.locator(".fl-panel details[data-fl-piece='vip-override'][open]").wait_for()
        # a Lab built without an explainer says how to enable its Ask box, which stays off
        assert "explainer=" in (widget(page, "refunds").locator(".fl-ask-hint").text_content() or "")
        assert widget(page, "refunds").locator(".fl-ask-btn").is_disabled()


def test_a_value_covered_late_disappears_from_the_live_steps(notebook):
    page, console, _ = notebook
    lab = widget(page, "recall")
    with evidence(page, console, "lab-recall"):
        press_run(lab, "finished")  # the vault's password showed in a tool result before login covered it
        steps = lab.locator(".fl-step-list")
        page.wait_for_function("([list, word]) => !list.textContent.includes(word)",
                               arg=[steps.element_handle(), VAULT_PASSWORD], timeout=10_000)
        assert "[redacted:password]" in steps.text_content()
        assert VAULT_PASSWORD not in lab.text_content()


def test_a_hostile_id_in_the_answer_the_panel_and_the_ask_box_is_text_and_a_click_opens_its_piece(notebook):
    page, console, _ = notebook
    lab = widget(page, "hostile")
    with evidence(page, console, "lab-hostile"):
        chip = lab.locator(".fl-ask-text [data-fl-cite]")
        chip.wait_for()
        assert chip.evaluate("(element, id) => element.dataset.flCite === id", PWNED)   # the id, exactly
        assert PWNED in chip.inner_text()                                                # and shown as text
        rows = lab.locator(".fl-answer-view details[data-fl-piece] > summary")
        for at in range(rows.count()):
            rows.nth(at).hover()
        chip.hover()
        chip.click()   # the kernel opens the piece the id names, in the call that read it
        opened = lab.locator(".fl-panel details.fl-piece[open]")
        opened.wait_for()
        assert opened.evaluate("(element, id) => element.dataset.flPiece === id", PWNED)
        opened.locator("summary").hover()
        assert page.evaluate("() => window.__fl_pwned") is None                           # no script ran
        assert lab.locator("img").count() == 0                                            # no element came from it
        lab.locator(".fl-ask-answer").scroll_into_view_if_needed()
        keep_evidence(page, "lab_hostile_id", console)  # the screenshot, for a person to look at


def test_a_chats_turns_are_listed_and_each_reruns_without_a_source_or_forks(notebook):
    page, console, _ = notebook
    lab = widget(page, "chatting")
    with evidence(page, console, "lab-chat-turns"):
        press_run(lab, "finished")
        lab.locator(".fl-message").fill("And order A-1002?")
        lab.locator(".fl-run-btn").click()
        rows = lab.locator(".fl-turn-row")
        page.wait_for_function("lab => lab.querySelectorAll('.fl-turn-row').length === 2", arg=lab.element_handle(),
                               timeout=30_000)
        wait_status(lab, "finished")
        assert rows.nth(1).locator(".fl-turn-message").inner_text() == "And order A-1002?"
        version = int(lab.get_attribute("data-state-version") or "0")
        first = rows.nth(0)
        # labelled, and nothing chosen for the analyst: Rerun waits until a source is picked
        assert first.locator(".fl-turn-pick").inner_text().startswith("leave out")
        assert first.locator(".fl-turn-source").input_value() == "" and first.locator(".fl-turn-rerun").is_disabled()
        first.locator(".fl-turn-source").select_option("vip-override")
        assert first.locator(".fl-turn-rerun").is_enabled()
        first.locator(".fl-turn-rerun").click()
        lab.locator(".fl-panel", has_text="Rerun without 'vip-override'").wait_for(timeout=30_000)
        assert "Turn 0" in lab.locator(".fl-panel").inner_text()
        assert int(lab.get_attribute("data-state-version") or "0") > version   # redrawn from a newer state
        first.locator(".fl-turn-open").click()
        lab.locator(".fl-turn-row.fl-selected[data-fl-turn='0']").wait_for(timeout=30_000)
        assert "APPROVED" in lab.locator(".fl-answer-view [data-fl-answer]").inner_text()
        rows.nth(1).locator(".fl-turn-fork").click()
        page.wait_for_function("lab => lab.querySelectorAll('.fl-turn-row').length === 1", arg=lab.element_handle(),
                               timeout=30_000)
        assert "Forked before turn 1" in lab.locator(".fl-lab-note").inner_text()


def test_an_imported_run_is_explained_by_replaying_its_call_with_a_piece_removed_or_edited(notebook):
    """A run made elsewhere (imported from spans): nothing to run, its answering call replayed from the Lab."""
    page, console, _ = notebook
    lab = widget(page, "imported")
    with evidence(page, console, "lab-imported-replay"):
        assert not lab.locator(".fl-compose").is_visible()      # no agent: no message box
        assert "explained from its recording" in lab.locator(".fl-title").inner_text()
        # the piece's row in the answer view opens to its custody, and the panel to what tests it
        lab.locator(".fl-answer-view details[data-fl-piece='vip-override'] > summary").click()
        lab.locator("[data-fl-action='replay'][data-fl-source='vip-override']").click()
        replayed = lab.locator(".fl-panel .fl-replayed")
        replayed.wait_for(timeout=30_000)
        said = replayed.inner_text()
        assert "without 'vip-override'" in said and "changed in 3/3 replays" in said and "changed it 0/3" in said
        assert "DECLINED" in said
        lab.locator(".fl-answer-view [data-fl-answer]").click()          # the call's messages, a piece named there
        lab.locator(".fl-panel .fl-chat [data-fl-piece='vip-override']").first.click()
        box = lab.locator(".fl-panel textarea[data-fl-edit]")
        box.fill("The customer has no override on file.")
        lab.locator("[data-fl-action='replay_edit'][data-fl-source='vip-override']").click()
        edited = lab.locator(".fl-panel .fl-replayed", has_text="edited")
        edited.wait_for(timeout=30_000)
        assert "'vip-override' edited" in edited.inner_text() and "3/3" in edited.inner_text()
        ARTIFACTS.mkdir(exist_ok=True)
        lab.screenshot(path=str(ARTIFACTS / "lab-imported-replay-edited.png"))
        lab.locator(".fl-answer-view details[data-fl-piece='vip-override'] > summary").click()
        lab.locator("[data-fl-action='replay_localize']").click()
        verdicts = lab.locator(".fl-panel .fl-localize")
        verdicts.wait_for(timeout=60_000)
        assert "CONFIRMED" in verdicts.locator("tr", has_text="vip-override").inner_text()
        assert "Tested by replaying the answering call" in verdicts.inner_text()


def test_two_turns_compared_and_a_run_stepped_through_by_clicking(notebook):
    page, console, _ = notebook
    lab = widget(page, "asking")
    with evidence(page, console, "lab-compare-steps"):
        for message in ("Please refund order A-1001.", "And order A-1002?"):
            before = lab.locator(".fl-turn-row").count()
            lab.locator(".fl-message").fill(message)
            lab.locator(".fl-run-btn").click()
            page.wait_for_function("([lab, n]) => lab.querySelectorAll('.fl-turn-row').length === n",
                                   arg=[lab.element_handle(), before + 1], timeout=30_000)
            wait_status(lab, "finished")
        lab.locator(".fl-turn-row[data-fl-turn='0'] .fl-turn-compare").click()
        compared = lab.locator(".fl-panel", has_text="Turn 0 against the run shown")
        compared.wait_for(timeout=30_000)
        assert "user-message" in compared.inner_text()        # the turns answered different messages
        lab.locator(".fl-answer-view [data-fl-answer]").click()
        lab.locator("[data-fl-action='step']").first.click()
        stepped = lab.locator(".fl-panel .fl-step-panel")
        stepped.wait_for(timeout=30_000)
        assert "Step 1 of" in stepped.inner_text() and "What it committed" in stepped.inner_text()
        lab.locator(".fl-step-panel [data-fl-action='step']", has_text="step after").click()
        lab.locator(".fl-panel .fl-step-panel", has_text="Step 2 of").wait_for(timeout=30_000)
