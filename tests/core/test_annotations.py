"""Notes on a run: attached by target, stored in the recording, refused when they name nothing."""

from __future__ import annotations

import pytest

from footprint_lab import Agent, Recording, Redaction, Run, Sequence
from footprint_lab.errors import InvalidAnnotationError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.providers import mock


def test_notes_attach_to_steps_pieces_and_the_answer_and_survive_json() -> None:
    run = planted_fact_agent().run_sync(REFUND_REQUEST)
    run.annotate("vip-override", "Planted: nobody on the team wrote this fact.", tag="suspect")
    run.annotate("call-llm#3", "The first call already saw the override.")
    run.annotate("answer", "Wrong: the order is 47 days old.", tag="wrong")
    frame = run.annotations()
    assert list(frame.columns) == ["target", "kind", "text", "tag", "at"]
    assert list(frame["target"]) == ["vip-override", "call-llm#3", "answer"]
    assert list(frame["kind"]) == ["piece", "step", "answer"]
    assert frame["tag"].fillna("-").tolist() == ["suspect", "-", "wrong"]
    loaded = Run.from_recording(Recording.model_validate_json(run.recording.model_dump_json()))
    assert loaded.recording.annotations == run.recording.annotations
    assert loaded.annotations().equals(frame)


def test_an_unknown_target_is_refused_with_the_ids_that_exist() -> None:
    run = planted_fact_agent().run_sync(REFUND_REQUEST)
    with pytest.raises(InvalidAnnotationError) as refused:
        run.annotate("call-llm#99", "no such call")
    assert refused.value.code == "ERR_INVALID_ANNOTATION"
    assert refused.value.argument == "target"
    assert {"answer", "call-llm#3", "vip-override", "system-prompt"} <= set(refused.value.known)
    assert "call-llm#99" not in str(refused.value)  # what arrived is described, not quoted
    for bad in ({"kind": "x"}, None):
        with pytest.raises(InvalidAnnotationError):
            run.annotate(bad, "text")  # type: ignore[arg-type]
    with pytest.raises(InvalidAnnotationError) as blank:
        run.annotate("answer", "   ")
    assert blank.value.argument == "text"
    with pytest.raises(InvalidAnnotationError) as tag:
        run.annotate("answer", "fine", tag=3)  # type: ignore[arg-type]
    assert tag.value.argument == "tag"
    assert run.recording.annotations == []  # nothing half-written


def test_a_member_step_of_a_composition_can_be_annotated() -> None:
    flow = Sequence([("draft", Agent(provider=mock(reply="draft"))), ("check", Agent(provider=mock(reply="ok")))])
    run = flow.run_sync("go")
    run.annotate("sequence-step#3/call-llm#3", "The checker never read the draft's sources.")
    assert run.annotations().iloc[0]["kind"] == "step"


def test_a_note_on_a_redacted_run_is_masked_by_its_policy() -> None:
    agent = Agent(provider=mock(reply="Noted."), redact=Redaction(patterns={"ticket": r"TCK-\d{6}"}))
    run = agent.run_sync("Ticket TCK-123456 again")
    run.annotate("answer", "The customer quoted TCK-123456 twice.")
    assert "TCK-123456" not in run.recording.model_dump_json()
    assert run.annotations().iloc[0]["text"] == "The customer quoted [redacted:ticket] twice."


async def test_a_note_on_a_loaded_run_is_masked_by_what_its_report_names() -> None:
    from footprint_lab import load_recording

    agent = Agent(provider=mock(reply="ok"), redact=Redaction(keys=["password"], builtins=["email"]))
    run = await agent.run("mail ana@example.org")
    loaded = Run.from_recording(load_recording(run.recording.model_dump_json()))
    note = loaded.annotate("answer", "asked bob@example.org")
    assert note.text == "asked [redacted:email]" == run.annotate("answer", "asked bob@example.org").text
    assert "bob@example.org" not in loaded.recording.model_dump_json()
    bare = Run.from_recording(load_recording((await Agent(provider=mock(reply="ok")).run("hi")).recording
                                             .model_dump_json()))
    assert bare.annotate("answer", "asked bob@example.org").text == "asked bob@example.org"  # no policy: as typed
