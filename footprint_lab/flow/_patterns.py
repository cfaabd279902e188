"""Patterns: well-known multi-agent shapes, each built only from the compositions.

Nothing here runs anything itself: every pattern returns a plain ``Sequence``, ``Loop``,
``Workflow``, ``Parallel``, ``Conditional`` or ``Graph``, so its runs are recorded, nested,
paused and explained exactly like a hand-built composition.

- :func:`reflection`: a writer drafts, then critic and writer take turns revising it.
- :func:`debate`: two sides argue in rounds over the question, a judge gives the verdict.
- :func:`self_consistency`: one runner answers several times at once; the majority wins.
- :func:`map_reduce`: the message is split into parts, each part answered at once, then reduced.
- :func:`swarm`: agents hand the conversation to each other by name until one answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from collections.abc import Sequence as Seq
from typing import Any

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.runner import Runner
from footprint_lab.flow._members import check_callable
from footprint_lab.flow.conditional import Conditional
from footprint_lab.flow.loop import Loop
from footprint_lab.flow.parallel import Parallel
from footprint_lab.flow.refusals import CompositionConfigError, EmptyCompositionError
from footprint_lab.flow.sequence import Sequence
from footprint_lab.flow.workflow import Graph, Workflow, step


def reflection(writer: Runner, critic: Runner, /, *, rounds: int = 2,
               until: Callable[[str], Any] | None = None) -> Sequence:
    """Draft with ``writer``, then up to ``rounds`` passes of ``critic`` critiquing and ``writer`` revising."""
    revise = Workflow([
        step("critique", critic, needs="input", map=lambda v: f"Critique this draft:\n\n{v['input']}"),
        step("revise", writer, needs=["input", "critique"],
             map=lambda v: f"Revise the draft using the critique.\n\nDraft:\n{v['input']}"
                           f"\n\nCritique:\n{v['critique']}"),
    ], name="critique-and-revise")
    loop = Loop(revise, times=rounds) if until is None else Loop(revise, times=rounds, until=until)
    return Sequence([("draft", writer), ("reflect", loop)], name="reflection")


def debate(proponent: Runner, opponent: Runner, judge: Runner, /, *, rounds: int = 2) -> Workflow:
    """``rounds`` of for and against over the question, each side reading the debate so far; then a verdict."""
    if not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= 50:
        raise CompositionConfigError("debate", "rounds", describe_shape(rounds), "must be a whole number from 1 to 50")
    steps = []
    spoken: list[str] = []
    for number in range(1, rounds + 1):
        for side, runner, task in (("for", proponent, "Argue for."), ("against", opponent, "Argue against.")):
            name = f"{side}-{number}"
            steps.append(step(name, runner, needs=["input", *spoken], map=_transcript(spoken, task)))
            spoken = [*spoken, name]
    steps.append(step("verdict", judge, needs=["input", *spoken],
                      map=_transcript(spoken, "Judge the debate and give the verdict.")))
    return Workflow(steps, name="debate")


def _transcript(spoken: list[str], task: str) -> Callable[[dict[str, str]], str]:
    said = list(spoken)

    def message(values: dict[str, str]) -> str:
        turns = "".join(f"\n\n[{name}]\n{values[name]}" for name in said)
        return f"Question:\n{values['input']}{turns}\n\n{task}"

    return message


def majority_vote(answers: Mapping[str, str]) -> str:
    """The answer given most often (compared without surrounding whitespace); a tie goes to the earliest."""
    counts = Counter(answer.strip() for answer in answers.values())
    best = max(counts.values())
    return next(answer.strip() for answer in answers.values() if counts[answer.strip()] == best)


#: The most concurrent members one pattern builds (``samples``, ``shards``): each is a member run,
#: billed, with its own recording; more is a typo, not a plan, and would build that many members first.
MAX_FAN_OUT = 100


def self_consistency(runner: Runner, /, *, samples: int = 5,
                     vote: Callable[[dict[str, str]], str] = majority_vote) -> Parallel:
    """``samples`` concurrent answers from one runner, merged by ``vote`` (majority by default)."""
    if not isinstance(samples, int) or isinstance(samples, bool) or not 1 <= samples <= MAX_FAN_OUT:
        raise CompositionConfigError("self_consistency", "samples", describe_shape(samples),
                                     f"must be a whole number from 1 to {MAX_FAN_OUT}")
    branches = [(f"sample-{number}", runner) for number in range(1, samples + 1)]
    return Parallel(branches, merge=vote, name="self-consistency")


def map_reduce(mapper: Runner, reducer: Runner, /, *, split: Callable[[str], Seq[str]], shards: int) -> Graph:
    """Split the message into ``shards`` parts, answer each part concurrently with ``mapper``, reduce with ``reducer``.

    ``split`` must return exactly ``shards`` non-blank parts.
    """
    if not isinstance(shards, int) or isinstance(shards, bool) or not 1 <= shards <= MAX_FAN_OUT:
        raise CompositionConfigError("map_reduce", "shards", describe_shape(shards),
                                     f"must be a whole number from 1 to {MAX_FAN_OUT}")
    check_callable("map_reduce", "split", split, "must be a function of the message returning its parts")
    parts = [f"map-{number}" for number in range(1, shards + 1)]
    nodes = [step(name, mapper, needs="input", map=_shard(split, index, shards)) for index, name in enumerate(parts)]
    nodes.append(step("reduce", reducer, needs=parts,
                      map=lambda v: "Combine these partial answers:" + "".join(f"\n\n[{p}]\n{v[p]}" for p in parts)))
    return Graph(nodes, name="map-reduce")


def _shard(split: Callable[[str], Seq[str]], index: int, shards: int) -> Callable[[dict[str, str]], str]:
    def message(values: dict[str, str]) -> str:
        pieces = list(split(values["input"]))
        if len(pieces) != shards or not all(isinstance(p, str) and p.strip() for p in pieces):
            raise CompositionConfigError(
                "map_reduce", "split", f"a function returning {describe_shape(pieces)}",
                f"must return exactly {shards} non-blank string parts (one per shard)",
            )
        return pieces[index]

    return message


def handoff_target(answer: str, marker: str = "HANDOFF:") -> str | None:
    """The agent an answer hands over to (its last line starting with ``marker``), or ``None``."""
    for line in reversed(answer.strip().splitlines()):
        if line.strip().startswith(marker):
            return line.strip()[len(marker):].strip() or None
    return None


def swarm(agents: Mapping[str, Runner], /, *, entry: str, max_turns: int = 10, marker: str = "HANDOFF:") -> Loop:
    """Agents hand over by ending an answer with ``HANDOFF: name``; the first answer without one is the answer.

    ``entry`` takes the first turn and every handover to a name that is not an agent here.
    """
    if not isinstance(agents, Mapping) or not agents:
        raise EmptyCompositionError("swarm", 'swarm({"triage": triage, "billing": billing}, entry="triage")')
    if not isinstance(entry, str) or entry not in agents:
        raise CompositionConfigError("swarm", "entry", describe_shape(entry), "must name one of the agents")
    routes = [(name, _hands_to(name, marker), runner) for name, runner in agents.items() if name != entry]
    router = Conditional(routes, otherwise=(entry, agents[entry]), name="handoff")
    return Loop(router, times=max_turns, until=lambda answer: handoff_target(answer, marker) is None, name="swarm")


def _hands_to(name: str, marker: str) -> Callable[[str], bool]:
    return lambda message: handoff_target(message, marker) == name
