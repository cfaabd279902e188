"""Redaction cannot be bypassed by shape (issue 17, finding 2).

A secret used as a dict key, a number under a covered key, a fact's structured data, a value
learned late in the run: each used to leak into some surface. Each shape is tested here on its
own; ``test_redaction_hostile.py`` plants random secrets in random places and shapes and scans
every surface a reader can reach.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.context import define_fact
from footprint_lab.providers import mock
from footprint_lab.redact.base64_words import base64_texts

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


# -- a secret in base64 --------------------------------------------------------------------
def revealed(run: Any, live: list[str], secrets: list[str]) -> list[tuple[str, str]]:
    """Each surface and secret where a base64 word of the surface decodes to text holding the secret."""
    return [(where, secret) for where, text in surfaces(run, live).items()
            for decoded in base64_texts(text.replace("\\n", " ")) for secret in secrets if secret in decoded]


@pytest.mark.parametrize("user", ["maria", "mar", "ma"])  # each padding base64 can end with: none, "=", "=="
async def test_a_learned_value_is_masked_inside_a_base64_credential(user: str) -> None:
    secret = "sesame-42x"
    header = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
    tool = define_tool(name="login", description="Log in.",
                       fn=lambda: {"password": secret, "headers": {"Authorization-Sent": header}})
    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {}}, f"Sent {header} upstream."], stream=True),
                  tools=[tool], redact=Redaction(**POLICY))  # type: ignore[arg-type]
    run, live = await run_agent(agent, "log me in")
    assert leaks(run, live, [secret, header.split()[1]]) == []
    assert revealed(run, live, [secret]) == []
    # what is recorded keeps the credential's shape: the base64 of its text with the value masked
    # (the caller's own answer stays as the model wrote it)
    masked = base64.b64encode(f"{user}:[redacted:password]".encode()).decode()
    assert run.recording.answer == f"Sent Basic {masked} upstream." and run.answer == f"Sent {header} upstream."


async def test_a_pattern_match_is_masked_inside_a_base64_blob_and_counted() -> None:
    blob = base64.b64encode(b'{"ticket": "TCK-123456", "state": "open"}').decode()
    tool = define_tool(name="export", description="Export tickets.", fn=lambda: {"blob": blob})
    agent = Agent(provider=mock(replies=[{"tool": "export", "args": {}}, "exported"]), tools=[tool],
                  redact=Redaction(**POLICY))  # type: ignore[arg-type]
    run, live = await run_agent(agent, "export")
    assert revealed(run, live, ["123456"]) == [] and leaks(run, live, [blob]) == []
    assert run.recording.redaction is not None and run.recording.redaction["counts"]["pattern:ticket"] >= 1


async def test_a_value_sent_in_base64_before_it_was_learned_is_swept() -> None:
    secret = "sesame-42x"
    early = base64.b64encode(f"my login is {secret}".encode()).decode()
    tool = define_tool(name="login", description="Log in.",
                       input_schema={"type": "object", "properties": {"password": {"type": "string"}}},
                       fn=lambda password: "ok")
    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": secret}}, "done"]),
                  tools=[tool], redact=Redaction(**POLICY))  # type: ignore[arg-type]
    run, _ = await run_agent(agent, f"here it is: {early}")
    assert revealed(run, [], [secret]) == [] and leaks(run, [], [early]) == []


async def test_base64_that_holds_nothing_covered_is_kept_as_it_was() -> None:
    image = base64.b64encode(bytes(range(256)) * 2).decode()  # binary: not text
    note = base64.b64encode(b"the parcel left Lisbon on Monday").decode()
    tool = define_tool(name="fetch", description="Fetch.", fn=lambda: {"image": image, "note": note})
    agent = Agent(provider=mock(replies=[{"tool": "fetch", "args": {}}, "fetched"]), tools=[tool],
                  redact=Redaction(**POLICY))  # type: ignore[arg-type]
    run, _ = await run_agent(agent, "fetch")
    saved = run.recording.model_dump_json()
    assert image in saved and note in saved


#: keys a policy may well cover that are also the names of a recording's own fields, a transcript message's,
#: a tool call's or a tool schema's: a run masks what is under them in its data, never a field by its name
FIELD_NAMED = ("args", "tools", "tool_calls", "usage", "tool_margins", "content", "role", "system", "status",
               "iteration", "message_count", "injected_messages", "step_id", "path", "description", "properties")


@pytest.mark.parametrize("name", FIELD_NAMED)
@pytest.mark.parametrize("sealed", [True, False])
def test_a_covered_key_named_like_a_field_masks_the_value_under_it_and_the_recording_loads(
        name: str, sealed: bool) -> None:
    from footprint_lab import define_tool, load_recording, verify

    secret = "ACCT-7781-PLANTED"
    described = "Moves money out of the vault."  # under the tool schema's description: learned from there
    transfer = define_tool(name="transfer", description=described,
                           input_schema={"type": "object", "properties": {name: {"type": "string"}}},
                           fn=lambda **args: "done")
    run = Agent(provider=mock(replies=[{"tool": "transfer", "args": {name: secret}}, "Done."]), tools=[transfer],
                redact=Redaction(keys=[name]), seal=sealed).run_sync("Pay it")
    saved = run.recording.model_dump_json()
    assert secret not in saved
    # a tool's schema is its declaration, never data under a key: its words are not learned as secrets
    assert run.recording.exchanges[0].tools[0]["description"] == described
    loaded = load_recording(saved)  # the run's own fields keep their types: it loads
    assert [step.status for step in loaded.steps] == [step.status for step in run.recording.steps]
    assert verify(loaded).status == ("holds" if sealed else "unsealed")
    assert verify(run.recording).status == ("holds" if sealed else "unsealed")


def test_a_learned_value_that_is_a_step_id_or_a_token_count_leaves_the_recording_loadable() -> None:
    """The ids records join on and the numbers a provider reports are the run's own: a value the policy
    learned that equals one (a stage's name, a token count) is masked in data, never in them."""
    from footprint_lab import define_tool, load_recording
    from footprint_lab.providers.types import LLMResponse, ToolCall, Usage

    lookup = define_tool(name="lookup", description="Look it up.",
                         input_schema={"type": "object", "properties": {"pin": {}}}, fn=lambda pin: {"ok": True})

    def counted(request: Any) -> Any:
        return (LLMResponse(tool_calls=[ToolCall("c1", "lookup", {"pin": 4821})], usage=Usage(input_tokens=4821))
                if request.call_index == 0 else "done")

    runs = [Agent(provider=mock(replies=[{"tool": "lookup", "args": {"pin": "call-llm"}}, "done"]), tools=[lookup],
                  redact=Redaction(keys=["pin"])).run_sync("hi"),
            Agent(provider=mock(replies=[{"tool": "lookup", "args": {"pin": "x"}}, "done"]), tools=[lookup],
                  redact=Redaction(keys=["requested_by"])).run_sync("hi"),
            Agent(provider=mock(respond=counted), tools=[lookup], redact=Redaction(keys=["pin"])).run_sync("hi")]
    for run in runs:
        loaded = load_recording(run.recording.model_dump_json())
        assert [e.step_id for e in loaded.exchanges] == [e.step_id for e in run.recording.exchanges]
    assert runs[2].recording.exchanges[0].response.usage.input_tokens == 4821
    assert "4821" not in json.dumps(runs[2].recording.exchanges[0].response.tool_calls[0].args)


def test_a_tool_parameter_named_like_a_covered_key_teaches_the_policy_nothing_from_its_schema() -> None:
    """``{"password": {"type": "string"}}`` in a tool's schema is no secret: once the words ``type`` and ``string``
    were learned from it and masked in every record of a run that never called the tool."""
    from footprint_lab import tool

    @tool
    def login(user: str, password: str) -> str:
        """Log in."""
        return "ok"

    run = Agent(provider=mock(replies=["Any string type works."]), tools=[login],
                redact=Redaction.standard()).run_sync("Which string type works?")
    assert run.recording.answer == "Any string type works."
    assert run.recording.messages[0]["content"] == "Which string type works?"


@pytest.mark.parametrize("name", ["content", "role", "tool_call_id", "name"])
def test_a_policy_covering_a_message_field_name_leaves_a_plain_conversation_as_it_was(name: str) -> None:
    """The conversation is written to the run's state message by message: each is masked field by field there
    too, so covering ``content`` or ``role`` no longer masks every message, the input and the answer."""
    run = Agent(provider=mock(replies=["Sure, noted."]), redact=Redaction(keys=[name])).run_sync("Hello there")
    recording = run.recording
    assert recording.messages == [{"role": "user", "content": "Hello there"},
                                  {"role": "assistant", "content": "Sure, noted."}]
    assert (recording.answer, recording.input) == ("Sure, noted.", {"message": "Hello there"})
    assert [entry.value for commit in recording.commits for entry in commit.entries
            if entry.path == ["messages"] and entry.verb == "append"] == recording.messages


@pytest.mark.parametrize("secret", ["Pass-Word", "PASSWORD", "[redacted:x]QzTail9", "[redacted:password] hunter2"])
def test_a_secret_spelled_like_its_key_or_like_a_mask_is_masked_wherever_it_shows_up(secret: str) -> None:
    """A covered key's name inside a masked value is not learned (it is the policy's word), but a value is learned
    whatever it reads like; and a value that starts like a mask already written is still found."""
    from footprint_lab import define_tool

    login = define_tool(name="login", description="Log in.", fn=lambda **args: "ok",
                        input_schema={"type": "object", "properties": {"password": {"type": "string"}}})
    run = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": secret}}, f"logged in with {secret}"]),
                tools=[login], redact=Redaction(keys=["password"])).run_sync(f"my password is {secret}")
    assert secret not in run.recording.model_dump_json()
    assert run.recording.input == {"message": "my password is [redacted:password]"}


def test_a_learned_value_is_masked_around_masks_already_written_never_inside_them() -> None:
    """A learned word that a mask spells (``redacted``) is masked where it stands on its own and the mask stays
    whole; one that starts inside a mask and runs past it (``d]tail``) is still masked, never left showing."""
    scrubber = Redaction(keys=["password"]).for_run()
    scrubber.scrub({"password": "redacted"})
    assert scrubber.scrub("[redacted:password] and redacted") == "[redacted:password] and [redacted:password]"
    scrubber.scrub({"password": "d]tail"})
    assert "d]tail" not in scrubber.scrub("[redacted:password]tail")
