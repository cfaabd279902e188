"""The reruns a trial asks for, run: one fresh runner per rerun, concurrently, each outcome judged.

Rule kept here: every arm's runner is built once before the first rerun starts (:meth:`Draws.prepare`),
so a factory that cannot build one is refused before anything is billed; after that, each rerun
gets a runner of its own (one runner answers one turn at a time), and a rerun tried again after a
passing failure gets a new one too. Outcomes are judged against the original answer by the
comparator, which may be a plain function or a coroutine function (an LLM judge). :func:`run_all` runs any
such jobs at most ``concurrency`` at a time, and an interrupt keeps what finished (:func:`finished_before`).

Role: explain layer; the bridge between :mod:`~footprint_lab.explain.trials.trial` (arms and seeds)
and :mod:`~footprint_lab.explain.trials.rerun` (runners).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from footprint_lab.base.progress import INTERRUPTS
from footprint_lab.base.refusal import Refusal
from footprint_lab.explain.arguments import ExplainConfigError
from footprint_lab.explain.trials.arms import Arm
from footprint_lab.explain.trials.rerun import Outcome, Progress, Rerunner, in_time


class Draws:
    """Runs ``(arm, seed)`` reruns (``None`` for the unchanged run) and judges each against ``original``."""

    def __init__(self, rerunner: Rerunner, compare: Callable[[str, str], Any], original: str, *,
                 concurrency: int, bar: Progress | None = None, keep_runs: bool = False) -> None:
        self.rerunner = rerunner
        self.compare = compare
        self.original = original
        self.concurrency = concurrency
        self.bar = bar
        self.keep_runs = keep_runs
        self._prepared: dict[tuple[tuple[str, ...], tuple[str, ...]], Any] = {}

    async def prepare(self, arms: Sequence[Arm]) -> None:
        """Build one runner for the unchanged run and for each arm now: a bad factory is refused here, and so is one
        that does not return within the time limit."""
        for exclude, force in [((), ()), *((arm.exclude, arm.force) for arm in arms)]:
            if (exclude, force) in self._prepared:
                continue
            build = functools.partial(self.rerunner.build, exclude=exclude, force=force, seed=0)
            try:
                self._prepared[exclude, force] = await in_time(build, self.rerunner.time_limit)
            except TimeoutError:
                raise ExplainConfigError(
                    self.rerunner.function, "rerun", f"a factory that did not return within {self.time_limit:g} s",
                    "must return a runner promptly (build the agent, do not run it), or raise time_limit=") from None
            except Refusal:
                raise
            except Exception as exc:  # before any rerun: the caller's factory to mend, not a rerun that failed
                raise ExplainConfigError(
                    self.rerunner.function, "rerun", f"a factory that raised {type(exc).__name__} when asked for "
                    + (f"a runner {'with' if force else 'without'} {len(force or exclude)} source(s)"
                       if force or exclude else "the unchanged runner"),
                    "must return a runner for every change a trial makes (e.g. return agent.without(exclude)); "
                    "nothing was rerun") from None

    def _builder(self, arm: Arm | None, seed: int) -> Callable[[], Any]:
        exclude, force = (arm.exclude, arm.force) if arm is not None else ((), ())
        return functools.partial(self.rerunner.build, exclude=exclude, force=force, seed=seed)

    async def _runner(self, arm: Arm | None, seed: int) -> Any:
        """A runner for one rerun, or the ``Outcome`` of a factory that did not return one within the time limit."""
        key = (arm.exclude, arm.force) if arm is not None else ((), ())
        if seed == 0 and key in self._prepared:  # the runner built to check the factory serves the first rerun
            return self._prepared.pop(key)
        try:
            return await in_time(self._builder(arm, seed), self.time_limit)
        except TimeoutError:
            return Outcome(seed, None, f"factory took over {self.time_limit:g} s")
        except Refusal:
            raise
        except Exception as exc:  # a factory that fails for one rerun fails that rerun, not the others
            return Outcome(seed, None, f"factory {type(exc).__name__}")

    @property
    def time_limit(self) -> float | None:
        return self.rerunner.time_limit

    async def _one(self, arm: Arm | None, seed: int, runner: Any) -> Outcome:
        if isinstance(runner, Outcome):
            return runner
        outcome = await self.rerunner.run(runner, seed, keep_run=self.keep_runs, rebuild=self._builder(arm, seed))
        if outcome.answer is not None:
            answer = outcome.answer
            try:
                judged = await in_time(lambda: self.compare(self.original, answer), self.time_limit)
                if inspect.isawaitable(judged):
                    async with asyncio.timeout(self.time_limit):
                        judged = await judged
            except TimeoutError:
                outcome.error = f"comparator took over {self.time_limit:g} s"
                return outcome
            except Exception as exc:  # a comparator that cannot judge this rerun: it counts as failed, not as a flip
                outcome.error = f"comparator {type(exc).__name__}"
                return outcome
            if judged is None:  # no judgement (a function that forgot to return): failed, never "no flip"
                outcome.error = "comparator returned None"
                return outcome
            outcome.flipped = bool(judged)
        return outcome

    async def __call__(self, jobs: Sequence[tuple[Arm | None, int]]) -> list[Outcome]:
        runners = [await self._runner(arm, seed) for arm, seed in jobs]  # all built, one by one, before any runs
        work = [functools.partial(self._one, arm, seed, runner) for (arm, seed), runner in zip(jobs, runners,
                                                                                            strict=True)]
        return await run_all(work, concurrency=self.concurrency,
                             on_done=self.bar.step if self.bar is not None else None)


async def run_all(jobs: Sequence[Callable[[], Awaitable[Outcome]]], *, concurrency: int,
                  on_done: Callable[[], None] | None = None) -> list[Outcome]:
    """Run the jobs concurrently, at most ``concurrency`` at a time, results in job order.

    Stopped (an interrupt, a cancelled task), it re-raises with the outcomes that finished first
    attached (:func:`finished_before`), so the trial keeps them.
    """
    gate = asyncio.Semaphore(concurrency)
    finished: list[Outcome | None] = [None] * len(jobs)

    async def one(at: int, job: Callable[[], Awaitable[Outcome]]) -> Outcome:
        async with gate:
            outcome = finished[at] = await job()
        if on_done is not None:
            on_done()
        return outcome

    try:
        return list(await asyncio.gather(*(one(at, job) for at, job in enumerate(jobs))))
    except INTERRUPTS as stop:
        setattr(stop, _FINISHED, finished)  # read back by finished_before
        raise


#: the attribute an interrupted :func:`run_all` leaves on the interrupt: each job's outcome, ``None`` if unfinished
_FINISHED = "footprint_lab_finished"


def finished_before(stop: BaseException, count: int) -> list[Outcome | None]:
    """The outcomes of ``count`` jobs that finished before ``stop`` interrupted :func:`run_all` (``None`` for
    each job that did not, and for all of them when the interrupt came from elsewhere)."""
    finished = getattr(stop, _FINISHED, None)
    return list(finished) if isinstance(finished, list) and len(finished) == count else [None] * count
