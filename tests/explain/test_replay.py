"""Replay: a recorded run re-executed with no key and no network, or refused at the first difference."""

from __future__ import annotations

import pytest

from footprint_lab import Agent, Parallel, Redaction, Sequence, tool
from footprint_lab.errors import RunCheckpointError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.providers import mock, replay_provider
from footprint_lab.providers.replay import ReplayMismatchError, ReplaySourceError


def _same_run(live, replayed) -> None:
    a, b = live.recording, replayed.recording
    assert replayed.answer == live.answer
    assert [p.model_dump() for p in b.context_pieces] == [p.model_dump() for p in a.context_pieces]
    assert b.messages == a.messages
    assert [(x.step_id, x.system, x.response) for x in b.exchanges] == [(x.step_id, x.system, x.response)
                                                                          for x in a.exchanges]
    assert [s.step_id for s in b.steps] == [s.step_id for s in a.steps]
    assert str(replayed.backtrack()) == str(live.backtrack())


def test_replay_reproduces_a_recorded_run_exactly_without_the_model() -> None:
    live = planted_fact_agent().run_sync(REFUND_REQUEST)
    replay = replay_provider(live.recording)
    replayed = planted_fact_agent(provider=replay).run_sync(REFUND_REQUEST)
    _same_run(live, replayed)
    assert replay.calls == 2
    again = planted_fact_agent(provider=replay).run_sync(REFUND_REQUEST)  # re-executing the notebook replays again
    assert again.answer == live.answer


def test_a_changed_system_prompt_is_refused_naming_the_system_slot() -> None:
    live = planted_fact_agent().run_sync(REFUND_REQUEST)
    changed = planted_fact_agent(provider=replay_provider(live))
    changed.system = changed.system.replace("for Acme.", "for Acme Corp.")
    with pytest.raises(ReplayMismatchError) as refused:
        changed.run_sync(REFUND_REQUEST)
    error = refused.value
    assert error.code == "ERR_PROVIDER_REPLAY_MISMATCH" and error.retryable is False
    assert (error.call, error.slot, error.piece) == ("call-llm#3", "system", "system-prompt")
    assert "at character 35" in error.diff and '"sts for Acme. Policy' in error.diff
    assert "Acme Corp" not in str(error)  # the request is described by size, never quoted


def test_a_changed_input_and_a_changed_tool_result_name_their_piece() -> None:
    live = planted_fact_agent().run_sync(REFUND_REQUEST)
    replay = replay_provider(live)
    with pytest.raises(ReplayMismatchError) as refused:
        planted_fact_agent(provider=replay).run_sync("Please refund order A-1002.")
    assert (refused.value.slot, refused.value.piece) == ("messages", "user-message")
    assert "message 0, field 'content'" in refused.value.diff

    age = {"days": 47}

    @tool
    def lookup_order(order_id: str) -> dict:
        """Look up an order by its id."""
        return {"order_id": order_id, "age_days": age["days"]}

    def agent(provider):
        return Agent(provider=provider, system="Decide refunds.", tools=[lookup_order])

    recorded = agent(mock(replies=[{"tool": "lookup_order", "args": {"order_id": "A-1"}}, "DECLINED"])).run_sync("A-1?")
    age["days"] = 12
    with pytest.raises(RunCheckpointError) as failed:  # after a completed tool round the work is kept
        agent(replay_provider(recorded)).run_sync("A-1?")
    cause = failed.value.__cause__
    assert isinstance(cause, ReplayMismatchError)
    assert (cause.call, cause.slot, cause.piece) == ("call-llm#6", "messages", "call_1_1")


def test_composed_runs_replay_member_by_member_in_any_order() -> None:
    def flow(first, second):
        inner = Sequence([("draft", Agent(provider=first, system="Draft it.")),
                          ("review", Agent(provider=second, system="Review it."))])
        return Parallel([("pair", inner), ("solo", Agent(provider=second, system="Alone."))],
                        merge=lambda answers: " | ".join(f"{k}={v}" for k, v in sorted(answers.items())))

    live = flow(mock(reply="a draft"), mock(respond=lambda r: f"seen {len(r.messages)}")).run_sync("go")
    replay = replay_provider(live)
    replayed = flow(replay, replay).run_sync("go")
    assert replayed.answer == live.answer
    assert [c.answer for c in replayed.recording.children] == [c.answer for c in live.recording.children]
    assert replay.calls == 3


def test_a_redacted_recording_replays_under_its_policy() -> None:
    policy = Redaction(keys=["password"], patterns={"ticket": r"TCK-\d{6}"}, builtins=["openai_key"])
    message = "Ticket TCK-123456: key sk-abcdefghijklmnopqrstuvwx"

    def agent(provider):
        return Agent(provider=provider, system="Answer briefly.", redact=policy)

    live = agent(mock(reply="Rotated.")).run_sync(message)
    assert "TCK-123456" not in live.recording.model_dump_json()
    assert agent(replay_provider(live, redact=policy)).run_sync(message).answer == "Rotated."
    with pytest.raises(ReplayMismatchError) as refused:  # the ticket pattern is the run's own: pass it
        agent(replay_provider(live)).run_sync(message)
    assert "TCK-123456" not in str(refused.value)


def test_replay_refuses_what_is_not_a_recording() -> None:
    for source in ({"run_id": "x"}, "recording.json", None):
        with pytest.raises(ReplaySourceError) as refused:
            replay_provider(source)
        assert refused.value.code == "ERR_REPLAY_SOURCE"
    silent = Sequence([("only", Agent(provider=mock(reply="x")))]).run_sync("go")
    silent.recording.children[0].exchanges.clear()
    with pytest.raises(ReplaySourceError):
        replay_provider(silent)


def test_a_recording_with_a_value_learned_late_replays_under_its_policy() -> None:
    # the message names the password before a tool call puts it under a covered key: the recording
    # is swept, and the replayed request must be masked the same way to be recognised
    policy = Redaction(keys=["password"])

    @tool
    def login(password: str) -> str:
        """Log in."""
        return "ok"

    def agent(provider):
        return Agent(provider=provider, tools=[login], redact=policy)

    script = [{"tool": "login", "args": {"password": "sesame-42x"}}, "Logged in."]
    live = agent(mock(replies=script)).run_sync("my password is sesame-42x")
    assert "sesame-42x" not in live.recording.model_dump_json()
    assert agent(replay_provider(live, redact=policy)).run_sync("my password is sesame-42x").answer == "Logged in."
