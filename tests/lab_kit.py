"""Runners the Lab tests drive, shared by the kernel-side tests and the browser tier's notebook.

``approvals()`` pauses to ask a person (``approve_refund``), ``stock()`` waits a long time in
a tool (``check_stock``: something to Stop), ``desk()`` is a two-member composition whose
second member is the planted-fact refunds agent.
"""

from __future__ import annotations

import asyncio

from footprint_lab import Agent, Sequence, ask_human, tool
from footprint_lab.lab.scenarios import planted_fact_agent
from footprint_lab.providers import mock


@tool
def approve_refund(amount: float) -> str:
    """Ask a person to approve a refund of `amount` EUR."""
    ask_human(f"Refund {amount:.0f} EUR?", choices=["yes", "no"])


@tool
async def check_stock(sku: str) -> str:
    """Check the warehouse (slow)."""
    await asyncio.sleep(60)
    return "in stock"


def approvals() -> Agent:
    return Agent(provider=mock(replies=[{"tool": "approve_refund", "args": {"amount": 120}}, "Refunded 120 EUR."]),
                 tools=[approve_refund], name="approvals")


def stock() -> Agent:
    return Agent(provider=mock(replies=[{"tool": "check_stock", "args": {"sku": "X-1"}}, "In stock."]),
                 tools=[check_stock], name="stock")


def desk() -> Sequence:
    return Sequence({"triage": Agent(provider=mock(reply="A refund request."), name="triage"),
                     "refunds": planted_fact_agent()}, name="desk")
