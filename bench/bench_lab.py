"""Notebook lab benchmark: display bundle size, answer view time, a 1,000-member tree, ``%load_ext``.

Goals (issue 10), medians:

- a 5-iteration run's whole display bundle (``text/plain`` + ``text/html`` + the recording
  MIME, as compact JSON) at most 50 kB;
- the answer view of a run with 200 declarations built in at most 100 ms (its recording is
  materialised first: the view is what is measured, backtrack and ranking included);
- the tree of a 1,000-member ``Parallel`` built and rendered (``run.tree()`` and its whole
  bundle: the plotly figure as JSON and the HTML, with no plotly.js in it) in at most
  500 ms, with its no-JavaScript HTML at most 1.5 MB;
- a notebook holding three composed runs and their three trees (the saved ``.ipynb``, its
  outputs as a kernel would write them) at most 600 kB (issue 27; 5.4 MB when each tree's
  HTML carried plotly.js);
- ``%load_ext footprint_lab`` in a fresh interpreter in at most 1 s.

Run ``python bench/bench_lab.py``; ``--quick`` takes fewer samples of the same workloads.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from _kit import Report, median, options, samples_ms

from footprint_lab import Agent, LLMCall, Parallel, Run, define_tool
from footprint_lab.context import define_fact
from footprint_lab.lab.views import answer_view
from footprint_lab.providers import LLMRequest, mock

ROOT = Path(__file__).parent.parent


def three_trees_notebook() -> int:
    """The size of a saved notebook showing three composed runs and their trees (outputs as a kernel writes them)."""
    import nbformat

    from footprint_lab import Conditional, Sequence
    from footprint_lab.examples.scenarios import planted_fact_agent

    support = Sequence({
        "triage": LLMCall(provider=mock(reply="refund request"), system="Classify the request."),
        "route": Conditional([("refunds", lambda text: "refund" in text, planted_fact_agent())],
                             otherwise=("general", Agent(provider=mock(reply="Forwarded.")))),
        "summary": LLMCall(provider=mock(reply="Summary: done."), system="Summarize."),
    }, name="support")
    runs = [support.run_sync(f"Please refund order A-100{n}.") for n in range(3)]
    shown = [run._repr_mimebundle_() for run in runs] + [run.tree()._repr_mimebundle_() for run in runs]
    cells = [nbformat.v4.new_code_cell("shown", outputs=[nbformat.v4.new_output("display_data", data=data)])
             for data in shown]
    return len(nbformat.writes(nbformat.v4.new_notebook(cells=cells)).encode("utf-8"))


def looping_agent(iterations: int, declarations: int = 2) -> Agent:
    """An agent that calls a tool ``iterations - 1`` times, then answers: ``iterations`` LLM calls."""
    lookup = define_tool(name="lookup_order", description="Find an order by its id.",
                         fn=lambda order_id: {"order_id": order_id, "age_days": 47})

    def respond(request: LLMRequest) -> Any:
        if request.call_index < iterations - 1:
            return {"tool": "lookup_order", "args": {"order_id": f"A-{1000 + request.call_index}"}}
        return "DECLINED: order A-1000 is 47 days old, past the 30-day window."

    context = [define_fact(id=f"fact-{n}", data=f"Declared fact number {n} about refunds and orders.")
               for n in range(declarations)]
    return Agent(provider=mock(respond=respond), system="Refunds are allowed within 30 days of purchase.",
                 tools=[lookup], context=context, name="refunds", max_iterations=iterations)


def bundle_kb(run: Run) -> float:
    return len(json.dumps(run._repr_mimebundle_(), separators=(",", ":"))) / 1000


def wide_parallel(members: int) -> Run:
    branches = {f"member-{n}": LLMCall(provider=mock(reply=f"answer {n}")) for n in range(members)}
    return Parallel(branches, merge=lambda answers: f"{len(answers)} answers").run_sync("go")


def load_ext_ms() -> float:
    code = ("import time\nfrom IPython.core.interactiveshell import InteractiveShell\n"
            "shell = InteractiveShell.instance()\nstarted = time.perf_counter()\n"
            "shell.run_line_magic('load_ext', 'footprint_lab')\n"
            "print((time.perf_counter() - started) * 1000)")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    args = options(__doc__.splitlines()[0])  # --quick: fewer samples, and a 100-member tree
    report = Report("lab", args)
    quick = args.quick
    repeats = 3 if quick else 21
    five = looping_agent(5).run_sync("Can I get a refund for order A-1000?")
    assert len(five.recording.exchanges) == 5
    size = bundle_kb(five)
    parts = {mime: len(json.dumps(value, separators=(",", ":"))) / 1000
             for mime, value in five._repr_mimebundle_().items()}

    declared = looping_agent(2, declarations=200).run_sync("Can I get a refund for order A-1000?")
    recording = declared.recording
    assert sum(1 for p in recording.context_pieces if p.source_kind == "fact") >= 200
    view_ms = samples_ms(lambda: answer_view(recording), repeats)

    wide = wide_parallel(100 if quick else 1000)
    wide.recording  # noqa: B018 - materialised before timing
    tree_ms = samples_ms(lambda: wide.tree()._repr_mimebundle_(), repeats)
    html = wide.tree()._repr_mimebundle_()["text/html"]
    nojs = html[html.index('<details class="fl-box fl-nojs"'):]

    loads = [load_ext_ms() for _ in range(1 if quick else 5)]
    shared = three_trees_notebook()

    members = len(wide.recording.children)
    report.add("whole display bundle", [size], size="5-iteration run", unit="kB", goal="<= 50 kB", met=size <= 50,
               note=", ".join(f"{mime} {kb:.1f} kB" for mime, kb in parts.items()))
    report.add("answer view", view_ms, size="200 declarations", goal="<= 100 ms", met=median(view_ms) <= 100)
    report.add("Parallel tree built and rendered", tree_ms, size=f"{members:,} members", goal="<= 500 ms for 1,000",
               met=median(tree_ms) <= 500 if members >= 1000 else None)
    report.add("Parallel tree, no-JavaScript HTML", [len(nojs) / 1e6], size=f"{members:,} members", unit="MB",
               goal="<= 1.5 MB", met=len(nojs) / 1e6 <= 1.5)
    report.add("saved notebook: three composed runs and their three trees", [shared / 1000], size="3 runs, 3 trees",
               unit="kB", goal="<= 600 kB", met=shared <= 600_000, note="no copy of plotly.js: trees are SVG + JSON")
    report.add("%load_ext footprint_lab, fresh interpreter", loads, goal="<= 1000 ms", met=median(loads) <= 1000)
    report.close()


if __name__ == "__main__":
    main()
