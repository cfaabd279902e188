"""A rerun that never ends does not stall a proof: each rerun's factory call, run and comparison has a time limit."""

from __future__ import annotations

import asyncio
import threading

import pytest

from footprint_lab.errors import ExplainConfigError
from footprint_lab.examples.scenarios import APPROVED, REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import bisect_culprits, find_dropped_context, localize, rerun_without

LIMIT = 0.5


@pytest.fixture
def release():
    """Set at the end of a test, so the threads a hanging factory or comparator held end too."""
    gate = threading.Event()
    yield gate
    gate.set()


@pytest.fixture
async def planted_run():
    return await planted_fact_agent().run(REFUND_REQUEST)


class _Stuck:
    """A runner whose run never returns (a provider that never answers, a tool that waits forever)."""

    async def run(self, *_, **__):
        await asyncio.Event().wait()


async def test_a_rerun_that_never_answers_fails_alone_and_the_proof_goes_on(planted_run):
    def factory(exclude=(), seed=None):
        return _Stuck() if "customer" in exclude else planted_fact_agent().without(exclude)

    report = await asyncio.wait_for(localize(planted_run, rerun=factory, time_limit=LIMIT), 60)
    by_id = {s.source_id: s for s in report.suspects}
    assert report.confirmed == ["vip-override"]
    stuck = by_id["customer"]
    assert stuck.verdict == "undecided" and "every rerun failed" in stuck.trial.reason
    assert f"rerun took over {LIMIT:g} s" in stuck.trial.reason
    assert f"rerun took over {LIMIT:g} s" in report.summary()


async def test_a_factory_that_hangs_on_one_rerun_fails_that_rerun(planted_run, release):
    built = []

    def factory(exclude=(), seed=None):
        built.append(seed)
        if "customer" in exclude and len(built) > 6:  # after the runners built up front, to check the factory
            release.wait(30)
        return planted_fact_agent().without(exclude)

    report = await asyncio.wait_for(localize(planted_run, rerun=factory, time_limit=LIMIT, samples=3), 60)
    assert report.confirmed == ["vip-override"]
    stuck = next(s for s in report.suspects if s.source_id == "customer")
    assert stuck.verdict == "undecided" and f"factory took over {LIMIT:g} s" in stuck.trial.reason


async def test_a_factory_that_hangs_before_any_rerun_is_refused_by_name(planted_run, release):
    ran = []

    def factory(exclude=(), seed=None):
        release.wait(30)
        ran.append(exclude)
        return planted_fact_agent().without(exclude)

    with pytest.raises(ExplainConfigError) as refused:
        await asyncio.wait_for(rerun_without(planted_run, ["customer"], rerun=factory, time_limit=LIMIT), 60)
    assert refused.value.code and "did not return within" in str(refused.value) and "time_limit" in str(refused.value)
    assert ran == []


async def test_a_comparator_that_never_returns_fails_its_rerun_never_the_call(planted_run, release):
    def slow(original, rerun):
        release.wait(30)
        return original != rerun

    report = await asyncio.wait_for(
        rerun_without(planted_run, ["vip-override"], rerun=planted_fact_agent(), comparator=slow, time_limit=LIMIT), 60)
    assert report.error == f"comparator took over {LIMIT:g} s" and report.error in str(report)


async def test_a_coroutine_comparator_that_never_returns_fails_its_rerun(planted_run):
    async def judge(original, rerun):
        await asyncio.Event().wait()

    report = await asyncio.wait_for(
        rerun_without(planted_run, ["vip-override"], rerun=planted_fact_agent(), comparator=judge, time_limit=LIMIT),
        60)
    assert report.error == f"comparator took over {LIMIT:g} s" and report.error in str(report)


async def test_without_a_limit_a_slow_rerun_is_waited_for(planted_run):
    def factory(exclude=(), seed=None):
        agent = planted_fact_agent().without(exclude)
        run = agent.run

        async def slow(*args, **kwargs):
            await asyncio.sleep(0.3)
            return await run(*args, **kwargs)

        agent.run = slow
        return agent

    report = await rerun_without(planted_run, ["customer"], rerun=factory, time_limit=None)
    assert report.error is None and report.after.startswith(APPROVED.split(":")[0])


@pytest.mark.parametrize("limit", [0, -1, "5", True, float("nan"), float("inf"), 10**9])
@pytest.mark.parametrize("call", [localize, rerun_without, bisect_culprits, find_dropped_context])
async def test_a_time_limit_that_is_no_number_of_seconds_is_refused_before_any_rerun(planted_run, call, limit):
    built = []

    def factory(exclude=(), force=(), seed=None):
        built.append(1)
        return planted_fact_agent().without(exclude)

    args = (["customer"],) if call is rerun_without else ()
    with pytest.raises(ExplainConfigError) as refused:
        await call(planted_run, *args, rerun=factory, time_limit=limit)
    said = str(refused.value)
    assert refused.value.code and "time_limit" in said and repr(limit) not in said.partition("(received")[2]
    assert built == []
