"""A composition's run is covered by every policy its members declare: what one member keeps out of its
records stays out of the composition's records, every other member's, the events and the views."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conversation_kit import SECRET, Seen, scripted
from flow_kit import approver, echo

from footprint_lab import Agent, FlowCheckpoint, Identity, Parallel, Redaction, Sequence, define_tool
from footprint_lab.core.member_run import open_run_count
from footprint_lab.errors import MaskedCheckpointError, RedactionConfigError, ResumeRedactionError
from footprint_lab.providers import mock

KEY_PATTERN = r"sk-[A-Za-z0-9]{20,}"


def leaky(redact: Redaction | None) -> Agent:
    """Fetches a key with a tool, then repeats it in its answer."""
    tool = define_tool(name="fetch_key", description="Fetch the key.", fn=lambda: f"key={SECRET}")
    return Agent(provider=scripted({"tool": "fetch_key", "args": {}}, f"Your key is {SECRET}.").provider,
                 tools=[tool], redact=redact)


def served(run: Any, live: list[str]) -> dict[str, str]:
    """Everything a run's records and views serve, by where it is served."""
    return {
        "recording": run.recording.model_dump_json(),
        "events frame": run.events.to_json(),
        "tree": run.tree().to_frame().to_json(),
        "html": run.to_html(),
        "repr": repr(run),
        "live events": "".join(live),
    }


async def test_a_secret_one_member_covers_stays_out_of_every_record_of_the_run() -> None:
    downstream = Seen(lambda request: f"checked: {request.messages[-1]['content']}")
    flow = Sequence({"fetch": leaky(Redaction(patterns={"openai": KEY_PATTERN})),
                     "check": Agent(provider=downstream.provider)})
    assert flow.redact is not None and flow.redact.patterns == ("openai",)
    live: list[str] = []
    run = await flow.run("What is my key?", on_event=lambda event: live.append(event.model_dump_json()))
    assert run.answer == f"checked: Your key is {SECRET}."  # the live run used the real value
    assert downstream.requests[0].messages[-1]["content"] == f"Your key is {SECRET}."
    for where, text in served(run, live).items():
        assert SECRET not in text, where
    checked = run.recording.children[1]
    assert "[redacted:openai]" in json.dumps(checked.messages)  # the uncovered member's record is covered too
    assert run.recording.redaction is not None and run.recording.redaction["matched"] == ["pattern:openai"]


async def test_a_value_masked_by_key_in_one_member_is_masked_wherever_the_run_records_it() -> None:
    login = define_tool(
        name="login", description="Log in.",
        input_schema={"type": "object", "properties": {"Password": {"type": "string"}}},
        fn=lambda Password: f"session opened with {Password}",
    )
    member = Agent(provider=scripted({"tool": "login", "args": {"Password": "hunter22"}},
                                     "Logged in with hunter22.").provider,
                   tools=[login], redact=Redaction(keys=["password"]))
    run = await Sequence({"login": member, "after": echo("after")}).run("log me in")
    assert run.answer == "after(Logged in with hunter22.)"
    assert "hunter22" not in run.recording.model_dump_json()
    assert "[redacted:password]" in (run.recording.answer or "")


async def test_parallel_branches_and_the_merge_share_the_coverage() -> None:
    merger = mock(respond=lambda request: request.messages[-1]["content"])
    from footprint_lab import merge_with_llm

    fan = Parallel({"fetch": leaky(Redaction(builtins=["openai_key"])), "other": echo("o")},
                   merge=merge_with_llm(provider=merger, prompt="Combine:"))
    run = await fan.run("go")
    assert SECRET in (run.answer or "")
    assert SECRET not in run.recording.model_dump_json()


def test_two_members_giving_one_pattern_name_two_meanings_are_refused_when_built() -> None:
    first = echo("a")
    first.redact = Redaction(patterns={"ticket": r"TCK-\d{6}"})
    second = echo("b")
    second.redact = Redaction(patterns={"ticket": r"T-\d{4}"})
    with pytest.raises(RedactionConfigError) as caught:
        Sequence({"a": first, "b": second})
    assert caught.value.setting == "patterns"
    assert r"TCK-\d{6}" not in str(caught.value)


def paused_flow(redact: Redaction | None) -> Sequence:
    """A covered fetch, then an approver that asks a person."""
    return Sequence({"fetch": leaky(redact), "approve": approver()})


async def test_a_stored_pause_resumes_covered_on_a_freshly_built_composition() -> None:
    policy = Redaction(patterns={"openai": KEY_PATTERN})
    paused = await paused_flow(policy).run("go", identity=Identity(principal="ana"))
    assert SECRET not in paused.recording.model_dump_json()
    stored = paused.checkpoint.model_dump_json()
    assert KEY_PATTERN not in stored and SECRET not in stored  # the policy travels by name; the values masked
    events: list[Any] = []
    with pytest.raises(MaskedCheckpointError) as caught:  # a stored copy holds masks: resumed only once told how
        await paused_flow(Redaction(patterns={"openai": KEY_PATTERN})).resume(stored, "yes", on_event=events.append)
    assert caught.value.code == "ERR_MASKED_CHECKPOINT" and events == [] and open_run_count() == 0
    unmasked = FlowCheckpoint.model_validate_json(stored).unmask({"[redacted:openai]": SECRET})
    assert SECRET not in unmasked.model_dump_json()  # what it shows stays masked
    done = await paused_flow(Redaction(patterns={"openai": KEY_PATTERN})).resume(unmasked, "yes")
    assert done.answer == "approved: yes" and SECRET not in done.recording.model_dump_json()
    assert "[redacted:openai]" in json.dumps(done.recording.children[0].messages)  # the approver's leg


async def test_a_stored_pause_whose_pattern_this_side_lacks_is_refused_before_anything_runs() -> None:
    paused = await paused_flow(Redaction(patterns={"openai": KEY_PATTERN})).run("go")
    events: list[Any] = []
    with pytest.raises(ResumeRedactionError) as caught:
        await paused_flow(None).resume(paused.checkpoint.model_dump_json(), "yes", on_event=events.append)
    assert caught.value.reason == "unknown-pattern" and caught.value.door == "Sequence.resume"
    assert "resume(checkpoint, answer, redact=...)" in str(caught.value)
    assert events == [] and open_run_count() == 0
    named = Redaction(patterns={"openai": KEY_PATTERN})
    stored = FlowCheckpoint.model_validate_json(paused.checkpoint.model_dump_json())
    done = await paused_flow(None).resume(stored.unmask({"[redacted:openai]": SECRET}), f"use {SECRET}",
                                          redact=named)
    assert done.answer == f"approved: use {SECRET}" and SECRET not in done.recording.model_dump_json()


async def test_a_carried_library_pattern_covers_the_resumed_composition_too() -> None:
    paused = await paused_flow(Redaction(builtins=["openai_key"])).run("go")
    stored = FlowCheckpoint.model_validate_json(paused.checkpoint.model_dump_json()).accept_masked()
    resumed = await paused_flow(None).resume(stored, f"yes, use {SECRET}")
    assert resumed.answer == f"approved: yes, use {SECRET}"
    text = resumed.recording.model_dump_json()
    assert SECRET not in text and "[redacted:openai_key]" in text


async def test_a_compositions_events_carry_principal_and_tenant_only_when_an_identity_was_named() -> None:
    flow = Sequence({"a": echo("a")})
    for identity, expected in ((Identity(principal="ana", tenant="acme"), {"principal": "ana", "tenant": "acme"}),
                               (None, {})):
        events: list[Any] = []
        await flow.run("hi", identity=identity, on_event=events.append)
        starts = [e for e in events if e.type == "run_start"]
        assert len(starts) == 2  # the composition's and its member's
        for event in starts:
            assert {k: event.payload[k] for k in ("principal", "tenant") if k in event.payload} == expected
