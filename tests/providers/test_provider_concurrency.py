"""``max_concurrency``: how many requests a server is handed at once.

The limit holds per endpoint (scheme, host, port) across every provider object aimed at it,
the smallest limit among the live ones. The server here is real (sockets, one thread per
connection) and counts the requests it is answering at each moment; its replies are slow
enough that requests let through together would overlap there.

Reaches providers._base and ._gate for the hosted default and the per-endpoint gate, which have no public name.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest
from provider_cases import SECRET, make_request
from wire_server import Reply, WireServer, stream_reply

from footprint_lab import Agent
from footprint_lab.providers import anthropic, ollama, openai
from footprint_lab.providers._base import HOSTED_CONCURRENCY
from footprint_lab.providers._gate import Gate, endpoint
from footprint_lab.providers.errors import ProviderConfigError


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


# -- one gate per endpoint ---------------------------------------------------------------------
async def test_a_fresh_provider_for_every_run_still_hands_the_server_one_request_at_a_time(
    build: Any, server: WireServer,
) -> None:
    # A rerun factory as most people write it: a new agent on a new provider for each run.
    server.fallback = slow_answer()
    runs = await asyncio.gather(*(Agent(provider=build("openai")).run(f"question {n}") for n in range(6)))
    assert [run.answer for run in runs] == ["The sum is 5."] * 6
    assert len(server.received) == 6 and server.peak == 1


async def test_providers_spelling_the_servers_url_differently_share_its_gate(build: Any,
                                                                            server: WireServer) -> None:
    server.fallback = slow_answer()
    plain, versioned = build("openai"), build("openai", base_url=server.url + "/v1/")
    await asyncio.gather(*((plain if n % 2 else versioned).complete(make_request()) for n in range(6)))
    assert len(server.received) == 6 and server.peak == 1


@pytest.mark.parametrize(("one", "other"), [
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
    ("http://LocalHost/v1", "http://localhost:80/api"),
    ("https://Gateway.example/v1", "https://gateway.example:443"),
])
def test_one_endpoint_however_its_url_is_spelt_has_one_gate(one: str, other: str) -> None:
    first, second = openai("local", base_url=one), openai("local", base_url=other)
    assert endpoint(one) == endpoint(other)
    assert first._wire.gate is second._wire.gate


@pytest.mark.parametrize(("one", "other"), [
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1"),
    ("http://127.0.0.1:8080/v1", "http://localhost:8080/v1"),
    ("http://gpu-box:443/v1", "https://gpu-box/v1"),
])
def test_another_port_host_or_scheme_is_another_gate(one: str, other: str) -> None:
    assert openai("local", base_url=one)._wire.gate is not openai("local", base_url=other)._wire.gate


async def test_a_server_busy_with_one_request_does_not_hold_back_another_server(build: Any,
                                                                               server: WireServer) -> None:
    other = WireServer()
    try:
        server.queue(Reply(stall=True))
        other.queue(slow_answer())
        stuck = asyncio.create_task(build("openai").complete(make_request()))
        while not server.received:
            await asyncio.sleep(0.01)
        reply = await asyncio.wait_for(build("openai", base_url=other.url).complete(make_request()), 5)
        assert reply.content == "The sum is 5." and not stuck.done()
        stuck.cancel()
        await asyncio.gather(stuck, return_exceptions=True)
    finally:
        other.close()


async def test_the_smallest_limit_among_live_providers_holds_until_that_provider_is_dropped(
    build: Any, server: WireServer,
) -> None:
    server.fallback = slow_answer(0.1)
    roomy = build("openai", max_concurrency=3)
    strict = openai("local", base_url=server.url, retry_backoff=0.01)
    assert roomy._wire.gate is strict._wire.gate and roomy._wire.gate.limit == 1
    await asyncio.gather(*(roomy.complete(make_request()) for _ in range(6)))
    assert server.peak == 1  # the strict provider, alive and idle, still speaks for the server
    del strict
    gc.collect()
    assert roomy._wire.gate.limit == 3
    server.peak = 0
    await asyncio.gather(*(roomy.complete(make_request()) for _ in range(6)))
    assert server.peak == 3


async def test_a_limit_that_rises_while_runs_wait_lets_them_in() -> None:
    class Holder:
        pass

    gate, strict, roomy = Gate(1), Holder(), Holder()
    gate.claim(strict, 1)
    gate.claim(roomy, 2)
    inside: list[int] = []
    hold = asyncio.Event()

    async def hold_a_slot() -> None:
        async with gate.slot():
            inside.append(gate.in_flight)
            await hold.wait()

    tasks = [asyncio.create_task(hold_a_slot()) for _ in range(3)]
    await asyncio.sleep(0.01)
    assert inside == [1]
    del strict
    gc.collect()
    late = asyncio.create_task(hold_a_slot())  # the next one to ask finds the limit risen, and lets the oldest in
    await asyncio.sleep(0.01)
    assert inside == [1, 2] and gate.in_flight == 2
    hold.set()
    await asyncio.gather(*tasks, late)
    assert gate.in_flight == 0 and len(inside) == 4
