"""Compositions benchmark: fan-out, 1,000 overlapping runs with distinct identities, per-member overhead.

Scenarios (issue 4), every member an Agent on the mock provider that calls one ``whoami`` tool
and then answers, recording on:

1. A ``Parallel`` of 100 such agents: median wall time of one run, and per member.
2. 1,000 runs of one ``Sequence`` (two members) in flight at once, each for a distinct
   identity. Every tool call checks ``ctx.identity`` against the identity of the run it
   belongs to and reads the run's memory namespace; any mismatch is a cross-identity read.
   Afterwards the member-run registry must be empty.
3. Recording overhead per member (goal: within 2x a lone Agent run): a Sequence's and the
   Parallel's median time divided by their members, against a lone run of the same agent;
   and the 1,000 overlapping runs per member, against as many lone agent runs at once.

Run ``python bench/bench_flow.py`` (``--quick`` only checks that it runs).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from footprint_lab import Agent, Identity, Parallel, Sequence, ToolContext, tool
from footprint_lab.core.member_run import open_run_count
from footprint_lab.providers import LLMRequest, mock


class Checks:
    """What the tools saw: every (run id, identity) pair, the memory they read, the peak of open runs."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Identity | None]] = []
        self.memory: dict[str, list[str]] = {}
        self.foreign_reads = 0
        self.peak_open = 0


def clerk(checks: Checks) -> Agent:
    @tool
    async def whoami(ctx: ToolContext) -> str:
        """Say who is asking, from this run's own memory."""
        namespace = ctx.memory_identity.namespace()
        notes = checks.memory.setdefault(namespace, [])
        notes.append(ctx.run_id)
        await asyncio.sleep(0)  # let the other runs interleave here
        checks.foreign_reads += sum(1 for note in notes if note != ctx.run_id)
        checks.seen.append((ctx.run_id, ctx.identity))
        checks.peak_open = max(checks.peak_open, open_run_count())
        return ctx.identity.principal if ctx.identity is not None else "nobody"

    def respond(request: LLMRequest) -> Any:
        last = request.messages[-1]
        return {"tool": "whoami", "args": {}} if last["role"] == "user" else f"served {last['content']}"

    return Agent(provider=mock(respond=respond), tools=[whoami], system="You are a careful clerk.")


async def median_ms(make_run: Any, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter_ns()
        await make_run()
        samples.append((time.perf_counter_ns() - started) / 1e6)
    return statistics.median(samples)


async def per_member_ratio(make_composition: Any, members: int, repeats: int) -> tuple[float, float, float]:
    """Median of a lone run, of a composition run, and the composition's time per member over the lone run."""
    lone = clerk(Checks())
    composition = make_composition(clerk(Checks()))
    await median_ms(lambda: lone.run("warm up"), 20)
    await median_ms(lambda: composition.run("warm up"), 3)
    lone_ms = await median_ms(lambda: lone.run("hello"), repeats)
    composed_ms = await median_ms(lambda: composition.run("hello"), max(5, repeats * 4 // members))
    return lone_ms, composed_ms, composed_ms / members / lone_ms


async def overlapping_runs(count: int) -> tuple[float, int, int, int]:
    """``count`` runs of one Sequence at once, each for its own identity: time, cross-identity reads, peak, calls."""
    checks = Checks()
    member = clerk(checks)
    pair = Sequence({"first": member, "second": member})
    identities = [Identity(tenant=f"tenant-{n % 7}", principal=f"user-{n}") for n in range(count)]
    started = time.perf_counter_ns()
    runs = await asyncio.gather(*(pair.run(f"request {n}", identity=who) for n, who in enumerate(identities)))
    elapsed_ms = (time.perf_counter_ns() - started) / 1e6
    owner = {run.run_id: who for run, who in zip(runs, identities, strict=True)}
    cross_identity = sum(1 for run_id, who in checks.seen if owner[run_id] != who) + checks.foreign_reads
    return elapsed_ms, cross_identity, checks.peak_open, len(checks.seen)


async def overlapping_lone_runs(count: int) -> float:
    """``count`` lone agent runs at once (one instance each: an instance answers one turn at a time): time."""
    template = clerk(Checks())
    agents = [Agent(provider=template.provider, tools=template.tools, system=template.system) for _ in range(count)]
    identities = [Identity(principal=f"user-{n}") for n in range(count)]
    started = time.perf_counter_ns()
    await asyncio.gather(*(a.run(f"request {n}", identity=who) for n, (a, who) in enumerate(zip(agents, identities,
                                                                                              strict=True))))
    return (time.perf_counter_ns() - started) / 1e6


async def main(quick: bool) -> None:
    repeats = 20 if quick else 600
    overlapping = 50 if quick else 1000
    width = 3
    lone_ms, chain_ms, chain_ratio = await per_member_ratio(
        lambda member: Sequence({f"step-{n}": member for n in range(1, width + 1)}), width, repeats)
    _, fan_ms, fan_ratio = await per_member_ratio(
        lambda member: Parallel({f"agent-{n}": member for n in range(100)}, merge=lambda a: f"{len(a)} answers"),
        100, repeats)
    burst_ms, cross_identity, peak_open, calls = await overlapping_runs(overlapping)
    assert calls == 2 * overlapping, "every member's tool ran once"
    lone_burst_ms = await overlapping_lone_runs(2 * overlapping)
    burst_ratio = (burst_ms / (2 * overlapping)) / (lone_burst_ms / (2 * overlapping))

    print(f"lone agent run (1 tool call), median:   {lone_ms:.3f} ms")
    print(f"Sequence of {width}, median:                {chain_ms:.3f} ms   per member {chain_ms / width:.3f} ms "
          f"= {chain_ratio:.2f}x a lone run (goal <= 2x)")
    print(f"Parallel of 100 agents, median:         {fan_ms:.1f} ms    per member {fan_ms / 100:.3f} ms "
          f"= {fan_ratio:.2f}x a lone run (goal <= 2x)")
    print(f"{overlapping} overlapping Sequence runs (2 members, distinct identities): {burst_ms:.0f} ms in all, "
          f"{burst_ms / overlapping:.3f} ms a run; peak open runs {peak_open}")
    print(f"  per member {burst_ms / (2 * overlapping):.3f} ms against {2 * overlapping} lone agent runs at once, "
          f"{lone_burst_ms / (2 * overlapping):.3f} ms each: {burst_ratio:.2f}x (goal <= 2x)")
    print(f"cross-identity reads: {cross_identity} (goal 0) over {calls} tool calls")
    print(f"member-run registry after: {open_run_count()} open (goal 0)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="only check that the benchmark runs")
    asyncio.run(main(parser.parse_args().quick))
