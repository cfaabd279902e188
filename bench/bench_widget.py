"""Widget benchmark: how fast ``Lab(runner)`` is built, starts showing a run, and keeps up with one.

Goals (issue 11), medians: from pressing Run to the first step shown, at most 100 ms over the
run's own time to reach that step; a 200-step run's live view keeps up (no step shown more than
250 ms after it happened); the widget built in at most 200 ms.

"Shown" is measured where the kernel's part ends: the moment the widget's state message carrying
the step leaves for the browser (the comm's ``send``), timed against the moment the run's own event
stream delivered that step (a subscriber of the runner, called before the widget's listener).
The browser then draws rows with plain DOM calls; the browser tier (``tests/lab/test_lab_browser.py``)
checks that they appear. Run ``python bench/bench_widget.py``; ``--quick`` takes fewer samples.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from _kit import Report, median, options

from footprint_lab import Agent, Lab, tool
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.providers import LLMRequest, mock


class Watch:
    """When each step happened (the run's events) and when the widget first sent it (its comm messages)."""

    def __init__(self, lab: Lab) -> None:
        self.happened: dict[str, float] = {}
        self.shown: dict[str, float] = {}
        lab.runner.subscribe(self.on_event)
        send = lab.comm.send

        def sending(data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
            now = time.perf_counter()
            rows = ((data or {}).get("state") or {}).get("steps") or []
            for row in rows:
                self.shown.setdefault(row["id"], now)
            send(data=data, metadata=metadata, buffers=buffers)

        lab.comm.send = sending

    def on_event(self, event: Any) -> None:
        if event.type == "step_start":
            self.happened.setdefault(event.step_id, time.perf_counter())

    def lags_ms(self) -> list[float]:
        return [(self.shown[step] - at) * 1000 for step, at in self.happened.items()]


def rounds_agent(rounds: int, pause_s: float) -> Agent:
    """An agent of ``3 * rounds + 4`` steps whose tool waits ``pause_s`` (a run that takes its time)."""

    @tool
    async def fetch() -> str:
        """Fetch the next page."""
        await asyncio.sleep(pause_s)
        return "page"

    def respond(request: LLMRequest) -> Any:
        return {"tool": "fetch", "args": {}} if request.call_index < rounds else "done"

    return Agent(provider=mock(respond=respond), tools=[fetch], max_iterations=rounds + 1, name="pages")


async def first_step_ms(repeats: int) -> tuple[list[float], list[float]]:
    """Samples of (press Run -> first step sent, press Run -> the run's own first step), in ms."""
    shown, own = [], []
    for _ in range(repeats):
        lab = Lab(planted_fact_agent(), message=REFUND_REQUEST)
        watch = Watch(lab)
        gc.collect()
        pressed = time.perf_counter()
        lab.press_run()
        await lab._task
        first = min(watch.happened, key=watch.happened.__getitem__)
        shown.append((watch.shown[first] - pressed) * 1000)
        own.append((watch.happened[first] - pressed) * 1000)
    return shown, own


async def live_lag_ms(rounds: int, pause_s: float) -> list[float]:
    """How long after it happened each step of one run shown live was sent, in ms."""
    lab = Lab(rounds_agent(rounds, pause_s), message="go")
    watch = Watch(lab)
    lab.press_run()
    await lab._task
    return watch.lags_ms()


def build_ms(repeats: int) -> list[float]:
    agent = planted_fact_agent()
    samples = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        Lab(agent, message=REFUND_REQUEST)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def main() -> None:
    args = options(__doc__.splitlines()[0])  # --quick: fewer samples, shorter runs
    report = Report("widget", args)
    quick = args.quick
    Lab(planted_fact_agent())  # imports (anywidget, ipywidgets) are paid once per kernel, not per widget
    built = build_ms(5 if quick else 50)
    report.add("widget built", built, goal="<= 200 ms", met=median(built) <= 200)
    shown, own = await first_step_ms(3 if quick else 30)
    over = median(shown) - median(own)
    report.add("press Run -> first step sent", shown, goal="<= 100 ms over the run's own time", met=over <= 100,
               peer="the run's own time to it", peer_samples=own, note=f"over it {over:.2f} ms")
    for pause in (0.0, 0.002 if quick else 0.01):
        lags = await live_lag_ms(66 if not quick else 20, pause)
        report.add("live view: step happened -> sent", lags, goal="worst <= 250 ms", met=max(lags) <= 250,
                   size=f"{len(lags)} steps, tool waits {pause * 1000:.0f} ms")
    report.close()


if __name__ == "__main__":
    asyncio.run(main())
