"""Trust benchmark (issue 19): what sealing costs a run, and how fast a long recording verifies.

Scenarios, medians over many samples:

1. A 5-iteration run (five rounds of one ``noop`` tool call, then ``final``, mock provider), its
   recording built, without and with ``Agent(..., seal=True)``, which seals the recording as it is
   built from the finished run. Issue 43 retired the 1.3x goal a lazily computed seal was built
   for and keeps a floor: a sealed run at most 2x the same run unsealed, blocks of both interleaved
   (``interleaved_ms``), each run by an agent made for it; beside it, for reference, the same with
   one agent made once per side and run again and again, and saving the recording
   (``model_dump_json``) sealed against unsealed.
2. ``verify`` on a sealed recording of a run of at least 10,000 steps, loaded from its saved JSON
   as a reviewer would (floor, issue 43: at most 1 s); beside it, the same check on the live run's
   recording, whose records are made from the capture for the check. Then (issue 27) the same
   recording exported into a notebook (about 15-25 MB): its output checked as ``verify_file``
   checks it once the file is parsed: the recording read through the door (its records validated
   as columns, none made a model), its seal and the display digests (floor, issue 43: at most 1 s);
   and ``verify_file`` whole, reading and parsing the file included.
3. ``lint_tools`` on a catalog of 500 tools in the MCP shape, each with two parameters, drawn from
   a few dozen words so many pairs share words (goal: at most 1 s). Then on 500 and 3,000
   near-identical tools (one description, each tool's own number in its name and text, the same
   two parameters): every pair is confusable, so the lint once took n(n-1)/2 comparisons and gave
   as many findings (2,000 tools: 34 s); it now finds the pairs through an inverted index and
   reports one group (goal: 3,000 tools in at most 10 s).

Run ``python bench/bench_trust.py`` (``--quick`` only checks it runs, on small sizes; ``--results``
appends the rows for ``bench/run_all.py``).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

from _kit import Report, called_block, interleaved_ms, median, options, samples_ms

from footprint_lab import Agent, define_tool, lint_tools, load_recording, verify
from footprint_lab.notebook import export, verify_file
from footprint_lab.notebook.read import output_verdict, read_notebook
from footprint_lab.providers import mock
from footprint_lab.record.recording import RECORDING_MIME

SEALED_RUN_GOAL = 2.0
VERIFY_GOAL_MS = 1000.0
NOTEBOOK_VERIFY_GOAL_MS = 1000.0
LINT_GOAL_MS = 1000.0
NEAR_GOAL_MS = 10_000.0
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


def save_cost(repeats: int) -> dict[str, float]:
    """Median ms of a 5-iteration run saved (``model_dump_json``), unsealed and sealed, samples interleaved."""
    samples: dict[str, list[float]] = {"saved": [], "output_sealed": []}
    for _ in range(repeats):
        for flag, name in ((False, "saved"), (True, "output_sealed")):
            runner = agent(5, sealed=flag)
            samples[name].append(timed(
                lambda runner=runner: runner.run_sync("go").recording.model_dump_json()))  # type: ignore[misc]
    return {name: statistics.median(values) for name, values in samples.items()}


def verify_long(steps: int, repeats: int) -> tuple[int, list[float], list[float]]:
    iterations = steps // 3 + 1  # each iteration records about three steps
    live = agent(iterations, sealed=True).run_sync("go").recording
    loaded = load_recording(live.model_dump_json())
    assert verify(loaded).holds and verify(live).holds
    return len(loaded.steps), samples_ms(lambda: verify(loaded), repeats), samples_ms(lambda: verify(live), repeats)


def sealed_run_cost(rounds: int) -> dict[str, list[float]]:
    """Per-run ms of a 5-iteration run and its recording, unsealed and sealed, blocks interleaved: each run by an
    agent made for it, and, beside them, each by one agent made once and run again and again (the agent's
    making left out of both)."""
    plain, sealed = agent(5, sealed=False), agent(5, sealed=True)
    return interleaved_ms(rounds, 10, collect=True,
                          plain=called_block(lambda: agent(5, sealed=False).run_sync("go").recording),
                          sealed=called_block(lambda: agent(5, sealed=True).run_sync("go").recording),
                          reused_plain=called_block(lambda: plain.run_sync("go").recording),
                          reused_sealed=called_block(lambda: sealed.run_sync("go").recording))


def verify_notebook(steps: int, repeats: int, folder: str) -> dict[str, Any]:
    """A sealed recording of ``steps`` steps exported into a notebook, and what checking its output costs."""
    import os

    iterations = steps // 3 + 1
    run = agent(iterations, sealed=True).run_sync("go")
    path = os.path.join(folder, "long.ipynb")
    export([run], path, title="long")
    notebook = read_notebook(path)
    output = next(output for cell in notebook["cells"] for output in cell.get("outputs", [])
                  if RECORDING_MIME in output.get("data", {}))
    verdict = output_verdict(output)
    assert verdict is not None and verdict.holds and verdict.display
    return {
        "steps": len(run.recording.steps), "size": os.path.getsize(path),
        "now": samples_ms(lambda: output_verdict(output), repeats),
        "file": samples_ms(lambda: verify_file(path), max(3, repeats // 2)),
    }


def catalog(size: int) -> dict[str, Any]:
    tools = []
    for n in range(size):
        verb, noun, other = VERBS[n % len(VERBS)], NOUNS[n % len(NOUNS)], NOUNS[(n * 7) % len(NOUNS)]
        tools.append({"name": f"{verb}_{noun}_{n}", "description": f"Returns the {noun} records linked to a {other}, "
                      f"variant {n}.", "inputSchema": {"type": "object", "properties": {
                          f"{noun}_id": {"type": "string", "description": f"The {noun} id."},
                          "mode": {"type": "string", "description": "one of fast, full or audit"}}}})
    return {"tools": tools}


def near_identical(size: int) -> dict[str, Any]:
    tools = [{"name": f"lookup_record_{n}", "description": f"Returns the customer record {n} from the main store.",
              "inputSchema": {"type": "object", "properties": {
                  "record_id": {"type": "string", "description": "The record id."},
                  "mode": {"type": "string", "description": "one of fast, full or audit"}}}} for n in range(size)]
    return {"tools": tools}


def lint_ms(tools: dict[str, Any], repeats: int) -> tuple[list[float], int, int]:
    """Samples, and the findings: all of them, and the confusable ones."""
    found = lint_tools(tools)
    return samples_ms(lambda: lint_tools(tools), repeats), len(found), int((found.check == "confusable").sum())


def main() -> None:
    args = options(__doc__.splitlines()[0])
    quick = args.quick
    report = Report("trust", args)
    cost = save_cost(5 if quick else 200)
    report.add("run + save (model_dump_json), seal=True", [cost["output_sealed"]], size="5 iterations",
               goal="(reference)", peer="same, seal=False", peer_samples=[cost["saved"]],
               ratio=cost["output_sealed"] / cost["saved"])
    costs = sealed_run_cost(4 if quick else 120)
    ratio = median(costs["sealed"]) / median(costs["plain"])
    report.add("5-iteration run + recording, seal=True", costs["sealed"], size="5 iterations",
               goal=f"<= {SEALED_RUN_GOAL}x the run unsealed (floor)", met=ratio <= SEALED_RUN_GOAL,
               peer="same run, seal=False", peer_samples=costs["plain"], ratio=ratio,
               note="an agent made for each run; blocks of 10 runs interleaved, each from a collected heap")
    report.add("5-iteration run + recording of a reused agent, seal=True", costs["reused_sealed"], size="5 iterations",
               goal="(reference)", peer="same, seal=False", peer_samples=costs["reused_plain"],
               ratio=median(costs["reused_sealed"]) / median(costs["reused_plain"]),
               note="one agent made once for each side, run again and again: the run's own time, no agent made")
    steps, loaded_samples, live_samples = verify_long(200 if quick else 10_000, 3 if quick else 7)
    report.add("verify a sealed recording loaded from its JSON", loaded_samples, size=f"{steps} steps",
               goal=f"<= {VERIFY_GOAL_MS:.0f} ms", met=median(loaded_samples) <= VERIFY_GOAL_MS)
    report.add("verify the live run's sealed recording", live_samples, size=f"{steps} steps",
               goal="(reference)", note="its records are made from the capture for the check, then let go")
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        checked = verify_notebook(200 if quick else 10_000, 3 if quick else 9, folder)
    size = f"{checked['steps']} steps, {checked['size'] / 1e6:.1f} MB notebook"
    report.add("verify a notebook output: its recording through the door, its seal and its display", checked["now"],
               size=size, goal=f"<= {NOTEBOOK_VERIFY_GOAL_MS:.0f} ms (floor)",
               met=median(checked["now"]) <= NOTEBOOK_VERIFY_GOAL_MS, note="after the file is parsed")
    report.add("verify_file on that notebook, reading and parsing it included", checked["file"], size=size,
               goal="(reference)")
    size = 50 if quick else 500
    lint_samples, found, _ = lint_ms(catalog(size), 3 if quick else 7)
    report.add("lint_tools", lint_samples, size=f"{size} tools, {found} findings", goal=f"<= {LINT_GOAL_MS:.0f} ms",
               met=median(lint_samples) <= LINT_GOAL_MS)
    sizes = (50, 300) if quick else (500, 3000)
    for size in sizes:
        lint_samples, found, groups = lint_ms(near_identical(size), 3 if quick else 5)
        judged = size == sizes[-1]
        report.add("lint_tools, near-identical tools", lint_samples,
                   size=f"{size} tools, {found} findings, {groups} of them confusable",
                   goal=f"<= {NEAR_GOAL_MS:.0f} ms" if judged else "(reference)",
                   met=median(lint_samples) <= NEAR_GOAL_MS if judged else None,
                   note="every pair is confusable: one finding names the whole group")
    report.close()


if __name__ == "__main__":
    main()
