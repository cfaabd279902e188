"""Run sets on a real Dask cluster (LocalCluster, 2 worker processes of one thread): the same rows as in one process."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pandas as pd
import pytest
from batch_kit import desk, made

from footprint_lab.batch import BatchConfigError, RunSet, RunSetFolderError, culprits
from footprint_lab.errors import ExplainConfigError
from footprint_lab.examples.support_desk import build_desk

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each (this machine has two cores), closed at the end."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       memory_limit="1GiB")
    with cluster, distributed.Client(cluster) as connected:
        yield connected


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return RunSet.load(made().save(tmp_path_factory.mktemp("batch") / "set"))


async def test_running_on_the_cluster_gives_the_same_answers(client):
    remote = await RunSet.run(desk().factory, desk().inputs, client=client, progress=False)
    here, there = made().frame(), remote.frame()
    pd.testing.assert_frame_equal(here.drop(columns=["run_id", "duration_ms"]),
                                  there.drop(columns=["run_id", "duration_ms"]))
    assert remote[5].recording.input["message"] == desk().inputs[5]


def test_integrity_and_suspects_on_the_cluster_are_the_same_rows(client, saved):
    pd.testing.assert_frame_equal(saved.integrity(client=client, progress=False), made().integrity(progress=False))
    pd.testing.assert_frame_equal(saved.suspects(client=client, progress=False), made().suspects(progress=False))


async def test_localize_on_the_cluster_is_the_same_table(client, saved):
    settings = {"comparator": desk().comparator, "progress": False}
    there = await saved.localize(rerun=desk().factory, where=desk().wrong, client=client, **settings)
    here = await made().localize(rerun=desk().factory, where=desk().wrong, **settings)
    pd.testing.assert_frame_equal(there, here)
    pd.testing.assert_frame_equal(culprits(there), culprits(here))


def test_work_goes_out_in_chunks_not_a_task_per_run(client, saved):
    with distributed.get_task_stream(client) as stream:
        saved.integrity(client=client, progress=False)
    tasks = [t for t in stream.data if "integrity-task" in str(t.get("key"))]
    assert 2 <= len(tasks) <= 8 < len(saved)  # about 4 per worker thread


async def test_a_worker_reads_only_the_recordings_it_is_given(client, saved, tmp_path):
    copy = made().save(tmp_path / "set")
    loaded = RunSet.load(copy)
    chosen = loaded.select(desk().wrong)
    kept = {copy / "recordings" / f"{i:06d}.json" for i, s in enumerate(loaded.summaries()) if desk().wrong(s)}
    for path in (copy / "recordings").iterdir():
        if path not in kept:
            path.unlink()  # every recording localize does not need is gone
    frame = await loaded.localize(rerun=desk().factory, where=desk().wrong, client=client,
                                  comparator=desk().comparator, progress=False)
    assert set(frame.run_id) == {r.run_id for r in chosen.summaries()}
    with pytest.raises(RunSetFolderError) as refused:  # the others are missed by a worker, and said so by name
        loaded.integrity(client=client, progress=False)
    assert refused.value.reason == "missing_recording" and refused.value.code == "ERR_RUN_SET_FOLDER"


async def test_a_refusal_on_a_worker_comes_back_as_itself(client, saved):
    with pytest.raises(ExplainConfigError) as refused:  # top= is judged where each run is localized: on a worker
        await saved.localize(rerun=desk().factory, where=desk().wrong, client=client, top=0, progress=False)
    assert refused.value.setting == "top" and refused.value.function == "localize"
    with pytest.raises(ExplainConfigError) as refused:  # a trial setting is judged before anything is sent
        await saved.localize(rerun=desk().factory, where=desk().wrong, client=client, samples=0, progress=False)
    assert refused.value.setting == "samples"


def _locked_factory():
    lock = threading.Lock()

    def build(exclude=(), seed=None):
        with lock:
            return build_desk(exclude, seed)

    return build


def _socket_factory():
    connection = socket.socket()  # an open socket cannot travel

    def build(exclude=(), seed=None):
        assert connection.fileno() >= 0
        return build_desk(exclude, seed)

    return build


@pytest.mark.parametrize("rerun", [_locked_factory(), _socket_factory()])
async def test_what_cannot_travel_is_refused_before_anything_is_sent(client, saved, rerun):
    with distributed.get_task_stream(client) as stream, pytest.raises(BatchConfigError) as refused:
        await saved.localize(rerun=rerun, where=desk().wrong, client=client, progress=False)
    assert refused.value.setting == "rerun" and not stream.data


async def test_a_runner_instance_cannot_be_sent_to_a_cluster(client):
    with pytest.raises(BatchConfigError) as refused:
        await RunSet.run(build_desk(), desk().inputs[:3], client=client, progress=False)
    assert refused.value.setting == "runner"


@pytest.mark.parametrize("fake", ["tcp://127.0.0.1:8786", object(), 3])
def test_a_client_that_is_not_a_dask_client_is_refused(saved, fake):
    with pytest.raises(BatchConfigError) as refused:
        saved.integrity(client=fake, progress=False)
    assert refused.value.setting == "client"


async def test_cancelling_a_localize_on_the_cluster_cancels_its_tasks(client, saved):
    heard: list[int] = []
    task = asyncio.ensure_future(saved.localize(
        rerun=desk().factory, where=lambda r: r.status == "finished", client=client, comparator=desk().comparator,
        budget=400, progress=lambda done, total: heard.append(done)))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 20
    while any(client.processing().values()) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not any(client.processing().values())


@pytest.mark.parametrize("call", ["integrity", "suspects"])
def test_a_stop_on_the_cluster_keeps_the_rows_of_the_chunks_that_came_back(client, saved, call):
    """Stopped while the cluster works (a progress function raising the interrupt as a chunk comes back), the call
    ends in one line, nothing of it keeps running, and the rows of the runs checked are kept, marked partial."""
    from footprint_lab.batch import Stopped, last_stopped

    whole = getattr(saved, call)(client=client, progress=False)

    def stop_after_the_first_chunk(done: int, total: int) -> None:
        if 0 < done < total:
            raise KeyboardInterrupt

    with pytest.raises(Stopped) as stop:
        getattr(saved, call)(client=client, progress=stop_after_the_first_chunk)
    said = str(stop.value)
    assert said.startswith(f"RunSet.{call}: stopped after ") and f"of {len(saved)} runs" in said
    assert "footprint_lab.batch.last_stopped()" in said
    kept = last_stopped()
    done = stop.value.done
    assert 0 < done < len(saved) and kept.attrs == {"runs": done, "partial": True}
    covered = list(dict.fromkeys(kept["run_id"]))
    assert 0 < len(covered) <= done      # (a run with nothing to report adds no row)
    expected = whole[whole["run_id"].isin(covered)].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept.reset_index(drop=True), expected)
    deadline = time.monotonic() + 10
    while any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(client.processing().values())   # nothing of it left running on the cluster
