"""Saved run-set folders a hostile user prepared (issue 46): links, special files, two saves at once, a forged index.

A folder is read and written only as a save leaves it: a ``recordings`` link is never followed
(nor deleted through), a recording that is a link, a FIFO, a device, a folder or too large is
refused by name before it is read, copied or waited on; a recording that does not match its row
in the index is refused; a second save into a folder another save is writing is refused; a
save refused midway leaves the earlier set as it was. Each refusal names no path.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import footprint_lab
from footprint_lab import Agent
from footprint_lab.batch import BatchConfigError, RunSet, RunSetFolderError
from footprint_lab.errors import InvalidRecordingError, Refusal
from footprint_lab.providers import mock

SECRET = b"-----BEGIN OPENSSH PRIVATE KEY----- hostile-probe-secret"
DEADLINE = 30.0
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def small_set(count: int = 3, word: str = "Answer") -> RunSet:
    runs = [Agent(provider=mock(reply=f"{word} {n}.")).run_sync(f"Question {n}?") for n in range(count)]
    return RunSet.from_runs(runs)


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    return small_set().save(tmp_path / "a")


def finished(call: Callable[[], Any], *, fifos: tuple[Path, ...] = ()) -> Any:
    """``call()``'s result or the exception it raised, within the deadline; a call still blocked then fails the
    test (and is let go: each FIFO is opened for writing, so a reader stuck on it reads its end)."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the test, which judges it
            outcome["error"] = error

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(DEADLINE)
    if worker.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(DEADLINE)
        pytest.fail(f"the call was still blocked after {DEADLINE:.0f} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def no_path_in(refusal: Exception, *paths: Path) -> None:
    for path in paths:
        assert str(path) not in str(refusal)


# -- finding 1: save(overwrite=True) never deletes through a link --------------------------------------
def _recordings_linked_to_victim(target: Path, victim: Path) -> None:
    shutil.rmtree(target / "recordings")
    (target / "recordings").symlink_to(victim, target_is_directory=True)


def _recording_linked_to_victim(target: Path, victim: Path) -> None:
    (target / "recordings" / "000000.json").unlink()
    (target / "recordings" / "000000.json").symlink_to(victim / "keep.txt")


def _index_linked_to_victim(target: Path, victim: Path) -> None:
    (target / "runset.json").unlink()
    (target / "runset.json").symlink_to(victim / "keep.txt")


def _folder_in_recordings(target: Path, victim: Path) -> None:
    (target / "recordings" / "000009.json").mkdir()
    (target / "recordings" / "000009.json" / "keep.txt").write_bytes(SECRET)


@pytest.mark.parametrize("plant", [_recordings_linked_to_victim, _recording_linked_to_victim,
                                   _index_linked_to_victim, _folder_in_recordings])
def test_overwrite_never_removes_or_follows_what_a_save_did_not_write(tmp_path, plant):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_bytes(SECRET)
    (victim / "000000.json").write_bytes(SECRET)
    target = small_set(2).save(tmp_path / "b")
    plant(target, victim)
    with pytest.raises(RunSetFolderError) as refused:
        small_set().save(target, overwrite=True)
    assert refused.value.reason == "not_empty"
    no_path_in(refused.value, tmp_path)
    assert sorted(p.name for p in victim.iterdir()) == ["000000.json", "keep.txt"]
    assert (victim / "keep.txt").read_bytes() == SECRET


def test_a_set_saved_over_a_folder_linking_to_its_own_recordings_keeps_them(tmp_path, saved):
    """B's recordings link to A's; A's set saved over B: refused, and A still loads whole."""
    target = small_set(2).save(tmp_path / "b")
    _recordings_linked_to_victim(target, saved / "recordings")
    loaded = RunSet.load(saved)
    with pytest.raises(RunSetFolderError) as refused:
        loaded.save(target, overwrite=True)
    assert refused.value.reason == "not_empty"
    assert [run.recording.answer for run in RunSet.load(saved)] == ["Answer 0.", "Answer 1.", "Answer 2."]


def test_a_save_refused_midway_leaves_the_earlier_set_as_it_was(tmp_path, saved):
    earlier = small_set(2, "Earlier").save(tmp_path / "b")
    loaded = RunSet.load(saved)
    (saved / "recordings" / "000002.json").write_text("{}")  # found only when the save reaches it
    with pytest.raises(Refusal):
        loaded.save(earlier, overwrite=True)
    assert [run.recording.answer for run in RunSet.load(earlier)] == ["Earlier 0.", "Earlier 1."]
    assert sorted(p.name for p in earlier.iterdir()) == ["recordings", "runset.json"]


# -- finding 2: only recordings inside the folder are read or copied -------------------------------------
def _link_to_secret(recording: Path, outside: Path) -> None:
    recording.unlink()
    recording.symlink_to(outside / "id_rsa")


def _link_to_another_sets_recording(recording: Path, outside: Path) -> None:
    other = small_set(1, "Other").save(outside / "other")
    recording.unlink()
    recording.symlink_to(other / "recordings" / "000000.json")


def _secret_in_place(recording: Path, outside: Path) -> None:
    recording.write_bytes(SECRET)


def _hard_link_to_secret(recording: Path, outside: Path) -> None:
    recording.unlink()
    os.link(outside / "id_rsa", recording)


def _recordings_folder_linked(recording: Path, outside: Path) -> None:
    elsewhere = outside / "recordings"
    shutil.copytree(recording.parent, elsewhere)
    (elsewhere / recording.name).write_bytes(SECRET)
    shutil.rmtree(recording.parent)
    recording.parent.symlink_to(elsewhere, target_is_directory=True)


@pytest.mark.parametrize("plant", [_link_to_secret, _link_to_another_sets_recording, _secret_in_place,
                                   _hard_link_to_secret, _recordings_folder_linked])
def test_a_recording_that_is_not_this_sets_own_is_never_copied(tmp_path, saved, plant):
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "id_rsa").write_bytes(SECRET)
    plant(saved / "recordings" / "000001.json", outside)
    loaded = RunSet.load(saved)
    with pytest.raises((RunSetFolderError, InvalidRecordingError)) as refused:
        loaded.select(lambda r: True).save(tmp_path / "out")
    no_path_in(refused.value, tmp_path)
    copied = [p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert not any(SECRET in data or b"Other 0." in data for data in copied)
    with pytest.raises((RunSetFolderError, InvalidRecordingError)):
        loaded[1]


# -- finding 3: special files are refused by name, never waited on or read whole ---------------------------
def _fifo(recording: Path) -> None:
    recording.unlink()
    os.mkfifo(recording)


def _dev_zero(recording: Path) -> None:
    recording.unlink()
    recording.symlink_to("/dev/zero")


def _a_folder(recording: Path) -> None:
    recording.unlink()
    recording.mkdir()


def _too_large(recording: Path) -> None:
    with recording.open("r+b") as file:  # sparse: no disk is spent
        file.truncate(300 << 20)


@needs_fifo
@pytest.mark.parametrize("plant", [_fifo, _dev_zero, _a_folder, _too_large])
@pytest.mark.parametrize("touch", [lambda s, p: s.integrity(progress=False), lambda s, p: s[1],
                                   lambda s, p: s.save(p / "copy")])
def test_a_special_file_as_a_recording_is_refused_by_name(tmp_path, saved, plant, touch):
    recording = saved / "recordings" / "000001.json"
    plant(recording)
    loaded = RunSet.load(saved)
    with pytest.raises(RunSetFolderError) as refused:
        finished(lambda: touch(loaded, tmp_path), fifos=(recording,))
    assert refused.value.reason == "unsafe_recording"
    no_path_in(refused.value, tmp_path)


@needs_fifo
def test_a_fifo_index_is_refused_by_name(tmp_path, saved):
    (saved / "runset.json").unlink()
    os.mkfifo(saved / "runset.json")
    with pytest.raises(RunSetFolderError) as refused:
        finished(lambda: RunSet.load(saved), fifos=(saved / "runset.json",))
    assert refused.value.reason == "unreadable_index" and "FIFO" in str(refused.value)


@pytest.fixture(scope="module")
def client():
    """One worker process of one thread (this machine has two cores), closed at the end."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       memory_limit="1GiB")
    with cluster, distributed.Client(cluster) as connected:
        yield connected


@needs_fifo
def test_a_fifo_recording_is_refused_on_a_dask_worker_too(tmp_path, saved, client):
    recording = saved / "recordings" / "000002.json"
    _fifo(recording)
    loaded = RunSet.load(saved)
    with pytest.raises(RunSetFolderError) as refused:
        finished(lambda: loaded.integrity(client=client, progress=False), fifos=(recording,))
    assert refused.value.reason == "unsafe_recording"


_LOCAL_MODULE = """
from footprint_lab import Agent
from footprint_lab.providers import mock

def build(exclude=(), seed=None):
    return Agent(provider=mock(reply="Shipped."))
"""


@pytest.mark.parametrize("call", [
    lambda build, client: asyncio.run(RunSet.run(build, ["a?", "b?", "c?"], client=client, progress=False)),
    lambda build, client: small_set().integrity(claims=build, client=client, progress=False),
    lambda build, client: small_set().suspects(embed=build, client=client, progress=False),
])
def test_a_factory_the_workers_cannot_import_is_refused_before_anything_runs(tmp_path, monkeypatch, client, call):
    """Pickled here by reference to a module only this process can import (added after the workers started)."""
    name = f"hostile_local_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(_LOCAL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    build = importlib.import_module(name).build
    with pytest.raises(BatchConfigError) as refused:
        finished(lambda: call(build, client))
    assert "cannot rebuild" in str(refused.value) and "ModuleNotFoundError" in str(refused.value)
    no_path_in(refused.value, tmp_path)


# -- finding 4: one save at a time into a folder ----------------------------------------------------------
@pytest.mark.parametrize("prepare", [lambda p: p, lambda p: p.mkdir() or p,
                                     lambda p: small_set(1, "Earlier").save(p)])
def test_a_second_save_while_one_is_writing_is_refused(tmp_path, prepare):
    target = prepare(tmp_path / "set")
    started, release = threading.Event(), threading.Event()

    def slow(done: int, total: int) -> None:
        started.set()
        release.wait(DEADLINE)

    first = threading.Thread(target=lambda: small_set(3, "First").save(target, overwrite=True, progress=slow))
    first.start()
    try:
        assert started.wait(DEADLINE)
        with pytest.raises(RunSetFolderError) as refused:
            small_set(2, "Second").save(target, overwrite=True)
        assert refused.value.reason == "busy"
        no_path_in(refused.value, tmp_path)
    finally:
        release.set()
        first.join(DEADLINE)
    assert [run.recording.answer for run in RunSet.load(target)] == ["First 0.", "First 1.", "First 2."]


_SAVER = """
import sys, time
from footprint_lab import Agent
from footprint_lab.batch import BatchConfigError, RunSet, RunSetFolderError
from footprint_lab.providers import mock
word, folder, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
runs = RunSet.from_runs([Agent(provider=mock(reply=f"{word} {n}.")).run_sync(f"Question {n}?") for n in range(6)])
while time.time() < start:
    time.sleep(0.001)
try:
    runs.save(folder, progress=lambda done, total: time.sleep(0.15))
except RunSetFolderError as refused:
    print("refused", refused.reason)
else:
    print("saved")
"""


def test_two_processes_saving_into_one_new_folder_never_are_both_told_saved(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(footprint_lab.__file__).resolve().parents[1])}
    for attempt in range(2):
        target = tmp_path / f"set{attempt}"
        start = f"{time.time() + 8.0}"
        savers = [subprocess.Popen([sys.executable, "-c", _SAVER, word, str(target), start], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for word in ("Left", "Right")]
        told = [saver.communicate(timeout=120)[0].strip() for saver in savers]
        assert sorted(told)[1] == "saved" and sorted(told)[0].startswith("refused"), told
        loaded = RunSet.load(target)
        winner = "Left" if told[0] == "saved" else "Right"
        assert [run.recording.answer for run in loaded] == [f"{winner} {n}." for n in range(6)]


# -- run-set folders: names in the index, the index against the recordings, leftovers -------------------------
@pytest.mark.parametrize("name", ["000000\x00.json", "0" * 295 + ".json", "..json", "recordings.json", " 000000.json"])
def test_an_index_naming_a_file_a_save_never_writes_is_refused(saved, name):
    index = json.loads((saved / "runset.json").read_text())
    index["rows"][0][-1] = name
    (saved / "runset.json").write_text(json.dumps(index))
    with pytest.raises(RunSetFolderError) as refused:
        RunSet.load(saved)
    assert refused.value.reason == "unreadable_index"


def test_an_index_naming_one_file_twice_is_refused(saved):
    index = json.loads((saved / "runset.json").read_text())
    index["rows"][1][-1] = index["rows"][0][-1]
    (saved / "runset.json").write_text(json.dumps(index))
    with pytest.raises(RunSetFolderError) as refused:
        RunSet.load(saved)
    assert refused.value.reason == "unreadable_index"


def _swap_recordings(folder: Path) -> None:
    first, second = folder / "recordings" / "000000.json", folder / "recordings" / "000001.json"
    held = first.read_bytes()
    first.write_bytes(second.read_bytes())
    second.write_bytes(held)


def _forge_answer(folder: Path) -> None:
    index = json.loads((folder / "runset.json").read_text())
    index["rows"][0][2] = "Approved."
    (folder / "runset.json").write_text(json.dumps(index))


def _forge_tokens(folder: Path) -> None:
    index = json.loads((folder / "runset.json").read_text())
    index["rows"][0][5] += 1000
    (folder / "runset.json").write_text(json.dumps(index))


@pytest.mark.parametrize("damage", [_swap_recordings, _forge_answer, _forge_tokens])
@pytest.mark.parametrize("touch", [lambda s: s[0], lambda s: s[s.frame().run_id[0]],
                                   lambda s: s.integrity(progress=False), lambda s: list(s),
                                   lambda s: s.suspects(progress=False)])
def test_a_recording_that_does_not_match_its_row_is_refused(saved, damage, touch):
    damage(saved)
    with pytest.raises(RunSetFolderError) as refused:
        touch(RunSet.load(saved))
    assert refused.value.reason == "mismatch"


@pytest.mark.parametrize("leftover", [
    lambda f: (f / ".runset.json.partial").write_bytes(b"{cut short"),
    lambda f: (f / ".runset.json.partial").symlink_to(f.parent / "victim.txt"),
    lambda f: (f / ".runset.saving" / "recordings").mkdir(parents=True),
    lambda f: (f / ".runset.lock").write_bytes(b""),
])
def test_what_a_cut_short_save_left_never_blocks_the_next_one(tmp_path, saved, leftover):
    (tmp_path / "victim.txt").write_bytes(SECRET)
    leftover(saved)
    small_set(2, "Again").save(saved, overwrite=True)
    assert [run.recording.answer for run in RunSet.load(saved)] == ["Again 0.", "Again 1."]
    assert sorted(p.name for p in saved.iterdir()) == ["recordings", "runset.json"]
    assert (tmp_path / "victim.txt").read_bytes() == SECRET
