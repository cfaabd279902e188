"""A user's own type checker reads footprint_lab: ``mypy --strict`` accepts a script that uses the public
surface as documented, and flags one that passes the wrong kind of thing (the wheel ships ``py.typed``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent

GOOD = '''
from opentelemetry.sdk.trace import TracerProvider

from footprint_lab import (Agent, Chat, Graph, LLMCall, Parallel, Redaction, Run, Sequence, Workflow, lint_tools,
                           load_recording, merge_with_llm, step, tool, verify)
from footprint_lab.batch import RunSet
from footprint_lab.context import EmbeddingScorer, InMemoryStore, define_memory, define_rag
from footprint_lab.errors import InvalidRunInputError
from footprint_lab.explain import Localization, Trials, backtrack, localize
from footprint_lab.notebook import bug_report, export, load_runs
from footprint_lab.otel import capture, from_spans, live_spans, to_spans
from footprint_lab.providers import mock, replay_provider


@tool
def lookup(order_id: str) -> str:
    """Look up an order."""
    return order_id


agent = Agent(provider=mock(reply="ok"), system="You help.", tools=[lookup])
run: Run = agent.run_sync("Where is A-1?", identity={"tenant": "acme"})
again: Run = agent.run_sync({"message": "And A-2?"}, continue_from=run.checkpoint)
flow = Sequence({"first": LLMCall(provider=mock(reply="a")), "second": agent})
composed: Run = flow.run_sync("Where is A-3?", identity={"tenant": "acme"})
chat = Chat(agent)
turn: Run = chat.send_sync("Where is A-4?", identity={"tenant": "acme"})
followed: Run = agent.follow_up_sync("And A-5?")
if turn.checkpoint is not None:
    agent.resume_sync(turn.checkpoint, "yes")
if composed.checkpoint is not None:
    flow.resume_sync(composed.checkpoint, "yes", identity={"tenant": "acme"})
trials = Trials(samples=3).replace(alpha=0.01)
answer: str | None = run.answer
error: type[ValueError] | type[Exception] = InvalidRunInputError
walked = backtrack(run.recording)
both = Parallel([("a", agent), ("b", LLMCall(provider=mock(reply="b")))],
                merge=merge_with_llm(provider=mock(reply="a and b")))
steps = Workflow([step("draft", agent), ("review", LLMCall(provider=mock(reply="ok")))])
nodes = Graph([step("left", agent), step("right", agent, needs="left")])
rag = define_rag(id="docs", corpus={"refunds": "Refunds take 5 days."},
                 scorer=EmbeddingScorer(lambda texts: [[1.0] for _ in texts]))
memory = define_memory(id="memory", store=InMemoryStore())
linted = lint_tools([lookup, {"name": "refund", "description": "Refund an order."}])
shared = export([run, again.recording], "runs.ipynb", title="Two runs")   # runs and recordings, mixed
reloaded: list[Run] = load_runs(shared, progress=False)
imported: list[Run] = from_spans(to_spans(run.recording), progress=lambda done, total: None)
filed = run.bug_report("bug.zip", runner=agent, redact=Redaction(keys=["email"]))
both_filed = bug_report([run, again], "bugs.zip")
ranked = run.suspects("lexical")
replayed = Agent(provider=replay_provider(run))
with capture(tracer_provider=TracerProvider()) as cap:
    agent.subscribe(live_spans(tracer_provider=cap.tracer_provider))
captured: list[Run] = from_spans(cap.spans)
checked = [verify(run).holds, verify(run.recording.model_dump_json()).holds,
           verify(load_recording(run.recording.model_dump(mode="json"))).holds]


async def prove(runs: RunSet) -> Localization:
    await runs.localize(rerun=agent, where=lambda r: r.status == "finished", samples=3)
    return await localize(run, rerun=agent, trials=trials)


print(flow, chat, trials, answer, again, error, composed, followed, walked, prove, both, steps, nodes, rag,
      memory, linted, reloaded, imported, filed, both_filed, ranked, replayed, captured, checked)
'''

BAD = '''
from footprint_lab import Agent, Chat, Sequence
from footprint_lab.explain import Trials, localize
from footprint_lab.providers import mock, replay_provider

Agent(provider="openai")          # a provider's name is not a provider
Agent(provider=mock(reply="ok")).run_sync(42)   # a number is not a message
Chat(Agent(provider=mock(reply="ok"))).send_sync(42)   # nor to a chat
Agent(provider=mock(reply="ok")).follow_up_sync(["a", "list"])   # nor to a follow-up
later = localize("not a run")   # a string is not a run to explain
Sequence({"only": Agent(provider=mock(reply="ok"))}).resume_sync("{}", "yes", identity="alice")   # not an identity
Sequence(Agent(provider=mock(reply="ok")))   # members come named: {name: runner} or (name, runner) pairs
replay_provider("run-1f2e")   # a run's id is not the run to replay
Trials().replace(sampels=5)   # a setting's name misspelled
'''


@pytest.mark.parametrize("script, clean", [(GOOD, True), (BAD, False)], ids=["documented use", "wrong kinds"])
def test_mypy_strict_reads_the_public_surface(tmp_path: Path, script: str, clean: bool) -> None:
    path = tmp_path / "user.py"
    path.write_text(script, encoding="utf-8")
    found = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
                            str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=600,
                           env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    said = found.stdout + found.stderr
    if clean:
        assert found.returncode == 0, said
    else:
        errors = [line for line in said.splitlines() if str(path.name) in line and "error:" in line]
        assert {int(line.split(":")[1]) for line in errors} == {6, 7, 8, 9, 10, 11, 12, 13, 14}, said
        assert all(any(f'"{name}"' in line for name in ("provider", "run_sync", "send_sync", "follow_up_sync",
                                                         "localize", "resume_sync", "Sequence", "replay_provider",
                                                         "replace"))
                   for line in errors), said
