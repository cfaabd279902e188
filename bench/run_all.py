"""Run every benchmark (bench/bench_*.py), one after the other, and write bench/RESULTS.md.

Each benchmark runs in its own process (so one's heap and caches never weigh on the next)
with ``--results``; this collects the rows they append and writes the table: per scenario the
size, median, min and max, the goal, the peer or baseline it is compared with (measured in the
same process as the scenario) and the ratio, with the machine it ran on.

``python bench/run_all.py`` writes bench/RESULTS.md (and its rows as bench/RESULTS.jsonl);
``python bench/run_all.py bench_agent`` runs one again and replaces only its rows. ``--quick``
runs each in its quick mode and writes nowhere unless ``--out`` says where. Not part of the
test command, which runs each benchmark with ``--quick`` on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def run_benches(quick: bool, only: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    rows: list[dict[str, Any]] = []
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch) / "rows.jsonl"
        results.touch()
        for bench in sorted(HERE.glob("bench_*.py")):
            if only and bench.stem not in only:
                continue
            print(f"== {bench.name}{' --quick' if quick else ''}", flush=True)
            command = [sys.executable, str(bench), "--results", str(results), *(["--quick"] if quick else [])]
            if subprocess.run(command, cwd=HERE.parent).returncode != 0:
                failed.append(bench.name)
        rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows, failed


def figure(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    return f"{value:.3g} {unit}" if abs(value) < 100 else f"{value:,.0f} {unit}"


def table(rows: list[dict[str, Any]], quick: bool, failed: list[str]) -> str:
    machine = rows[0]["machine"] if rows else {}
    lines = [
        "# Benchmark results",
        "",
        f"Written by `python bench/run_all.py{' --quick' if quick else ''}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: {machine.get('cores')} cores, "
        f"Python {machine.get('python')}, {machine.get('platform')}. Timings on a shared machine vary 2-3x "
        "from one run to the next; each ratio compares two figures taken in the same process, one after "
        "the other, so it holds better than the medians themselves. `python bench/run_all.py NAME...` "
        "re-runs only those files and keeps the other rows as they were last measured.",
        "",
        "| area | scenario | size | median | min | max | goal | peer / baseline | its median | ratio | met |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        row = {key: value.replace("|", "\\|").replace("\n", " ") if isinstance(value, str) else value
               for key, value in row.items()}
        unit = row["unit"]
        met = {True: "yes", False: "**no**", None: ""}[row["met"]]
        ratio = f"{row['ratio']:.2f}x" if row["ratio"] is not None else ""
        lines.append(
            f"| {row['area']} | {row['scenario']} | {row['size']} | {figure(row['median'], unit)} | "
            f"{figure(row['min'], unit)} | {figure(row['max'], unit)} | {row['goal']} | {row['peer']} | "
            f"{figure(row['peer_median'], unit)} | {ratio} | {met} |"
            + (f" {row['note']}" if row["note"] else "")
        )
    if failed:
        lines += ["", f"Benchmarks that failed to run: {', '.join(failed)}."]
    missed = [row for row in rows if row["met"] is False]
    lines += ["", f"{len(rows)} scenarios, {sum(r['met'] is True for r in rows)} goals met, {len(missed)} missed."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="each benchmark in its quick mode")
    parser.add_argument("--out", help="where to write the table (default: bench/RESULTS.md, not in quick mode)")
    parser.add_argument("only", nargs="*", help="benchmark names to run (e.g. bench_agent); all by default")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONPATH", str(HERE.parent))
    rows, failed = run_benches(args.quick, args.only)
    out = args.out or (None if args.quick else str(HERE / "RESULTS.md"))
    kept = Path(out).with_suffix(".jsonl") if out else None
    if kept is not None and args.only and kept.exists():  # the other benchmarks' rows stay as they were
        ran = {row["area"] for row in rows}
        earlier = [json.loads(line) for line in kept.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = [row for row in earlier if row["area"] not in ran] + rows
        rows.sort(key=lambda row: row["area"])  # stable: each benchmark's rows in their own order
    if kept is not None:
        kept.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    text = table(rows, args.quick, failed)
    if out:
        Path(out).write_text(text, encoding="utf-8")
        print(f"wrote {out}")
    else:
        print(text)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
