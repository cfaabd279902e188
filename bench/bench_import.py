"""Import benchmark: what a user's first line costs, in a new interpreter each time.

Goals (issue 26), medians: ``from footprint_lab.errors import InvalidRunInputError`` (catching a refusal
needs no layer but the door that raises it) in at most 100 ms; ``import footprint_lab`` for
reference. Each sample is one fresh interpreter timing its own import statement (the
interpreter's start is not counted), so nothing already imported helps. Run
``python bench/bench_import.py``; ``--quick`` takes fewer samples.
"""

from __future__ import annotations

import os
import subprocess
import sys

from _kit import Report, median, options

ERROR_GOAL_MS = 100.0
_TIMED = ("import sys, time\nstarted = time.perf_counter()\n{statement}\n"
          "print((time.perf_counter() - started) * 1000, sum(m.startswith('footprint_lab') for m in sys.modules))")


def fresh_ms(statement: str, repeats: int) -> tuple[list[float], int]:
    """The time ``statement`` takes in each of ``repeats`` new interpreters, and how many of our modules it loads."""
    samples, modules = [], 0
    for _ in range(repeats):
        done = subprocess.run([sys.executable, "-c", _TIMED.format(statement=statement)], capture_output=True,
                              text=True, check=True, env=os.environ)
        ms, count = done.stdout.split()
        samples.append(float(ms))
        modules = int(count)
    return samples, modules


def main() -> None:
    args = options(__doc__.splitlines()[0])
    repeats = 3 if args.quick else 15
    report = Report("import", args)
    statement = "from footprint_lab.errors import InvalidRunInputError"
    samples, modules = fresh_ms(statement, repeats)
    report.add(statement, samples, size=f"{modules} footprint_lab modules",
               goal=f"<= {ERROR_GOAL_MS:.0f} ms", met=median(samples) <= ERROR_GOAL_MS)
    samples, modules = fresh_ms("import footprint_lab", repeats)
    report.add("import footprint_lab", samples, size=f"{modules} footprint_lab modules", goal="(reference)")
    report.close()


if __name__ == "__main__":
    main()
