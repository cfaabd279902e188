"""Several causes, on the defaults: does ``localize(run, rerun=agent)`` confirm every piece whose removal alone flips
the answer, and nothing else?

Two shapes no single-cause search was tuned for, on a scripted model that always answers the same way:

- **each needed**: the answer needs every one of three or four flags among 8, 20 or 40 benign notes, so removing
  any one flag flips it (the search of removals together weighs two causes at most);
- **majority**: three notes say DECLINED and two APPROVED among 5 or 20 benign notes, and the model follows the
  majority, so removing one DECLINED note flips it, but removing it with an APPROVED one does not (a group test
  removes halves at once). Once with notes whose words the answer shares (the ranking points at them), once with
  notes it does not ("Vote no" against "Vote yes").

Each case is a shuffle of the notes, explained as an analyst types it. Rows: the share of causes confirmed, the
causes called "not confirmed" (never removed alone, or set aside), other pieces confirmed (goal 0), and reruns per
answer. ``python bench/bench_causes.py``; ``--quick`` runs two shuffles of each.
"""

from __future__ import annotations

import asyncio
import random
import statistics
from collections.abc import Callable
from typing import Any

from _kit import Report, options

from footprint_lab import Agent
from footprint_lab.context import define_fact
from footprint_lab.explain import localize
from footprint_lab.providers import LLMRequest, mock


def seen(request: LLMRequest) -> str:
    return request.system + "\n" + "\n".join(str(m.get("content", "")) for m in request.messages)


def agent_of(texts: list[str], decide: Callable[[str], str]) -> Agent:
    return Agent(provider=mock(respond=lambda request: decide(seen(request))), system="Decide.",
                 context=[define_fact(id=f"note-{k}", data=text) for k, text in enumerate(texts)])


def each_needed(benign: int, flags: int, shuffle: int) -> tuple[Agent, list[str]]:
    names = ["zebra", "yak", "okapi", "emu"][:flags]
    chooser = random.Random(f"needed-{benign}-{flags}-{shuffle}")
    texts = [f"Benign note {k} {chooser.randint(100, 999)}." for k in range(benign)] + [f"Flag {n} raised."
                                                                                         for n in names]
    chooser.shuffle(texts)
    agent = agent_of(texts, lambda text: "APPROVED" if all(f"Flag {n} raised." in text for n in names) else "DECLINED")
    return agent, [f"note-{k}" for k, text in enumerate(texts) if text.startswith("Flag")]


def majority(benign: int, against: str, shuffle: int) -> tuple[Agent, list[str]]:
    no, yes = ("Say DECLINED", "Say APPROVED") if against == "shared" else ("Vote no", "Vote yes")
    chooser = random.Random(f"majority-{benign}-{against}-{shuffle}")
    texts = [f"Benign note {k} {chooser.randint(100, 999)}." for k in range(benign)] + [
        f"{no} #{k}." for k in range(3)] + [f"{yes} #{k}." for k in range(2)]
    chooser.shuffle(texts)
    agent = agent_of(texts, lambda text: "DECLINED" if text.count(no) > text.count(yes) else "APPROVED")
    return agent, [f"note-{k}" for k, text in enumerate(texts) if text.startswith(no)]


async def scored(make: Callable[[int], tuple[Agent, list[str]]], shuffles: int) -> list[dict[str, Any]]:
    found = []
    for shuffle in range(shuffles):
        agent, causes = make(shuffle)
        report = await localize(await agent.run("Decide?"), rerun=agent)
        found.append({"causes": len(causes), "confirmed": len(set(report.confirmed) & set(causes)),
                      "not": sum(report.verdict(cause) == "not_confirmed" for cause in causes),
                      "named": sum(cause in report.set_aside_in_groups for cause in causes),
                      "other": len(set(report.confirmed) - set(causes)), "reruns": report.reruns})
    return found


def main() -> None:
    args = options(__doc__ or "")
    shuffles = 2 if args.quick else 20
    report = Report("causes", args)
    shapes: list[tuple[str, Callable[[int], tuple[Agent, list[str]]]]] = [
        (f"each needed, {flags} of {benign + flags} pieces",
         lambda shuffle, benign=benign, flags=flags: each_needed(benign, flags, shuffle))
        for benign, flags in ((8, 3), (8, 4), (20, 3), (40, 3))]
    shapes += [(f"majority, 5 of {benign + 5} pieces, words the answer {'shares' if against == 'shared' else 'lacks'}",
                lambda shuffle, benign=benign, against=against: majority(benign, against, shuffle))
               for benign, against in ((5, "shared"), (20, "shared"), (20, "unshared"))]
    for name, make in shapes:
        found = asyncio.run(scored(make, shuffles))
        causes = sum(f["causes"] for f in found)
        confirmed = 100 * sum(f["confirmed"] for f in found) / causes
        missed = sum(f["not"] for f in found)
        named = sum(f["named"] for f in found)
        other = sum(f["other"] for f in found)
        report.add(f"{name}: causes confirmed", [confirmed], size=f"{shuffles} shuffles", unit="%",
                   goal="(reference)", note=f"{missed} of {causes} called not confirmed, {named} of them named as set "
                   "aside by the group test; other pieces confirmed: " + str(other))
        report.add(f"{name}: other pieces confirmed", [float(other)], size=f"{shuffles} shuffles", unit="pieces",
                   goal="0", met=other == 0)
        report.add(f"{name}: reruns per answer", [float(f["reruns"]) for f in found], size=f"{shuffles} shuffles",
                   unit="reruns", goal="(reference)", note=f"mean {statistics.mean(f['reruns'] for f in found):.1f}")
    report.close()


if __name__ == "__main__":
    main()
