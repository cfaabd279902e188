"""The Lab's second look at a run: two turns side by side, piece by piece, and which difference changed the answer;
and a run stepped through in order, each step's reads and commits, with the selected piece's custody."""

from __future__ import annotations

from test_lab_widget import press

from footprint_lab import Agent, Lab
from footprint_lab.context import define_instruction
from footprint_lab.examples.scenarios import REFUND_REQUEST
from footprint_lab.providers import LLMRequest, mock


def _vip_agent() -> Agent:
    """A refunds agent whose VIP instruction lands only when the message says VIP: one turn says it, the next not."""

    def model(request: LLMRequest) -> str:
        return "APPROVED" if "VIP override" in request.system else "DECLINED"

    vip = define_instruction(id="vip", prompt="The customer holds a VIP override.",
                             active_when=lambda view: "VIP" in view.message)
    return Agent(provider=mock(respond=model), system="Decide refunds.", context=[vip])


async def test_two_turns_compared_piece_by_piece_and_the_changed_fact_confirmed_by_replay():
    lab = Lab(_vip_agent(), message="Refund order A-1001, I am a VIP.")
    await press(lab, "run")
    await press(lab, "run", message=REFUND_REQUEST)
    assert [turn.answer for turn in lab.chat] == ["APPROVED", "DECLINED"]
    lab.press_turn({"action": "compare", "turn": 0})
    assert lab.selection["panel"] == "compare" and "vip" in lab.panel_html and "VIP override" in lab.panel_html
    await press(lab, "click", action="difference", source="0")
    confirmed = [line for line in lab.panel_html.split("<tr") if "CONFIRMED" in line and "NOT CONFIRMED" not in line]
    assert len(confirmed) == 1 and "vip" in confirmed[0]


async def test_a_run_stepped_through_shows_what_each_step_read_and_wrote_and_the_pieces_custody():
    from footprint_lab.examples.scenarios import planted_fact_agent

    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    await press(lab, "run")
    call = lab.run.recording.exchanges[-1].step_id
    lab.press_click({"piece": "vip-override", "slot": "system", "call": call})
    assert "data-fl-action=\"step\"" in lab.panel_html or lab.run.recording.steps
    steps = [step.step_id for step in lab.run.recording.steps]
    lab.press_click({"action": "step", "source": steps[0]})
    assert f"Step 1 of {len(steps)}" in lab.panel_html and "What it committed" in lab.panel_html
    assert "step after" in lab.panel_html and "step before" not in lab.panel_html
    landed = next(p.landed_by for p in lab.run.recording.context_pieces if p.source_id == "vip-override")
    lab.press_click({"action": "step", "source": landed})
    assert "LANDED here" in lab.panel_html and "slots.system" in lab.panel_html
    lab.press_click({"action": "step", "source": call})
    assert "READ here" in lab.panel_html and "What it read" in lab.panel_html and "written by" in lab.panel_html
    lab.press_click({"action": "step", "source": steps[-1]})
    assert "step before" in lab.panel_html and "step after" not in lab.panel_html
    lab.press_click({"action": "step", "source": "no-such-step#9"})
    assert "No step" in lab.panel_html
