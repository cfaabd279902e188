"""Concurrent runs through one provider, on a real server that serves one request at a time.

llama.cpp's Python server, started with its stock settings, cuts a streamed reply short
when another request arrives (``--interrupt_requests``, on by default) and ends it with
``[DONE]`` alone (then drops the connection). An explanation reruns many runs at once through one provider, so the
default ``max_concurrency`` of a provider aimed at a server of one's own (1) is what lets
them all finish; letting six through at once shows what it prevents.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from real_model_kit import MODEL, ModelServers

from footprint_lab import Agent
from footprint_lab.providers import openai
from footprint_lab.providers._errors import ProviderResponseError

pytestmark = pytest.mark.real_model

RUNS = 6


def provider(url: str, **settings: Any) -> Any:
    return openai(MODEL, base_url=url, timeout=120.0, max_tokens=8, options={"temperature": 0, "seed": 7},
                  **settings)


async def six_runs(provider: Any) -> list[Any]:
    agents = [Agent(provider=provider, system="Answer briefly.") for _ in range(RUNS)]
    return list(await asyncio.gather(*(agent.run(f"Name a colour, number {n}.") for n, agent in enumerate(agents)),
                                     return_exceptions=True))


async def test_six_concurrent_runs_through_one_provider_all_finish_on_the_stock_server(
    model_server: ModelServers,
) -> None:
    shared = provider(model_server("stock").url)
    assert shared.max_concurrency == 1
    outcomes = await six_runs(shared)
    assert [type(o).__name__ for o in outcomes] == ["Run"] * RUNS
    for run in outcomes:
        events = run.recording.exchanges[0].wire["response"]["body"]
        assert run.answer and any(c.get("finish_reason") for e in events[:-1] for c in e["choices"])


async def test_six_let_through_at_once_are_cut_by_the_stock_server_and_each_cut_is_named(
    model_server: ModelServers,
) -> None:
    outcomes = await six_runs(provider(model_server("stock").url, max_concurrency=RUNS))
    cut = [o for o in outcomes if isinstance(o, ProviderResponseError)]
    finished = [o for o in outcomes if type(o).__name__ == "Run"]
    assert len(cut) + len(finished) == RUNS  # nothing else: a cut reply is never taken for an answer
    assert cut, "the stock server was expected to cut at least one of six overlapping streams"
    for error in cut:
        # the server sends [DONE] with no finish_reason and drops the connection: whichever the
        # client reads first, the reply is named as cut, and the run may be tried again
        assert error.retryable is True and error.status == 200
        assert "cut short" in error.missing or "closed mid-reply" in error.missing


async def test_a_server_told_not_to_interrupt_takes_six_at_once(model_server: ModelServers) -> None:
    outcomes = await six_runs(provider(model_server("patient").url, max_concurrency=RUNS))
    assert [type(o).__name__ for o in outcomes] == ["Run"] * RUNS
    assert all(run.answer for run in outcomes)
