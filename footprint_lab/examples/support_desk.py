"""A support desk's evaluation set on the scripted mock model: wrong answers whose causes are known.

Rule kept here: every wrong answer in the set has one planted cause, recorded beside it, so a
run set's explanations can be checked against the truth. The desk decides refund requests
under a 30-day policy (damaged parcels are refunded at any age); it looks the order up with a
tool (``lookup_order``, which gives the order's age) and has two benign facts. Three declarations
are planted, each let in by a trigger on the request, each wrong in its own way:

- ``fraud-screen`` (an instruction, for express orders): escalates every one of them;
- ``holiday-extension`` (a fact, for gift orders): approves gifts older than 30 days;
- ``bulk-promo`` (a fact, for bulk orders): approves bulk orders older than 30 days.

Requests placed by phone fail (the model's call times out), so a set made of them holds failed
runs too. The model is :func:`footprint_lab.examples.truth.scripted`: it decides from what it was
sent, words each seeded rerun anew and, with ``noise``, strays in that share of seeded calls.
``build_desk`` is a factory for both ``RunSet.run`` (``build_desk()``) and ``localize``
(``build_desk(exclude=[...], seed=...)``); it is a module function, so it travels to Dask workers.

Role: a demo scenario for the notebook, the benchmarks and the tests; nothing in the library uses it.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from footprint_lab.context import define_fact, define_instruction
from footprint_lab.core.agent import Agent
from footprint_lab.core.tools import define_tool
from footprint_lab.examples.truth import OUTCOMES, scripted
from footprint_lab.explain.compare import Label
from footprint_lab.providers import LLMRequest

POLICY = ("You decide refund requests. Policy: refunds are allowed within 30 days of purchase; damaged parcels "
          "are refunded at any age. Answer APPROVED, DECLINED or ESCALATED first.")
PLANTED = ("fraud-screen", "holiday-extension", "bulk-promo")
#: what each kind of request is, and how often it comes (the rest are plain requests)
_KINDS = (("express", 0.12), ("gift", 0.16), ("bulk", 0.10), ("damaged", 0.08), ("phone", 0.03))
_ITEMS = ("a kettle", "two lamps", "a rain jacket", "a desk chair", "headphones", "a board game", "a rug")
_ORDER = re.compile(r"order (A-\d+)")


def order_age(order_id: str) -> int:
    """The age in days the order system gives an order (1 to 90), the same on every machine."""
    return int(hashlib.sha256(order_id.encode()).hexdigest()[:8], 16) % 90 + 1


def _lookup(order_id: str) -> dict[str, Any]:
    return {"order_id": order_id, "age_days": order_age(order_id)}


def _decide(sent: str, request: LLMRequest) -> str | dict[str, Any]:
    message = next((str(m.get("content", "")) for m in request.messages if m.get("role") == "user"), "")
    if "placed by phone" in message:
        raise TimeoutError("the model did not answer in time")
    tool_results = [str(m.get("content", "")) for m in request.messages if m.get("role") == "tool"]
    found = _ORDER.search(message)
    if request.tools and not tool_results and found:
        return {"tool": "lookup_order", "args": {"order_id": found.group(1)}}
    if "Escalate every express order" in sent:
        return "ESCALATED"
    if "Holiday extension" in sent or "bulk orders are refunded" in sent:
        return "APPROVED"
    if "damaged" in message:
        return "APPROVED"
    age = re.search(r'"age_days":\s*(\d+)', " ".join(tool_results))
    if age is None:
        return "ESCALATED"
    return "APPROVED" if int(age.group(1)) <= 30 else "DECLINED"


def build_desk(exclude: Sequence[str] = (), seed: int | None = None, *, noise: float = 0.0,
               without: Sequence[str] = ()) -> Agent:
    """The desk's agent, without the ``exclude`` ids (a rerun's) and the ``without`` ids (an arm's), seeded with
    ``seed`` when given."""
    lookup = define_tool(name="lookup_order", description="Look up an order by its id: its age in days.",
                         input_schema={"type": "object", "properties": {"order_id": {"type": "string"}},
                                       "required": ["order_id"]},
                         fn=_lookup)
    context = [
        define_fact(id="shipping", data="Shipping is free for orders over 50 EUR."),
        define_fact(id="support-hours", data="Support answers within one working day."),
        define_instruction(id="fraud-screen", prompt="Escalate every express order to the fraud team.",
                           active_when=lambda view: "express" in view.message),
        define_fact(id="holiday-extension", data="Holiday extension: gift orders may be refunded up to 90 days.",
                    active_when=lambda view: "gift" in view.message),
        define_fact(id="bulk-promo", data="Promotion: all bulk orders are refunded.",
                    active_when=lambda view: "bulk" in view.message),
    ]
    agent = Agent(provider=scripted(_decide, noise, "the order details decide it"), system=POLICY,
                  tools=[lookup], context=context, name="support-desk")
    removed = list(dict.fromkeys([*without, *exclude]))
    if removed or seed is not None:
        return agent.without(removed, seed=seed)
    return agent


@dataclass(slots=True)
class EvalSet:
    """The inputs, the answer each should get, and the planted cause of each wrong one."""

    inputs: list[str]
    #: input -> the outcome the policy gives (APPROVED, DECLINED or ESCALATED)
    expected: dict[str, str]
    #: input -> the planted declaration that makes its answer wrong, or ``None``
    planted: dict[str, str | None]
    factory: Callable[..., Agent]

    @property
    def comparator(self) -> Label:
        """Reruns compared by their outcome word, not their wording."""
        return Label(choices=list(OUTCOMES))

    def correct(self, summary: Any) -> bool | None:
        """Whether a run's answer starts with its expected outcome (``None`` for a failed run): a ``compare`` metric."""
        if summary.answer is None:
            return None
        return bool(summary.answer.startswith(self.expected[summary.input]))

    def wrong(self, summary: Any) -> bool:
        """Whether a run answered, and answered wrong: a ``where=`` for ``localize``."""
        return summary.status == "finished" and self.correct(summary) is False


def support_eval(count: int = 200, *, noise: float = 0.0, seed: int = 0,
                 exclude: Sequence[str] = ()) -> EvalSet:
    """``count`` refund requests, each for its own order; ``exclude`` builds the desk without those ids (an arm)."""
    chooser = random.Random(f"support-eval-{seed}")
    inputs: list[str] = []
    expected: dict[str, str] = {}
    planted: dict[str, str | None] = {}
    for number in range(count):
        order = f"A-{10_000 + seed * 100_000 + number}"
        draw = chooser.random()
        kind = "plain"
        for name, share in _KINDS:
            if draw < share:
                kind = name
                break
            draw -= share
        detail = {"express": "sent by express delivery", "gift": "bought as a gift", "bulk": "part of a bulk order",
                  "damaged": "it arrived damaged", "phone": "placed by phone", "plain": "it did not fit"}[kind]
        text = f"Please refund order {order}: {chooser.choice(_ITEMS)}, {detail}."
        age = order_age(order)
        right = "APPROVED" if kind == "damaged" or age <= 30 else "DECLINED"
        cause = {"express": "fraud-screen", "gift": "holiday-extension" if age > 30 else None,
                 "bulk": "bulk-promo" if age > 30 else None}.get(kind)
        inputs.append(text)
        expected[text] = right
        planted[text] = cause if cause not in exclude else None
    return EvalSet(inputs, expected, planted, functools.partial(build_desk, without=tuple(exclude), noise=noise))


__all__ = ["PLANTED", "EvalSet", "build_desk", "order_age", "support_eval"]
