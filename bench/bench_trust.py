"""Trust benchmark (issue 19): what sealing costs a run, and how fast a long recording verifies.

Scenarios, medians over many samples:

1. A 5-iteration run (five rounds of one ``noop`` tool call, then ``final``, mock provider), its
   recording built, without and with ``Agent(..., seal=True)``, samples interleaved. Figures: the
   wall time of each, the seal's share of the run (goal: at most 5%), and the run alone
   (``agent.run`` without touching ``run.recording``), which the seal does not touch since the
   seal is made when the recording is first built.
2. ``verify`` on a sealed recording of a run of at least 10,000 steps (goal: at most 100 ms).
3. ``lint_tools`` on a catalog of 500 tools in the MCP shape, each with two parameters, drawn from
   a few dozen words so many pairs share words (goal: at most 1 s).

Run ``python bench/bench_trust.py`` (``--quick`` only checks it runs, on small sizes; ``--results``
appends the rows for ``bench/run_all.py``).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

from _kit import Report, median, options, samples_ms

from footprint_lab import Agent, define_tool, lint_tools, seal, verify
from footprint_lab.providers import mock

SEAL_GOAL = 0.05
VERIFY_GOAL_MS = 100.0
LINT_GOAL_MS = 1000.0
VERBS = ("get", "list", "search", "update", "create", "cancel", "refund", "track")
NOUNS = ("order", "invoice", "customer", "shipment", "product", "ticket", "payment", "review", "coupon", "return")


def agent(iterations: int, *, sealed: bool) -> Agent:
    noop = define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")
    script: list[Any] = [{"tool": "noop", "args": {}}] * iterations + ["final"]
    return Agent(provider=mock(replies=script), tools=[noop], max_iterations=iterations + 1, seal=sealed)


def timed(work: Callable[[], Any]) -> float:
    gc.collect()
    started = time.perf_counter_ns()
    work()
    return (time.perf_counter_ns() - started) / 1e6


def seal_cost(repeats: int) -> dict[str, float]:
    plain: list[float] = []
    sealed: list[float] = []
    bare: list[float] = []
    for _ in range(repeats):
        for flag, samples in ((False, plain), (True, sealed)):
            runner = agent(5, sealed=flag)
            samples.append(timed(lambda runner=runner: runner.run_sync("go").recording))  # type: ignore[misc]
        runner = agent(5, sealed=True)
        bare.append(timed(lambda runner=runner: runner.run_sync("go")))  # type: ignore[misc]
    base, with_seal = statistics.median(plain), statistics.median(sealed)
    return {"plain_ms": base, "sealed_ms": with_seal, "share": with_seal / base - 1,
            "run_only_ms": statistics.median(bare)}


def verify_long(steps: int, repeats: int) -> tuple[int, list[float]]:
    iterations = steps // 3 + 1  # each iteration records about three steps
    recording = seal(agent(iterations, sealed=False).run_sync("go").recording)
    assert verify(recording).holds
    return len(recording.steps), samples_ms(lambda: verify(recording), repeats)


def catalog(size: int) -> dict[str, Any]:
    tools = []
    for n in range(size):
        verb, noun, other = VERBS[n % len(VERBS)], NOUNS[n % len(NOUNS)], NOUNS[(n * 7) % len(NOUNS)]
        tools.append({"name": f"{verb}_{noun}_{n}", "description": f"Returns the {noun} records linked to a {other}, "
                      f"variant {n}.", "inputSchema": {"type": "object", "properties": {
                          f"{noun}_id": {"type": "string", "description": f"The {noun} id."},
                          "mode": {"type": "string", "description": "one of fast, full or audit"}}}})
    return {"tools": tools}


def lint_ms(size: int, repeats: int) -> tuple[list[float], int]:
    tools = catalog(size)
    found = len(lint_tools(tools))
    return samples_ms(lambda: lint_tools(tools), repeats), found


def main() -> None:
    args = options(__doc__.splitlines()[0])
    quick = args.quick
    report = Report("trust", args)
    cost = seal_cost(5 if quick else 200)
    report.add("5-iteration run + recording, seal=True", [cost["sealed_ms"]], size="5 iterations",
               goal=f"<= {SEAL_GOAL:.0%} over plain", met=cost["share"] <= SEAL_GOAL, peer="same run, seal=False",
               peer_samples=[cost["plain_ms"]], ratio=cost["sealed_ms"] / cost["plain_ms"],
               note=f"agent.run alone with seal=True: {cost['run_only_ms']:.2f} ms (sealed when the recording "
                    "is built)")
    steps, verify_samples = verify_long(200 if quick else 10_000, 3 if quick else 5)
    report.add("verify a sealed recording", verify_samples, size=f"{steps} steps", goal=f"<= {VERIFY_GOAL_MS:.0f} ms",
               met=median(verify_samples) <= VERIFY_GOAL_MS)
    size = 50 if quick else 500
    lint_samples, found = lint_ms(size, 3 if quick else 7)
    report.add("lint_tools", lint_samples, size=f"{size} tools, {found} findings", goal=f"<= {LINT_GOAL_MS:.0f} ms",
               met=median(lint_samples) <= LINT_GOAL_MS)
    report.close()


if __name__ == "__main__":
    main()
