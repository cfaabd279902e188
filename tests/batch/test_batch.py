"""Run sets in one process: made with failures kept, saved and loaded lazily, checked, localized, compared."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from typing import ClassVar

import pandas as pd
import pytest
from batch_kit import desk, made, planted_counts
from paths_kit import ROOT
from stop_kit import stop_at

from footprint_lab import Agent, Redaction, Run
from footprint_lab.batch import BatchConfigError, RunSet, RunSetFolderError, Stopped, culprits, last_stopped
from footprint_lab.errors import ExplainConfigError, InvalidRunInputError
from footprint_lab.examples.support_desk import build_desk, support_eval
from footprint_lab.explain import integrity
from footprint_lab.providers import mock


class Counting:
    """A factory that counts the runners it built."""

    def __init__(self) -> None:
        self.built = 0

    def __call__(self) -> Agent:
        self.built += 1
        return build_desk()


# -- making a set --------------------------------------------------------------------------------
def test_every_input_is_a_run_in_input_order_and_failures_are_kept_as_failed_runs():
    runs = made()
    frame = runs.frame()
    assert len(runs) == len(desk().inputs) == len(frame)
    assert frame.input.tolist() == desk().inputs
    assert list(frame.columns) == ["run_id", "input", "answer", "status", "error", "tokens", "duration_ms", "members"]
    phoned = frame[frame.input.str.contains("placed by phone")]
    assert len(phoned) >= 1 and set(phoned.status) == {"failed"} and set(phoned.error) == {"TimeoutError"}
    assert phoned.answer.isna().all()
    answered = frame[frame.status == "finished"]
    assert (answered.tokens > 0).all() and (answered.duration_ms >= 0).all() and (answered.members == 0).all()
    assert all(isinstance(run, Run) for run in runs)


async def test_a_runner_instance_answers_one_input_at_a_time():
    agent = build_desk()
    inputs = desk().inputs[:4]
    runs = await RunSet.run(agent, inputs, progress=False)
    assert [r.recording.input["message"] for r in runs] == inputs
    assert len({r.run_id for r in runs}) == 4


@pytest.mark.parametrize("keywords", [{"concurrency": 4}, {"concurrency": 2}])
async def test_a_runner_instance_refuses_concurrency_before_anything_runs(keywords):
    agent = build_desk()
    with pytest.raises(BatchConfigError) as refused:
        await RunSet.run(agent, desk().inputs[:3], progress=False, **keywords)
    assert refused.value.code == "ERR_BATCH_CONFIG" and refused.value.setting == "concurrency"
    assert agent.last_run is None


@pytest.mark.parametrize("inputs", [["fine", 3], ["fine", {"text": "no message"}], ["fine", "   "]])
async def test_an_unusable_input_is_refused_before_any_run(inputs):
    factory = Counting()
    with pytest.raises(InvalidRunInputError) as refused:
        await RunSet.run(factory, inputs, progress=False)
    assert "(input 1)" in str(refused.value)
    assert factory.built == 0


@pytest.mark.parametrize("inputs", ["one message", {"message": "x"}, 42])
async def test_inputs_that_are_not_a_list_are_refused(inputs):
    with pytest.raises(BatchConfigError) as refused:
        await RunSet.run(Counting(), inputs, progress=False)
    assert refused.value.setting == "inputs"


@pytest.mark.parametrize("runner", [42, "agent", Agent, lambda message: None])
async def test_what_is_neither_a_runner_nor_a_factory_is_refused(runner):
    with pytest.raises(BatchConfigError) as refused:
        await RunSet.run(runner, ["hi"], progress=False)
    assert refused.value.setting == "runner"


class Picky:
    """A runner that refuses every message without an order id, as a door refuses: before running."""

    started: ClassVar[list[str]] = []

    async def run(self, message, **_):
        if "order" not in message:
            raise InvalidRunInputError("Picky.run", "a message without an order", "must name an order")
        Picky.started.append(message)
        return await build_desk().run(message)


async def test_a_refusal_on_the_first_input_is_raised_and_nothing_else_runs():
    Picky.started = []
    with pytest.raises(InvalidRunInputError):
        await RunSet.run(Picky(), ["hello", "Refund order A-1", "Refund order A-2"], progress=False)
    assert Picky.started == []


async def test_a_refusal_after_the_first_input_is_kept_as_a_failed_run():
    Picky.started = []
    runs = await RunSet.run(Picky(), ["Refund order A-1", "hello", "Refund order A-2"], progress=False)
    assert runs.frame().status.tolist() == ["finished", "failed", "finished"]
    assert runs.frame().error.tolist()[1] == "InvalidRunInputError"


async def test_a_factory_that_raises_leaves_a_failed_run_not_a_lost_input():
    calls = {"n": 0}

    def flaky() -> Agent:
        calls["n"] += 1
        if calls["n"] == 2:
            raise ConnectionError("no model today")
        return Agent(provider=mock(reply="ok"))

    runs = await RunSet.run(flaky, ["a", "b", "c"], concurrency=1, progress=False)
    frame = runs.frame()
    assert frame.status.tolist() == ["finished", "failed", "finished"]
    assert frame.error.tolist()[1] == "ConnectionError" and frame.input.tolist() == ["a", "b", "c"]


async def test_a_redaction_policy_covers_the_frame():
    secret = "sk-abcdefghijklmnopqrstuvwx"

    def leaky() -> Agent:
        return Agent(provider=mock(reply=f"your key {secret} was rotated"),
                     redact=Redaction(patterns=[r"sk-[A-Za-z0-9]{20,}"]))

    runs = await RunSet.run(leaky, [f"rotate {secret}", f"and {secret} too"], progress=False)
    shown = runs.frame().to_json()
    assert secret not in shown and "[redacted:" in shown


async def test_a_set_with_a_run_whose_message_was_masked_is_refused_before_any_rerun():
    """Such a run can only be rerun on its original message, given run by run: the set refuses it up front (no
    model call billed for the runs before it) with a fix it can follow."""
    calls = []

    def model(request):
        calls.append(1)
        seen = " ".join([request.system, *(str(m.get("content") or "") for m in request.messages)])
        return "APPROVED" if "VIP" in seen else "DECLINED"

    def make() -> Agent:
        from footprint_lab.context import define_fact

        return Agent(provider=mock(respond=model), system="Decide.", redact=Redaction(builtins=["email"]),
                     context=[define_fact(id="vip", data="VIP override.")])

    runs = await RunSet.run(make, ["Refund order A-1 please.", "Refund A-2 for dana@example.com please."],
                            progress=False)
    before = len(calls)
    with pytest.raises(BatchConfigError) as refused:
        await runs.localize(rerun=make().without, samples=2, progress=False)
    assert len(calls) == before and refused.value.setting == "where" and "dana@" not in str(refused.value)
    frame = await runs.localize(rerun=make().without, samples=2, progress=False,
                                where=lambda r: "[redacted:" not in (r.input or ""))
    assert set(frame.run_id) == {runs[0].run_id}


def test_from_runs_len_iteration_and_lookup():
    runs = list(made())[:5]
    copied = RunSet.from_runs(runs)
    assert len(copied) == 5 and list(copied) == runs
    assert copied[runs[2].run_id] is runs[2] and copied[-1] is runs[4]
    from_recordings = RunSet.from_runs([r.recording for r in runs])
    assert [r.run_id for r in from_recordings] == [r.run_id for r in runs]


@pytest.mark.parametrize("key", [99, "run-that-is-not-here", 1.5, True])
def test_a_key_that_names_no_run_is_refused(key):
    with pytest.raises(BatchConfigError) as refused:
        RunSet.from_runs(list(made())[:3])[key]
    assert refused.value.setting == "key"


@pytest.mark.parametrize("runs", ["a run", [1, 2], 42])
def test_from_runs_refuses_what_is_not_runs(runs):
    with pytest.raises(BatchConfigError):
        RunSet.from_runs(runs)


def test_from_spans_makes_a_set_of_imported_traces():
    from footprint_lab.otel import to_spans

    runs = list(made())[:6]
    imported = RunSet.from_spans(to_spans(runs))
    assert len(imported) == 6
    assert imported.frame().answer.tolist() == [r.recording.answer for r in runs]


# -- saving and loading --------------------------------------------------------------------------
def test_a_saved_set_loads_back_the_same_frame_and_runs(tmp_path):
    folder = made().save(tmp_path / "set")
    assert (folder / "runset.json").is_file() and len(list((folder / "recordings").iterdir())) == len(made())
    loaded = RunSet.load(folder)
    pd.testing.assert_frame_equal(loaded.frame(), made().frame())
    assert [r.recording.answer for r in loaded] == [r.recording.answer for r in made()]


def test_load_reads_the_index_only_and_each_recording_when_touched(tmp_path):
    folder = made().save(tmp_path / "set")
    loaded = RunSet.load(folder)
    shutil.rmtree(folder / "recordings")
    assert len(loaded.frame()) == len(made())  # the index answers without a recording
    assert len(loaded.select(lambda r: r.status == "failed")) >= 1
    with pytest.raises(RunSetFolderError) as refused:
        loaded[0]
    assert refused.value.reason == "missing_recording"


def test_a_note_on_a_touched_run_travels_with_the_next_save(tmp_path):
    loaded = RunSet.load(made().save(tmp_path / "first"))
    run = loaded[1]
    run.annotate("answer", "checked by hand", tag="reviewed")
    again = RunSet.load(loaded.save(tmp_path / "second"))
    assert [note.text for note in again[1].recording.annotations] == ["checked by hand"]
    assert again[0].recording.annotations == []


def test_save_never_writes_into_a_folder_of_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(RunSetFolderError) as refused:
        made().save(tmp_path)
    assert refused.value.reason == "not_empty"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_an_earlier_set_is_replaced_only_with_overwrite(tmp_path):
    folder = made().save(tmp_path / "set")
    smaller = made().select(made().frame().run_id[:3])
    with pytest.raises(RunSetFolderError):
        smaller.save(folder)
    smaller.save(folder, overwrite=True)
    assert len(RunSet.load(folder)) == 3 and len(list((folder / "recordings").iterdir())) == 3


def test_a_set_cannot_be_saved_over_the_folder_it_reads(tmp_path):
    loaded = RunSet.load(made().save(tmp_path / "set"))
    with pytest.raises(RunSetFolderError) as refused:
        loaded.save(tmp_path / "set", overwrite=True)
    assert refused.value.reason == "source"
    assert len(RunSet.load(tmp_path / "set")) == len(made())


@pytest.mark.parametrize("damage", [
    lambda index: "not json {",
    lambda index: "[" * 5000 + "]" * 5000,
    lambda index: json.dumps({**index, "format": "something.else"}),
    lambda index: json.dumps({**index, "version": 99}),
    lambda index: json.dumps({**index, "rows": [index["rows"][0][:-2]]}),
    lambda index: json.dumps({**index, "rows": [[*index["rows"][0][:-1], "../../etc/passwd.json"]]}),
    lambda index: json.dumps({**index, "rows": [[7, *index["rows"][0][1:]]]}),
    lambda index: json.dumps({**index, "rows": [[*index["rows"][0][:5], "many", *index["rows"][0][6:]]]}),
])
def test_a_damaged_index_is_refused_by_name(tmp_path, damage):
    folder = made().save(tmp_path / "set")
    index = json.loads((folder / "runset.json").read_text())
    (folder / "runset.json").write_text(damage(index))
    with pytest.raises(RunSetFolderError) as refused:
        RunSet.load(folder)
    assert refused.value.reason == "unreadable_index" and str(tmp_path) not in str(refused.value)


@pytest.mark.parametrize("make", [lambda p: p / "absent", lambda p: p])
def test_a_folder_that_is_no_run_set_is_refused(tmp_path, make):
    with pytest.raises(RunSetFolderError) as refused:
        RunSet.load(make(tmp_path))
    assert refused.value.reason in ("missing", "not_a_run_set") and str(tmp_path) not in str(refused.value)


# -- explanations over the set -------------------------------------------------------------------
def test_integrity_gives_every_check_of_every_run_with_its_run_id():
    frame = made().integrity(progress=False)
    first = made()[0]
    report = integrity(first)
    assert len(frame) == len(made()) * len(report.dispositions)
    mine = frame[frame.run_id == first.run_id]
    assert mine.check.tolist() == [d.check for d in report.dispositions]
    assert mine.status.tolist() == [d.status for d in report.dispositions]


async def test_integrity_finds_a_planted_duplicate_tool_call_in_its_run():
    twice = Agent(provider=mock(replies=[{"tool": "lookup_order", "args": {"order_id": "A-1"}},
                                         {"tool": "lookup_order", "args": {"order_id": "A-1"}}, "APPROVED"]),
                  tools=build_desk().tools)
    runs = RunSet.from_runs([made()[0], await twice.run("Refund order A-1")])
    frame = runs.integrity(progress=False)
    failed = frame[frame.status == "failed"]
    assert failed.run_id.tolist() == [runs[1].run_id] and failed.check.tolist() == ["duplicate_tool_call"]
    assert failed.findings.tolist() == [1]


def test_suspects_of_every_run_with_its_run_id_and_top():
    frame = made().suspects(top=2, progress=False)
    finished = made().select(lambda r: r.status == "finished")
    assert set(frame.run_id) == {r.run_id for r in finished}
    assert frame.groupby("run_id").size().max() == 2
    first = finished[0]
    expected = first.suspects().head(2)
    assert frame[frame.run_id == first.run_id].source_id.tolist() == expected.source_id.tolist()


async def test_localize_over_the_wrong_answers_finds_each_planted_cause():
    wrong = desk().wrong
    frame = await made().localize(rerun=desk().factory, where=wrong, comparator=desk().comparator, progress=False)
    chosen = made().select(wrong)
    assert set(frame.run_id) == {r.run_id for r in chosen} and frame.attrs["runs"] == len(chosen)
    confirmed = frame[frame.verdict == "confirmed"]
    by_input = {r.run_id: r.recording.input["message"] for r in chosen}
    for run_id, source in zip(confirmed.run_id, confirmed.source_id, strict=True):
        assert desk().planted[by_input[run_id]] == source
    table = culprits(frame)
    assert list(table.columns) == ["source_id", "source_kind", "member", "runs_confirmed", "runs_undecided",
                                   "runs_tested", "runs_not_tested", "share"]
    untested = frame[frame.verdict == "not_tested"]   # nothing skipped quietly: the input, on every run
    assert set(untested[untested.source_id == "user-message"].run_id) == set(frame.run_id)
    assert all(why.startswith(("the user's message", "the model's own")) for why in untested.reason)
    asked = table[table.source_id == "user-message"].iloc[0]
    assert (asked.runs_not_tested, asked.runs_tested) == (len(chosen), 0)
    counts = planted_counts()
    assert table.source_id.tolist()[: len(counts)] == sorted(counts, key=lambda s: -counts[s])
    for source, count in counts.items():
        row = table[table.source_id == source].iloc[0]
        assert row.runs_confirmed == count and row.share == pytest.approx(count / len(chosen))
    assert table.runs_confirmed.is_monotonic_decreasing


async def test_where_may_be_the_run_ids_of_a_filtered_frame():
    frame = made().frame()
    expected = frame.input.map(desk().expected)
    right = [isinstance(answer, str) and answer.startswith(want)
             for answer, want in zip(frame.answer, expected, strict=True)]
    wrong = frame[(frame.status == "finished") & ~pd.Series(right)]
    by_ids = await made().localize(rerun=desk().factory, where=wrong.run_id, comparator=desk().comparator,
                                   progress=False, sources=["fraud-screen", "holiday-extension", "bulk-promo"])
    by_predicate = await made().localize(rerun=desk().factory, where=desk().wrong, comparator=desk().comparator,
                                         progress=False, sources=["fraud-screen", "holiday-extension", "bulk-promo"])
    pd.testing.assert_frame_equal(by_ids, by_predicate)


@pytest.mark.parametrize(("where", "setting"), [
    (lambda r: r.status == "failed", "where"),
    (lambda r: True, "where"),
    (["run-nowhere"], "where"),
    ("run-abc", "where"),
    ([1, 2], "where"),
    (lambda: True, "where"),
])
async def test_a_selection_localize_cannot_use_is_refused(where, setting):
    with pytest.raises(BatchConfigError) as refused:
        await made().localize(rerun=desk().factory, where=where, progress=False)
    assert refused.value.setting == setting


@pytest.mark.parametrize(("settings", "setting"), [
    ({"input": "another message"}, "input"),
    ({"continue_from": None}, "continue_from"),
    ({"sample": 3}, "sample"),
])
async def test_settings_localize_has_not_or_that_differ_per_run_are_refused(settings, setting):
    with pytest.raises(BatchConfigError) as refused:
        await made().localize(rerun=desk().factory, where=desk().wrong, progress=False, **settings)
    assert refused.value.setting == setting


async def test_localize_settings_are_judged_by_localize_itself():
    with pytest.raises(ExplainConfigError) as refused:
        await made().localize(rerun=desk().factory, where=desk().wrong, samples=0, progress=False)
    assert refused.value.setting == "samples"


@pytest.mark.parametrize("rerun", [42, "build_desk", None])
async def test_a_rerun_that_builds_nothing_is_refused(rerun):
    with pytest.raises(BatchConfigError) as refused:
        await made().localize(rerun=rerun, where=desk().wrong, progress=False)
    assert refused.value.setting == "rerun"


@pytest.mark.parametrize("frame", [None, pd.DataFrame({"x": [1]}), "frame"])
def test_culprits_reads_only_a_localize_frame(frame):
    with pytest.raises(BatchConfigError):
        culprits(frame)


# -- two arms ----------------------------------------------------------------------------------
async def test_compare_two_arms_on_the_same_inputs_with_newcombes_interval():
    arm = support_eval(len(desk().inputs), exclude=["fraud-screen"])
    without = await RunSet.run(arm.factory, arm.inputs, progress=False)
    result = made().compare(without, desk().correct)
    finished = made().frame().status.eq("finished").sum()
    assert result.interval == "newcombe_paired" and result.pairs == finished
    assert result.dropped == len(made()) - finished
    fixed = sum(1 for r in made().summaries() if desk().planted.get(r.input) == "fraud-screen" and desk().wrong(r))
    assert result.difference == pytest.approx(fixed / result.pairs)
    assert result.low > 0 and result.significant and result.low < result.difference < result.high
    assert "Newcombe" in str(result)


async def test_compare_a_number_uses_students_t_on_paired_differences():
    from scipy import stats

    same = await RunSet.run(desk().factory, desk().inputs, progress=False)
    result = made().compare(same, "duration_ms")
    first = [r.duration_ms for r in made().summaries()]
    second = [r.duration_ms for r in same.summaries()]
    differences = [b - a for a, b in zip(first, second, strict=True)]
    low, high = stats.t.interval(0.95, len(differences) - 1, loc=sum(differences) / len(differences),
                                 scale=stats.sem(differences))
    assert result.interval == "paired_t" and result.low == pytest.approx(low) and result.high == pytest.approx(high)


async def test_compare_refuses_arms_of_other_inputs_and_metrics_it_cannot_read():
    other = RunSet.from_runs(list(made())[:-1])
    with pytest.raises(BatchConfigError) as refused:
        made().compare(other, "tokens")
    assert refused.value.setting == "other"
    for metric in ("answer", 42, lambda: 1, lambda r: "yes"):
        with pytest.raises(BatchConfigError) as refused:
            made().compare(made(), metric)
        assert refused.value.setting == "metric"


# -- progress and cancelling ----------------------------------------------------------------------
def test_a_progress_function_hears_every_run():
    heard: list[tuple[int, int]] = []
    made().integrity(progress=lambda done, total: heard.append((done, total)))
    assert heard[0] == (0, len(made())) and heard[-1] == (len(made()), len(made()))
    assert [done for done, _ in heard] == list(range(len(made()) + 1))


def test_a_progress_function_that_raises_an_interrupt_stops_the_call_and_keeps_the_rows_made():
    heard: list[tuple[int, int]] = []
    with pytest.raises(Stopped) as stop:  # one line, no traceback: what finished is kept
        made().integrity(progress=stop_at(5, heard))
    assert heard[-1] == (5, len(made()))
    assert str(stop.value) == (f"RunSet.integrity: stopped after 5 of {len(made())} runs checked; "
                               "the rows of the 5 checked: footprint_lab.batch.last_stopped()")
    rows = last_stopped()
    assert rows.attrs == {"runs": 5, "partial": True} and rows.run_id.nunique() == 5


def test_a_terminal_line_shows_progress_and_where_a_stopped_call_stopped(capsys, tmp_path):
    made().suspects(progress=True)
    assert f"ranked [{'#' * 30}] {len(made())}/{len(made())}" in capsys.readouterr().err
    folder = made().save(tmp_path / "set")
    (folder / "recordings" / "000004.json").unlink()
    with pytest.raises(RunSetFolderError):
        RunSet.load(folder).integrity(progress=True)
    assert "checked [" in (shown := capsys.readouterr().err) and "4/" in shown and shown.rstrip().endswith("cancelled")


@pytest.mark.parametrize("progress", ["yes", 3, lambda done: None])
def test_an_unusable_progress_is_refused(progress):
    with pytest.raises(BatchConfigError) as refused:
        made().integrity(progress=progress)
    assert refused.value.setting == "progress"


async def test_cancelling_a_localize_stops_it():
    heard: list[int] = []
    tasks: list[asyncio.Future] = []

    def heard_of(done, total):  # cancels the call at its second finished run, whatever the machine's speed
        heard.append(done)
        if done == 2:
            tasks[0].cancel()

    tasks.append(task := asyncio.ensure_future(made().localize(rerun=desk().factory, where=desk().wrong,
                                                               comparator=desk().comparator, progress=heard_of)))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert heard[-1] < len(made().select(desk().wrong))


def test_importing_the_package_or_the_batch_loads_no_dask():
    code = ("import sys, footprint_lab, footprint_lab.batch, footprint_lab.errors; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'cloudpickle')))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=ROOT).stdout
    assert shown.strip() == "[]"
