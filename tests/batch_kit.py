"""Run sets for the batch tests: the support desk's evaluation set, made once per test session."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from functools import cache

from footprint_lab.batch import RunSet
from footprint_lab.examples.support_desk import EvalSet, support_eval

#: the evaluation set every batch test reads (60 requests: plain, express, gift, bulk, damaged, phone)
COUNT = 60


@cache
def desk() -> EvalSet:
    return support_eval(COUNT)


@cache
def made() -> RunSet:
    """The desk's set, run once (tests must not change it: they save, select or copy what they touch)."""
    # on a thread of its own, so that an async test (inside a running loop) can be the first to ask
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, RunSet.run(desk().factory, desk().inputs, progress=False)).result()


def planted_counts() -> dict[str, int]:
    """How many wrong answers each planted declaration causes in the set (the truth a localization should find)."""
    counts: dict[str, int] = {}
    for summary in made().summaries():
        if desk().wrong(summary):
            cause = desk().planted[summary.input]
            assert cause is not None  # every wrong answer of the desk has its planted cause
            counts[cause] = counts.get(cause, 0) + 1
    return counts
