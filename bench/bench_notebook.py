"""Notebook sharing benchmark: a notebook holding 100 displayed 5-iteration runs.

Goals (issue 12), medians: ``load_runs`` at most 1 s, ``export`` of the 100 runs at most 2 s,
the exported file at most 5 MB, ``scrub`` (standard policy plus a key) at most 2 s. Issue 46 (low):
a run whose answer is 50 MB saves (its recording's JSON) and exports (a notebook) at most 1.5x the
answer's size, where the answer used to be written in five places.
Run ``python bench/bench_notebook.py``; ``--quick`` only checks that it runs (10 runs, 1 sample, a 5 MB answer).
"""

from __future__ import annotations

import gc
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
from _kit import Report, median, options

from footprint_lab import Agent, Redaction, tool
from footprint_lab.notebook import export, load_runs, scrub
from footprint_lab.providers import LLMRequest, mock
from footprint_lab.record.recording import RECORDING_MIME

GOALS = {"load_runs": 1000.0, "export": 2000.0, "scrub": 2000.0}
SIZE_GOAL = 5_000_000
#: what a large answer's saved recording and exported notebook may weigh, per byte of the answer
LARGE_GOAL = 1.5


@tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look an order up by its id."""
    return {"order_id": order_id, "age_days": 47, "amount": 129.0, "password": "hunter2-correct-horse"}


def five_iterations(request: LLMRequest) -> Any:
    if request.iteration < 5:
        return {"tool": "lookup_order", "args": {"order_id": f"A-{request.iteration}"}}
    return "DECLINED: the order is outside the 30-day window."


def runs(count: int) -> list[Any]:
    agent = Agent(provider=mock(respond=five_iterations), system="Refunds are allowed within 30 days.",
                  tools=[lookup_order], max_iterations=6)
    made = [agent.run_sync(f"Refund order A-{n}?") for n in range(count)]
    assert all(len(r.recording.exchanges) == 5 for r in made)
    return made


def displayed_notebook(made: list[Any], path: Path) -> Path:
    """What a notebook holds after ``display(run)`` of each run in its own cell, and saving."""
    cells = []
    for run in made:
        data = json.loads(json.dumps(run._repr_mimebundle_()))
        assert RECORDING_MIME in data
        cells.append(nbformat.v4.new_code_cell("run", outputs=[nbformat.v4.new_output("display_data", data=data)]))
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def wall_and_cpu_ms(action: Callable[[], Any], repeats: int) -> tuple[list[float], list[float]]:
    """Wall-clock and process CPU milliseconds of each call (the CPU figure shows what a busy machine adds)."""
    wall, cpu = [], []
    for _ in range(repeats):
        gc.collect()
        started, started_cpu = time.perf_counter_ns(), time.process_time_ns()
        action()
        wall.append((time.perf_counter_ns() - started) / 1e6)
        cpu.append((time.process_time_ns() - started_cpu) / 1e6)
    return wall, cpu


def main() -> None:
    args = options(__doc__.splitlines()[0])  # --quick: 10 runs, one sample: only checks that it runs
    report = Report("notebook", args)
    quick = args.quick
    count, repeats = (10, 1) if quick else (100, 5)
    policy = Redaction.standard().union(Redaction(keys=["customer"]))
    with tempfile.TemporaryDirectory() as folder:
        made = runs(count)
        shown = displayed_notebook(made, Path(folder) / "shown.ipynb")
        loaded = load_runs(shown)
        assert [r.recording for r in loaded] == [r.recording for r in made]
        figures = {
            "load_runs": wall_and_cpu_ms(lambda: load_runs(shown), repeats),
            "export": wall_and_cpu_ms(lambda: export(made, Path(folder) / "export.ipynb", title="Bench"), repeats),
            "scrub": wall_and_cpu_ms(lambda: scrub(shown, redact=policy, out=Path(folder) / "clean.ipynb"), repeats),
        }
        size = (Path(folder) / "export.ipynb").stat().st_size
        shown_size = shown.stat().st_size
    for name, (wall, cpu) in figures.items():
        report.add(name, wall, size=f"{count} displayed 5-iteration runs", goal=f"<= {GOALS[name]:.0f} ms",
                   met=median(wall) <= GOALS[name], note=f"CPU {median(cpu):.1f} ms")
    report.add("exported file", [size / 1e6], size=f"{count} runs", unit="MB", goal=f"<= {SIZE_GOAL / 1e6:.0f} MB",
               met=size <= SIZE_GOAL, note=f"displayed notebook {shown_size / 1e6:.2f} MB")
    large_answer(report, 5_000_000 if quick else 50_000_000)
    report.close()


def large_answer(report: Report, size: int) -> None:
    """A run whose answer is ``size`` characters: its recording's JSON and its exported notebook, per
    character of the answer (each is read back equal, its seal holding)."""
    from footprint_lab import load_recording, verify

    answer = ("evidence " * (size // 9 + 1))[:size]
    run = Agent(provider=mock(reply=answer), seal=True).run_sync("Say it all.")
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "run.json"
        started = time.perf_counter_ns()
        saved.write_text(run.recording.model_dump_json(), encoding="utf-8")
        save_ms = (time.perf_counter_ns() - started) / 1e6
        started = time.perf_counter_ns()
        back = load_recording(saved.read_text(encoding="utf-8"))
        load_ms = (time.perf_counter_ns() - started) / 1e6
        assert back == run.recording and verify(back).holds
        notebook = export([run], Path(folder) / "large.ipynb", title="Large")
        (loaded,) = load_runs(notebook)
        assert loaded.recording.answer == answer
        figures = {"saved recording": saved.stat().st_size / size, "exported notebook": notebook.stat().st_size / size}
    shown = f"a {size / 1e6:.0f} MB answer"
    for name, ratio in figures.items():
        report.add(f"{name}, per byte of the answer", [ratio], size=shown, unit="x", goal=f"<= {LARGE_GOAL}x",
                   met=ratio <= LARGE_GOAL,
                   note=f"saved in {save_ms:,.0f} ms, loaded in {load_ms:,.0f} ms" if name == "saved recording" else "")


if __name__ == "__main__":
    main()
