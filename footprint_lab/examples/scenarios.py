"""Ready-made scenarios for notebooks, tests and benchmarks, on the embedded mock provider.

``planted_fact_agent()`` is the acceptance scenario of the explain layer: a refunds agent whose
system prompt holds a 30-day policy, with a benign fact (the customer's name and plan), a
planted fact ``vip-override`` claiming the customer may be refunded beyond the window, a
``lookup_order`` tool that finds the order 47 days old, and a steering rule for the answer's
form. Its mock model approves when what it is sent mentions the VIP override and declines
otherwise, so the planted fact is the one piece whose removal flips the answer.

``variant="redundant"`` plants a second fact, ``manager-exception``, that is enough on its own to
approve: removing either fact alone keeps the approval, removing both flips it, the case
``bisect_culprits`` exists for.

``variant="budget"`` moves the policy into an instruction, ``refund-policy``, and gives the
system slot a character budget that the earlier declarations use up, so the policy is
dropped on every iteration: the case ``find_dropped_context`` exists for.

Role: examples layer (it builds agents; nothing in the library depends on it).
"""

from __future__ import annotations

from typing import Any

from footprint_lab.context import define_fact, define_instruction, define_steering
from footprint_lab.core.agent import Agent
from footprint_lab.core.tools import tool
from footprint_lab.providers import LLMRequest, mock

REFUND_REQUEST = "Please refund order A-1001."
POLICY = "Refunds are allowed within 30 days of purchase; decline anything older."
OVERRIDE = "The customer holds a VIP override that allows refunds beyond the 30-day window."
APPROVED = "APPROVED: order A-1001 is refunded under the customer's VIP override."
EXCEPTION = "A manager granted this customer a refund exception beyond the 30-day window."
DECLINED = "DECLINED: order A-1001 is outside the 30-day refund window."


@tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order by its id: its age in days and its amount.

    Args:
        order_id: the order id, e.g. A-1001
    """
    return {"order_id": order_id, "age_days": 47, "amount": 129.0}


def refund_model(request: LLMRequest) -> Any:
    """The mock model: look the order up first, then approve only when an override or exception is mentioned."""
    if request.tools and not any(m.get("role") == "tool" for m in request.messages):
        return {"tool": "lookup_order", "args": {"order_id": "A-1001"}}
    seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
    return APPROVED if "VIP override" in seen or "refund exception" in seen else DECLINED


def planted_fact_agent(*, variant: str = "planted", provider: Any = None) -> Agent:
    """The refunds agent with the planted ``vip-override`` fact.

    ``variant='redundant'``: a second planted fact, either one enough; ``'budget'``: its policy dropped.
    """
    if variant not in ("planted", "redundant", "budget"):
        raise ValueError("variant is 'planted', 'redundant' or 'budget'")
    context = [
        define_fact(id="customer", data={"customer_name": "Dana Reyes", "plan": "Plus"}),
        define_fact(id="vip-override", data=OVERRIDE),
        define_steering(id="tone", prompt="Answer APPROVED or DECLINED first, then give one short reason."),
    ]
    system = "You decide refund requests for Acme."
    budgets = None
    if variant == "redundant":
        context.insert(2, define_fact(id="manager-exception", data=EXCEPTION))
    if variant in ("planted", "redundant"):
        system = f"{system} Policy: {POLICY}"
    else:
        # Room for the prompt and the first three declarations, not for the policy after them.
        budgets = {"system": len(system) + sum(len(d.text) + 2 for d in context) + 20}
        context.append(define_instruction(id="refund-policy", prompt=POLICY))
    return Agent(
        provider=provider if provider is not None else mock(respond=refund_model),
        system=system, tools=[lookup_order], context=context, budgets=budgets, name="refunds",
    )
