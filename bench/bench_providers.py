"""Provider benchmark: what a real provider adds to a call, and a shared pool under load.

Scenarios (issue 7), against a real HTTP server on 127.0.0.1 in this process:

1. Provider overhead per call, excluding network time: building the request body and its
   bytes, framing and parsing the streamed reply (SSE or NDJSON) into an ``LLMResponse``,
   and recording the exchange, timed on the exact code the wire runs, over a captured
   reply of each wire format. Goal: at most 0.3 ms per call (median).
2. The same calls end to end over the socket, beside bare httpx doing the same HTTP
   exchange without reading it, as a cross-check (the difference is the provider's share).
3. 100 concurrent agent runs sharing one provider (one connection pool), twice: every run
   must finish without an error, and the second burst reuses the first one's connections.

Figures are medians. Run ``python bench/bench_providers.py`` (``--quick`` only checks it runs).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "providers"))

from _kit import Report, options
from wire_server import Reply, WireServer, fixture_text, ndjson_lines, sse_events

from footprint_lab import Agent, define_tool
from footprint_lab.providers import anthropic, ollama, openai
from footprint_lab.providers._base import HttpProvider
from footprint_lab.providers._http import read_stream, serialize
from footprint_lab.providers.types import LLMRequest

WIRES = {
    "openai": (openai, "gpt-4o-mini", "openai_stream_tools.sse"),
    "anthropic": (anthropic, "claude-sonnet-4-5", "anthropic_stream_tools.sse"),
    "ollama": (ollama, "llama3.2", "ollama_stream_tools.ndjson"),
}
TOOLS = [
    {"name": "add", "description": "Add two integers.",
     "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                      "required": ["a", "b"]}},
    {"name": "lookup", "description": "Look a word up in the glossary.",
     "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}},
]
MESSAGES = [
    {"role": "user", "content": "What is 2+3, and what does 'idempotent' mean?"},
    {"role": "assistant", "content": "Let me check.", "tool_calls": [
        {"id": "c1", "name": "add", "args": {"a": 2, "b": 3}},
        {"id": "c2", "name": "lookup", "args": {"word": "idempotent"}}]},
    {"role": "tool", "tool_call_id": "c1", "name": "add", "content": "5"},
    {"role": "tool", "tool_call_id": "c2", "name": "lookup",
     "content": "Idempotent: applying an operation twice has the same effect as applying it once."},
    {"role": "assistant", "content": "2+3 is 5; idempotent means repeatable without further effect."},
    {"role": "user", "content": "Now add 10 and 20."},
]
REQUEST = LLMRequest(model="", system="You are a careful assistant. Use the tools for arithmetic and definitions.",
                     messages=MESSAGES, tools=TOOLS, iteration=2, call_index=1)


def chunks_of(name: str) -> list[str]:
    text = fixture_text(name)
    return sse_events(text) if name.endswith(".sse") else ndjson_lines(text)


async def lines_of(chunks: list[str]) -> AsyncIterator[str]:
    for chunk in chunks:
        for line in chunk.split("\n")[:-1]:
            yield line


def build(kind: str, url: str, **settings: Any) -> HttpProvider:
    factory, model, _ = WIRES[kind]
    key = {} if kind == "ollama" else {"api_key": "sk-bench-not-a-real-key"}
    provider: HttpProvider = factory(model, base_url=url, **key, **settings)
    return provider


async def overhead(kind: str, server: WireServer, repeats: int) -> float:
    """Median ms of encode + serialise + stream parse + record, on the wire's own code."""
    provider = build(kind, server.url)
    chunks = chunks_of(WIRES[kind][2])
    tokens: list[str] = []
    # One real exchange, to record against a response exactly as httpx produced it.
    server.queue(Reply(chunks=chunks, content_type="text/event-stream"))
    async with httpx.AsyncClient(base_url=server.url) as client:
        response = await client.post(provider.path, content=serialize(provider.encode(REQUEST)))
    wire = provider._wire
    samples = []
    for _ in range(repeats):
        started = time.perf_counter_ns()
        body = provider.encode(REQUEST)
        serialize(body)
        received: list[Any] = []
        reply = await read_stream(lines_of(chunks), provider.framing, provider.parser(REQUEST, tokens.append),
                                  received)
        reply.wire = wire.record(response, body, received, 1)
        samples.append((time.perf_counter_ns() - started) / 1e6)
        tokens.clear()
    assert reply.tool_calls and reply.usage.output_tokens
    await provider.aclose()
    return samples[len(samples) // 10:]  # the first tenth warms the caches


async def end_to_end(kind: str, server: WireServer, repeats: int) -> tuple[list[float], list[float]]:
    """Ms per call over the socket: the provider, and bare httpx moving the same bytes."""
    provider = build(kind, server.url)
    chunks = chunks_of(WIRES[kind][2])
    server.fallback = Reply(chunks=chunks, content_type="text/event-stream")
    content = serialize(provider.encode(REQUEST))
    provider_ms, raw_ms = [], []
    async with httpx.AsyncClient(base_url=server.url) as client:
        for _ in range(repeats):
            started = time.perf_counter_ns()
            await provider.complete(REQUEST)
            provider_ms.append((time.perf_counter_ns() - started) / 1e6)
            started = time.perf_counter_ns()
            async with client.stream("POST", provider.path, content=content,
                                     headers={"content-type": "application/json"}) as response:
                async for _line in response.aiter_lines():
                    pass
            raw_ms.append((time.perf_counter_ns() - started) / 1e6)
    await provider.aclose()
    server.fallback = None
    return provider_ms, raw_ms


async def concurrent_runs(server: WireServer, runs: int, waves: int = 2) -> tuple[int, int, list[float], int]:
    """``waves`` bursts of ``runs`` agents at once on one provider.

    Returns (finished, failed, wall ms of each burst, connections opened): later bursts
    find the first one's connections in the pool.
    """
    server.fallback = Reply(chunks=chunks_of("openai_stream_text.sse"), content_type="text/event-stream")
    server.received.clear()
    provider = build("openai", server.url, max_concurrency=runs)  # all at once (a local server gets 1 by default)
    add = define_tool(name="add", description="Add.", input_schema=TOOLS[0]["input_schema"], fn=lambda a, b: a + b)
    agents = [Agent(provider=provider, tools=[add], system="Be brief.") for _ in range(runs)]
    walls, failed = [], 0
    for _ in range(waves):
        started = time.perf_counter_ns()
        results = await asyncio.gather(*(a.run(f"question {n}") for n, a in enumerate(agents)),
                                       return_exceptions=True)
        walls.append((time.perf_counter_ns() - started) / 1e6)
        failed += sum(isinstance(r, BaseException) for r in results)
    await provider.aclose()
    ports = {r.client_port for r in server.received}
    server.fallback = None
    return runs * waves - failed, failed, walls, len(ports)


async def bare_bursts(server: WireServer, runs: int, waves: int = 2) -> list[float]:
    """The same bursts with bare httpx (one pool, same bytes, nothing parsed): the server's share."""
    server.fallback = Reply(chunks=chunks_of("openai_stream_text.sse"), content_type="text/event-stream")
    content = serialize(build("openai", server.url).encode(REQUEST))
    limits = httpx.Limits(max_connections=runs, max_keepalive_connections=runs)

    async def one(client: httpx.AsyncClient) -> None:
        async with client.stream("POST", "/chat/completions", content=content) as response:
            async for _line in response.aiter_lines():
                pass

    walls = []
    async with httpx.AsyncClient(base_url=server.url, limits=limits) as client:
        for _ in range(waves):
            started = time.perf_counter_ns()
            await asyncio.gather(*(one(client) for _ in range(runs)))
            walls.append((time.perf_counter_ns() - started) / 1e6)
    server.fallback = None
    return walls


async def main(report: Report, quick: bool) -> None:
    server = WireServer()
    try:
        repeats = 30 if quick else 3000
        e2e_repeats = 10 if quick else 300
        for kind in WIRES:
            samples = await overhead(kind, server, repeats)
            report.add(f"{kind}: encode + serialise + parse stream + record", samples, size="1 call",
                       goal="<= 0.3 ms", met=statistics.median(samples) <= 0.3)
        for kind in WIRES:
            full, raw = await end_to_end(kind, server, e2e_repeats)
            report.add(f"{kind}: end to end over 127.0.0.1", full, size="1 call", peer="bare httpx, same bytes",
                       peer_samples=raw, ratio=statistics.median(full) / statistics.median(raw))
        runs = 20 if quick else 100
        finished, failed, walls, connections = await concurrent_runs(server, runs)
        bare = await bare_bursts(server, runs)
        report.add("concurrent runs on one provider, per burst", walls, size=f"2 bursts of {runs}",
                   goal="0 failed", met=failed == 0, peer="bare httpx bursts", peer_samples=bare,
                   note=f"{finished} finished, {failed} failed, {connections} connections opened; the local "
                        "server is threaded Python in this process and dominates")
        if failed:
            raise SystemExit(1)
    finally:
        server.close()


if __name__ == "__main__":
    args = options(__doc__ or "")
    report = Report("providers", args)
    asyncio.run(main(report, args.quick))
    report.close()
