"""Difference benchmark: two runs compared piece by piece, and which difference changed the answer (issue 47).

Goals:

- ``compare_runs`` of two 50-iteration runs (49 tool rounds, then the answer; a dozen facts, some
  changed, added or removed) takes at most 100 ms (median);
- the view of that difference (its ``text/html``) is under 200 kB;
- ``explain_difference(good, bad, replay=...)`` on a scripted pair whose answers differ because of one
  changed fact among 20 differences (changed, added and removed facts) confirms that fact and nothing
  else, within 48 reruns, called as an analyst types it (no budget, no samples). The decisive fact's
  place among the others is varied; the row reports the median reruns and how many variants met it.

The same on the real local model (llama.cpp's server with SmolLM2-135M, ``footprint_lab.examples.
local_model``, temperature 0): a pair whose "where is the package" fact names another city in the bad
run, beside a benign fact changed, one removed and one added (four differences: a model this small has
a 1,024-token window); answers compared with ``Mentions(city)``; the first planted-fact variant whose
good run names the city and bad run does not. Run ``python bench/bench_difference.py`` (``--quick``:
fewer samples and variants, checks that it runs, no real model; ``--scripted-only``: no real model).
"""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

from _kit import Report, options, samples_ms

from footprint_lab import Agent, define_tool
from footprint_lab.context import define_fact
from footprint_lab.explain import compare_runs, explain_difference
from footprint_lab.providers import LLMRequest, mock

ITERATIONS = 50
MARKER = "ledger mark Q7"


def _lookup(step: int) -> dict[str, Any]:
    return {"step": step, "status": "ok"}


LOOKUP = define_tool(name="lookup", description="Look one step up.", fn=_lookup,
                     input_schema={"type": "object", "properties": {"step": {"type": "integer"}}})


def long_model(request: LLMRequest) -> Any:
    """Ask for the lookup until 49 results are in, then answer from the marker."""
    done = sum(1 for m in request.messages if m.get("role") == "tool")
    if done < ITERATIONS - 1:
        return {"tool": "lookup", "args": {"step": done}}
    return "APPROVED by the ledger." if MARKER in request.system else "DECLINED: no ledger mark."


def answer_model(request: LLMRequest) -> Any:
    return "APPROVED by the ledger." if MARKER in request.system else "DECLINED: no ledger mark."


def _agent(facts: dict[str, str], model: Any, tools: list[Any]) -> Agent:
    return Agent(provider=mock(respond=model), system="You check ledgers.", tools=tools, max_iterations=ITERATIONS,
                 context=[define_fact(id=name, data=text) for name, text in facts.items()])


async def long_pair() -> tuple[Any, Any]:
    good = {f"fact-{k}": f"value {k} of the ledger, entry {k * 7}" for k in range(12)}
    good["mark"] = f"The ledger holds {MARKER}."
    bad = {**{name: text for name, text in good.items() if name not in ("fact-0", "fact-1")},
           "fact-2": "value two, changed", "fact-3": "value three, changed", "extra": "an added note",
           "mark": "The ledger holds no mark."}
    return (await _agent(good, long_model, [LOOKUP]).run("Check the ledger."),
            await _agent(bad, long_model, [LOOKUP]).run("Check the ledger."))


def scripted_pair(cause_at: int) -> tuple[dict[str, str], dict[str, str]]:
    """Facts of a good and a bad run with 20 differences: 7 changed (the marker's fact among them, ``cause_at``-th),
    7 removed from the bad run, 6 added to it."""
    good: dict[str, str] = {}
    bad: dict[str, str] = {}
    changed = [f"changed-{k}" for k in range(6)]
    changed.insert(cause_at % 7, "mark")
    for name in changed:
        good[name] = f"The ledger holds {MARKER}." if name == "mark" else f"{name}: first text"
        bad[name] = "The ledger holds no mark." if name == "mark" else f"{name}: second text"
    for k in range(7):
        good[f"removed-{k}"] = f"a note only the good run had ({k})"
    for k in range(6):
        bad[f"added-{k}"] = f"a note only the bad run had ({k})"
    return good, bad


async def explained(cause_at: int) -> tuple[list[str], int, int]:
    good_facts, bad_facts = scripted_pair(cause_at)
    good = await _agent(good_facts, answer_model, []).run("Check the ledger.")
    bad = await _agent(bad_facts, answer_model, []).run("Check the ledger.")
    found = await explain_difference(good, bad, replay=mock(respond=answer_model), progress=False)
    return found.confirmed, found.reruns, len(found.tested) + len(found.untested)


async def real_pair(url: str) -> tuple[Any, Any, str] | None:
    """The first planted-fact variant the model answers from its fact at temperature 0, as a good and a bad run."""
    from footprint_lab.examples.truth import PLACES, REAL_SYSTEM, planted_context, served
    from footprint_lab.explain.compare import Mentions

    for variant in range(6):
        order, city, context = planted_context(variant)
        other = PLACES[(variant + 3) % len(PLACES)][1]
        good_facts = {piece.id: piece.text for piece in context}
        bad_facts = dict(good_facts)
        bad_facts["where"] = good_facts["where"].replace(city, other)
        benign = [name for name in good_facts if name != "where"]
        bad_facts[benign[0]] = good_facts[benign[0]].rstrip(".") + ", as noted."
        del bad_facts[benign[1]]
        bad_facts["note-extra"] = "The office closes at six on Fridays."
        provider = served(url, 0.0)
        good = await Agent(provider=provider(), system=REAL_SYSTEM,
                           context=[define_fact(id=k, data=v) for k, v in good_facts.items()]).run(
            f"Where is order {order}?")
        bad = await Agent(provider=provider(), system=REAL_SYSTEM,
                          context=[define_fact(id=k, data=v) for k, v in bad_facts.items()]).run(
            f"Where is order {order}?")
        mentions = Mentions(city)
        if good.answer and bad.answer and city in good.answer and city not in bad.answer:
            found = await explain_difference(good, bad, replay=provider(), comparator=mentions, progress=False)
            return found, len(found.tested) + len(found.untested), city
    return None


def real(report: Report) -> None:
    from footprint_lab.examples.local_model import start_server, stop_server

    server = start_server("patient")
    try:
        result = asyncio.run(real_pair(server.url))
    finally:
        stop_server(server)
    if result is None:
        report.add("explain_difference on the real model: pairs it can answer", [0.0], unit="pairs",
                   goal="(reference)", note="none of 6 variants")
        return
    found, differences, _ = result
    met = found.confirmed == ["restore fact 'where'"] and found.reruns <= 48
    report.add("explain_difference: the changed fact on the real model (replay, temperature 0)",
               [float(found.reruns)], unit="reruns", size=f"{differences} differences, SmolLM2-135M",
               goal="that fact confirmed, nothing else, <= 48 reruns", met=met,
               note=f"confirmed {found.confirmed}")


def main() -> None:
    args = options(__doc__ or "", ("--scripted-only", "leave the real model out"))
    report = Report("difference", args)
    good, bad = asyncio.run(long_pair())
    assert len(good.recording.exchanges) == ITERATIONS and len(bad.recording.exchanges) == ITERATIONS
    repeats = 5 if args.quick else 21
    samples = samples_ms(lambda: compare_runs(good, bad), repeats)
    report.add("compare_runs of two 50-iteration runs", samples, size=f"{ITERATIONS} calls a run",
               goal="<= 100 ms", met=statistics.median(samples) <= 100)
    found = compare_runs(good, bad)
    size = len(found._repr_mimebundle_()["text/html"].encode("utf-8"))
    report.add("view of that difference (text/html)", [size / 1000], unit="kB", size=f"{len(found.rows())} rows",
               goal="< 200 kB", met=size < 200_000)
    variants = range(3 if args.quick else 7)
    results = [asyncio.run(explained(k)) for k in variants]
    reruns = [float(spent) for _, spent, _ in results]
    exact = sum(1 for confirmed, spent, _ in results if confirmed == ["restore fact 'mark'"] and spent <= 48)
    report.add("explain_difference: one changed fact among 20 differences (replay, scripted)", reruns,
               unit="reruns", size=f"{results[0][2]} differences, {len(results)} places of the fact",
               goal="that fact confirmed, nothing else, <= 48 reruns", met=exact == len(results),
               note=f"{exact}/{len(results)} variants met it")
    if not args.quick and not args.scripted_only:
        real(report)
    report.close()


if __name__ == "__main__":
    main()
