"""Agent benchmark: every spelling of a recorded run against pydantic-ai, run_sync's cost, repr, linear growth.

Scenarios (issues 2 and 13), full recording on, one process:

- (these first two timed in short interleaved blocks, see ``_kit.interleaved_ms``)
- a 1-turn run and a 5-iteration scripted run (four rounds of one ``noop`` tool call, then
  ``final``), each awaited (``await agent.run``, inside one event loop) and through
  ``agent.run_sync`` (from plain code), side by side with pydantic-ai's ``Agent`` on a
  ``FunctionModel`` scripted the same way and called the same way: goal at least 30x faster
  (each side in blocks of about 15 ms from a collected heap, taking turns: see ``_lasting``);
- ``run_sync`` against the awaited run: goal at most 1.3x;
- ``repr(run)`` and ``str(run)`` of a finished 1,000-iteration run whose recording was never
  asked for: goal at most 20 µs each (asyncio and IPython call ``repr`` on every result);
- 100 / 1,000 / 10,000 iterations (the cap) through ``run_sync``: each 10x step at most 12x;
- ``import footprint_lab`` over bare python: goal at most 100 ms.

The peer comes from the optional ``bench`` extra (``pydantic-ai-slim``); without it the peer
rows are skipped and said so. Run ``python bench/bench_agent.py`` (``--quick`` only checks it runs).
"""

from __future__ import annotations

import asyncio
import gc
import resource
import statistics
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from _kit import Report, awaited_block, called_block, interleaved_ms, options, samples_ms

from footprint_lab import Agent, define_tool
from footprint_lab.providers import mock


def noop_tool() -> Any:
    return define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")


def scripted(iterations: int) -> Agent:
    """``iterations - 1`` rounds of one ``noop`` call, then ``final``."""
    replies: list[Any] = [{"tool": "noop", "args": {}}] * (iterations - 1) + ["final"]
    return Agent(provider=mock(replies=replies), tools=[noop_tool()], max_iterations=iterations,
                 system="You are a careful assistant.")


def _peer_version() -> str:
    try:
        return version("pydantic-ai-slim")
    except PackageNotFoundError:
        return "(not installed)"


#: the peer's release: its speed moves with it (2.31.1, which pip picks beside the other frameworks' openai,
#: runs a 5-iteration run in about 6.4 ms on this machine), so every ratio names it
PEER_VERSION = _peer_version()


def peer(iterations: int) -> Any:
    """pydantic-ai's Agent on a FunctionModel scripted like :func:`scripted`, or ``None`` without it."""
    try:
        from pydantic_ai import Agent as PeerAgent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel
    except ImportError:
        return None

    def respond(messages: list[Any], info: Any) -> Any:
        calls = sum(isinstance(message, ModelResponse) for message in messages)
        if calls < iterations - 1:
            return ModelResponse(parts=[ToolCallPart("noop", {})])
        return ModelResponse(parts=[TextPart("final")])

    agent = PeerAgent(FunctionModel(respond), system_prompt="You are a careful assistant.")

    @agent.tool_plain
    def noop() -> str:
        """Does nothing."""
        return "ok"

    return agent


def import_ms(repeats: int) -> list[float]:
    """``python -c 'import footprint_lab'`` minus ``python -c pass``, per pair of runs, in the
    children's CPU time (user + system): on a loaded machine their wall time is mostly waiting."""

    def once(code: str) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000

    return [once("import footprint_lab") - once("pass") for _ in range(repeats)]


def spellings(report: Report, iterations: int, rounds: int) -> None:
    ours, theirs = scripted(iterations), peer(iterations)
    label = "1-turn run" if iterations == 1 else f"{iterations}-iteration run"
    loop = asyncio.new_event_loop()
    blocks = {"awaited": awaited_block(loop, lambda: ours.run("go")),
              "run_sync": called_block(lambda: ours.run_sync("go"))}
    interleaved_ms(20, 10, **blocks)  # warm both paths and the caches
    ours_ms = interleaved_ms(rounds * 10, 10 if iterations == 1 else 3, **blocks)
    awaited, synced = ours_ms["awaited"], ours_ms["run_sync"]
    ratio = statistics.median(synced) / statistics.median(awaited)
    report.add(f"{label}, run_sync vs awaited", synced, size=f"{iterations} iter", goal="<= 1.3x the awaited run",
               met=ratio <= 1.3, peer="awaited run", peer_samples=awaited, ratio=ratio,
               note="wall time of short blocks of runs, the two spellings taking turns")
    if theirs is None:
        print("  pydantic-ai is not installed (pip install 'footprint_lab[bench]'): peer rows skipped")
        return
    peer_blocks = {"awaited": awaited_block(loop, lambda: theirs.run("go")),
                   "run_sync": called_block(lambda: theirs.run_sync("go"))}
    interleaved_ms(1, 3, **peer_blocks)
    sides = {**{f"ours {name}": block for name, block in blocks.items()},
             **{f"peer {name}": block for name, block in peer_blocks.items()}}
    sized = {name: _lasting(block) for name, block in sides.items()}
    timed = {name: (lambda _, block=block, runs=runs: block(runs)) for name, (block, runs) in sized.items()}
    both = interleaved_ms(max(3, rounds * 2), 1, collect=True, **timed)
    for spelling in ("awaited", "run_sync"):
        (_, ours_runs), (_, peer_runs) = sized[f"ours {spelling}"], sized[f"peer {spelling}"]
        mine = [ms / ours_runs for ms in both[f"ours {spelling}"]]
        theirs_ms = [ms / peer_runs for ms in both[f"peer {spelling}"]]
        ratio = statistics.median(theirs_ms) / statistics.median(mine)
        report.add(f"{label}, {spelling}", mine, size=f"{iterations} iter", goal=">= 30x faster than the peer",
                   met=ratio >= 30, peer=f"pydantic-ai {spelling}", peer_samples=theirs_ms, ratio=ratio,
                   note=f"wall time of blocks of about {BLOCK_MS:.0f} ms from a collected heap ({ours_runs} of ours, "
                        f"{peer_runs} of the peer's), taking turns; the peer is pydantic-ai-slim {PEER_VERSION}")
    loop.close()


#: how long each side's block of runs lasts, so both meet the same cold start after a collection
BLOCK_MS = 15.0


def _lasting(block: Any) -> tuple[Any, int]:
    """``block`` with how many runs make about :data:`BLOCK_MS` of it (at least 5).

    Every block starts from a collected heap, and a full collection of a process holding the
    peer walks about 100,000 objects and leaves the caches cold: a block of five of our runs
    (half a millisecond) paid that cold start about five times over per run, where a block of
    the peer's (15 ms) spread it thin. Blocks of the same length put both sides on equal terms.
    """
    gc.collect()
    started = time.perf_counter_ns()
    block(5)
    per_run = (time.perf_counter_ns() - started) / 1e6 / 5
    return block, max(5, round(BLOCK_MS / max(per_run, 1e-3)))


def display(report: Report, iterations: int, repeats: int) -> None:
    run = scripted(iterations).run_sync("go")
    batch = 1000
    for name, show in (("repr", repr), ("str", str)):
        def shown(show: Any = show) -> None:
            for _ in range(batch):
                show(run)

        micro = [ms * 1000 / batch for ms in samples_ms(shown, repeats)]  # µs per call, timed in batches
        report.add(f"{name}(run), recording never built", micro, size=f"{iterations} iter", unit="µs",
                   goal="<= 20 µs", met=statistics.median(micro) <= 20)
    assert run._recording is None, "repr or str built the recording"


def growth(report: Report, sizes: tuple[int, ...], rounds: int) -> None:
    """Each size run once per round, the sizes taking turns; timed on this thread's CPU clock.

    A 10,000-iteration run takes seconds, long enough for a loaded shared machine's scheduler
    to hand much of it to other processes: wall time then measures the load, not the growth.
    The run is all on this thread (``run_sync`` from plain code), so its CPU time is the cost.
    The clock stops when ``run_sync`` returns: the caller then holds the run, and taking it apart
    (tens of thousands of objects at 10,000 iterations) happens whenever the caller lets it go,
    reported on its own row.
    """
    agents = {size: scripted(size) for size in sizes}
    for agent in agents.values():
        agent.run_sync("go")
    samples: dict[int, list[float]] = {size: [] for size in sizes}
    released: dict[int, list[float]] = {size: [] for size in sizes}
    for _ in range(rounds):
        for size, agent in agents.items():
            gc.collect()
            started = time.thread_time_ns()
            run = agent.run_sync("go")
            samples[size].append((time.thread_time_ns() - started) / 1e6)
            started = time.thread_time_ns()
            del run  # the last reference: the run is taken apart here, outside the call's time
            released[size].append((time.thread_time_ns() - started) / 1e6)
    previous: list[float] | None = None
    for size in sizes:
        note = "CPU time of this thread, sizes taking turns"
        if previous is None:
            report.add("run_sync, long run", samples[size], size=f"{size} iter", goal="each 10x step <= 12x", note=note)
        else:
            ratio = statistics.median(samples[size]) / statistics.median(previous)
            report.add("run_sync, long run", samples[size], size=f"{size} iter", goal="each 10x step <= 12x",
                       met=ratio <= 12, peer=f"{size // 10} iter", peer_samples=previous, ratio=ratio, note=note)
        previous = samples[size]
    for size in sizes:
        report.add("letting go of a long run (reference)", released[size], size=f"{size} iter",
                   note="CPU time of taking the run apart once its last reference goes, paid when the caller "
                        "drops it; not part of the call's time above")


def main() -> None:
    args = options(__doc__ or "")
    report = Report("agent", args)
    rounds = 3 if args.quick else 21
    spellings(report, 1, rounds)
    spellings(report, 5, rounds)
    display(report, 100 if args.quick else 1000, 5 if args.quick else 30)
    growth(report, (10, 100, 1000) if args.quick else (100, 1000, 10_000), 3 if args.quick else 7)
    imports = import_ms(3 if args.quick else 15)
    report.add("import footprint_lab over bare python", imports, goal="<= 100 ms", note="CPU time of the child",
               met=statistics.median(imports) <= 100)
    report.close()


if __name__ == "__main__":
    main()
