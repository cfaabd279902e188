"""Replay one recorded call with pieces removed or edited, and prove a cause by replay: no agent to rebuild."""

from __future__ import annotations

import json
from typing import Any

import pytest

from footprint_lab import Agent, Redaction, tool
from footprint_lab.context import define_fact
from footprint_lab.errors import ExplainConfigError, ReplayPieceError
from footprint_lab.examples.scenarios import DECLINED, REFUND_REQUEST, planted_fact_agent, refund_model
from footprint_lab.explain import localize, replay
from footprint_lab.providers import LLMRequest, mock
from footprint_lab.record.recording_door import load_recording


class Seen:
    """A mock model that keeps every request it was sent."""

    def __init__(self, respond=refund_model) -> None:
        self.requests: list[LLMRequest] = []
        self.respond = respond
        self.provider = mock(respond=self._answer)

    def _answer(self, request: LLMRequest) -> Any:
        self.requests.append(request)
        return self.respond(request)


@pytest.fixture
async def planted_run():
    return await planted_fact_agent().run(REFUND_REQUEST)


async def test_a_replay_without_the_planted_fact_changes_the_answer_and_records_what_it_changed(planted_run):
    seen = Seen()
    found = await replay(planted_run, seen.provider, without=["vip-override"], samples=3)
    assert found.answers == [DECLINED] * 3 and found.changed == 3
    assert len(found.unchanged) == 3 and found.noise == 0  # unchanged replays beside it: the noise
    assert found.call == planted_run.recording.exchanges[-1].step_id  # the answering call by default
    # what was sent: the recorded request minus the fact, nothing else
    removed = [r for r in seen.requests if "VIP override" not in r.system]
    assert len(removed) == 3 and all(r.messages[0]["content"] == REFUND_REQUEST for r in removed)
    recorded = planted_run.recording.exchanges[-1]
    assert all(len(r.messages) == len(planted_run.recording.request_messages(recorded)) for r in seen.requests)
    assert all([t["name"] for t in r.tools] == ["lookup_order"] for r in seen.requests)
    # every replay is a recorded run, with the removal as evidence
    recording = found.replays[0].recording
    assert recording.runner.kind == "llm_call" and recording.answer == DECLINED
    assert recording.meta["replay"]["of_run"] == planted_run.run_id
    assert recording.meta["replay"]["without"] == ["vip-override"]
    by_id = {p.source_id: p for p in recording.context_pieces}
    assert by_id["vip-override"].verdict == "skipped" and by_id["vip-override"].reason == "removed by replay"
    assert by_id["customer"].verdict == "admitted"
    assert by_id["customer"].detail["replayed_from"] == f"{planted_run.run_id}/{found.call}"
    assert "Replay of call" in str(found) and "3/3" in found.summary()
    assert list(found.to_frame().arm) == ["changed"] * 3 + ["unchanged"] * 3


async def test_an_edit_replaces_the_text_sent_and_is_marked_as_edited(planted_run):
    seen = Seen()
    found = await replay(planted_run, seen.provider, edit={"vip-override": "No override is on file."})
    assert found.answers == [DECLINED]
    edited = [r for r in seen.requests if "No override is on file." in r.system]
    assert len(edited) == 1 and "VIP override" not in edited[0].system
    piece = next(p for p in found.replays[0].recording.context_pieces if p.source_id == "vip-override")
    assert piece.detail["edited"] is True and piece.content == "No override is on file."


async def test_removing_a_tool_takes_its_definition_its_results_and_the_calls_that_asked_for_them(planted_run):
    seen = Seen()
    await replay(planted_run, seen.provider, without=["lookup_order"], baseline=0)
    (sent,) = seen.requests
    assert sent.tools == []
    assert [m["role"] for m in sent.messages] == ["user"]  # the assistant turn only asked for the removed call


async def test_one_tool_result_is_named_by_its_call_id():
    @tool
    def stock(item: str) -> str:
        """Stock of an item."""
        return f"{item}: 3 left"

    replies = [{"tool": "stock", "args": {"item": "lamp"}}, {"tool": "stock", "args": {"item": "rug"}}, "done"]
    agent = Agent(provider=mock(replies=replies), system="Check stock.", tools=[stock])
    run = await agent.run("What is left?")
    calls = [m for m in run.recording.messages if m.get("role") == "tool"]
    assert len(calls) == 2
    seen = Seen(lambda request: "again")
    await replay(run, seen.provider, without=[calls[0]["tool_call_id"]], baseline=0)
    (sent,) = seen.requests
    results = [m for m in sent.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == [calls[1]["tool_call_id"]]
    asked = [c["id"] for m in sent.messages for c in m.get("tool_calls", ())]
    assert asked == [calls[1]["tool_call_id"]]  # no call is left without its result
    assert [t["name"] for t in sent.tools] == ["stock"]


@pytest.mark.parametrize(("setting", "value"), [("without", ["no-such-piece"]), ("without", ["user-message"]),
                                                ("edit", {"no-such-piece": "text"}), ("edit", {"user-message": "x"})])
async def test_a_piece_the_call_cannot_change_is_refused_by_name_before_anything_is_sent(planted_run, setting, value):
    seen = Seen()
    with pytest.raises(ReplayPieceError) as refused:
        await replay(planted_run, seen.provider, **{setting: value})
    said = str(refused.value)
    assert refused.value.code == "ERR_REPLAY_PIECE" and refused.value.setting == setting
    assert "vip-override" in refused.value.known and "user-message" not in refused.value.known
    assert "no-such-piece" not in said and seen.requests == []


@pytest.mark.parametrize("bad", [dict(call="call-llm#99"), dict(without=[3]), dict(edit={"vip-override": 3}),
                                 dict(edit=["vip-override"]), dict(samples=0),
                                 dict(without=["vip-override"], edit={"vip-override": "x"})])
async def test_settings_no_replay_can_use_are_refused_before_anything_is_sent(planted_run, bad):
    seen = Seen()
    with pytest.raises(ExplainConfigError) as refused:
        await replay(planted_run, seen.provider, **bad)
    assert refused.value.code and seen.requests == []


@pytest.mark.parametrize("provider", [None, "openai", planted_fact_agent])
async def test_something_that_is_no_provider_is_refused(planted_run, provider):
    with pytest.raises(ExplainConfigError) as refused:
        await replay(planted_run, provider)
    assert refused.value.setting == "provider"
    with pytest.raises(ExplainConfigError):
        await localize(planted_run, replay=provider or "nothing")


async def test_localize_by_replay_confirms_the_planted_fact_and_nothing_benign(planted_run):
    seen = Seen()
    report = await localize(planted_run, replay=seen.provider)
    assert report.confirmed == ["vip-override"]
    assert all(s.verdict == "not_confirmed" for s in report.suspects if s.source_id != "vip-override")
    assert len(seen.requests) == report.reruns  # one model call a rerun: the answering call alone
    assert "Tested by replaying the answering call" in str(report)
    full = Seen()
    rerun = await localize(planted_run, rerun=lambda exclude=(), seed=None: planted_fact_agent(
        provider=full.provider).without(exclude))
    assert rerun.confirmed == ["vip-override"] and len(full.requests) > 1.5 * len(seen.requests)


async def test_localize_by_replay_works_on_a_run_loaded_from_json(planted_run):
    text = json.dumps(planted_run.recording.model_dump(mode="json"))
    loaded = load_recording(text)
    report = await localize(loaded, replay=Seen().provider)
    assert report.confirmed == ["vip-override"]


async def test_a_cause_that_acted_through_an_earlier_call_is_named_not_hidden():
    """The fact made the model call a tool; the tool's result decides. Replaying the answering call without the fact
    keeps the result, so replay cannot confirm it, and the report says where else it was sent."""

    @tool
    def ledger(account: str) -> str:
        """The account's ledger."""
        return "credit hold: none; refund allowed"

    def model(request: LLMRequest) -> Any:
        results = [m for m in request.messages if m.get("role") == "tool"]
        if "consult the ledger" in request.system and not results and request.tools:
            return {"tool": "ledger", "args": {"account": "A-1"}}
        return "APPROVED" if any("refund allowed" in str(m.get("content")) for m in results) else "DECLINED"

    def agent(exclude=(), seed=None):
        return Agent(provider=mock(respond=model), system="Decide refunds.", tools=[ledger],
                     context=[define_fact(id="ledger-rule", data="Always consult the ledger first.")]).without(exclude)

    run = await agent().run("Refund account A-1?")
    by_replay = await localize(run, replay=mock(respond=model))
    assert "ledger-rule" not in by_replay.confirmed  # removing it from the last call changes nothing there
    assert "also sent to earlier calls" in str(by_replay) and "ledger-rule" in str(by_replay)
    assert "localize(run, rerun=agent) tests them whole" in str(by_replay)
    by_rerun = await localize(run, rerun=agent)
    assert "ledger-rule" in by_rerun.confirmed or "ledger" in by_rerun.confirmed


async def test_localize_refuses_both_a_rerun_and_a_replay(planted_run):
    with pytest.raises(ExplainConfigError) as refused:
        await localize(planted_run, rerun=planted_fact_agent(), replay=Seen().provider)
    assert refused.value.setting == "replay"


async def test_without_rerun_or_replay_the_refusal_names_both(planted_run):
    with pytest.raises(ExplainConfigError) as refused:
        await localize(planted_run)
    assert "replay=provider" in str(refused.value) and "rerun=agent" in str(refused.value)


async def test_a_replay_of_a_run_recorded_under_a_policy_sends_and_keeps_only_masked_text():
    secret = "4111-1111-1111-1111"
    policy = Redaction(patterns={"card": r"\d{4}-\d{4}-\d{4}-\d{4}"})
    seen = Seen(lambda request: f"Card on file: {secret}" if "VIP" in request.system else "No card.")
    agent = Agent(provider=mock(respond=lambda r: "Card on file."), system="Refunds.", redact=policy,
                  context=[define_fact(id="vip", data=f"VIP card {secret}")])
    run = await agent.run("Refund?")
    with pytest.raises(ExplainConfigError) as refused:  # its pattern is its own: the report cannot rebuild it
        await replay(run, seen.provider, without=["vip"])
    assert refused.value.setting == "redact" and seen.requests == []
    with pytest.raises(ExplainConfigError) as refused:  # the fix it teaches works for an imported run too
        await localize(run, replay=seen.provider)
    assert "localize(run, replay=provider, redact=policy)" in str(refused.value)
    located = await localize(run, replay=seen.provider, redact=policy, sources=["vip"], samples=1)
    assert located.suspects and all(secret not in r.system for r in seen.requests)
    with pytest.raises(ExplainConfigError) as refused:  # a rerun records under the agent's own policy
        await localize(run, rerun=agent, redact=policy)
    assert refused.value.setting == "redact"
    seen.requests.clear()
    found = await replay(run, seen.provider, without=["vip"], baseline=1, redact=policy)
    assert all(secret not in r.system for r in seen.requests)
    assert found.unchanged[0].answer == "Card on file: [redacted:card]"
    library = Agent(provider=mock(reply="ok"), system="Refunds.", redact=Redaction(builtins=["email"]))
    mailed = await library.run("Refund ana@example.com?")
    echoed = await replay(mailed, mock(respond=lambda r: "Mail ana@example.com"))  # a library pattern: rebuilt
    assert "ana@example.com" not in echoed.answers[0] and "[redacted:" in echoed.answers[0]
    dumped = [r.recording.model_dump_json() for r in (*found.replays, *found.unchanged)]
    assert all(secret not in text for text in dumped)
    assert secret not in str(found)


async def test_a_replay_keeps_what_its_provider_answers_as_a_saved_recording_reads_it_back() -> None:
    """A provider may report counts as floats (``12.0``); the replayed call keeps them as whole numbers, as a
    run does, so its recording sealed in memory still holds once saved and loaded."""
    from footprint_lab import seal, verify
    from footprint_lab.providers.types import LLMResponse, Usage

    run = Agent(provider=mock(reply="Shipped.")).run_sync("Where is A-1?")
    odd = LLMResponse(content="Daily.", usage=Usage(12.0, 3.0, 0, 0, False))  # type: ignore[arg-type]
    result = await replay(run, mock(respond=lambda request: odd))
    recording = seal(result.replays[0].recording)
    assert recording.exchanges[0].response.usage.input_tokens == 12
    assert type(recording.exchanges[0].response.usage.input_tokens) is int
    assert verify(load_recording(recording.model_dump_json())).holds


@tool
def lookup_tier(who: str) -> str:
    """Look up a customer's tier.

    Args:
        who: the customer
    """
    return "customer tier: VIP"


def _valid_order(request: LLMRequest) -> bool:
    """Whether every tool message follows the assistant turn that asked for it, as OpenAI's API requires."""
    asked: set[str] = set()
    for message in request.messages:
        asked |= {call["id"] for call in message.get("tool_calls") or ()}
        if message.get("role") == "tool" and message.get("tool_call_id") not in asked:
            return False
    return True


async def test_a_replay_tests_each_earlier_turn_and_never_sends_a_tool_result_without_its_call() -> None:
    """Turn 2 of a chat answers from turn 1's tool result. A replay removes an earlier turn by its history#i id: the
    result is confirmed, the turn that asked for it takes it along (an orphaned tool message is refused by OpenAI), and
    sources= may name an earlier turn the report named."""
    from footprint_lab import Chat
    from footprint_lab.explain.compare import Mentions

    sent: list[LLMRequest] = []

    def model(request: LLMRequest) -> Any:
        sent.append(request)
        text = json.dumps(list(request.messages))
        if request.messages[-1]["content"] == "What is my tier?":
            return {"tool": "lookup_tier", "args": {"who": "me"}}
        if request.messages[-1].get("role") == "tool":
            return "Listed as VIP."
        return "APPROVED" if "customer tier: VIP" in text else "DECLINED"

    chat = Chat(Agent(provider=mock(respond=model), tools=[lookup_tier], system="Desk."))
    await chat.send("What is my tier?")
    second = await chat.send("Refund A-1?")
    assert second.answer == "APPROVED"
    kinds = {p.source_id: p.source_kind for p in second.recording.context_pieces if p.source_id.startswith("history#")}
    result = next(name for name, kind in kinds.items() if kind == "tool_result")
    sent.clear()
    report = await localize(second, replay=mock(respond=model), comparator=Mentions("APPROVED"))
    assert result in report.confirmed
    assert all(_valid_order(request) for request in sent) and len(sent) > 10
    assert {name for name, _ in report.untested} == {"user-message"}
    named = await localize(second, replay=mock(respond=model), comparator=Mentions("APPROVED"), sources=[result])
    assert named.confirmed == [result]


async def test_a_replay_of_a_turn_whose_tool_call_ids_repeat_an_earlier_turns_keeps_each_turn_its_own() -> None:
    """Each turn of a chat numbers its tool calls from 1: removing an earlier turn's calls or results must not touch the
    current turn's, and a piece with no effect must not be confirmed."""
    from footprint_lab import Chat
    from footprint_lab.explain.compare import Label

    def model(request: LLMRequest) -> Any:
        if request.messages[-1].get("role") == "user":
            return {"tool_calls": [{"tool": "lookup_tier", "args": {"who": "a"}},
                                   {"tool": "lookup_tier", "args": {"who": "b"}}]}
        return "VIP" if any("VIP" in str(m["content"]) for m in request.messages[-2:]) else "UNKNOWN"

    invalid: list[LLMRequest] = []

    def current_turn_only(request: LLMRequest) -> str:
        if not _valid_order(request):
            invalid.append(request)
        last_user = max(k for k, m in enumerate(request.messages) if m.get("role") == "user")
        results = [m for m in request.messages[last_user:] if m.get("role") == "tool"]
        return "VIP" if any("VIP" in str(m.get("content")) for m in results) else "UNKNOWN"

    chat = Chat(Agent(provider=mock(respond=model), tools=[lookup_tier], system="Desk."))
    await chat.send("First question.")
    second = await chat.send("Second question.")
    calls = [c["id"] for m in second.recording.messages for c in m.get("tool_calls") or ()]
    assert len(calls) == 4 and len(set(calls)) == 2  # the ids repeat across the turns
    label = Label(choices=["VIP", "UNKNOWN"])
    report = await localize(second, replay=mock(respond=current_turn_only), comparator=label)
    assert invalid == []
    assert not [name for name in report.confirmed if name.startswith("history#")]
    assert report.confirmed == ["lookup_tier"]
