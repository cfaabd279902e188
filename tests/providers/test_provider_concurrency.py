"""``max_concurrency``: how many requests of one provider a server is handed at once.

The server here is real (sockets, one thread per connection) and counts the requests it is
answering at each moment; its replies are slow enough that requests let through together
would overlap there.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from provider_cases import SECRET
from wire_server import Reply, WireServer, stream_reply

from footprint_lab import Agent
from footprint_lab.providers import anthropic, ollama, openai
from footprint_lab.providers._base import HOSTED_CONCURRENCY
from footprint_lab.providers._errors import ProviderConfigError
from footprint_lab.providers._gate import Gate


def slow_answer(delay: float = 0.05) -> Reply:
    return stream_reply("openai_stream_text.sse", delay=delay)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("provider", "limit"), [
    (lambda: openai("gpt-4o-mini", api_key=SECRET), HOSTED_CONCURRENCY),
    (lambda: anthropic("claude-sonnet-4-5", api_key=SECRET), HOSTED_CONCURRENCY),
    (lambda: openai("local", base_url="http://127.0.0.1:8080/v1"), 1),
    (lambda: openai("gpt-4o-mini", base_url="https://gateway.example/v1", api_key=SECRET), 1),
    (lambda: anthropic("claude-sonnet-4-5", base_url="http://10.0.0.7:4000"), 1),
    (lambda: ollama("llama3.2"), 1),
    (lambda: ollama("llama3.2", base_url="http://gpu-box:11434"), 1),
    (lambda: openai("local", base_url="http://127.0.0.1:8080/v1", max_concurrency=4), 4),
])
def test_the_hosted_services_take_several_requests_at_once_any_other_server_one(provider: Any, limit: int) -> None:
    assert provider().max_concurrency == limit


def test_the_environments_base_url_counts_as_another_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    assert openai("local").max_concurrency == 1


@pytest.mark.parametrize("value", [0, -2, 1.5, True, "4"])
def test_an_unusable_max_concurrency_is_refused_by_name(value: Any) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        openai("local", base_url="http://127.0.0.1:8080/v1", max_concurrency=value)
    assert caught.value.setting == "max_concurrency" and "at least 1" in str(caught.value)


async def test_by_default_a_local_server_is_handed_one_request_at_a_time(build: Any, server: WireServer) -> None:
    server.fallback = slow_answer()
    provider = build("openai")
    runs = await asyncio.gather(*(Agent(provider=provider).run(f"question {n}") for n in range(6)))
    assert [run.answer for run in runs] == ["The sum is 5."] * 6
    assert len(server.received) == 6 and server.peak == 1


@pytest.mark.parametrize("limit", [2, 3])
async def test_max_concurrency_lets_that_many_through_and_no_more(build: Any, server: WireServer,
                                                                  limit: int) -> None:
    server.fallback = slow_answer(0.1)
    provider = build("openai", max_concurrency=limit)
    runs = await asyncio.gather(*(Agent(provider=provider).run(f"question {n}") for n in range(7)))
    assert {run.answer for run in runs} == {"The sum is 5."}
    assert server.peak == limit


async def test_an_explanations_reruns_share_the_limit_of_the_provider(build: Any, server: WireServer) -> None:
    # Agent.without(...) rebuilds the agent on the same provider (seeded when asked), so every
    # rerun of an explanation counts against one limit, however many are gathered.
    server.fallback = slow_answer()
    agent = Agent(provider=build("openai", max_concurrency=2), system="Answer briefly.")
    reruns = [agent.without("system-prompt", seed=seed) for seed in range(4)] + [agent.without(seed=9) for _ in "ab"]
    runs = await asyncio.gather(*(rerun.run("question") for rerun in reruns))
    assert {run.answer for run in runs} == {"The sum is 5."}
    assert server.peak == 2 and len(server.received) == 6
    assert {r.body.get("seed") for r in server.received} == {0, 1, 2, 3, 9}


def test_runs_on_other_loops_in_other_threads_wait_their_turn_too(server: WireServer) -> None:
    # run_sync in a thread drives its run on that thread's own loop: the limit still holds.
    server.fallback = slow_answer()
    provider = openai("local", base_url=server.url)
    agent_answers: list[str | None] = []

    def script() -> None:
        agent_answers.append(Agent(provider=provider).run_sync("question").answer)

    threads = [threading.Thread(target=script) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert agent_answers == ["The sum is 5."] * 4 and server.peak == 1
    assert provider._wire.gate.in_flight == 0


async def test_a_run_cancelled_while_it_waits_keeps_no_place(build: Any, server: WireServer) -> None:
    server.fallback = slow_answer(0.05)
    provider = build("openai")
    first = asyncio.create_task(Agent(provider=provider).run("first"))
    waiting = asyncio.create_task(Agent(provider=provider).run("second"))
    await asyncio.sleep(0.1)
    waiting.cancel()
    assert (await first).answer == "The sum is 5."
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert (await Agent(provider=provider).run("third")).answer == "The sum is 5."
    assert len(server.received) == 2 and provider._wire.gate.in_flight == 0  # the second never reached the server


async def test_a_place_handed_to_a_waiter_cancelled_in_that_moment_goes_to_the_next() -> None:
    gate = Gate(1)
    order: list[str] = []

    async def holder(name: str, hold: asyncio.Event) -> None:
        async with gate.slot():
            order.append(name)
            await hold.wait()

    hold = asyncio.Event()
    first = asyncio.create_task(holder("first", hold))
    await asyncio.sleep(0)
    doomed = asyncio.create_task(holder("doomed", asyncio.Event()))
    last = asyncio.create_task(holder("last", asyncio.Event()))
    await asyncio.sleep(0)
    hold.set()
    await first  # the place is handed to "doomed" (its wake-up scheduled, not yet run)...
    doomed.cancel()  # ...and it is cancelled before it runs
    await asyncio.sleep(0.01)
    assert order == ["first", "last"] and doomed.cancelled() and gate.in_flight == 1
    last.cancel()
    await asyncio.gather(last, return_exceptions=True)
    assert gate.in_flight == 0
