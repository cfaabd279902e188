"""Runners the Lab tests drive, shared by the kernel-side tests and the browser tier's notebook.

``approvals()`` pauses to ask a person (``approve_refund``), ``stock()`` waits a long time in
a tool (``check_stock``: something to Stop), ``desk()`` is a two-member composition whose
second member is the planted-fact refunds agent. ``explainer()`` is a scripted mock explainer
for the Ask box that reads every id it cites from its tools' output. ``vault()`` shows a password
in a tool result before a login call puts it under a covered key (a live event to recall).
``hostile()`` is a Lab showing a notebook someone tampered with: the planted fact's id is script
in an attribute's clothing, and the Ask box cites it.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from footprint_lab import Agent, Lab, Redaction, Run, Sequence, ask_human, load_recording, tool
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain.asking.explainer import Explanation
from footprint_lab.lab import ask_box
from footprint_lab.providers import LLMRequest, mock


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


VAULT_PASSWORD = "velvet-otter-93"


@tool
def read_vault() -> str:
    """Read the vault's note."""
    return f"the password is {VAULT_PASSWORD}"


@tool
def login(password: str) -> str:
    """Log in with the password."""
    return "logged in"


def vault() -> Agent:
    script = [{"tool": "read_vault", "args": {}}, {"tool": "login", "args": {"password": VAULT_PASSWORD}}, "In."]
    return Agent(provider=mock(replies=script), tools=[read_vault, login], redact=Redaction(keys=["password"]),
                 name="vault")


TOP_SUSPECT = re.compile(r"^1\. \w+ '([^']+)'", re.M)


def _explain(request: LLMRequest) -> object:
    """Rank the suspects, read the top one's id from that tool's output, open its custody, then answer
    citing it (escaped markup included) and one id no view showed."""
    results = [str(m["content"]) for m in request.messages if m.get("role") == "tool"]
    if not results:
        return {"tool": "suspects", "args": {}}
    top = TOP_SUSPECT.search(results[0])
    assert top is not None
    if len(results) == 1:
        return {"tool": "custody", "args": {"source_id": top.group(1)}}
    return f"Approved because of [{top.group(1)}] <b>alone</b>, said in [call-llm#99]."


def explainer() -> Any:
    """A mock explainer provider that knows no id of the run it is asked about."""
    return mock(respond=_explain)


#: an id that runs script wherever it is written into an attribute unescaped, or drawn as markup
PWNED = 'q1" onmouseover="window.__fl_pwned=1" x="<img src=x onerror="window.__fl_pwned=2">'


def hostile() -> Lab:
    """A Lab over a tampered recording whose planted fact is named :data:`PWNED`, its Ask box citing that id."""
    saved = planted_fact_agent().run_sync(REFUND_REQUEST).recording.model_dump_json()
    recording = load_recording(saved.replace("vip-override", json.dumps(PWNED)[1:-1]))
    lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
    lab._ended(Run.from_recording(recording), "finished", "")
    explanation = Explanation(question="Why was it approved?", answer=f"Because of [{PWNED}].", cited=[PWNED],
                              unsupported=[], opened=[], run=None)
    lab.ask_html = ask_box.answer_html(explanation, recording)
    return lab
