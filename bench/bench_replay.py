"""Replay benchmark: proving a cause by replaying the answering call against rerunning the whole agent.

Goal (issue 44), counted, not timed: on a run of 5 LLM calls (four tool rounds, then the answer),
``localize(run, replay=provider)`` costs at most 1/3 of the model calls that ``localize(run,
rerun=factory)`` costs on the same run, and both confirm the planted fact and nothing benign.
Both are called as an analyst types them: no budget, no ``top``, no ``samples``.

- Scripted: the mock model answers from the planted fact (its marker in the request or not).
- Real model (llama.cpp's stock server with SmolLM2-135M, ``footprint_lab.examples.local_model``):
  the first four calls of each run are tool rounds a script answers (a model this small does not
  call tools reliably), the answering call goes to the real model without the tool rounds (SmolLM2
  answers in a tool call's shape when it sees a tool list, and with nothing after a tool turn): it
  reads the system text and the conversation's own turns, as the recorded request holds them. Its
  answer is compared with ``Mentions(city)``. The replay goes through the same provider, so the
  replayed answering call reaches the model the same way. Every call, scripted or real, counts as a
  model call. The case is the first planted-fact variant the model can answer, measured on the agent
  the case runs (``examples.truth.Measured``).

Run ``python bench/bench_replay.py`` (``--quick``: the scripted case only, checks that it runs;
``--scripted-only`` leaves the real model out).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from _kit import Report, options

from footprint_lab import Agent, define_tool
from footprint_lab.context import define_fact
from footprint_lab.examples.local_model import start_server, stop_server
from footprint_lab.examples.truth import REAL_SYSTEM, Measured, planted_context, served
from footprint_lab.explain import localize
from footprint_lab.explain.compare import Mentions
from footprint_lab.providers import LLMRequest, LLMResponse, mock

ROUNDS = 4  # tool rounds before the answering call: 5 LLM calls a run
MARKER = "ledger mark Q7"


class Counted:
    """A provider that counts every request it is sent, and answers by ``answer`` (a provider, or a function)."""

    def __init__(self, answer: Any) -> None:
        self.calls = 0
        self.answer = answer

    async def complete(self, request: LLMRequest, on_token: Any = None) -> LLMResponse:
        self.calls += 1
        return await self.answer.complete(request, on_token)


def stock_tool() -> Any:
    return define_tool(name="stock", description="How many of an item are left.",
                       input_schema={"type": "object", "properties": {"item": {"type": "string"}}},
                       fn=lambda item="": "noted")


def tool_rounds(final: Any) -> Any:
    """A provider whose calls before the ``ROUNDS``-th tool result are scripted tool calls, then ``final``."""

    def scripted(request: LLMRequest) -> Any:
        return {"tool": "stock", "args": {"item": f"item-{request.call_index}"}}

    rounds = mock(respond=scripted)

    class Rounds:
        async def complete(self, request: LLMRequest, on_token: Any = None) -> LLMResponse:
            done = sum(1 for m in request.messages if m.get("role") == "tool")
            if done < ROUNDS and request.tools:
                return await rounds.complete(request, on_token)
            # the answering call reaches the model without the tool rounds (a model this small answers in a tool
            # call's shape when it sees a tool list, and with nothing after a tool turn): the system text and the
            # conversation's own turns, as the recorded request holds them
            said = [m for m in request.messages if m.get("role") != "tool" and m.get("content")]
            return await final.complete(dataclasses.replace(request, tools=[], messages=said), on_token)

    return Rounds()


def agent_factory(fresh: Callable[[], Any], system: str, context: Sequence[Any]) -> Callable[..., Agent]:
    def factory(exclude: Sequence[str] = (), seed: int | None = None) -> Agent:
        return Agent(provider=fresh(), system=system, tools=[stock_tool()], context=list(context),
                     max_iterations=ROUNDS + 1).without(list(exclude), seed=seed)

    return factory


async def compared(fresh: Callable[[], Any], system: str, context: Sequence[Any], answer_provider: Callable[[], Any],
                   message: str, cause: str, comparator: Any = None) -> dict[str, Any]:
    """The run, then localize by rerun (a new agent on a new provider a rerun, as most people write the factory)
    and by replay on it: the model calls, the report and the seconds of each."""
    run = await agent_factory(fresh, system, context)().run(message)
    calls = sum(1 for step in run.recording.steps if step.stage == "call-llm")
    assert calls == ROUNDS + 1, calls
    chosen = {"comparator": comparator} if comparator is not None else {}
    out: dict[str, Any] = {"calls_per_run": calls, "cause": cause}
    counters: list[Counted] = []

    def counted() -> Counted:
        counters.append(Counted(fresh()))
        return counters[-1]

    started = time.perf_counter()
    by_rerun = await localize(run, rerun=agent_factory(counted, system, context), **chosen)
    out["rerun"] = (sum(c.calls for c in counters), by_rerun, time.perf_counter() - started)
    replayer = Counted(answer_provider())
    started = time.perf_counter()
    by_replay = await localize(run, replay=replayer, **chosen)
    out["replay"] = (replayer.calls, by_replay, time.perf_counter() - started)
    return out


def rows(report: Report, name: str, found: dict[str, Any]) -> None:
    rerun_calls, by_rerun, rerun_s = found["rerun"]
    replay_calls, by_replay, replay_s = found["replay"]
    cause = found["cause"]
    ratio = replay_calls / rerun_calls
    # the same verdict both ways, the planted cause in it: on a real model another piece (its system prompt) may change
    # the answer too, and both ways then confirm it
    same = cause in by_replay.confirmed and sorted(by_rerun.confirmed) == sorted(by_replay.confirmed)
    size = f"a run of {found['calls_per_run']} LLM calls, {len(by_replay.suspects)} pieces tested"
    report.add(f"{name}: model calls, localize by replay", [float(replay_calls)], size=size, unit="calls",
               goal="<= 1/3 of localize by rerun, same verdict", met=ratio <= 1 / 3 and same,
               peer="localize by rerun", peer_samples=[float(rerun_calls)], ratio=ratio,
               note=f"confirmed by replay {by_replay.confirmed}, by rerun {by_rerun.confirmed}; reruns "
                    f"{by_replay.reruns} vs {by_rerun.reruns}; wall {replay_s:.2f} s vs {rerun_s:.2f} s")


def scripted(report: Report) -> None:
    context = [define_fact(id="ledger", data=f"Account note: {MARKER}."),
               *(define_fact(id=f"note-{k}", data=f"The branch keeps item {k} near the door.") for k in range(6))]

    def answer(request: LLMRequest) -> str:
        return "APPROVED" if MARKER in request.system else "DECLINED"

    def fresh() -> Any:
        return tool_rounds(mock(respond=answer))

    found = asyncio.run(compared(fresh, "Decide refunds.", context, lambda: mock(respond=answer), "Refund order A-1?",
                                 "ledger"))
    rows(report, "scripted", found)


async def real_case(url: str) -> dict[str, Any] | None:
    for variant in range(6):
        order, city, context = planted_context(variant)
        provider = served(url, 0.0)

        def fresh(provider: Callable[[], Any] = provider) -> Any:
            return tool_rounds(provider())

        # measured on the agent the case runs: four tool rounds, then the answer
        measured = Measured(agent_factory(fresh, REAL_SYSTEM, context)(), f"Where is order {order}?", Mentions(city))
        if await measured.answered_from(["where"]) is None:
            continue
        return await compared(fresh, REAL_SYSTEM, context, fresh, f"Where is order {order}?", "where", Mentions(city))
    return None


def real(report: Report) -> None:
    server = start_server("patient")
    try:
        found = asyncio.run(real_case(server.url))
    finally:
        stop_server(server)
    if found is None:
        report.add("real model: cases it can answer", [0.0], unit="cases", goal="(reference)",
                   note="none of 6 variants")
        return
    rows(report, "real model (SmolLM2-135M, temperature 0)", found)


def main() -> None:
    args = options(__doc__ or "", ("--scripted-only", "leave the real model out"))
    report = Report("replay", args)
    scripted(report)
    if not args.quick and not args.scripted_only:
        real(report)
    report.close()


if __name__ == "__main__":
    main()
