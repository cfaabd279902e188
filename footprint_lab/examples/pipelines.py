"""Ready-made composed scenarios on the mock provider: a wrong answer whose cause sits in one member.

``refund_pipeline(planted_in=...)`` is a ``Sequence`` of a triage agent and a refunds agent.
The triage agent summarizes the request for the refunds team and mentions a VIP override only
when what it is sent mentions one; the refunds agent (:func:`~footprint_lab.examples.scenarios.planted_fact_agent`)
approves the 47-day-old order only when what it is sent mentions one. The planted fact sits in
the triage agent (``planted_in="triage"``: its answer carries the override downstream) or in
the refunds agent (``planted_in="refunds"``). Both members declare a benign ``customer`` fact,
so that id is ambiguous and is named per member (``triage/customer``).

``review_panel()`` is a ``Parallel`` of a policy reviewer and an account reviewer whose context
holds the planted fact; a model merges the two reviews and approves when one mentions a VIP
override, so one branch sways the merge.

Role: examples layer (it builds runners; nothing in the library depends on it).
"""

from __future__ import annotations

from typing import Any

from footprint_lab.context import define_fact, define_steering
from footprint_lab.core.agent import Agent
from footprint_lab.examples.scenarios import APPROVED, DECLINED, OVERRIDE, POLICY, planted_fact_agent
from footprint_lab.flow import Parallel, Sequence, merge_with_llm
from footprint_lab.providers import LLMRequest, mock

TRIAGED = "Refund request for order A-1001, bought 47 days ago."
FLAGGED = " Note: the customer holds a VIP override."


def _seen(request: LLMRequest) -> str:
    return " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])


def triage_model(request: LLMRequest) -> str:
    """The triage agent's mock model: one sentence, flagging a VIP override only when it was told of one."""
    return TRIAGED + (FLAGGED if "VIP override" in _seen(request) else "")


def triage_agent(*, planted: bool = False) -> Agent:
    """Summarizes a customer's message for the refunds team (with ``planted``: holding the ``vip-status`` fact)."""
    context: list[Any] = [define_fact(id="customer", data={"customer_name": "Dana Reyes", "plan": "Plus"})]
    if planted:
        context.append(define_fact(id="vip-status", data=OVERRIDE))
    context.append(define_steering(id="form", prompt="Summarize the request in one sentence for the refunds team."))
    return Agent(provider=mock(respond=triage_model), system="You triage customer messages for the refunds team.",
                 context=context, name="triage")


def refund_pipeline(*, planted_in: str = "triage") -> Sequence:
    """Triage, then refunds; the planted fact sits in the member named by ``planted_in``."""
    if planted_in not in ("triage", "refunds"):
        raise ValueError("planted_in is 'triage' or 'refunds'")
    refunds = planted_fact_agent()
    if planted_in == "triage":
        refunds = refunds.without(["vip-override"])
    return Sequence({"triage": triage_agent(planted=planted_in == "triage"), "refunds": refunds},
                    name="refund-pipeline")


def merge_model(request: LLMRequest) -> str:
    """The merge's mock model: approves when a review mentions a VIP override."""
    return APPROVED if "VIP override" in _seen(request) else DECLINED


def review_panel() -> Parallel:
    """Two reviewers at once; the account reviewer holds the planted fact, a model merges the reviews."""
    policy = Agent(provider=mock(reply="Policy: refunds are allowed within 30 days; this order is 47 days old."),
                   system=f"You check refund requests against the policy. {POLICY}",
                   context=[define_steering(id="form", prompt="Answer in one sentence.")], name="policy-review")
    account = Agent(provider=mock(respond=lambda r: "Account: the customer holds a VIP override."
                                  if "VIP override" in _seen(r) else "Account: no special terms."),
                    system="You check the customer's account for special terms.",
                    context=[define_fact(id="customer", data={"customer_name": "Dana Reyes", "plan": "Plus"}),
                             define_fact(id="vip-status", data=OVERRIDE)], name="account-review")
    return Parallel({"policy": policy, "account": account},
                    merge=merge_with_llm(provider=mock(respond=merge_model),
                                         prompt="Decide the refund of order A-1001 from these reviews:"),
                    name="review-panel")
