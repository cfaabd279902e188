"""Synchronous doors for scripts (beside run_sync), and a skill forced back in brings its tools."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conversation_kit import counted_tool
from flow_kit import approver

from footprint_lab import Agent, Sequence, tool
from footprint_lab.context import define_skill
from footprint_lab.errors import RunCheckpointError
from footprint_lab.providers import LLMRequest, mock


def chatty() -> Agent:
    return Agent(provider=mock(respond=lambda r: f"turn {sum(m['role'] == 'user' for m in r.messages)}"))


def test_follow_up_sync_continues_the_conversation_from_a_script() -> None:
    agent = chatty()
    assert agent.run_sync("hi").answer == "turn 1"
    assert agent.follow_up_sync("and then?").answer == "turn 2"


def test_resume_sync_answers_a_paused_agent_and_a_paused_composition() -> None:
    agent = approver()
    paused = agent.run_sync("refund please")
    assert paused.status == "paused"
    assert agent.resume_sync(paused.checkpoint, "yes").answer == "approved: yes"
    flow = Sequence({"approve": approver()})
    held = flow.run_sync("refund please")
    assert held.status == "paused"
    assert flow.resume_sync(held.checkpoint, "ok").answer == "approved: ok"


async def test_the_sync_doors_work_inside_a_running_event_loop() -> None:
    agent = chatty()
    await agent.run("hi")
    loop = asyncio.get_running_loop()
    assert agent.follow_up_sync("more").answer == "turn 2"  # a notebook cell calling the script door
    # the cell's own loop is left as it was: still running, still the current one, still awaitable
    assert asyncio.get_running_loop() is loop and loop.is_running() and not loop.is_closed()
    assert (await agent.follow_up("and more")).answer == "turn 3"


def test_resume_on_error_sync_picks_a_failed_run_up() -> None:
    calls: list[str] = []
    failed: list[bool] = []

    def respond(request: LLMRequest) -> Any:
        if request.call_index == 0:
            return {"tool": "lookup", "args": {}}
        if not failed:
            failed.append(True)
            raise ConnectionError("network down")
        return "done"

    agent = Agent(provider=mock(respond=respond), tools=[counted_tool("lookup", calls)])
    with pytest.raises(RunCheckpointError) as caught:
        agent.run_sync("go")
    assert agent.resume_on_error_sync(caught.value.checkpoint).answer == "done"
    assert len(calls) == 1  # the finished tool did not run again


async def test_a_skill_forced_back_in_offers_its_tools_from_the_first_iteration() -> None:
    ran: list[str] = []

    @tool
    def refund_invoice(invoice: str) -> str:
        """Refund one invoice by its id."""
        ran.append(invoice)
        return f"refunded {invoice}"

    def respond(request: LLMRequest) -> Any:
        offered = {t["name"] for t in request.tools}
        results = [m for m in request.messages if m["role"] == "tool"]
        if "refund_invoice" in offered and not results:
            return {"tool": "refund_invoice", "args": {"invoice": "INV-7"}}
        return results[-1]["content"] if results else "I cannot refund invoices."

    billing = define_skill(id="billing", description="Invoices and refunds", body="Refund invoices by id.",
                           tools=[refund_invoice])
    agent = Agent(provider=mock(respond=respond), context=[billing])
    assert (await agent.run("refund INV-7")).answer == "I cannot refund invoices."  # never loaded: no tool
    forced = await agent.with_forced(["billing"]).run("refund INV-7")
    assert forced.answer == "refunded INV-7" and ran == ["INV-7"]
    first_call = forced.recording.exchanges[0]
    assert "refund_invoice" in {t["name"] for t in first_call.tools}
    piece = next(p for p in forced.recording.context_pieces if p.slot == "tools" and p.source_id == "billing")
    assert (piece.verdict, piece.trigger) == ("admitted", "always") and "forced in" in piece.reason
