"""Foundation benchmark: the cost of a recorded run, and that it stays linear.

Scenario (issue 2): one Agent instance reused; scripted replies are four rounds of one
``noop`` tool call, then ``final``. Figures are medians over many runs, full recording on
(the capture is taken on every run; the pydantic ``Recording`` is built on first access and
is timed separately). Run ``python bench/bench_agent.py`` (``--quick`` only checks it runs).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import subprocess
import sys
import time

from footprint_lab import Agent, define_tool
from footprint_lab.providers import mock


def noop_tool() -> object:
    return define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")


async def time_runs(agent: Agent, message: str, repeats: int) -> list[float]:
    """Wall time of each run, garbage collector on; every sample starts from a collected heap
    so one sample's leftovers are not charged to the next (timeit goes further and turns the
    collector off; we keep it on, since a long run must not make it slower)."""
    samples = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter_ns()
        run = await agent.run(message)
        samples.append((time.perf_counter_ns() - started) / 1e6)
        del run
    return samples


def long_agent(iterations: int) -> Agent:
    script = [{"tool": "noop", "args": {}}] * iterations + ["final"]
    return Agent(provider=mock(replies=script), tools=[noop_tool()], max_iterations=iterations + 1,
                 system="You are a careful assistant.")


def import_time(repeats: int) -> float:
    """Median wall time of ``python -c 'import footprint_lab'`` minus that of ``python -c pass``."""

    def median_ms(code: str) -> float:
        runs = []
        for _ in range(repeats):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            runs.append((time.perf_counter() - started) * 1000)
        return statistics.median(runs)

    return median_ms("import footprint_lab") - median_ms("pass")


async def main(quick: bool) -> None:
    repeats = 20 if quick else 2000
    five = Agent(provider=mock(replies=[{"tool": "noop", "args": {}}] * 4 + ["final"]), tools=[noop_tool()],
                 system="You are a careful assistant.")
    one = Agent(provider=mock(reply="final"), system="You are a careful assistant.")
    await time_runs(five, "go", 50)
    await time_runs(one, "go", 50)
    five_ms = statistics.median(await time_runs(five, "go", repeats))
    one_ms = statistics.median(await time_runs(one, "go", repeats))
    _ = (await five.run("go")).recording  # pays the one-off pydantic import
    materialise = []
    for _ in range(5 if quick else 50):
        run = await five.run("go")
        t0 = time.perf_counter_ns()
        _ = run.recording
        materialise.append((time.perf_counter_ns() - t0) / 1e6)
    materialise_ms = statistics.median(materialise)
    small, large = (20, 200) if quick else (200, 2000)
    long_repeats = 3 if quick else 15
    small_ms = statistics.median(await time_runs(long_agent(small), "go", long_repeats))
    large_ms = statistics.median(await time_runs(long_agent(large), "go", long_repeats))
    over_bare = import_time(3 if quick else 15)
    print(f"5-iteration run, median:            {five_ms:.3f} ms   (goal <= 1 ms)")
    print(f"1-turn run, median:                 {one_ms:.3f} ms   (goal <= 0.15 ms)")
    print(f"Recording materialised (5-iter):    {materialise_ms:.3f} ms   (median; built on first access)")
    print(f"{small}-iteration run, median:        {small_ms:.1f} ms")
    print(f"{large}-iteration run, median:       {large_ms:.1f} ms   ratio {large_ms / small_ms:.1f}x "
          f"(goal <= 12x for 10x the iterations)")
    print(f"import footprint_lab over bare python: {over_bare:.1f} ms (goal <= 100 ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="only check that the benchmark runs")
    asyncio.run(main(parser.parse_args().quick))
