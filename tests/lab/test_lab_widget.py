"""``Lab(runner)`` in the kernel: what each button does to the runner and to the state the browser draws.

These drive the widget through the same handlers the browser's messages reach (``press_*``,
``_on_message``), on a real event loop, with real runners on the mock provider. The browser
tier (``test_lab_browser.py``) checks the same behaviour through JupyterLab and chromium.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from lab_kit import approvals, desk, explainer, stock

from footprint_lab import Agent, Lab, Redaction, ask_human, tool
from footprint_lab.errors import InvalidIdentityError, LabConfigError
from footprint_lab.examples.scenarios import APPROVED, DECLINED, REFUND_REQUEST, planted_fact_agent
from footprint_lab.lab.live import LiveSteps
from footprint_lab.providers import LLMRequest, mock


def drawn_states(lab: Lab, *names: str) -> list[dict]:
    """Every state the browser draws from (one per move of ``state_version``), as the named traits."""
    states: list[dict] = []
    lab.observe(lambda _: states.append({name: getattr(lab, name) for name in names}), names="state_version")
    return states


async def press(lab: Lab, handler: str, **content: object) -> None:
    """Press a button and wait for whatever it started."""
    getattr(lab, f"press_{handler}")(content)
    if lab._task is not None:
        await lab._task


def test_lab_is_refused_by_name_for_what_it_cannot_use():
    with pytest.raises(LabConfigError) as refused:
        Lab("an agent")
    assert refused.value.setting == "runner" and refused.value.code == "ERR_LAB_CONFIG"
    assert "an agent" not in str(refused.value)
    with pytest.raises(LabConfigError) as refused:
        Lab(planted_fact_agent(), message=["hi"])
    assert refused.value.setting == "message"
    with pytest.raises(InvalidIdentityError):
        Lab(planted_fact_agent(), identity={"principal": 7})


async def test_run_shows_its_steps_then_the_answer_and_keeps_the_run():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST, identity={"principal": "ana"})
    await press(lab, "run")
    assert (lab.status, lab.turn, lab.follows) == ("finished", 1, True)
    assert str(lab.run) == APPROVED and lab.run.recording.identity == {"principal": "ana"}
    rows = {row["id"]: row for row in lab.steps}
    assert list(rows) == ["seed#1", "assemble#2", "call-llm#3", "tool#4", "assemble#5", "call-llm#6", "final#7"]
    assert all(row["status"] == "ok" for row in rows.values())
    assert rows["tool#4"]["detail"].startswith('lookup_order({"order_id": "A-1001"})')
    assert '"age_days": 47' in rows["tool#4"]["detail"]                 # the tool's result, as it came back
    assert "asks for 1 tool call" in rows["call-llm#3"]["label"]
    assert "APPROVED: order A-1001" in lab.answer_html
    assert lab.card == "" and lab.question == {}


async def test_clicking_the_answer_opens_the_answering_call_then_a_piece_its_custody():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    await press(lab, "run")
    lab.press_click({"answer": True})
    panel = lab.panel_html
    # the answering call as the model saw it: its messages, each naming its piece, and the raw request one
    # click away; its pieces are listed once, in the answer view, so the panel points there instead
    assert 'data-fl-call="call-llm#6"' in panel and "What this call was sent" in panel
    assert "Raw request" in panel and 'class="fl-piece"' not in panel
    assert "What the answering call was given" in panel
    assert 'data-fl-piece="vip-override" data-fl-slot="system"' in panel        # named, and a click away
    lab.press_click({"piece": "vip-override", "slot": "system", "call": "call-llm#6"})
    panel = lab.panel_html
    assert 'data-fl-piece="vip-override" data-fl-slot="system" open>' in panel  # its custody, open
    assert panel.count('class="fl-piece"') == 1                                  # and no other piece's row
    assert 'data-fl-call="call-llm#6">Every piece of' in panel
    lab.press_click({"call": "call-llm#6"})                                     # the whole list, on request
    assert 'data-slot="system"' in lab.panel_html and 'data-slot="tools"' in lab.panel_html
    lab.press_click({"piece": "vip-override", "slot": "system", "call": "call-llm#6"})
    panel = lab.panel_html
    opened = panel.split('data-fl-piece="vip-override" data-fl-slot="system" open>')[1].split("</details>")[0]
    for hop in ("ANSWER", "READ", "LANDED", "ALLOWED", "BORN"):
        assert f">{hop}</b>" in opened
    assert "define_fact('vip-override')" in opened
    assert "suspect score <b>0.566</b>, rank 1 of" in panel
    assert 'data-fl-action="rerun" data-fl-source="vip-override"' in panel
    lab.press_click({"piece": "user-message", "slot": "messages"})   # the input: nothing a rerun can remove
    assert "data-fl-action" not in lab.panel_html.split("fl-lab-piece")[-1]


async def test_rerun_without_a_piece_shows_before_and_after_and_localize_its_verdicts_with_progress():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    await press(lab, "run")
    lab.press_click({"piece": "vip-override", "slot": "system", "call": "call-llm#6"})
    await press(lab, "click", action="rerun", source="vip-override")
    assert "the outcome changed" in lab.panel_html
    assert APPROVED in lab.panel_html and DECLINED in lab.panel_html
    drawn = drawn_states(lab, "progress", "busy")
    await press(lab, "click", action="localize")
    verdicts = untitled(lab.panel_html.split('class="fl-localize"')[1])
    assert "<td>vip-override</td><td>CONFIRMED</td><td>3/3</td><td>0/3</td>" in verdicts
    bars = [state["progress"] for state in drawn if state["progress"]]
    assert bars and all(bar["total"] in (55, 13) for bar in bars)      # the budget (48 + 7), then what it took
    assert {"done": 13, "total": 13} in bars                            # 2 + 5 screening, 3 + 3 confirming: full
    assert all(state["busy"].startswith("Localizing") for state in drawn if state["progress"])
    assert (lab.busy, lab.progress) == ("", {})                         # and cleared once done


async def test_a_pieces_own_localize_button_tests_that_piece_and_the_other_tests_every_piece():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    await press(lab, "run")
    lab.press_click({"piece": "customer", "slot": "system", "call": "call-llm#6"})
    piece = lab.panel_html.split("fl-lab-piece")[-1]
    assert 'data-fl-action="localize" data-fl-source="customer">Test this piece' in piece
    assert 'data-fl-action="localize">Localize: test every piece' in piece
    drawn = drawn_states(lab, "busy")
    await press(lab, "click", action="localize", source="customer")
    verdicts = untitled(lab.panel_html.split('class="fl-localize"')[1])
    assert "<td>customer</td><td>NOT CONFIRMED</td>" in verdicts and "vip-override</td>" not in verdicts
    assert any(state["busy"].startswith("Testing 'customer'") for state in drawn)
    await press(lab, "click", action="localize")
    verdicts = untitled(lab.panel_html.split('class="fl-localize"')[-1])
    assert "<td>vip-override</td><td>CONFIRMED</td>" in verdicts and "<td>customer</td>" in verdicts


async def test_left_out_pieces_and_dropped_context_are_one_click_away():
    lab = Lab(planted_fact_agent(variant="budget"), message=REFUND_REQUEST)
    await press(lab, "run")
    left_out = lab.answer_html.split('class="fl-box fl-left-out"')[1]   # under the answering call's pieces
    assert "Left out: " in left_out and 'data-fl-piece="refund-policy"' in left_out
    lab.press_click({"answer": True})                                    # the answer's panel offers the restore
    await press(lab, "click", action="dropped")
    restored = untitled(lab.panel_html.split('class="fl-dropped"')[1])
    assert "<td>refund-policy</td>" in restored and "restored_answer" in restored


async def test_turns_follow_up_until_a_new_conversation():
    agent = planted_fact_agent()
    lab = Lab(agent, message=REFUND_REQUEST)
    await press(lab, "run")
    await press(lab, "run", message="Why?")
    assert lab.turn == 2 and lab.chat.turns == [lab.chat[0], lab.run]           # the turns are one chat's
    assert lab.run.recording.meta["continues"]["run_id"] == lab.chat[0].run_id
    lab.press_click({"piece": "vip-override", "slot": "system", "call": lab.run.recording.exchanges[-1].step_id})
    await press(lab, "click", action="rerun", source="vip-override")   # a follow-up reruns within its conversation
    assert "Rerun without 'vip-override': the outcome" in lab.panel_html and "fl-card" not in lab.panel_html
    lab.press_new()
    assert (lab.turn, lab.follows, lab.answer_html) == (0, False, "")
    await press(lab, "run", message=REFUND_REQUEST)
    assert lab.turn == 1 and "continues" not in lab.run.recording.meta


async def test_a_pause_is_answered_or_abandoned_from_the_widget():
    agent = approvals()
    lab = Lab(agent, message="Refund order A-1001.")
    await press(lab, "run")
    assert lab.status == "paused"
    assert lab.question == {"text": "Refund 120 EUR?", "choices": ["yes", "no"], "tool": "approve_refund"}
    await press(lab, "run", message="Something else")                 # a new message while a question waits
    assert lab.status == "refused" and "ERR_PENDING_QUESTION" in lab.card
    lab.run = agent.last_run
    await press(lab, "answer", answer="yes")
    assert (lab.status, str(lab.run), lab.question) == ("finished", "Refunded 120 EUR.", {})
    assert lab.turn == 1                                              # answering is not a new turn
    await press(lab, "run", message="And order A-1002?")
    assert lab.status == "paused"
    paused = lab.run
    lab.press_abandon()
    assert lab.status == "abandoned" and not lab.follows and lab.question == {}
    assert paused.recording.annotations[-1].tag == "pause_abandoned"
    await press(lab, "run", message="Refund order A-1003.")           # the agent takes a new message again
    assert lab.status == "paused"


async def test_stop_cancels_the_run_and_keeps_its_recording_while_the_loop_stays_free():
    slow = stock()
    lab = Lab(slow, message="Is X-1 in stock?")
    lab.press_run()
    await asyncio.sleep(0.2)                  # the loop is free: this coroutine runs while the run waits
    assert lab.status == "running"
    assert any(row["id"] == "tool#4" and row["status"] == "running" for row in lab.steps)
    lab.press_stop()
    await lab._task
    assert lab.status == "cancelled" and "cancelled" in lab.note
    assert lab.run.status == "cancelled" and lab.run.recording.error["type"] == "CancelledError"
    assert lab.run.recording.error["step_id"] == "tool#4"                # where it stopped, kept
    assert lab.steps[-1]["label"] == "stopped here (cancelled)"
    assert not slow._active_run_id                                     # the agent can run again


async def test_a_refusal_is_a_card_in_the_widget_which_stays_usable():
    lab = Lab(planted_fact_agent())
    await press(lab, "run")
    assert lab.status == "refused"
    assert "ERR_INVALID_RUN_INPUT" in lab.card and 'role="alert"' in lab.card
    await press(lab, "run", message=REFUND_REQUEST)
    assert lab.status == "finished" and lab.card == ""


async def test_a_composition_shows_its_tree_and_a_clicked_node_shows_that_member():
    lab = Lab(desk(), message=REFUND_REQUEST)
    await press(lab, "run")
    nodes = lab.tree["nodes"]
    assert [(n["label"], n["depth"]) for n in nodes] == [
        ("desk (sequence)", 0), ("triage (agent)", 1), ("refunds (agent)", 1)]
    assert not lab.follows                                             # a composition has no follow-up:
    await press(lab, "run", message=REFUND_REQUEST)                    # each Run is a first turn
    assert lab.turn == 1
    lab.press_click({"member": nodes[1]["path"]})
    assert "A refund request." in lab.member_html and lab.member_path == nodes[1]["path"]
    lab.press_click({"answer": True})                                  # the answer came from the refunds member
    assert f'data-fl-call="{nodes[2]["path"]}/call-llm#6"' in lab.panel_html


async def test_a_click_arriving_on_another_thread_runs_on_the_kernel_loop():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    await asyncio.to_thread(lab._on_message, lab, {"do": "run"}, [])   # as a kernel subshell delivers it
    for _ in range(100):
        if lab._task is not None:
            break
        await asyncio.sleep(0.01)
    await lab._task
    assert lab.status == "finished"


async def test_what_the_widget_shows_is_escaped_and_covered_by_redaction():
    @tool
    def read_ticket(ticket: str) -> str:
        """Read a ticket."""
        return "customer wrote <script>alert(1)</script> and TCK-123456"

    agent = Agent(provider=mock(replies=[{"tool": "read_ticket", "args": {"ticket": "t"}}, "<b>done</b> TCK-123456"]),
                  tools=[read_ticket], redact=Redaction(patterns={"ticket": r"TCK-\d{6}"}))
    lab = Lab(agent, message="Look at TCK-123456")
    await press(lab, "run")
    assert lab.message == ""                                          # sent: the box is cleared, as in a chat
    lab.press_click({"answer": True})
    state = json.dumps(lab.get_state())
    assert "TCK-123456" not in state and "[redacted:ticket]" in state
    html = lab.answer_html + lab.panel_html   # step rows are text: the browser never parses them as HTML
    assert "<script>" not in html and "<b>done</b>" not in html and "&lt;b&gt;done&lt;/b&gt;" in html


async def test_a_pending_question_holding_what_the_policy_covers_is_shown_masked():
    @tool
    def confirm(ticket: str) -> str:
        """Ask a person to close the ticket."""
        ask_human(f"Close {ticket}?", choices=["yes", "no"])

    agent = Agent(provider=mock(replies=[{"tool": "confirm", "args": {"ticket": "TCK-123456"}}, "Closed."]),
                  tools=[confirm], redact=Redaction(patterns={"ticket": r"TCK-\d{6}"}))
    lab = Lab(agent, message="Close my ticket.")
    await press(lab, "run")
    assert lab.status == "paused" and lab.question["text"] == "Close [redacted:ticket]?"
    assert "TCK-123456" not in json.dumps(lab.get_state())


async def test_the_saved_state_is_small_and_the_output_carries_a_static_answer():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    bundle, _ = lab._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "text/html" not in bundle
    await press(lab, "run")
    bundle, _ = lab._repr_mimebundle_()
    assert "APPROVED: order A-1001" in bundle["text/html"] and "<script" not in bundle["text/html"]
    busy = Agent(provider=mock(replies=[*[{"tool": "lookup", "args": {}}] * 100, "done"]),
                 tools=[tool(lambda: "x" * 5000, name="lookup", description="Looks up.")], max_iterations=150)
    long_lab = Lab(busy, message="go")
    await press(long_lab, "run")
    assert len(long_lab.run.recording.steps) > 300
    assert len(long_lab.steps) == 300 and long_lab.steps_hidden > 0
    assert len(json.dumps(long_lab.get_state())) < 1_000_000


async def test_live_rows_go_out_at_once_then_in_batches():
    sent: list[int] = []
    live = LiveSteps(lambda rows, hidden: sent.append(len(rows)), interval=60)

    class Event:
        def __init__(self, type: str, step_id: str, payload: dict) -> None:
            self.type, self.step_id, self.payload = type, step_id, payload

    live.on_event(Event("step_start", "seed#1", {"stage": "seed"}))
    assert sent == [1]                                  # the first row is shown at once
    live.on_event(Event("step_start", "assemble#2", {"stage": "assemble"}))
    live.on_event(Event("read", "assemble#2", {}))      # routine engine events are not drawn
    assert sent == [1]                                  # within the interval: held for the timer
    live.close()
    assert sent == [1, 2]


async def test_streamed_tokens_gather_on_their_call_row():
    lab = Lab(Agent(provider=mock(reply="Streaming, word by word.", stream=True)), message="Talk to me.")
    await press(lab, "run")
    call = next(row for row in lab.steps if row["id"].startswith("call-llm"))
    assert call["detail"] == "Streaming, word by word."


async def test_a_piece_clicked_in_the_answer_view_gets_its_reruns_without_the_call_again():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    await press(lab, "run")
    lab.press_click({"piece": "vip-override", "slot": "system", "call": "call-llm#6", "in_panel": False})
    assert "data-fl-call" not in lab.panel_html                     # the answer view shows the call already
    assert 'data-fl-action="rerun" data-fl-source="vip-override"' in lab.panel_html


async def test_a_run_that_fails_midway_shows_its_failure_card_and_keeps_the_run():
    from footprint_lab.examples.scenarios import lookup_order

    agent = Agent(provider=mock(replies=[{"tool": "lookup_order", "args": {"order_id": "A-1"}}]), tools=[lookup_order])
    lab = Lab(agent, message="Look it up.")
    await press(lab, "run")                       # the script runs out after the tool round
    assert lab.status == "failed" and "ERR_RUN_CHECKPOINT" in lab.card
    assert lab.run.status == "failed" and "failed" in lab.note


async def test_identity_typed_in_the_widget_is_the_runs_identity():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    lab.identity = {"principal": "bo", "tenant": "", "unknown": "x"}     # as the identity fields sync it
    await press(lab, "run")
    assert lab.run.recording.identity == {"principal": "bo"}
    lab.identity = {"principal": 5}                                    # refused at the door, shown as a card
    lab.press_new()
    await press(lab, "run", message=REFUND_REQUEST)
    assert lab.status == "refused" and "ERR_INVALID_IDENTITY" in lab.card


async def test_a_piece_of_a_members_call_is_rerun_on_that_member_agent():
    lab = Lab(desk(), message=REFUND_REQUEST)
    await press(lab, "run")
    member = lab.tree["nodes"][2]["path"]
    call = f"{member}/call-llm#6"
    lab.press_click({"piece": "vip-override", "slot": "system", "call": call})
    assert 'data-fl-action="rerun" data-fl-source="vip-override"' in lab.panel_html
    await press(lab, "click", action="rerun", source="vip-override")
    assert "the outcome changed" in lab.panel_html and DECLINED in lab.panel_html
    triage = f"{lab.tree['nodes'][1]['path']}/call-llm#3"
    lab.press_click({"piece": "user-message", "slot": "messages", "call": triage})
    assert 'data-fl-action="rerun"' not in lab.panel_html and "A rerun cannot remove this piece" in lab.panel_html


# -- the Ask box ------------------------------------------------------------------------------
async def test_ask_shows_the_answer_with_its_cited_ids_opening_what_they_name():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST, explainer=explainer())
    assert lab.ask_hint == ""
    await press(lab, "run")
    drawn = drawn_states(lab, "busy", "ask_state")
    await press(lab, "ask", question="Why was the refund approved?")
    assert {"busy": "asking…", "ask_state": "asking"} in drawn           # what the browser showed while it asked
    assert (lab.busy, lab.ask_state) == ("", "finished")
    assert lab.explanation.cited == ["vip-override"] and lab.explanation.unsupported == ["call-llm#99"]
    shown = lab.ask_html
    assert "Q: Why was the refund approved?" in shown
    assert 'data-fl-cite="vip-override"' in shown and "&lt;b&gt;alone&lt;/b&gt;" in shown and "<b>alone" not in shown
    assert 'class="fl-ask-unsupported"' in shown and "call-llm#99" in shown.split("unsupported")[-1]
    assert 'data-fl-cite="call-llm#99"' not in shown                 # flagged, never a link
    assert "vip-override" in json.dumps(lab.get_state())
    lab.press_cite({"id": "vip-override"})                             # the chip opens the piece in its call
    assert 'data-fl-piece="vip-override" data-fl-slot="system" open>' in lab.panel_html
    assert 'data-fl-call="call-llm#6"' in lab.panel_html
    lab.press_cite({"id": "call-llm#3"})                               # a call's id opens that call
    assert 'data-fl-call="call-llm#3"' in lab.panel_html
    await press(lab, "run", message=REFUND_REQUEST)                    # a new run clears the old answer
    assert lab.ask_html == "" and lab.run.recording.runner.name != "explainer"


async def test_ask_without_an_explainer_says_how_to_enable_it_and_before_a_run_what_to_do():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    assert "explainer=" in lab.ask_hint
    await press(lab, "run")
    await press(lab, "ask", question="Why?")
    assert lab.ask_state == "off" and "explainer=" in lab.ask_html and lab.explanation is None
    waiting = Lab(planted_fact_agent(), explainer=mock(reply="unused"))
    await press(waiting, "ask", question="Why?")
    assert waiting.ask_state == "waiting" and "press Run first" in waiting.ask_html


async def test_ask_errors_are_cards_and_the_widget_stays_usable():
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST, explainer=mock(replies=[{"tool": "suspects", "args": {}}]))
    await press(lab, "run")
    await press(lab, "ask", question="  ")                             # refused by ask's door: nothing was asked
    assert lab.ask_state == "refused" and "ERR_EXPLAIN_CONFIG" in lab.ask_html and 'role="alert"' in lab.ask_html
    await press(lab, "ask", question="Why?")                           # the script runs out mid-answer
    assert lab.ask_state == "failed" and "fl-card" in lab.ask_html and lab.busy == ""
    await press(lab, "run", message=REFUND_REQUEST)
    assert lab.status == "finished"


async def test_stop_cancels_a_question_in_flight():
    async def slow(request: LLMRequest) -> object:
        await asyncio.sleep(60)
        return "never"

    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST, explainer=mock(respond=slow))
    await press(lab, "run")
    lab.press_ask({"question": "Why?"})
    await asyncio.sleep(0.1)
    assert lab.ask_state == "asking" and lab.busy == "asking…"
    lab.press_stop()
    await lab._task
    assert lab.ask_state == "cancelled" and "cancelled" in lab.ask_html and lab.busy == ""


def test_an_explainer_of_the_wrong_type_is_refused_at_the_lab_by_name():
    for wrong in (42, "gpt-4o-mini", "nowhere:model"):
        with pytest.raises(LabConfigError) as refused:
            Lab(planted_fact_agent(), explainer=wrong)
        assert refused.value.setting == "explainer" and "gpt-4o-mini (received" not in str(refused.value)
    assert Lab(planted_fact_agent(), explainer="ollama:llama3.2").explainer.model == "llama3.2"


async def test_in_a_composition_a_cited_piece_opens_in_the_member_call_that_read_it():
    lab = Lab(desk(), message=REFUND_REQUEST, explainer=explainer())
    await press(lab, "run")
    await press(lab, "ask", question="Why was the refund approved?")
    assert lab.explanation.cited == ["vip-override"] and 'data-fl-cite="vip-override"' in lab.ask_html
    lab.press_cite({"id": "vip-override"})
    member_call = f'{lab.tree["nodes"][2]["path"]}/call-llm#6'
    assert f'data-fl-call="{member_call}"' in lab.panel_html
    assert 'data-fl-piece="vip-override" data-fl-slot="system" open>' in lab.panel_html


async def test_a_question_holding_what_the_policy_covers_is_asked_and_shown_masked():
    agent = Agent(provider=mock(reply="Noted."), redact=Redaction(patterns={"ticket": r"TCK-\d{6}"}))
    asked: list[str] = []

    def explain(request: LLMRequest) -> str:
        asked.append(json.dumps(request.messages[-1]["content"]))
        return "Nothing in the evidence says."

    lab = Lab(agent, message="Ticket TCK-123456 please", explainer=mock(respond=explain))
    await press(lab, "run")
    await press(lab, "ask", question="Why did TCK-654321 get no answer?")
    assert lab.ask_state == "finished" and lab.ask_question == ""
    assert "[redacted:ticket]" in lab.ask_html
    for surface in (json.dumps(lab.get_state()), lab.ask_html, *asked):
        assert "TCK-654321" not in surface and "TCK-123456" not in surface


def untitled(html: str) -> str:
    """A view's table with each word's hover title taken off (the glossary's titles are tested in test_words.py)."""
    return re.sub(r'<span title="[^"]*">([^<]*)</span>', r"\1", html)
