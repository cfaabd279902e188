"""Redaction cannot be bypassed by shape (issue 17, finding 2).

A secret used as a dict key, a number under a covered key, a fact's structured data, a value
learned late in the run: each used to leak into some surface. Each shape is tested here on its
own; ``test_redaction_hostile.py`` plants random secrets in random places and shapes and scans
every surface a reader can reach.
"""

from __future__ import annotations

import json
from typing import Any

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.context import define_fact
from footprint_lab.providers import mock

POLICY = dict(keys=["password", "pin"], patterns={"ticket": r"TCK-\d{6}"})


def surfaces(run: Any, live: list[str]) -> dict[str, str]:
    """Every text a reader of the run can reach."""
    out = {
        "recording": run.recording.model_dump_json(),
        "live events": "\n".join(live),
        "events frame": run.events.to_json(),
        "steps frame": run.steps.to_json(),
        "html": run.to_html(),
        "backtrack": str(run.backtrack()) + repr(run.backtrack().to_frame().to_dict()),
        "suspects": str(run.suspects()),
    }
    calls = sum(1 for step in run.recording.steps if step.stage == "call-llm")
    for call in range(calls):
        out[f"context {call}"] = run.context(call, left_out=True).to_json()
    return out


def leaks(run: Any, live: list[str], secrets: list[str]) -> list[tuple[str, str]]:
    return [(where, secret) for where, text in surfaces(run, live).items() for secret in secrets if secret in text]


async def run_agent(agent: Agent, message: str) -> tuple[Any, list[str]]:
    live: list[str] = []
    agent.subscribe(lambda event: live.append(event.model_dump_json()))
    run = await agent.run(message, on_event=lambda event: live.append(json.dumps(event.payload)))
    return run, live


# -- the reported shapes, one by one ------------------------------------------------------
async def test_a_secret_used_as_a_dict_key_is_masked_as_a_key() -> None:
    tool = define_tool(name="tickets", description="Update tickets.",
                       input_schema={"type": "object", "properties": {}, "additionalProperties": True},
                       fn=lambda **states: {"updated": states})
    args = {"TCK-424242": "open", "TCK-535353": "closed"}
    agent = Agent(provider=mock(replies=[{"tool": "tickets", "args": args}, "done"]), tools=[tool],
                  redact=Redaction(**POLICY))  # type: ignore[arg-type]
    run, live = await run_agent(agent, "update my tickets")
    assert leaks(run, live, ["424242", "535353"]) == []
    sent = next(entry.value for commit in run.recording.commits for entry in commit.entries
                if isinstance(entry.value, dict) and entry.value.get("tool_calls"))
    # two keys masked alike stay two entries, each value kept
    assert sent["tool_calls"][0]["args"] == {"[redacted:ticket]": "open", "[redacted:ticket]#2": "closed"}


async def test_a_facts_structured_data_is_covered_before_it_becomes_text() -> None:
    agent = Agent(provider=mock(reply="ok"), redact=Redaction(**POLICY),  # type: ignore[arg-type]
                  context=[define_fact(id="account", data={"user": "ana", "password": "hunter22xyz"})])
    run, live = await run_agent(agent, "go")
    assert leaks(run, live, ["hunter22xyz"]) == []
    assert "[redacted:password]" in run.recording.exchanges[0].system


async def test_a_number_under_a_covered_key_is_masked_wherever_it_shows_up() -> None:
    tool = define_tool(name="unlock", description="Unlock.",
                       input_schema={"type": "object", "properties": {"pin": {"type": "integer"}}},
                       fn=lambda pin: {"echo": pin, "said": f"pin {pin} accepted"})
    agent = Agent(provider=mock(replies=[{"tool": "unlock", "args": {"pin": 987654}}, "done"]), tools=[tool],
                  redact=Redaction(**POLICY))  # type: ignore[arg-type]
    run, live = await run_agent(agent, "unlock it")
    assert leaks(run, live, ["987654"]) == []


async def test_a_secret_learned_late_is_swept_from_records_made_before() -> None:
    tool = define_tool(name="login", description="Log in.",
                       input_schema={"type": "object", "properties": {"password": {"type": "string"}}},
                       fn=lambda password: "ok")
    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": "sesame-42x"}}, "done"]),
                  tools=[tool], redact=Redaction(**POLICY))  # type: ignore[arg-type]
    run, _ = await run_agent(agent, "my password is sesame-42x")
    # the live events of the message went out before the secret was known; every saved record is swept
    saved = {k: v for k, v in surfaces(run, []).items()}
    assert [where for where, text in saved.items() if "sesame-42x" in text] == []


async def test_a_private_key_streamed_word_by_word_never_reaches_a_token_event() -> None:
    # the gate released "-----BEGIN" before the header was whole, and then the body matched nothing
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAbodyline\nQQQQsecondline\n-----END RSA PRIVATE KEY-----"
    agent = Agent(provider=mock(reply=f"Here: {key} done", stream=True), redact=Redaction.standard())
    run, live = await run_agent(agent, "show me the key")
    tokens = "".join(event.payload["text"] for event in run.recording.events if event.type == "token")
    assert tokens.startswith("Here: [redacted:private_key_block]") and tokens.endswith(" done")
    assert leaks(run, live, ["MIIEpAIBAAKCAQEAbodyline", "QQQQsecondline"]) == []
