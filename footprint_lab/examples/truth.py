"""Planted-culprit cases: runs whose cause is known, to measure whether the explanations find it.

Rule kept here: each case plants one cause (or one pair) among benign pieces, in one of seven
classes, and says what an analyst would run to find it and what finding it means:

- ``fact``: a declared fact that flips the decision;
- ``memory``: a stale item recalled from the run's memory;
- ``tool``: a tool whose result misleads the model (removing the tool removes it);
- ``instruction``: an instruction that forces the decision;
- ``innocent``: the cause shares no word with the answer, while a policy text that the answer
  quotes word for word ranks first (a topically central innocent);
- ``missing``: a piece that was declared but left out, whose absence caused the answer
  (found by restoration);
- ``together``: two facts, each enough on its own, so only removing both flips the answer.

The model is scripted (``mock(respond=...)``): it decides from what it was sent, words its
answer anew on every seeded rerun, and, with ``noise``, answers at random (one of the three
outcomes) in that share of seeded calls, as a model sampled above temperature 0 strays. The
original run is unseeded and so never strays: it is the answer the analyst got. Outcomes are
compared with ``Label(choices=OUTCOMES)``.

A real model (:func:`real_case`: a planted fact on an OpenAI-compatible server) was written by
nobody here, so what it does is measured, never assumed (:class:`Measured`): whether it can
answer the case at all, and, for each piece an explanation confirms besides the planted one,
whether removing it truly changes the answer (a small model's answer turns on the wording of
its whole prompt, so such a piece is a cause, not a false confirmation).

:func:`evaluate` runs a case, explains it the way an analyst would, and scores what was found.

Role: examples (used by ``bench/bench_truth.py`` and the tests); imports anything.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from footprint_lab.context import InMemoryStore, define_fact, define_instruction, define_memory
from footprint_lab.core.agent import Agent
from footprint_lab.core.identity import coerce_identity
from footprint_lab.core.tools import define_tool
from footprint_lab.explain.compare import Label, Mentions
from footprint_lab.explain.trials.ablation import localize
from footprint_lab.explain.trials.arms import ArmVerdict
from footprint_lab.explain.trials.dropped import find_dropped_context
from footprint_lab.providers import LLMRequest, mock, openai

OUTCOMES = ("APPROVED", "DECLINED", "ESCALATED")
CLASSES = ("fact", "memory", "tool", "instruction", "innocent", "missing", "together")
IDENTITY = {"tenant": "acme", "principal": "analyst"}
_BENIGN = (
    "Shipping is free for orders over 50 EUR.", "Support answers within one working day.",
    "The warehouse is in Rotterdam.", "Invoices are sent at the start of each month.",
    "Gift cards cannot be exchanged for cash.", "Customers may change their address until dispatch.",
    "The store closes on public holidays.", "Parcels are insured up to 500 EUR.",
    "Phone support runs from 9 to 17.", "Loyalty points expire after two years.",
)
_POLICY = ("Refund policy: refunds for orders are allowed within 30 days of purchase, with the receipt, "
           "for the customer who paid.")
_WORDING = ("", "Thank you for your patience.", "Let me know if anything else comes up.", "Kind regards.",
            "I have checked the order details.", "Here is what I found.")


@dataclass(slots=True)
class TruthCase:
    """One planted cause: how to build the agent, what to ask, what should be found, and how."""

    name: str
    kind: str
    agent: Agent
    message: str
    #: the removal (or, for ``missing``, restoration) ids that are the cause; two for ``together``
    culprits: tuple[str, ...]
    identity: dict[str, str] = field(default_factory=lambda: dict(IDENTITY))
    #: how outcomes are compared (``Label(choices=OUTCOMES)`` when ``None``)
    compare: Any = None
    #: the run to explain, when the case already made it (``None``: the agent runs the message)
    run: Any = None
    #: on a real model, what removing a piece does, measured (``None``: the case's model is scripted, so every
    #: piece that is not planted is benign)
    measured: Measured | None = None
    #: what the explanation reruns (``rerun=``): ``None`` for the agent itself, or a factory
    rerun: Any = None

    @property
    def rerunner(self) -> Any:
        """The ``rerun=`` an analyst passes: the case's factory, or its agent."""
        return self.rerun if self.rerun is not None else self.agent

    @property
    def method(self) -> str:
        """What an analyst runs: ``localize``, then ``bisect_culprits`` for a pair; ``find_dropped_context``."""
        return {"missing": "find_dropped_context", "together": "bisect_culprits"}.get(self.kind, "localize")

    @property
    def comparator(self) -> Any:
        return self.compare if self.compare is not None else Label(choices=list(OUTCOMES))


def scripted(decide: Callable[[str, LLMRequest], str | dict[str, Any]], noise: float,
             reason: str = "the order details decide it", *, outcomes: Sequence[str] = OUTCOMES,
             say: Callable[[str, random.Random | None], str] | None = None) -> Any:
    """A mock provider that decides from everything it was sent, words it afresh, and strays with ``noise``.

    A seeded call strays to one of ``outcomes`` at random in ``noise`` of the calls. ``say`` words
    the outcome decided, given the seeded call's chooser (``None`` for an unseeded call, which words
    it the same every time); by default ``"APPROVED: <reason>."`` and, when seeded, a closing
    sentence drawn at random.
    """
    words = say if say is not None else _reasoned(reason)

    def respond(request: LLMRequest) -> Any:
        sent = sent_text(request)
        decided = decide(sent, request)
        if not isinstance(decided, str):
            return decided  # a tool call
        if request.seed is None:
            return words(decided, None)
        chooser = random.Random(f"{request.seed}|{sent}")
        if chooser.random() < noise:
            decided = chooser.choice(list(outcomes))
        return words(decided, chooser)

    return mock(respond=respond)


def sent_text(request: LLMRequest) -> str:
    """Everything a request sends the model: its system prompt and each message's content."""
    return request.system + "\n" + "\n".join(str(m.get("content", "")) for m in request.messages)


def closing(chooser: random.Random | None) -> str:
    """A closing sentence drawn by a seeded call's chooser (none for an unseeded call): free text's wording."""
    return "" if chooser is None else chooser.choice(_WORDING)


def _reasoned(reason: str) -> Callable[[str, random.Random | None], str]:
    return lambda decided, chooser: f"{decided}: {reason}. {closing(chooser)}".strip()


def _benign(chooser: random.Random, count: int, prefix: str = "note") -> list[Any]:
    return [define_fact(id=f"{prefix}-{n}", data=text) for n, text in enumerate(chooser.sample(_BENIGN, count))]


def case(kind: str, variant: int, *, noise: float = 0.0) -> TruthCase:
    """The ``variant``-th case of a class (0, 1, 2 ...): its benign pieces and names vary with the variant."""
    chooser = random.Random(f"{kind}-{variant}")
    benign = _benign(chooser, chooser.randint(3, 7))
    order = f"A-{4000 + variant * 37}"
    message = f"Can I get a refund for order {order}?"
    name = f"{kind}-{variant}"
    if kind == "fact":
        marker = chooser.choice(["VIP waiver", "goodwill credit", "founder account"])
        provider = scripted(lambda sent, _: "APPROVED" if marker in sent else "DECLINED", noise)
        context = [*benign, define_fact(id="account-note", data=f"Account note: the customer holds a {marker}.")]
        return TruthCase(name, kind, Agent(provider=provider, system=_POLICY, context=context), message,
                         ("account-note",))
    if kind == "memory":
        store = InMemoryStore()
        namespace = coerce_identity(IDENTITY, "truth").namespace()  # type: ignore[union-attr]
        store.remember(namespace, [{"role": "assistant", "content": f"Order {order} was refunded last month."},
                                   {"role": "user", "content": "Thanks, bye."}])
        provider = scripted(lambda sent, _: "DECLINED" if "refunded last month" in sent else "APPROVED", noise)
        context = [*benign, define_memory(id="history", store=store, write_back=False)]
        return TruthCase(name, kind, Agent(provider=provider, system=_POLICY, context=context), message,
                         ("history",))
    if kind == "tool":
        status = chooser.choice(["lost in transit", "flagged for fraud"])
        lookup = define_tool(name="lookup_order", description="Look up an order's shipping status by its id.",
                             input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
                             fn=lambda order_id: {"order_id": order_id, "status": status})

        def decide_with_tool(sent: str, request: LLMRequest) -> str | dict[str, Any]:
            if request.tools and not any(m.get("role") == "tool" for m in request.messages):
                return {"tool": "lookup_order", "args": {"order_id": order}}
            return "ESCALATED" if status in sent else "APPROVED"

        provider = scripted(decide_with_tool, noise)
        agent = Agent(provider=provider, system=_POLICY, context=benign, tools=[lookup])
        return TruthCase(name, kind, agent, message, ("lookup_order",))
    if kind == "instruction":
        provider = scripted(lambda sent, _: "DECLINED" if "Decline every refund" in sent else "APPROVED", noise)
        context = [*benign, define_instruction(id="freeze", prompt="Decline every refund while the audit runs.")]
        return TruthCase(name, kind, Agent(provider=provider, system="You decide refunds.", context=context),
                         message, ("freeze",))
    if kind == "innocent":
        reason = ("refunds for orders are allowed within 30 days of purchase, with the receipt, for the customer "
                  "who paid")
        provider = scripted(lambda sent, _: "APPROVED" if "Ledger flag Q7" in sent else "DECLINED", noise, reason)
        context = [define_fact(id="policy", data=_POLICY), *benign,
                   define_fact(id="ledger", data="Ledger flag Q7 set.")]
        return TruthCase(name, kind, Agent(provider=provider, system="You decide refunds.", context=context),
                         message, ("ledger",))
    if kind == "missing":
        provider = scripted(lambda sent, _: "APPROVED" if "Damaged parcels" in sent else "DECLINED", noise)
        context = [*benign,
                   define_instruction(id="damage-rule", prompt="Damaged parcels are refunded in full.",
                                      active_when=lambda view: "damaged" in view.message),
                   define_instruction(id="bulk-rule", prompt="Bulk orders ship from the second warehouse.",
                                      active_when=lambda view: "bulk" in view.message)]
        agent = Agent(provider=provider, system=_POLICY, context=context)
        return TruthCase(name, kind, agent, f"My parcel for order {order} arrived broken. Refund?", ("damage-rule",))
    if kind == "together":
        provider = scripted(lambda sent, _: "APPROVED" if "VIP" in sent or "manager" in sent else "DECLINED", noise)
        context = [*benign, define_fact(id="vip", data="The customer is a VIP."),
                   define_fact(id="exception", data="A manager granted an exception for this order.")]
        return TruthCase(name, kind, Agent(provider=provider, system=_POLICY, context=context), message,
                         ("vip", "exception"))
    raise ValueError(f"no case class {kind!r}; the classes are {', '.join(CLASSES)}")


@dataclass(slots=True)
class Scored:
    """What the explanation found for one case, against what was planted."""

    case: str
    kind: str
    answer: str
    #: the confirmed findings, strongest first (removal ids; a set acting together as a sorted tuple)
    confirmed: list[Any]
    top1: bool
    top3: bool
    #: confirmed findings that remove (or restore) nothing that was planted, and whose removal, where it is
    #: measured (a real model), does not change the answer
    false: int
    reruns: int
    seconds: float
    #: confirmed findings that plant nothing, but whose removal changes the answer when measured: causes of it on
    #: this model (its sensitivity to the prompt), so no false confirmation
    fragile: int = 0


def _finding(ids: Sequence[str]) -> Any:
    return ids[0] if len(ids) == 1 else tuple(sorted(ids))


async def evaluate(case: TruthCase, *, budget: int = 48, comparator: Any = None, **settings: Any) -> Scored:
    """Run the case, explain its answer the way an analyst would (``case.method``), and score the finding.

    Top-1: the strongest confirmed finding (smallest p-value) is the planted cause; top-3: it is
    among the three strongest findings, confirmed or undecided. On a real case each other confirmed
    finding is measured (:meth:`Measured.changes`, after the clock stops): a false confirmation when
    removing it leaves the answer as it was, a ``fragile`` piece when it does not.
    """
    started = time.perf_counter()
    run = case.run if case.run is not None else await case.agent.run(case.message, identity=case.identity)
    compare = comparator if comparator is not None else case.comparator
    tested: list[tuple[ArmVerdict, tuple[str, ...]]]
    if case.method == "find_dropped_context":
        dropped = await find_dropped_context(run, rerun=case.rerunner, comparator=compare, budget=budget, **settings)
        tested = [(p.trial, (p.force_id,)) for p in dropped.pieces if p.trial is not None]
        reruns = dropped.trial.reruns if dropped.trial is not None else 0
    else:
        report = await localize(run, rerun=case.rerunner, comparator=compare, budget=budget, **settings)
        tested = [(s.trial, (s.source_id,)) for s in report.suspects] + [(v, v.arm.exclude) for v in report.together]
        reruns = report.reruns
    by_strength = sorted((t for t in tested if t[0].verdict in ("confirmed", "undecided")),
                         key=lambda t: (t[0].verdict != "confirmed", t[0].p_value if t[0].p_value is not None else 1))
    want = _finding(case.culprits)
    confirmed = [_finding(ids) for trial, ids in by_strength if trial.verdict == "confirmed"]
    leading = [_finding(ids) for _, ids in by_strength[:3]]
    planted = set(case.culprits)
    others = [ids for trial, ids in by_strength if trial.verdict == "confirmed" and not planted & set(ids)]
    seconds = time.perf_counter() - started
    fragile = [ids for ids in others if case.measured is not None and await case.measured.changes(ids)]
    return Scored(case.name, case.kind, run.answer or "", confirmed, bool(confirmed) and confirmed[0] == want,
                  want in leading and want in confirmed, len(others) - len(fragile), reruns, seconds, len(fragile))


#: Real-model cases: an order and the city its package is in (the planted fact).
PLACES = (("A-4411", "Lisbon"), ("B-2093", "Oslo"), ("C-7710", "Nairobi"), ("D-1186", "Lima"), ("E-3352", "Hanoi"),
          ("F-5520", "Madrid"), ("G-8034", "Cairo"), ("H-2267", "Toronto"), ("J-6619", "Sydney"), ("K-4408", "Berlin"))
#: Seeded runs behind each measured share (see :class:`Measured`).
MEASURED_RUNS = 8
#: A real case is answerable when the model names the city in at least this share of its runs with every piece:
#: it then strays from that answer in at most a quarter of them, the most noise the scripted cases are built with.
ANSWERED_SHARE = 0.75
#: Seeds of the measuring runs start here, above every seed an explanation within the bench's budget uses
#: (its reruns are seeded from 0 and from 1000).
MEASURED_SEED = 5000


@dataclass(slots=True)
class Measured:
    """What a real model does, measured on seeded runs of its own instead of declared.

    A scripted case knows its causes because it wrote the model; a real model can only be asked.
    :meth:`share` is the share of ``count`` (:data:`MEASURED_RUNS` unless set) seeded runs (seeds
    from :data:`MEASURED_SEED`, which no explanation uses) whose answer names the term ``compare``
    looks for (the city of a planted fact, the wrong answer of a poisoned passage), with some pieces
    removed; removing a piece *changes the answer* when the share without it is less than half the
    share with every piece (:attr:`baseline`).
    """

    agent: Agent
    message: str
    compare: Mentions
    identity: dict[str, str] = field(default_factory=lambda: dict(IDENTITY))
    runs: list[Any] = field(default_factory=list)
    baseline: float = 0.0
    #: how many seeded runs each share is measured on
    count: int = MEASURED_RUNS

    async def share(self, exclude: Sequence[str] = (), *, keep: bool = False) -> float:
        """The share of seeded runs without ``exclude`` whose answer names the term (``keep``: remember the runs)."""
        runs = [await self.agent.without(list(exclude), seed=MEASURED_SEED + k).run(self.message,
                                                                                    identity=self.identity)
                for k in range(self.count)]
        if keep:
            self.runs = runs
        return sum(1 for run in runs if self.compare.mentions(run.answer or "")) / self.count

    async def changes(self, exclude: Sequence[str]) -> bool:
        """Whether removing ``exclude`` changes the answer: the city named in less than half as many runs."""
        return await self.share(exclude) < self.baseline / 2

    async def answered_from(self, planted: Sequence[str]) -> Any | None:
        """The run to explain when the model gives its answer from ``planted``, else ``None``.

        It does when the answer is named in at least :data:`ANSWERED_SHARE` of the runs with every
        piece (:attr:`baseline`, measured here) and in less than half as many without ``planted``.
        The run is the first of the measured runs that names it, kept as it was: on llama.cpp's
        server the same seeded request can answer differently when asked again (see
        :mod:`~footprint_lab.examples.local_model`), so running it anew could explain another answer.
        """
        self.baseline = await self.share(keep=True)
        if self.baseline < ANSWERED_SHARE or not await self.changes(planted):
            return None
        return next(run for run in self.runs if self.compare.mentions(run.answer or ""))


def served(base_url: str, temperature: float, model: str = "smollm2") -> Callable[[], Any]:
    """A function that makes a new provider for an OpenAI-compatible server at ``temperature`` on each call."""
    return lambda: openai(model, base_url=base_url, options={"temperature": temperature}, max_tokens=32,
                          timeout=120.0)


async def real_case(variant: int, base_url: str, *, temperature: float, model: str = "smollm2",
                    fresh: bool = False) -> TruthCase | None:
    """The ``variant``-th planted-fact case on a real OpenAI-compatible server at ``temperature``, or ``None`` when
    the model cannot answer it (see :func:`planted_fact`); ``fresh``: a new provider for every rerun."""
    provider = served(base_url, temperature, model)
    return await planted_fact(variant, provider(), name=f"real-{variant}-t{temperature:g}",
                              fresh=provider if fresh else None)


#: The real-model cases' system prompt.
REAL_SYSTEM = "Answer the customer in one short sentence."


def planted_context(variant: int) -> tuple[str, str, list[Any]]:
    """The ``variant``-th real-model case's order, its city and its pieces: the fact ``where`` and three benign."""
    order, city = PLACES[variant % len(PLACES)]
    chooser = random.Random(f"real-{variant}")
    return order, city, [define_fact(id="where", data=f"The package for order {order} is in {city}."),
                         *_benign(chooser, 3)]


def rebuilding(fresh: Callable[[], Any], system: str, context: Sequence[Any]) -> Callable[..., Agent]:
    """A rerun factory as most people write one: ``factory(exclude=(), seed=None)`` builds a new agent on a new
    provider (``fresh()``) with every piece, then leaves out ``exclude``, its requests seeded with ``seed``."""

    def factory(exclude: Sequence[str] = (), seed: int | None = None) -> Agent:
        return Agent(provider=fresh(), system=system, context=context).without(list(exclude), seed=seed)

    return factory


async def planted_fact(variant: int, provider: Any, *, name: str,
                       fresh: Callable[[], Any] | None = None) -> TruthCase | None:
    """A planted-fact case on ``provider``, a model nobody scripted, or ``None`` when the model cannot answer it.

    The fact says where an order's package is (:data:`PLACES`), among benign facts. The model can
    answer the case when, measured (:meth:`Measured.answered_from`), it names the city in at least
    :data:`ANSWERED_SHARE` of its runs with every piece, and in less than half as many without the
    fact (the fact is what it answers from); the run to explain is the first of those that names it.
    With ``fresh`` (a function that makes a new provider), the explanation's reruns are made by a
    factory that builds a new agent on a new provider each time (:func:`rebuilding`), as most
    people write one; without it, by the agent itself.
    """
    order, city, context = planted_context(variant)
    agent = Agent(provider=provider, system=REAL_SYSTEM, context=context)
    measured = Measured(agent, f"Where is order {order}?", Mentions(city))
    run = await measured.answered_from(["where"])
    if run is None:
        return None
    return TruthCase(name, "real", agent, measured.message, ("where",), compare=measured.compare, run=run,
                     measured=measured, rerun=rebuilding(fresh, REAL_SYSTEM, context) if fresh is not None else None)


def cases(per_class: int, *, noise: float = 0.0, kinds: Sequence[str] = CLASSES) -> list[TruthCase]:
    """``per_class`` cases of each class."""
    return [case(kind, variant, noise=noise) for kind in kinds for variant in range(per_class)]


__all__ = ["ANSWERED_SHARE", "CLASSES", "MEASURED_RUNS", "OUTCOMES", "PLACES", "REAL_SYSTEM", "Measured", "Scored",
           "TruthCase", "case", "cases", "closing", "evaluate", "planted_context", "planted_fact", "real_case",
           "rebuilding", "scripted", "sent_text", "served"]
