"""What every benchmark shares: timing samples, the row each scenario reports, the machine.

Each ``bench_*.py`` takes ``--quick`` (smaller sizes, few samples: only checks that it runs) and
``--results PATH`` (append one JSON line per scenario there; ``bench/run_all.py`` passes it and
writes ``bench/RESULTS.md`` from the lines). A row carries the samples' median, min and max, the
goal in words, whether it was met, and, when the scenario is compared with a peer or a baseline,
the peer's median and the ratio, both measured in the same process so that the load of a shared
machine weighs on both sides alike.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any


def options(description: str, *flags: tuple[str, str]) -> argparse.Namespace:
    """The shared options, and each of ``flags`` (``("--name", "help")``) as a switch of this benchmark's own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="smaller sizes and few samples: only checks it runs")
    parser.add_argument("--results", help="append one JSON line per scenario to this file")
    for name, text in flags:
        parser.add_argument(name, action="store_true", help=text)
    return parser.parse_args()


def samples_ms(action: Callable[[], Any], repeats: int) -> list[float]:
    """Wall time of each call, in ms; each sample starts from a collected heap (the collector stays on)."""
    samples = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter_ns()
        result = action()
        samples.append((time.perf_counter_ns() - started) / 1e6)
        del result
    return samples


async def samples_async_ms(action: Callable[[], Awaitable[Any]], repeats: int) -> list[float]:
    """:func:`samples_ms` for a coroutine function, awaited in the running loop."""
    samples = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter_ns()
        result = await action()
        samples.append((time.perf_counter_ns() - started) / 1e6)
        del result
    return samples


def awaited_ms(action: Callable[[], Awaitable[Any]], repeats: int) -> list[float]:
    """Samples of ``await action()`` taken inside one event loop (the awaited spelling of a run)."""
    return asyncio.run(samples_async_ms(action, repeats))


def interleaved_ms(rounds: int, batch: int, *, collect: bool = False, clock: Callable[[], int] = time.perf_counter_ns,
                   **blocks: Callable[[int], None]) -> dict[str, list[float]]:
    """Per-call ms of each named action, timed in blocks of ``batch`` calls, the blocks taking turns.

    For ratios between spellings of one run: on a shared machine the load changes from one
    second to the next, and blocks that alternate meet the same load, where two long series
    one after the other would not; short blocks (a few ms) are also less often cut by the
    scheduler, whose pauses a long block would count as its own time. Each block gives one
    sample (its mean per call). With ``collect``, each block starts from a collected heap, so
    that no side pays for the garbage the other left (a peer that allocates much more would
    otherwise hand its collections to the next block). Wall time by default: the peer hands its
    model function to a worker thread and waits, which a user waits for too; where everything
    runs on this thread (our runs on the mock provider), ``clock=time.thread_time_ns`` times
    what the blocks cost, without the time a busy machine gave to other processes.
    """
    samples: dict[str, list[float]] = {name: [] for name in blocks}
    order = list(blocks.items())
    for round_ in range(rounds):
        # each round starts one further along, so no action always follows the same other one
        shift = round_ % len(order)
        for name, block in order[shift:] + order[:shift]:
            if collect:
                gc.collect()
            started = clock()
            block(batch)
            samples[name].append((clock() - started) / 1e6 / batch)
    return samples


def awaited_block(loop: asyncio.AbstractEventLoop, action: Callable[[], Awaitable[Any]]) -> Callable[[int], None]:
    """A block of ``await action()`` calls made inside one coroutine on ``loop``."""

    async def calls(count: int) -> None:
        for _ in range(count):
            await action()

    return lambda count: loop.run_until_complete(calls(count))


def called_block(action: Callable[[], Any]) -> Callable[[int], None]:
    """A block of ``action()`` calls from plain code."""

    def calls(count: int) -> None:
        for _ in range(count):
            action()

    return calls


def machine() -> dict[str, Any]:
    return {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(terse=True)}


@dataclass
class Row:
    area: str
    scenario: str
    size: str
    unit: str
    median: float
    min: float
    max: float
    goal: str
    met: bool | None
    peer: str = ""
    peer_median: float | None = None
    ratio: float | None = None
    note: str = ""
    machine: dict[str, Any] = field(default_factory=machine)


class Report:
    """The rows of one benchmark file: printed as they come, written to ``--results`` at the end."""

    def __init__(self, area: str, args: argparse.Namespace) -> None:
        self.area = area
        self.path: str | None = args.results
        self.rows: list[Row] = []

    def add(self, scenario: str, samples: list[float], *, size: str = "", unit: str = "ms", goal: str = "",
            met: bool | None = None, peer: str = "", peer_samples: list[float] | None = None,
            ratio: float | None = None, note: str = "") -> Row:
        peer_median = statistics.median(peer_samples) if peer_samples else None
        row = Row(self.area, scenario, size, unit, statistics.median(samples), min(samples), max(samples), goal, met,
                  peer, peer_median, ratio, note)
        self.rows.append(row)
        verdict = "" if met is None else ("  [met]" if met else "  [MISSED]")
        shown = f"  {self.area} | {scenario} ({size}): median {row.median:.4g} {unit} (min {row.min:.4g}, " \
                f"max {row.max:.4g})"
        if peer_median is not None:
            shown += f"; {peer}: {peer_median:.4g} {unit}"
        if ratio is not None:
            shown += f"; ratio {ratio:.2f}x"
        print(f"{shown}; goal {goal or '-'}{verdict}{'  ' + note if note else ''}", flush=True)
        return row

    def close(self) -> None:
        if self.path:
            with open(self.path, "a", encoding="utf-8") as out:
                for row in self.rows:
                    out.write(json.dumps(asdict(row)) + "\n")


def median(samples: list[float]) -> float:
    return statistics.median(samples)
