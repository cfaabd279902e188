"""Long work reports how far it got and stops cleanly (issue 45, item 2).

One bar for every long call: done / total, elapsed, about how long is left, and what it is doing,
as a widget with a plain-text line in a kernel (a notebook run headless keeps the line, never the
widget's repr), one line on a terminal, or a function. A stopped proof keeps the verdicts it
reached, in a report marked partial, and says so in one line; in a real kernel an interrupt shows
that line and no traceback.

Reaches explain.trials._stopping for first_plan, the reruns a proof announces, which has no public name.
"""

from __future__ import annotations

import asyncio
import io
import threading
import time

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from footprint_lab import Agent
from footprint_lab.base.progress import Progress, Stopped, progress_line
from footprint_lab.context import define_fact
from footprint_lab.examples.scenarios import planted_fact_agent
from footprint_lab.explain import bisect_culprits, last_stopped, localize, rerun_without
from footprint_lab.explain.trials._stopping import first_plan
from footprint_lab.providers import mock


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# -- the bar's words ------------------------------------------------------------------------------
def test_the_line_says_done_total_elapsed_time_left_and_what_is_running():
    assert progress_line("localize", "reruns", 0, 40, 2.0, "screening") == \
        "localize: 0 of 40 reruns, 00:02 elapsed; screening"  # no time left before the first item
    assert progress_line("localize", "reruns", 12, 40, 31.0, "confirming 'fact:refund-policy'") == \
        "localize: 12 of 40 reruns, 00:31 elapsed, about 01:12 left; confirming 'fact:refund-policy'"
    assert progress_line("RunSet.run", "runs", 80, 80, 3725.0, state="done") == \
        "RunSet.run: 80 of 80 runs, 1:02:05 elapsed, done"
    assert progress_line("localize", "reruns", 12, 40, 31.0, state="stopped") == \
        "localize: stopped after 12 of 40 reruns, 00:31 elapsed"


def test_a_terminal_line_rewrites_itself_and_ends_with_a_newline():
    clock, shown = Clock(), io.StringIO()
    bar = Progress(4, "RunSet.integrity", True, unit="runs checked", stream=shown, clock=clock)
    clock.now += 1.0
    bar.advance()
    bar.doing("run 2 of 4")
    clock.now += 1.0
    bar.advance()
    bar.cancel()
    text = shown.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")  # one line, rewritten with \r, closed once
    frames = text.rstrip("\n").split("\r")[1:]
    assert frames[1].startswith("RunSet.integrity: runs checked [#######") and "1/4, 00:01 elapsed, about 00:03 left" \
        in frames[1]
    assert frames[2].rstrip().endswith("; run 2 of 4")
    assert frames[-1].rstrip().endswith("2/4, 00:02 elapsed, cancelled")


def test_a_progress_function_hears_the_plan_change_and_the_end_at_what_ran():
    heard: list[tuple[int, int]] = []
    bar = Progress(55, "localize", lambda done, total: heard.append((done, total)), unit="reruns")
    bar.plan(13)
    for _ in range(10):
        bar.advance()
    bar.plan(20)  # the trial started another look
    bar.advance()
    bar.finish()  # it ended inside its plan: the bar ends full, at what ran
    assert heard[:2] == [(0, 55), (0, 13)] and (10, 20) in heard and heard[-1] == (11, 11)


def test_the_bar_costs_microseconds_per_item():
    bar = Progress(100_000, "RunSet.run", True, unit="runs", stream=io.StringIO())
    started = time.perf_counter()
    for _ in range(100_000):
        bar.advance()
    assert (time.perf_counter() - started) / 100_000 < 20e-6


# -- a stopped proof keeps its verdicts ------------------------------------------------------------
async def stop_when(work, done_at: int):
    """``work(progress)`` run as a task, cancelled (as a notebook's Stop does) once ``done_at`` reruns finished."""
    tasks: list[asyncio.Future] = []

    def heard(done, total):
        if done == done_at:
            tasks[0].cancel()

    tasks.append(task := asyncio.ensure_future(work(heard)))
    with pytest.raises(Stopped) as stop:
        await task
    return stop.value


async def test_a_stopped_localize_keeps_the_verdict_it_reached_and_leaves_the_rest_undecided():
    agent = planted_fact_agent()
    run = await agent.run("Please refund order A-1001.")
    # two named pieces are confirmed one after the other: 6 reruns settle the first, the stop lands in the second's
    stop = await stop_when(lambda heard: localize(run, rerun=agent, sources=["vip-override", "tone"], concurrency=1,
                                                  progress=heard), 8)
    assert str(stop).startswith("localize: stopped after 8 of ") and \
        str(stop).endswith("reruns; the verdicts reached: footprint_lab.explain.last_stopped()")
    assert isinstance(stop, asyncio.CancelledError) and stop._render_traceback_() == [str(stop)]
    report = last_stopped()
    assert report is stop.partial and report.partial and report.stopped[0] == 8
    assert report.verdict("vip-override") == "confirmed"  # reached before the stop: kept
    # the second piece's round was cut: the reruns of it that finished are kept, and it is left undecided, with why
    tone = next(s for s in report.suspects if s.source_id == "tone")
    assert tone.verdict == "undecided" and tone.reason.startswith("was not settled: the call was stopped after 8")
    assert report.reruns == 8 and tone.reruns == 8 - 6
    assert report.summary().startswith("partial: stopped after 8 of ")
    assert "partial: stopped after 8 of" in report._repr_mimebundle_()["text/html"]


async def test_a_stop_inside_a_batch_keeps_the_reruns_of_it_that_finished():
    """Seven pieces are screened in one batch; the stop lands on its last rerun. The six that finished are kept (the
    report counted the two unchanged reruns before: the batch was dropped whole), and the piece whose removal
    flipped the answer is undecided with its flip shown, not "stopped before any rerun made this change"."""
    texts = [f"Benign fact {k}." for k in range(5)] + ["Zebra clause active."]
    agent = Agent(provider=mock(respond=lambda request: "APPROVED" if "Zebra" in request.system + "".join(
        str(m.get("content", "")) for m in request.messages) else "DECLINED"),
        system="Decide.", context=[define_fact(id=f"note-{k}", data=text) for k, text in enumerate(texts)])
    run = await agent.run("Decide?")
    await stop_when(lambda heard: localize(run, rerun=agent, concurrency=1, progress=heard), 8)
    report = last_stopped()
    assert report.partial and report.stopped[0] == 8 and report.reruns == 8
    zebra = next(s for s in report.suspects if s.source_id == "note-5")
    assert zebra.verdict == "undecided" and "flipped the outcome in 1/1" in zebra.reason
    # two unchanged reruns and seven removals: the stop cut the last removal, and only its piece is left untested
    assert len([name for name, _ in report.untested if name != "user-message"]) == 1
    assert sum(s.reruns for s in report.suspects) == 6


async def test_a_stop_before_any_rerun_finished_keeps_nothing_and_says_so():
    agent = planted_fact_agent()
    run = await agent.run("Please refund order A-1001.")
    task = asyncio.ensure_future(rerun_without(run, ["vip-override"], rerun=agent, progress=False))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(Stopped) as stop:
        await task
    assert str(stop.value).endswith("stopped after 0 of 1 reruns; nothing finished") and last_stopped() is None


async def test_a_stopped_bisect_keeps_what_its_search_saw():
    agent = planted_fact_agent(variant="redundant")
    run = await agent.run("Please refund order A-1001.")
    stop = await stop_when(lambda heard: bisect_culprits(run, rerun=agent, concurrency=1, progress=heard), 4)
    found = last_stopped()
    assert found.partial and found.reruns <= 4 and "the stop cut the search short" in found.summary()
    assert str(stop).startswith("bisect_culprits: stopped after 4 of ")


async def test_localize_counts_toward_the_reruns_it_plans_not_its_budget():
    agent = planted_fact_agent()
    run = await agent.run("Please refund order A-1001.")
    heard: list[tuple[int, int]] = []
    found = await localize(run, rerun=agent, progress=lambda done, total: heard.append((done, total)))
    assert found.budget > 40 and heard[1][1] == first_plan(5, 3, 0.05, found.budget) < 20
    assert heard[-1] == (found.reruns, found.reruns)


# -- in a real kernel ------------------------------------------------------------------------------
SETUP = (
    "%load_ext footprint_lab\n"
    "import asyncio\n"
    "from footprint_lab.examples.scenarios import planted_fact_agent\n"
    "from footprint_lab.explain import localize, last_stopped\n"
    "from footprint_lab.providers import mock\n"
    "from footprint_lab.examples.scenarios import refund_model\n"
    "class Slow:\n"
    "    def __init__(self): self.inner = mock(respond=refund_model)\n"
    "    async def complete(self, request, on_token=None):\n"
    "        await asyncio.sleep(DELAY)\n"
    "        return await self.inner.complete(request, on_token)\n"
    "agent = planted_fact_agent(provider=Slow())\n"
    "run = await agent.run('Please refund order A-1001.')\n"
)


def test_a_localize_run_headless_keeps_its_line_not_the_widget_repr():
    notebook = new_notebook(cells=[new_code_cell(SETUP.replace("DELAY", "0")),
                                   new_code_cell("found = await localize(run, rerun=agent)")])
    NotebookClient(notebook, timeout=180, kernel_name="python3").execute()
    outputs = notebook.cells[1].outputs
    plain = [o.data["text/plain"] for o in outputs if o.output_type == "display_data"]
    assert len(plain) == 1 and "IntProgress(" not in str(outputs) and "HBox(" not in str(outputs)
    assert plain[0].startswith("localize: 13 of 13 reruns, ") and plain[0].endswith(" elapsed, done")
    assert "application/vnd.jupyter.widget-view+json" in outputs[0].data


def interrupted(client, manager, code: str, *, after: float) -> tuple[list[dict], list[str]]:
    """Run ``code`` in the kernel and interrupt it (SIGINT, as the Stop button) after ``after`` seconds: the errors
    and the printed text the cell left."""
    errors: list[dict] = []
    streams: list[str] = []

    def heard(message: dict) -> None:
        if message["msg_type"] == "error":
            errors.append(message["content"])
        elif message["msg_type"] == "stream":
            streams.append(message["content"]["text"])

    timer = threading.Timer(after, manager.interrupt_kernel)
    timer.start()
    try:
        client.execute_interactive(code, timeout=120, output_hook=heard)
    finally:
        timer.cancel()
    return errors, streams


def test_an_interrupted_localize_in_a_real_kernel_prints_one_line_and_keeps_the_partial_report():
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive(SETUP.replace("DELAY", "0.3"), timeout=120)
        errors, streams = interrupted(client, manager, "found = await localize(run, rerun=agent, concurrency=2)",
                                      after=3.0)
        (error,) = errors
        assert error["ename"] == "Stopped" and len(error["traceback"]) == 1 and not streams
        line = error["traceback"][0]
        assert line.startswith("localize: stopped after ") and \
            line.endswith("reruns; the verdicts reached: footprint_lab.explain.last_stopped()")
        said: list[str] = []
        client.execute_interactive("print(last_stopped().partial, last_stopped().summary()[:30])", timeout=60,
                                   output_hook=lambda m: said.append(m["content"].get("text", ""))
                                   if m["msg_type"] == "stream" else None)
        assert "".join(said).startswith("True partial: stopped after ")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


# -- a bar held back while the work is quick ------------------------------------------------------
def test_a_bar_asked_to_wait_shows_only_once_the_work_lasts_and_never_for_one_quick_item():
    clock, shown = Clock(), io.StringIO()
    bar = Progress(1, "load_runs", None, unit="recordings read", stream=shown, clock=clock, after=0.5)
    clock.now += 2.0
    bar.advance()  # a single item: done before any bar could say anything
    bar.finish()
    assert shown.getvalue() == ""
    bar = Progress(10, "load_runs", None, unit="recordings read", stream=shown, clock=clock, after=0.5)
    for _ in range(3):
        clock.now += 0.1
        bar.advance()
    assert shown.getvalue() == ""  # 0.3 s in: still quick
    clock.now += 0.3
    bar.advance()
    assert shown.getvalue().startswith("\rload_runs: recordings read [") and "4/10" in shown.getvalue()
    for _ in range(6):
        bar.advance()
    bar.finish()
    assert shown.getvalue().rstrip().endswith("10/10, 00:01 elapsed, done") and shown.getvalue().endswith("\n")
    asked = io.StringIO()
    Progress(10, "load_runs", True, stream=asked, clock=clock, after=0.5)  # progress=True: at once
    assert asked.getvalue()


# -- the phase reaches a progress function that listens for it, and the Lab's status line ------------------
async def test_the_labs_status_line_names_the_phase_the_bar_shows():
    from footprint_lab import Lab

    lab = Lab(planted_fact_agent(), message="Please refund order A-1001.")
    lab.press_run({})
    await lab._task
    drawn: list[str] = []
    lab.observe(lambda _: drawn.append(lab.busy), names="state_version")
    lab.press_click({"action": "localize"})
    await lab._task
    label = "Localizing: testing every piece that reached the answer"
    assert f"{label} · screening" in drawn
    assert f"{label} · confirming 'vip-override'" in drawn
    assert drawn.index(f"{label} · screening") < drawn.index(f"{label} · confirming 'vip-override'")
    assert lab.busy == ""  # cleared once done
