"""Long run-set work stopped by the analyst: one line saying what was kept, and what finished kept where it says."""

from __future__ import annotations

import asyncio
import queue
import threading
import time

import pytest
from stop_kit import interrupt_at

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


# -- the per-run loops (integrity, suspects) and save, stopped ------------------------------------------------
async def small_set(count: int = 8) -> RunSet:
    return await RunSet.run(planted_fact_agent(), INPUTS[:count], progress=False)


async def test_an_interrupt_inside_integrity_ends_in_one_line_and_keeps_the_rows_of_the_runs_checked():
    runs = await small_set()
    with pytest.raises(Stopped) as stop:
        runs.integrity(claims={"age_days": interrupt_at(4)}, progress=False)
    assert str(stop.value) == ("RunSet.integrity: stopped after 3 of 8 runs checked; "
                               "the rows of the 3 checked: footprint_lab.batch.last_stopped()")
    assert stop.value._render_traceback_() == [str(stop.value)] and (stop.value.done, stop.value.total) == (3, 8)
    rows = last_stopped()
    assert rows is stop.value.partial and rows.attrs == {"runs": 3, "partial": True}
    assert rows.run_id.unique().tolist() == [run.run_id for run in runs][:3]
    whole = runs.integrity(claims={"age_days": lambda text: None}, progress=False)
    assert rows.equals(whole[whole.run_id.isin(rows.run_id)])  # the rows the whole call makes for those runs


async def test_an_interrupt_inside_suspects_keeps_the_runs_ranked():
    import numpy as np

    runs = await small_set()
    embed = interrupt_at(6, lambda texts: np.array([[len(t) + 1.0, t.count("e") + 1.0] for t in texts]))
    with pytest.raises(Stopped) as stop:
        runs.suspects(strategy="embedding", embed=embed, progress=False)
    done = stop.value.done
    assert 0 < done < 8 and str(stop.value).startswith(f"RunSet.suspects: stopped after {done} of 8 runs ranked; ")
    frame = last_stopped()
    assert frame.attrs["partial"] and frame.run_id.nunique() == frame.attrs["runs"] == done


async def test_a_stopped_save_into_a_new_folder_leaves_no_folder_and_says_so(tmp_path):
    runs = await small_set()
    folder = tmp_path / "new" / "set"
    with pytest.raises(Stopped) as stop:
        runs.save(folder, progress=interrupt_at(4))  # heard at 0, 1, 2: the third recording written, then stopped
    assert str(stop.value) == ("RunSet.save: stopped after 3 of 8 runs saved; none of it kept: the folder is as it "
                               "was before the save (a folder the save made is removed)")
    assert not folder.exists() and last_stopped() is None
    assert len(RunSet.load(runs.save(folder, progress=False))) == 8  # nothing left behind bars a new save


async def test_a_stopped_save_over_an_earlier_set_leaves_the_earlier_set_whole(tmp_path):
    earlier, runs = await small_set(3), await small_set()
    folder = earlier.save(tmp_path / "set", progress=False)
    with pytest.raises(Stopped):
        runs.save(folder, overwrite=True, progress=interrupt_at(6))
    assert sorted(path.name for path in folder.iterdir()) == ["recordings", "runset.json"]
    loaded = RunSet.load(folder)
    assert [run.run_id for run in loaded] == [run.run_id for run in earlier]


async def test_a_save_stopped_while_it_swaps_the_set_in_finishes_the_swap(tmp_path, monkeypatch):
    from footprint_lab.batch import _folder

    runs = await small_set(4)
    folder = runs.save(tmp_path / "set", progress=False)
    renamed = _folder.os.replace

    def replace_then_interrupt(source, target):  # the stop lands between the two renames of the swap
        renamed(source, target)
        if str(target).endswith("recordings"):
            raise KeyboardInterrupt

    monkeypatch.setattr(_folder.os, "replace", replace_then_interrupt)
    newer = await small_set(5)
    with pytest.raises(Stopped) as stop:
        newer.save(folder, overwrite=True, progress=False)
    monkeypatch.undo()
    assert str(stop.value) == ("RunSet.save: stopped after 5 of 5 runs saved; the set was saved whole before the "
                               "stop: RunSet.load(folder) reads it")
    assert last_stopped() == folder
    assert [run.run_id for run in RunSet.load(folder)] == [run.run_id for run in newer]


def test_an_interrupted_integrity_in_a_real_kernel_prints_one_line_and_keeps_the_rows():
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive(
            "import time\nfrom footprint_lab.batch import RunSet, last_stopped\n"
            "from footprint_lab.examples.scenarios import planted_fact_agent\n"
            "runs = await RunSet.run(planted_fact_agent(), [f'Please refund order A-{k}.' for k in range(40)])\n"
            "def slow(text):\n"
            "    time.sleep(0.1)\n", timeout=120)
        errors, said = [], []

        def heard(message):
            if message["msg_type"] == "error":
                errors.append(message["content"])

        timer = threading.Timer(1.5, manager.interrupt_kernel)
        timer.start()
        try:
            client.execute_interactive("rows = runs.integrity(claims={'age_days': slow})", timeout=60,
                                       output_hook=heard)
        finally:
            timer.cancel()
        (error,) = errors
        assert error["ename"] == "Stopped" and len(error["traceback"]) == 1
        line = error["traceback"][0]
        assert line.startswith("RunSet.integrity: stopped after ") and " of 40 runs checked; the rows of the " in line
        client.execute_interactive("print(last_stopped().attrs['runs'], last_stopped().run_id.nunique())", timeout=60,
                                   output_hook=lambda m: said.append(m["content"].get("text", ""))
                                   if m["msg_type"] == "stream" else None)
        runs, distinct = "".join(said).split()
        assert 0 < int(runs) == int(distinct) < 40 and f"stopped after {runs} of 40" in line
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
