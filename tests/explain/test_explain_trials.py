"""One settings object for every proof by reruns: ``Trials``, whole or as keywords, checked before anything runs."""

from __future__ import annotations

import pytest

from footprint_lab import Chat, Trials
from footprint_lab.errors import BatchConfigError, ExplainConfigError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import bisect_culprits, find_dropped_context, localize, rerun_without
from footprint_lab.explain.compare import Label


class Counting:
    """A rerun factory that counts the runners it builds (nothing built: nothing ran)."""

    def __init__(self) -> None:
        self.built = 0

    def __call__(self, exclude=(), force=(), seed=None):
        self.built += 1
        return planted_fact_agent().without(list(exclude)) if not force else planted_fact_agent().with_forced(
            list(force), exclude=list(exclude))


@pytest.fixture
async def planted_run():
    return await planted_fact_agent().run(REFUND_REQUEST)


async def test_one_trials_object_serves_every_proof_and_keywords_change_it_for_one_call(planted_run):
    trials = Trials(samples=2, budget=30, comparator=Label(choices=["APPROVED", "DECLINED"]), progress=False)
    report = await localize(planted_run, rerun=planted_fact_agent(), trials=trials)
    assert report.confirmed == ["vip-override"] and report.reruns <= 30 and report.budget == 30
    assert "Label" in report.comparator
    wider = await localize(planted_run, rerun=planted_fact_agent(), trials=trials, budget=40)
    assert wider.budget == 40 and trials.budget == 30  # the object itself is left as it was
    culprits = await bisect_culprits(planted_run, rerun=planted_fact_agent(), trials=trials)
    assert culprits.budget == 30
    dropped = await find_dropped_context(planted_run, rerun=planted_fact_agent(), trials=trials)
    assert dropped is not None


async def test_rerun_without_observes_once_unless_the_trials_name_samples(planted_run):
    once = await rerun_without(planted_run, ["vip-override"], rerun=planted_fact_agent())
    assert once.trial is None and once.changed
    tested = await rerun_without(planted_run, ["vip-override"], rerun=planted_fact_agent(), trials=Trials(samples=3))
    assert tested.verdict == "confirmed"


@pytest.mark.parametrize(("setting", "value"), [("samples", 0), ("alpha", 0.9), ("budget", 1), ("concurrency", 0),
                                                ("retries", -1), ("time_limit", 0), ("comparator", "exact"),
                                                ("progress", "yes"), ("samples", True)])
def test_a_setting_no_trial_can_use_is_refused_by_name_when_the_object_is_made(setting, value):
    with pytest.raises(ExplainConfigError) as refused:
        Trials(**{setting: value})
    assert refused.value.setting == setting and refused.value.code == "ERR_EXPLAIN_CONFIG"
    assert repr(value) not in str(refused.value).partition("(received")[2]


def test_every_alpha_out_of_range_is_told_the_same_range() -> None:
    """alpha=1.5 was told "a number from 0 to 1", and following that, alpha=0.9 "at most 0.5"."""
    for value in (1.5, 0.9, 0, -0.1, "5%"):
        with pytest.raises(ExplainConfigError) as refused:
            Trials(alpha=value)
        assert "above 0 and at most 0.5" in str(refused.value) and "from 0 to 1" not in str(refused.value)


@pytest.mark.parametrize("call", [localize, bisect_culprits, find_dropped_context, rerun_without])
async def test_a_mistyped_setting_is_refused_with_the_nearest_name_before_anything_runs(planted_run, call):
    factory = Counting()
    args = (["customer"],) if call is rerun_without else ()
    with pytest.raises(ExplainConfigError) as refused:
        await call(planted_run, *args, rerun=factory, sampels=3)
    assert "did you mean 'samples'" in str(refused.value) and factory.built == 0
    with pytest.raises(ExplainConfigError) as refused:
        await call(planted_run, *args, rerun=factory, budget=0)
    assert refused.value.setting == "budget" and call.__name__ in str(refused.value) and factory.built == 0
    with pytest.raises(ExplainConfigError) as refused:
        await call(planted_run, *args, rerun=factory, trials={"samples": 3})
    assert refused.value.setting == "trials" and factory.built == 0


def test_replace_checks_what_it_changes_and_names_the_nearest_field():
    trials = Trials(samples=3)
    assert trials.replace(budget=60) == Trials(samples=3, budget=60)
    with pytest.raises(ExplainConfigError) as refused:
        trials.replace(budgt=60)
    assert "did you mean 'budget'" in str(refused.value)


async def test_a_run_set_and_a_chat_take_the_same_settings():
    from footprint_lab.batch import RunSet

    runs = RunSet.from_runs([await planted_fact_agent().run(REFUND_REQUEST)])
    frame = await runs.localize(rerun=planted_fact_agent(), trials=Trials(samples=2, budget=30))
    assert (frame.run_reruns <= 30).all() and "vip-override" in set(frame[frame.verdict == "confirmed"].source_id)
    with pytest.raises(BatchConfigError) as refused:
        await runs.localize(rerun=planted_fact_agent(), budjet=30)
    assert "did you mean 'budget'" in str(refused.value)
    with pytest.raises(ExplainConfigError):
        await runs.localize(rerun=planted_fact_agent(), samples=0)
    chat = Chat(planted_fact_agent())
    await chat.send(REFUND_REQUEST)
    report = await chat.localize(0, trials=Trials(samples=2, budget=30))
    assert report.budget == 30 and report.confirmed == ["vip-override"]
