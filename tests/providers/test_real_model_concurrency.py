"""Concurrent runs on a real server that serves one request at a time.

llama.cpp's Python server, started with its stock settings, cuts a streamed reply short
when another request arrives (``--interrupt_requests``, on by default) and ends it with
``[DONE]`` alone (then drops the connection). An explanation reruns many runs at once, so the
default ``max_concurrency`` of a provider aimed at a server of one's own (1) is what lets
them all finish; it holds per endpoint, so runs through a fresh provider each finish too.
Letting six through at once shows what it prevents: a cut before any text reached the run
is sent again (within ``max_retries``), and a cut that still reaches the run is named.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from real_model_kit import MODEL, ModelServers

from footprint_lab import Agent
from footprint_lab.providers import openai
from footprint_lab.providers.errors import ProviderResponseError

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


async def test_six_runs_through_six_fresh_providers_all_finish_on_the_stock_server_none_cut(
    model_server: ModelServers,
) -> None:
    # A provider of its own for each run (a rerun factory as most people write it): they share
    # the endpoint's gate, so the server is never handed a second request and cuts nothing.
    url = model_server("stock").url
    agents = [Agent(provider=provider(url), system="Answer briefly.") for _ in range(RUNS)]
    outcomes = await asyncio.gather(*(agent.run(f"Name a colour, number {n}.") for n, agent in enumerate(agents)),
                                    return_exceptions=True)
    assert [type(o).__name__ for o in outcomes] == ["Run"] * RUNS
    assert [attempts(run) for run in outcomes] == [1] * RUNS


def attempts(run: Any) -> int:
    """How many times the run's first call was sent."""
    return int(run.recording.exchanges[0].wire["attempts"])


def streamed_text(wire: dict[str, Any]) -> str:
    return "".join((c.get("delta") or {}).get("content") or "" for e in wire["response"]["body"]
                   if isinstance(e, dict) for c in e.get("choices") or ())


async def test_six_let_through_at_once_are_cut_by_the_stock_server_sent_again_or_named(
    model_server: ModelServers,
) -> None:
    outcomes = await six_runs(provider(model_server("stock").url, max_concurrency=RUNS))
    cut = [o for o in outcomes if isinstance(o, ProviderResponseError)]
    finished = [o for o in outcomes if type(o).__name__ == "Run"]
    assert len(cut) + len(finished) == RUNS  # nothing else: a cut reply is never taken for an answer
    sent_again = [run for run in finished if attempts(run) > 1]
    assert cut or sent_again, "the stock server was expected to cut at least one of six overlapping streams"
    for run in finished:
        assert run.answer  # a run that finished has a whole answer, however many attempts it took
    for error in cut:
        # the server sends [DONE] with no finish_reason and drops the connection: whichever the
        # client reads first, the reply is named as cut, and the run may be tried again
        assert error.retryable is True and error.status == 200
        assert "cut short" in error.missing or "closed mid-reply" in error.missing
        # a cut reaches the run only once its text was shown live, or after every attempt allowed
        assert error.wire is not None
        assert streamed_text(error.wire) or error.wire["attempts"] == 3, error.wire


async def test_a_server_told_not_to_interrupt_takes_six_at_once(model_server: ModelServers) -> None:
    outcomes = await six_runs(provider(model_server("patient").url, max_concurrency=RUNS))
    assert [type(o).__name__ for o in outcomes] == ["Run"] * RUNS
    assert all(run.answer for run in outcomes)
