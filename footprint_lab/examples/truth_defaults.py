"""Planted causes explained with the defaults: ``localize(run, rerun=factory)`` and nothing else.

Rule kept here: a case is explained as a new user would explain it, with no budget, no ``top``
and no ``samples``; a ``comparator=`` only where the answer is free text (as an analyst passes
``Mentions(...)`` there). Its rerun factory, ``factory(exclude=(), seed=None)``, builds a new
agent on a new provider for every rerun, as most people write one (on the scripted model a new
``mock(respond=...)``; on a real one a new ``openai(...)``: :func:`~footprint_lab.examples.truth.rebuilding`).

Cases vary what the defaults must survive:

- where the planted cause sits in the correlational ranking (``run.suspects()``), among the
  pieces a rerun can remove: ``first`` (it alone shares words with the answer), ``middle`` (about
  half the other pieces, "lures", share the answer's words and rank above it), ``last`` (every
  other piece but the system prompt is a lure; the system prompt, which shares nothing, is sent
  first and so ranks before it among the pieces that score 0), or ``zero`` (no piece shares a
  word with the answer: every score is 0 and the ranking is the order the pieces were sent in);
  where it actually ranked is measured (:func:`placed`), never assumed;
- how many context pieces there are (3, 10, 40, 80), besides the system prompt;
- the answer's form: a bare label (``APPROVED``), a bare number (``42``), or free text worded
  afresh on every rerun ("Your parcel waits in Lisbon. Kind regards."), compared with
  ``Mentions("Lisbon")``.

The scripted model answers from what it was sent: the cause's marker present, the first
outcome; absent, the second; and, with ``noise``, a seeded call strays to one of the three
outcomes at random (:func:`~footprint_lab.examples.truth.scripted`). Piece ids say nothing of
what a piece is (``note-0``, ``note-1`` ... in the order sent).

:func:`explain` scores one case: the cause confirmed (alone), the other findings confirmed (a
piece that is not the cause, or any set confirmed together, since every cause here acts alone:
false, or on a real model "fragile" when removing it, measured, changes the answer), the
removable pieces neither tested nor named as untested, and the reruns used and failed.

Role: examples (used by ``bench/bench_truth.py`` and the tests); imports anything.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from footprint_lab.context import define_fact
from footprint_lab.core.agent import Agent
from footprint_lab.examples.truth import Measured, TruthCase, closing, rebuilding, scripted
from footprint_lab.explain.compare import Mentions
from footprint_lab.explain.trials.ablation import localize

RANKS = ("first", "middle", "last", "zero")
PIECE_COUNTS = (3, 10, 40, 80)
FORMS = ("label", "number", "text")
SYSTEM = "You answer questions about customer orders."
#: Markers a cause carries: the scripted model gives its first outcome when one is in what it was sent.
MARKERS = ("VIP override", "goodwill waiver", "founder account", "depot hold R7")

_PLACES = ("north", "south", "east", "west", "harbour", "river", "market", "station", "garden", "castle", "bridge",
           "airport")
_ITEMS = ("umbrellas", "lamps", "blankets", "kettles", "ladders", "mirrors", "baskets", "candles", "rugs", "clocks")
_SPOTS = ("door", "stairs", "window", "counter", "lift", "till", "entrance", "back wall")


@dataclass(frozen=True, slots=True)
class Form:
    """One answer form: the question, the three outcomes and how each is worded, and the answer's key word."""

    name: str
    question: str
    #: the outcome with the cause, without it, and a third only noise reaches
    outcomes: tuple[str, str, str]
    #: a piece that holds the answer's word (a lure ranks above every piece that scores 0)
    lure: str
    #: the cause when it holds the answer's word (rank ``first``)
    cause_ranked: str
    #: free text: worded afresh on every seeded rerun, compared with a comparator
    free: bool = False

    def say(self, outcome: str, chooser: random.Random | None) -> str:
        if not self.free:
            return outcome
        return f"{_SENTENCES[outcome]} {closing(chooser)}".strip()

    def comparator(self) -> Any:
        """What an analyst passes as ``comparator=``: nothing for a bare answer, ``Mentions`` for free text."""
        return Mentions(self.outcomes[0]) if self.free else None


_SENTENCES = {"Lisbon": "Your parcel waits in Lisbon.", "on its way": "Your parcel is still on its way.",
              "sender": "Your parcel went back to the sender."}
FORM = {
    "label": Form("label", "Decide the refund request for order {order}: reply APPROVED, DECLINED or ESCALATED.",
                  ("APPROVED", "DECLINED", "ESCALATED"),
                  "Requests approved at the {place} desk ship {item} within {count} days.",
                  "Account note: {marker}, so refunds here are approved."),
    "number": Form("number", "How many EUR do we refund for order {order}? Reply with the number only.",
                   ("42", "0", "17"), "Shelf 42 of the {place} branch holds {item}.",
                   "Account note: {marker} worth 42 EUR."),
    "text": Form("text", "Where is the parcel for order {order}?", ("Lisbon", "on its way", "sender"),
                 "Trucks from Lisbon reach the {place} branch with {item}.",
                 "Account note: {marker}; the parcel waits in Lisbon.", free=True),
}


@dataclass(slots=True)
class DefaultsCase:
    """One case: how to build each rerun's agent, what to ask, which piece is the cause, and where it should rank."""

    name: str
    rank: str
    pieces: int
    form: str
    noise: float
    factory: Callable[..., Agent]
    message: str
    cause: str
    #: ``comparator=`` as an analyst passes it (free text only), else ``None``
    comparator: Any = None
    #: the run to explain when the case already made it (a real model's measured run)
    run: Any = None
    #: on a real model, what removing a piece does, measured (``None``: scripted, every other piece benign)
    measured: Measured | None = None
    #: the texts of the context pieces, in the order sent (``note-0`` first)
    texts: list[str] = field(default_factory=list)


def _fillers(chooser: random.Random, template: str, count: int) -> list[str]:
    """``count`` different sentences from ``template``, its blanks filled at random."""
    found: list[str] = []
    seen: set[str] = set()
    while len(found) < count:
        text = template.format(place=chooser.choice(_PLACES), item=chooser.choice(_ITEMS),
                               spot=chooser.choice(_SPOTS), count=chooser.choice(("three", "five", "seven", "ten")))
        if text not in seen:
            seen.add(text)
            found.append(text)
    return found


def layout(rank: str, pieces: int, chooser: random.Random) -> tuple[int, int]:
    """``(lures, index)``: how many lures lead the pieces, and the cause's index in the order sent.

    The system prompt is sent first and scores 0, so among the removable pieces the cause of
    ``middle`` ranks ``lures + 2`` (the lures, the system prompt, then it); ``last`` ranks after
    ``pieces - 1`` lures and the system prompt; ``zero`` ranks ``index + 2`` (the order sent).
    """
    if rank == "first":
        return 0, chooser.randrange(pieces)
    if rank == "middle":
        lures = max(1, math.ceil((pieces + 1) / 2) - 2)
        return lures, lures
    if rank == "last":
        return pieces - 1, pieces - 1
    if rank == "zero":
        return 0, chooser.randrange(1, pieces)
    raise ValueError(f"no rank {rank!r}; the ranks are {', '.join(RANKS)}")


def defaults_case(rank: str, pieces: int, form: str, *, noise: float = 0.0, variant: int = 0) -> DefaultsCase:
    """The case of one rank position, piece count and answer form on the scripted model at ``noise``."""
    if pieces < 3:
        raise ValueError("a case needs at least 3 context pieces")
    shape = FORM[form]
    name = f"{form}-{rank}-{pieces}-v{variant}"
    chooser = random.Random(name)
    marker = chooser.choice(MARKERS)
    lures, index = layout(rank, pieces, chooser)
    cause = (shape.cause_ranked if rank == "first" else "Account note: {marker}.").format(marker=marker)
    plain = _fillers(chooser, "The {place} branch keeps {item} near the {spot}.", pieces - 1 - lures)
    others = _fillers(chooser, shape.lure, lures) + plain
    texts = [*others[:index], cause, *others[index:]]
    context = [define_fact(id=f"note-{k}", data=text) for k, text in enumerate(texts)]
    first, without, _ = shape.outcomes

    def model() -> Any:
        return scripted(lambda sent, _: first if marker in sent else without, noise, outcomes=shape.outcomes,
                        say=shape.say)

    message = shape.question.format(order=f"A-{4000 + 37 * variant}")
    return DefaultsCase(name, rank, pieces, form, noise, rebuilding(model, SYSTEM, context), message,
                        f"note-{index}", shape.comparator(), texts=texts)


def defaults_cases(*, noise: float, variants: int = 1, ranks: Sequence[str] = RANKS,
                   counts: Sequence[int] = PIECE_COUNTS, forms: Sequence[str] = FORMS) -> list[DefaultsCase]:
    """Every combination of ``ranks``, ``counts`` and ``forms``, ``variants`` of each."""
    return [defaults_case(rank, count, form, noise=noise, variant=variant)
            for variant in range(variants) for count in counts for rank in ranks for form in forms]


def real_defaults_case(found: TruthCase, temperature: float) -> DefaultsCase:
    """A real model's planted-fact case (built with ``fresh=``: a new provider for every rerun) as a defaults case."""
    if found.rerun is None or found.measured is None:
        raise ValueError("a real defaults case needs a case made with fresh providers (planted_fact(..., fresh=...))")
    return DefaultsCase(found.name, "measured", len(found.agent.source_ids()) - 1, "text", temperature, found.rerun,
                        found.message, found.culprits[0], found.compare, found.run, found.measured)


def removable(run: Any) -> list[tuple[str, float]]:
    """``(removal id, score)`` of each piece of the run a rerun can remove, in the ranking's order."""
    frame = run.suspects()
    found: dict[str, float] = {}
    for row in frame.to_dict("records"):
        name = row["removal_id"]
        if isinstance(name, str) and name not in found:
            found[name] = float(row["score"])
    return list(found.items())


def placed(run: Any, cause: str) -> tuple[int, int, str]:
    """Where ``cause`` ranked among the removable pieces: ``(position, of, rank)``, rank named as in :data:`RANKS`."""
    pieces = removable(run)
    position = 1 + [name for name, _ in pieces].index(cause)
    if all(score == 0 for _, score in pieces):
        return position, len(pieces), "zero"
    return position, len(pieces), "first" if position == 1 else "last" if position == len(pieces) else "middle"


@dataclass(slots=True)
class DefaultsScored:
    """What ``localize`` with the defaults found for one case, against what was planted."""

    case: str
    rank: str
    pieces: int
    form: str
    noise: float
    #: where the cause ranked among the removable pieces, measured on the run explained
    position: int
    of: int
    placed: str
    confirmed: bool
    #: other confirmed findings (a piece that is not the cause, any set confirmed together: the cause acts alone),
    #: less those whose removal, measured on a real model, changes the answer
    false: list[Any]
    #: removable pieces neither tested nor named among the untested
    unnoticed: list[str]
    #: removable pieces named among the untested
    untested: int
    reruns: int
    failed: int
    seconds: float
    report: str
    #: other confirmed findings whose removal, measured on a real model, changes the answer (causes on it)
    fragile: list[Any] = field(default_factory=list)


async def explain(case: DefaultsCase) -> DefaultsScored:
    """Run the case (unless it holds its run), explain it with the defaults, and score what was found."""
    run = case.run if case.run is not None else await case.factory().run(case.message)
    started = time.perf_counter()
    chosen = {"comparator": case.comparator} if case.comparator is not None else {}
    report = await localize(run, rerun=case.factory, **chosen)
    seconds = time.perf_counter() - started
    position, of, where = placed(run, case.cause)
    named = {name for name, _ in report.untested}
    tested = {s.source_id for s in report.suspects}
    pieces = [name for name, _ in removable(run)]
    unnoticed = [name for name in pieces if name not in tested | named]
    # every cause here acts alone, so a set confirmed together (it claims causes that act only together)
    # says something false of its other members even when it holds the cause
    others: list[Any] = [name for name in report.confirmed if name != case.cause]
    others += [tuple(group) for group in report.confirmed_together]
    fragile = [found for found in others if case.measured is not None
               and await case.measured.changes([found] if isinstance(found, str) else list(found))]
    return DefaultsScored(case.name, case.rank, case.pieces, case.form, case.noise, position, of, where,
                          case.cause in report.confirmed, [found for found in others if found not in fragile],
                          unnoticed, sum(name in named for name in pieces), report.reruns, report.failed, seconds,
                          str(report), fragile)


__all__ = ["FORM", "FORMS", "MARKERS", "PIECE_COUNTS", "RANKS", "SYSTEM", "DefaultsCase", "DefaultsScored", "Form",
           "defaults_case", "defaults_cases", "explain", "layout", "placed", "real_defaults_case", "removable"]
