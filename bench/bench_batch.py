"""Run-set benchmark: a team's evaluation set made, saved, loaded, checked and localized, here and on a cluster.

Goals (issue 29), on the support desk's evaluation set (``footprint_lab.examples.support_desk``: refund
requests on the scripted mock model, each wrong answer caused by one planted declaration):

- the same answers locally and on a Dask cluster for every method (``run``, ``frame``,
  ``integrity``, ``suspects``, ``localize``, ``culprits``, ``compare``);
- 10,000 saved runs: ``RunSet.load`` in at most 1 s (the index only), ``frame()`` in at most 2 s,
  ``integrity`` at most 5 ms per run on one core (this process, no cluster);
- two worker processes check 2,000 saved runs at least 1.6x as fast as one (``LocalCluster`` of
  1 and 2 workers, one thread each: this machine has 2 cores), with the scaling per worker count;
- ``localize`` over 500 wrong runs on a 2-worker cluster in at most 0.6x the time of one process.

Cluster times start when the call starts and stop when its frame is back (the cluster is up
before). Run ``python bench/bench_batch.py``; ``--quick`` uses small sizes and only checks it runs.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _kit import Report, options

from footprint_lab.batch import RunSet, culprits
from footprint_lab.examples.support_desk import support_eval


def cluster(workers: int) -> tuple[Any, Any]:
    from distributed import Client, LocalCluster

    made = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                        memory_limit="2GiB")
    return made, Client(made)


def timed(action: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return (time.perf_counter() - started) * 1000, result


def same_everywhere(report: Report, count: int, client: Any, folder: Path) -> None:
    """Every method, in this process and on the cluster: the same rows."""
    desk = support_eval(count)
    here = asyncio.run(RunSet.run(desk.factory, desk.inputs, progress=False))
    there = asyncio.run(RunSet.run(desk.factory, desk.inputs, client=client, progress=False))
    kept = ["input", "answer", "status", "error", "tokens", "members"]
    checks = {"run (answers, status, tokens)": here.frame()[kept].equals(there.frame()[kept])}
    saved = RunSet.load(here.save(folder / "same"))
    checks["frame"] = saved.frame().equals(here.frame())
    checks["integrity"] = saved.integrity(client=client, progress=False).equals(here.integrity(progress=False))
    checks["suspects"] = saved.suspects(client=client, progress=False).equals(here.suspects(progress=False))
    settings = {"rerun": desk.factory, "where": desk.wrong, "comparator": desk.comparator, "progress": False}
    local = asyncio.run(here.localize(**settings))
    remote = asyncio.run(saved.localize(client=client, **settings))
    checks["localize"] = local.equals(remote)
    checks["culprits"] = culprits(local).equals(culprits(remote))
    checks["compare"] = str(here.compare(there, desk.correct)) == str(saved.compare(there, desk.correct))
    for method, same in checks.items():
        report.add(f"same rows here and on the cluster: {method}", [1.0 if same else 0.0], size=f"{count} inputs",
                   unit="same", goal="the same", met=same)


def at_scale(report: Report, count: int, folder: Path) -> None:
    """``count`` saved runs: load (index only), frame, integrity in this process."""
    desk = support_eval(count)
    made = asyncio.run(RunSet.run(desk.factory, desk.inputs, progress=False))
    made.save(folder / "many")
    del made
    size = f"{count:,} saved runs"
    loads, frames = [], []
    loaded = None
    for _ in range(5):
        took, loaded = timed(lambda: RunSet.load(folder / "many"))
        loads.append(took)
        frames.append(timed(loaded.frame)[0])
    report.add("RunSet.load (the index only)", loads, size=size, goal="<= 1 s", met=statistics.median(loads) <= 1000)
    report.add("frame()", frames, size=size, goal="<= 2 s", met=statistics.median(frames) <= 2000)
    assert loaded is not None
    took = [timed(lambda: loaded.integrity(progress=False))[0] / count for _ in range(2)]
    report.add("integrity per run, one core (recording read and checked)", took, size=size, unit="ms/run",
               goal="<= 5 ms per run", met=statistics.median(took) <= 5)


def scaling(report: Report, count: int, folder: Path) -> None:
    """``integrity`` over ``count`` saved runs on clusters of 1 and 2 worker processes."""
    desk = support_eval(count, seed=1)
    saved = RunSet.load(asyncio.run(RunSet.run(desk.factory, desk.inputs, progress=False)).save(folder / "scale"))
    medians: dict[int, float] = {}
    busiest: dict[int, float] = {}
    for workers in (1, 2):
        made, client = cluster(workers)
        try:
            saved.integrity(client=client, progress=False)  # warm: each worker imports footprint_lab once
            before = client.run(time.process_time)
            samples = [timed(lambda c=client: saved.integrity(client=c, progress=False))[0] for _ in range(3)]
            after = client.run(time.process_time)
            busiest[workers] = max(after[w] - before[w] for w in after)
        finally:
            client.close()
            made.close()
        medians[workers] = statistics.median(samples)
        report.add(f"integrity on a cluster of {workers} worker(s)", samples, size=f"{count:,} saved runs",
                   goal="(reference)", note=f"{1000 * count / medians[workers]:.0f} runs/s")
    speedup = medians[1] / medians[2]
    report.add("2 workers against 1: speedup", [speedup], size=f"{count:,} saved runs", unit="x", goal=">= 1.6x",
               met=speedup >= 1.6, ratio=speedup,
               note=f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    report.add("2 workers against 1: the lone worker's CPU time over the busiest of two's", [busiest[1] / busiest[2]],
               size=f"{count:,} saved runs", unit="x", goal="(reference: the speedup when both cores are free)")


def localize_on_cluster(report: Report, wrong_wanted: int, client: Any, folder: Path, rounds: int) -> None:
    """``localize`` over ``wrong_wanted`` wrong runs: one process against a 2-worker cluster."""
    desk = support_eval(int(wrong_wanted * 3.4) + 20, seed=2)
    made = asyncio.run(RunSet.run(desk.factory, desk.inputs, progress=False))
    wrong = [s.run_id for s in made.summaries() if desk.wrong(s)][:wrong_wanted]
    saved = RunSet.load(made.save(folder / "wrong"))
    settings = {"rerun": desk.factory, "where": wrong, "comparator": desk.comparator, "progress": False}
    size = f"{len(wrong)} wrong runs"
    here: list[float] = []
    there: list[float] = []
    cpu_shares: list[float] = []
    same = True
    for _ in range(rounds):  # the two take turns, so both meet the same load of a shared machine
        cpu = time.process_time()
        took, frame = timed(lambda: asyncio.run(saved.localize(**settings)))
        here.append(took)
        cpu = time.process_time() - cpu
        before = client.run(time.process_time)
        took, remote = timed(lambda: asyncio.run(saved.localize(client=client, **settings)))
        there.append(took)
        after = client.run(time.process_time)
        # the busiest worker's CPU time against the one process's: the wall ratio with two free cores
        cpu_shares.append(max(after[w] - before[w] for w in after) / cpu)
        same = same and frame.equals(remote)
    load = os.getloadavg()[0]
    report.add("localize in one process", here, size=size, goal="(reference)",
               note=f"{frame['run_reruns'].groupby(frame['run_id']).first().mean():.1f} reruns per run")
    ratio = statistics.median(there) / statistics.median(here)
    report.add("localize on a 2-worker cluster", there, size=size, goal="<= 0.6x one process", met=ratio <= 0.6,
               peer="one process", peer_samples=here, ratio=ratio,
               note=f"{'same table' if same else 'TABLES DIFFER'}; load average {load:.1f} on {os.cpu_count()} cores")
    report.add("localize on a 2-worker cluster: busiest worker's CPU time against one process's", cpu_shares,
               size=size, unit="x", goal="(reference: the wall ratio when both cores are free)")


def main() -> None:
    args = options(__doc__ or "")
    report = Report("batch", args)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        at_scale(report, 300 if args.quick else 10_000, folder)
        scaling(report, 200 if args.quick else 2_000, folder)
        made, client = cluster(2)
        try:
            same_everywhere(report, 40 if args.quick else 200, client, folder)
            localize_on_cluster(report, 16 if args.quick else 500, client, folder, 1 if args.quick else 2)
        finally:
            client.close()
            made.close()
    report.close()


if __name__ == "__main__":
    main()
