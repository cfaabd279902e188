"""Live events sent before the policy learned a value they hold are recalled (issue 17).

A value becomes covered late: the user's message names a password that a tool call later puts
under a covered key. The events already delivered cannot be taken back, so the listeners get a
``recall`` event naming each by ``seq`` with its payload masked (never the value); the Lab's live
view applies it, and the saved recording and ``run.events`` are swept.
"""

from __future__ import annotations

import json
from typing import Any

from flow_kit import approver

from footprint_lab import Agent, Redaction, Sequence, define_tool
from footprint_lab.lab.live import LiveSteps
from footprint_lab.providers import LLMRequest, LLMResponse, mock
from footprint_lab.providers.types import ToolCall

PASSWORD = "sesame-42x"


def login_agent(**keywords: Any) -> Agent:
    """Looks the password up (its result previewed in a live event), then logs in with it under a covered key."""
    lookup = define_tool(name="lookup", description="Look the password up.", fn=lambda: f"found: {PASSWORD}")
    login = define_tool(name="login", description="Log in.",
                        input_schema={"type": "object", "properties": {"password": {"type": "string"}}},
                        fn=lambda password: "ok")
    replies = [{"tool": "lookup", "args": {}}, {"tool": "login", "args": {"password": PASSWORD}}, "done"]
    return Agent(provider=mock(replies=replies), tools=[lookup, login], redact=Redaction(keys=["password"]),
                 **keywords)


def applied(events: list[Any]) -> dict[int, dict[str, Any]]:
    """What a subscriber that applies recalls holds: each event's payload by seq."""
    held: dict[int, dict[str, Any]] = {}
    for event in events:
        if event.type == "recall":
            for entry in event.payload["events"]:
                assert entry["seq"] in held  # only events it was sent
                held[entry["seq"]] = entry["payload"]
        else:
            held[event.seq] = event.payload
    return held


async def test_events_sent_before_a_value_was_learned_are_recalled_masked() -> None:
    events: list[Any] = []
    run = await login_agent().run("log me in", on_event=events.append)
    early = [e for e in events if e.type != "recall" and PASSWORD in json.dumps(e.payload)]
    assert early  # the lookup's result went out before the login call made the value covered
    recalls = [e for e in events if e.type == "recall"]
    assert len(recalls) == 1
    recalled = recalls[0].payload["events"]
    assert {entry["seq"] for entry in recalled} == {e.seq for e in early}
    assert PASSWORD not in json.dumps(recalls[0].payload) and "[redacted:password]" in json.dumps(recalled)
    assert recalls[0].seq > max(e.seq for e in early)
    assert PASSWORD not in json.dumps(applied(events))
    saved = run.recording.model_dump_json() + run.events.to_json()
    assert PASSWORD not in saved and '"recall"' in saved


async def test_a_run_without_late_values_sends_no_recall() -> None:
    login = define_tool(name="login", description="Log in.",
                        input_schema={"type": "object", "properties": {"password": {"type": "string"}}},
                        fn=lambda password: "ok")
    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": PASSWORD}}, "done"]), tools=[login],
                  redact=Redaction(keys=["password"]))
    events: list[Any] = []
    await agent.run("log me in", on_event=events.append)
    assert [e for e in events if e.type == "recall"] == []
    assert not any(PASSWORD in json.dumps(e.payload) for e in events)


async def test_the_lab_live_view_applies_a_recall() -> None:
    published: list[list[dict[str, Any]]] = []
    live = LiveSteps(lambda rows, hidden: published.append(rows), interval=0)
    await login_agent().run("log me in", on_event=live.on_event)
    live.close()
    assert any(PASSWORD in json.dumps(rows) for rows in published)  # shown once, before it was covered
    shown = json.dumps(live.rows)
    assert PASSWORD not in shown and "login" in shown and "found: [redacted:password]" in shown
    assert PASSWORD not in json.dumps(published[-1])


async def test_a_later_member_recalls_what_an_earlier_member_sent() -> None:
    first = Agent(provider=mock(reply=f"The code is {PASSWORD}.", stream=True), name="first")
    flow = Sequence({"first": first, "login": login_agent(name="login"), "approve": approver()})
    events: list[Any] = []
    run = await flow.run("open the door", on_event=events.append)
    assert any(PASSWORD in json.dumps(e.payload) for e in events if e.type != "recall")
    assert PASSWORD not in json.dumps(applied(events))
    assert PASSWORD not in run.recording.model_dump_json()


async def test_a_pass_phrase_learned_late_is_recalled_from_the_tokens_that_carried_it_in_pieces() -> None:
    phrase = "correct horse battery staple"
    chunks = ["I will try ", "correct horse", " battery", " staple now", "."]

    class Streaming:
        """Streams a reply in the given chunks first, then calls the login tool with the phrase."""

        name = "streaming"

        def __init__(self) -> None:
            self.calls = 0

        async def complete(self, request: LLMRequest, on_token: Any = None) -> LLMResponse:
            self.calls += 1
            if self.calls == 1:
                for chunk in chunks:
                    on_token(chunk)
                return LLMResponse(content="".join(chunks), tool_calls=[ToolCall("c1", "login", {"password": phrase})],
                                   stop_reason="tool_use")
            return LLMResponse(content="in", stop_reason="end_turn")

    login = define_tool(name="login", description="Log in.",
                        input_schema={"type": "object", "properties": {"password": {"type": "string"}}},
                        fn=lambda password: "ok")
    agent = Agent(provider=Streaming(), tools=[login], redact=Redaction(keys=["password"]))
    events: list[Any] = []
    published: list[list[dict[str, Any]]] = []
    live = LiveSteps(lambda rows, hidden: published.append(rows), interval=0)
    run = await agent.run("log in", on_event=lambda e: (events.append(e), live.on_event(e)))
    live.close()
    tokens = [e for e in events if e.type == "token"]
    assert len(tokens) > 1 and "horse" in json.dumps([t.payload for t in tokens])  # it went out in pieces
    held = applied(events)
    streamed = "".join(held[t.seq]["text"] for t in tokens)
    assert streamed == "I will try [redacted:password] now."
    assert not any(word in json.dumps(held) for word in ("horse", "battery", "staple"))
    assert "horse" not in json.dumps(live.rows) and "[redacted:password]" in json.dumps(live.rows)
    assert "horse" not in run.recording.model_dump_json()
