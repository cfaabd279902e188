"""Long run-set work stopped by the analyst: one line saying what was kept, and what finished kept where it says."""

from __future__ import annotations

import asyncio
import queue
import time

import pytest

from footprint_lab import Agent
from footprint_lab.batch import RunSet, Stopped, last_stopped
from footprint_lab.examples.scenarios import planted_fact_agent
from footprint_lab.providers import LLMResponse

INPUTS = [f"Please refund order A-{1000 + k}." for k in range(30)]


class Slow:
    """A provider that takes a moment per call, so a stop lands in the middle of the work."""

    async def complete(self, request, on_token=None):
        await asyncio.sleep(0.02)
        return LLMResponse(content="ok")


async def test_a_stopped_run_set_keeps_the_runs_it_made_and_says_so_in_one_line():
    tasks: list[asyncio.Future] = []

    def heard(done, total):  # stops the call once 5 runs are made, whatever the machine's speed
        if done == 5:
            tasks[0].cancel()

    tasks.append(task := asyncio.ensure_future(RunSet.run(lambda: Agent(provider=Slow()), INPUTS, concurrency=2,
                                                          progress=heard)))
    with pytest.raises(asyncio.CancelledError):  # still a cancellation for whatever awaited it
        await task
    kept = last_stopped()
    assert isinstance(kept, RunSet) and kept.partial and 5 <= len(kept) < len(INPUTS)
    assert all(summary.status == "finished" for summary in kept.summaries())
    assert "partial" in repr(kept)


async def test_a_stopped_localize_of_a_set_keeps_the_rows_of_the_runs_it_finished():
    runs = await RunSet.run(planted_fact_agent(), INPUTS[:4])
    tasks: list[asyncio.Future] = []

    def heard(done, total):
        if done == 2:
            tasks[0].cancel()

    tasks.append(task := asyncio.ensure_future(runs.localize(rerun=planted_fact_agent(), progress=heard)))
    with pytest.raises(asyncio.CancelledError):
        await task
    rows = last_stopped()
    assert rows.attrs["partial"] and rows.attrs["runs"] == 2 and rows.run_id.nunique() == 2


def test_a_stop_renders_as_one_line_in_ipython():
    stop = Stopped("RunSet.run", "runs", 29, 80, None)
    assert stop._render_traceback_() == [
        "RunSet.run: stopped after 29 of 80 runs; the 29 made: footprint_lab.batch.last_stopped()"]
    assert isinstance(stop, asyncio.CancelledError)


def test_an_interrupt_in_a_real_kernel_prints_one_line_and_keeps_what_was_made():
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive(
            "import asyncio\nfrom footprint_lab import Agent\nfrom footprint_lab.batch import RunSet, last_stopped\n"
            "from footprint_lab.providers import LLMResponse\n"
            "class Slow:\n"
            "    async def complete(self, request, on_token=None):\n"
            "        await asyncio.sleep(0.2)\n"
            "        return LLMResponse(content='ok')\n", timeout=120)
        asked = client.execute("runs = await RunSet.run(lambda: Agent(provider=Slow()), "
                               "[f'q{k}' for k in range(200)], concurrency=2)")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until the cell is running, then a while more
            message = client.get_iopub_msg(timeout=60)
            if message["parent_header"].get("msg_id") == asked and message["msg_type"] == "execute_input":
                break
        time.sleep(2.0)
        manager.interrupt_kernel()
        errors, streams = [], []
        while True:
            try:
                message = client.get_iopub_msg(timeout=60)
            except queue.Empty:
                break
            if message["parent_header"].get("msg_id") != asked:
                continue
            if message["msg_type"] == "error":
                errors.append(message["content"])
            elif message["msg_type"] == "stream":
                streams.append(message["content"]["text"])
            elif message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
        (error,) = errors
        assert error["ename"] == "Stopped" and len(error["traceback"]) == 1
        assert error["traceback"][0].startswith("RunSet.run: stopped after ") and "of 200 runs" in error["traceback"][0]
        said: list[str] = []
        client.execute_interactive("print(len(last_stopped()), last_stopped().partial)", timeout=60,
                                   output_hook=lambda m: said.append(m["content"].get("text", ""))
                                   if m["msg_type"] == "stream" else None)
        count, partial = "".join(said).split()
        assert 0 < int(count) < 200 and partial == "True"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
