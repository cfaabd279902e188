"""A runner's own labels are text like any other: a redaction policy that covers an agent's ``name`` or
``id``, or a composition member's name, masks it in every record, event, frame, view and error, as it
masks the run's content (issue 46: an agent named with a secret showed it in the view's header)."""

from __future__ import annotations

import asyncio
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from flow_kit import approver

from footprint_lab import (
    Agent,
    Chat,
    Conditional,
    Graph,
    Loop,
    Parallel,
    Redaction,
    Sequence,
    Workflow,
    define_tool,
    step,
)
from footprint_lab.errors import (
    ConversationMismatchError,
    DuplicateStepError,
    FlowCheckpointError,
    GraphCycleError,
    InvalidCheckpointError,
    InvalidRunInputError,
    RunCheckpointError,
    RunInFlightError,
)
from footprint_lab.notebook import export
from footprint_lab.providers import mock

SECRET = "acme-secret-123"
POLICY = Redaction(patterns={"acme": r"acme-secret-\d+"})
MASK = "[redacted:acme]"


def says(answer: str, *, redact: Redaction | None = POLICY, **labels: Any) -> Agent:
    return Agent(provider=mock(respond=lambda request: answer), redact=redact, **labels)


def served(run: Any, live: list[str], tmp_path: Path) -> dict[str, str]:
    """Everything a run's records, views and files serve, by where it is served."""
    bundle = run.bug_report(tmp_path / "report.zip")
    with zipfile.ZipFile(bundle) as opened:
        report = "".join(opened.read(name).decode() for name in opened.namelist())
    notebook = export([run], tmp_path / "shared.ipynb", title="shared").read_text()
    return {
        "recording": run.recording.model_dump_json(),
        "saved recording": json.dumps(run._repr_mimebundle_(include=["application/json"]), default=str),
        "events frame": run.events.to_json(),
        "steps frame": run.steps.to_json(),
        "tree": run.tree(steps=True).to_frame().to_json(),
        "html": run.to_html(),
        "repr": repr(run) + str(run),
        "timeline": str(run.timeline()),
        "live events": "".join(live),
        "bug report": report,
        "notebook": notebook,
    }


def leaks(run: Any, live: list[str], tmp_path: Path) -> list[str]:
    return [where for where, text in served(run, live, tmp_path).items() if SECRET in text]


async def test_an_agent_named_with_a_covered_value_shows_it_masked_everywhere(tmp_path: Path) -> None:
    agent = says("hello", name=SECRET, id=SECRET)
    live: list[str] = []
    run = await agent.run("hi", on_event=lambda event: live.append(event.model_dump_json()))
    assert leaks(run, live, tmp_path) == []
    assert run.recording.runner.name == MASK and run.recording.runner.id == MASK
    assert MASK in run.to_html()  # the header names it masked, not nothing
    assert agent.name == SECRET   # the live runner keeps what it was given


async def test_a_name_matched_only_in_part_is_masked_in_part(tmp_path: Path) -> None:
    run = await says("hello", name=f"desk for {SECRET}").run("hi")
    assert run.recording.runner.name == f"desk for {MASK}"
    assert leaks(run, [], tmp_path) == []


def _compositions() -> dict[str, Any]:
    member = says("fine")
    other = says("ok", redact=None, name=f"{SECRET}-b")  # covered by the composition its sibling declares
    return {
        "sequence": Sequence({SECRET: member, "two": other}, name=SECRET),
        "parallel": Parallel({SECRET: member, "two": other}, merge=lambda answers: "merged", id=SECRET),
        "loop": Loop(Sequence({SECRET: member}), times=2),
        "conditional": Conditional([(SECRET, lambda message: True, member)], otherwise=("two", other)),
        "workflow": Workflow([step(SECRET, member), step("two", other, needs=[SECRET])]),
        "graph": Graph([step(SECRET, member), step("two", other, needs=[SECRET])]),
        "nested": Sequence({"outer": Parallel({SECRET: Sequence({SECRET: member})}, merge=lambda a: "m")}),
    }


@pytest.mark.parametrize("kind", list(_compositions()))
async def test_a_member_named_with_a_covered_value_shows_it_masked_everywhere(kind: str, tmp_path: Path) -> None:
    flow = _compositions()[kind]
    live: list[str] = []
    run = await flow.run("hi", on_event=lambda event: live.append(event.model_dump_json()))
    assert run.status == "finished"
    assert leaks(run, live, tmp_path) == []
    assert MASK in run.recording.model_dump_json()  # the member's outputs path, its meta: named, masked


async def test_a_run_without_a_policy_keeps_the_names_it_was_given() -> None:
    run = await Sequence({SECRET: says("fine", redact=None)}, name=SECRET).run("hi")
    recorded = run.recording.model_dump_json()
    assert SECRET in recorded and MASK not in recorded


async def test_an_error_naming_a_covered_member_masks_it_in_its_message_and_its_card() -> None:
    def down(request: Any) -> Any:
        raise RuntimeError("provider down")

    flow = Sequence({"first": says("fine"), SECRET: Agent(provider=mock(respond=down))})
    with pytest.raises(FlowCheckpointError) as failed:
        await flow.run("hi")
    assert SECRET not in str(failed.value) and MASK in str(failed.value)
    assert failed.value.member == MASK

    empty = Sequence({"first": says(""), SECRET: says("never")})  # the member's door refuses an empty message
    with pytest.raises(InvalidRunInputError) as refused:
        await empty.run("hi")
    assert SECRET not in str(refused.value) and MASK in str(refused.value)


def test_a_refusal_naming_covered_members_before_anything_runs_masks_them() -> None:
    member = says("fine")
    with pytest.raises(DuplicateStepError) as twice:
        Sequence([(SECRET, member), (SECRET, member)])
    assert SECRET not in str(twice.value) and twice.value.step_name == MASK
    with pytest.raises(GraphCycleError) as cycle:
        Graph([step(SECRET, member, needs=["two"]), step("two", member, needs=[SECRET])])
    assert SECRET not in str(cycle.value) and MASK in cycle.value.cycle


async def test_a_lab_on_an_agent_named_with_a_covered_value_never_holds_it() -> None:
    from footprint_lab import Lab

    agent = says("hello", name=SECRET, id=SECRET)
    lab = Lab(agent, message="hi")
    lab.show(await agent.run("hi"))
    lab.open_answer()
    state = json.dumps(lab.get_state(), default=str)     # what the notebook saves and the browser is sent
    assert SECRET not in state and MASK in lab.title


# -- checkpoints: what a resume matches on is held masked, and matched masked --------------------------
def asks(**labels: Any) -> Agent:
    """Asks a person before answering (``approved: <the answer>``), covered by POLICY."""
    return approver(redact=POLICY, **labels)


def stored(checkpoint: Any) -> str:
    """A checkpoint as a user saves and shares it: its JSON."""
    text = checkpoint.model_dump_json()
    assert SECRET not in text
    return text


async def test_an_agents_checkpoint_holds_its_covered_id_masked_and_resumes_on_a_fresh_agent() -> None:
    paused = await asks(name=SECRET, id=SECRET).run("refund please")
    assert paused.status == "paused"
    text = stored(paused.checkpoint)
    assert paused.checkpoint.agent_id == MASK and MASK in text
    again = asks(name=SECRET, id=SECRET)  # another process, built the same way
    run = await again.resume(text, "yes")
    assert run.status == "finished" and run.answer == "approved: yes"
    assert SECRET not in run.recording.model_dump_json()
    run = await asks(name=SECRET, id=SECRET).resume(paused.checkpoint, "yes")  # in this process, as handed back
    assert run.answer == "approved: yes"


async def test_an_agent_with_another_id_is_still_refused_a_masked_checkpoint() -> None:
    paused = await asks(id=SECRET).run("refund please")
    with pytest.raises(ConversationMismatchError) as other:
        await asks(id="another-agent").resume(stored(paused.checkpoint), "yes")
    assert SECRET not in str(other.value.evidence())


async def test_an_agents_failure_checkpoint_holds_its_covered_id_masked() -> None:
    def down(request: Any) -> Any:
        raise RuntimeError("provider down")

    lookup = define_tool(name="lookup", description="Look up.", fn=lambda: "found")
    calls = iter([{"tool": "lookup", "args": {}}])
    agent = Agent(provider=mock(respond=lambda request: next(calls, None) or down(request)), tools=[lookup],
                  redact=POLICY, id=SECRET, name=SECRET)
    with pytest.raises(RunCheckpointError) as failed:
        await agent.run("go")
    assert failed.value.checkpoint.agent_id == MASK
    stored(failed.value.checkpoint)
    assert SECRET not in str(failed.value) and SECRET not in str(failed.value.evidence())


def _pausing_compositions() -> dict[str, Any]:
    return {
        "sequence": lambda: Sequence({"first": says("fine"), SECRET: asks(name=SECRET, id=SECRET)},
                                     name=SECRET, id=SECRET),
        "parallel": lambda: Parallel({SECRET: asks(id=SECRET), f"{SECRET}-b": says("ok")},
                                     merge=lambda answers: " | ".join(answers.values()), id=SECRET),
        "workflow": lambda: Workflow([step(SECRET, says("fine")), step("two", asks(), needs=[SECRET])]),
        "nested": lambda: Sequence({SECRET: Parallel({SECRET: Sequence({SECRET: asks(id=SECRET)})},
                                                     merge=lambda answers: " | ".join(answers.values()))},
                                     id=SECRET),
        "loop": lambda: Loop(Sequence({SECRET: asks()}), times=1, id=SECRET),
    }


@pytest.mark.parametrize("kind", list(_pausing_compositions()))
async def test_a_composition_paused_in_a_covered_member_holds_its_names_masked_and_resumes(kind: str) -> None:
    build = _pausing_compositions()[kind]
    paused = await build().run("refund please")
    assert paused.status == "paused"
    text = stored(paused.checkpoint)
    assert MASK in text
    run = await build().resume(text, "yes")  # a fresh composition built the same way, from the stored JSON
    assert run.status == "finished", run.status
    assert "approved: yes" in (run.answer or "")
    assert SECRET not in run.recording.model_dump_json()
    run = await build().resume(paused.checkpoint, "yes")  # as handed back, in this process
    assert "approved: yes" in (run.answer or "")


async def test_two_members_masked_alike_stay_two_in_a_checkpoint_and_resume_each() -> None:
    def build() -> Parallel:
        return Parallel({SECRET: asks(), "acme-secret-456": asks()},
                        merge=lambda answers: " | ".join(f"{k}={v}" for k, v in answers.items()))

    paused = await build().run("refund please")
    text = stored(paused.checkpoint)
    assert "acme-secret-456" not in text
    assert sorted(paused.checkpoint.paused) == [MASK, f"{MASK}#2"]
    second = await build().resume(text, "first")
    assert second.status == "paused"
    stored(second.checkpoint)
    done = await build().resume(second.checkpoint.model_dump_json(), "second")
    assert done.answer == f"{SECRET}=approved: first | acme-secret-456=approved: second"


async def test_a_composition_with_another_id_is_still_refused_a_masked_checkpoint() -> None:
    paused = await Sequence({"ask": asks()}, id=SECRET).run("refund please")
    with pytest.raises(InvalidCheckpointError) as other:
        await Sequence({"ask": asks()}, id="another").resume(stored(paused.checkpoint), "yes")
    assert other.value.field == "runner.id"
    with pytest.raises(InvalidCheckpointError) as renamed:
        await Sequence({"renamed": asks()}, id=SECRET).resume(stored(paused.checkpoint), "yes")
    assert SECRET not in str(renamed.value)


async def test_a_composition_failure_checkpoint_holds_its_names_masked_and_resumes_on_error() -> None:
    state = {"down": True}

    def flaky(request: Any) -> Any:
        if state["down"]:
            raise RuntimeError("provider down")
        return "recovered"

    def build() -> Sequence:
        return Sequence({SECRET: says("fine", name=SECRET), f"{SECRET}-2": Agent(provider=mock(respond=flaky))},
                        name=SECRET, id=SECRET)

    with pytest.raises(FlowCheckpointError) as failed:
        await build().run("hi")
    text = stored(failed.value.checkpoint)
    assert SECRET not in str(failed.value) and SECRET not in str(failed.value.evidence())
    assert MASK in text
    state["down"] = False
    run = await build().resume_on_error(text)
    assert run.status == "finished" and run.answer == "recovered"
    assert [child.status for child in run.recording.children][:1] == ["finished"]


async def test_a_chat_with_a_covered_agent_id_shows_it_masked_in_its_checkpoints_and_bug_report(tmp_path: Path) -> None:
    chat = Chat(says("hello", name=SECRET, id=SECRET))
    await chat.send("hi")
    await chat.send("again")  # continues the first turn's checkpoint: the masked id matches this agent's
    checkpoints = [c for k in range(len(chat)) for c in (chat.turn(k).before, chat.turn(k).after) if c is not None]
    assert checkpoints and all(c.agent_id == MASK for c in checkpoints)
    bundle = chat.bug_report(tmp_path / "chat.zip")
    with zipfile.ZipFile(bundle) as opened:
        report = "".join(opened.read(name).decode() for name in opened.namelist())
    shown = [report, chat.frame().to_string(), repr(chat), *(c.model_dump_json() + repr(c) for c in checkpoints)]
    assert [text for text in shown if SECRET in text] == []


async def test_a_turn_refused_while_one_is_in_flight_names_the_covered_agent_id_masked() -> None:
    release = asyncio.Event()

    async def slow(request: Any) -> Any:
        await release.wait()
        return "done"

    agent = Agent(provider=mock(respond=slow), redact=POLICY, id=SECRET)
    first = asyncio.ensure_future(agent.run("one"))
    await asyncio.sleep(0)
    try:
        with pytest.raises(RunInFlightError) as busy:
            await agent.run("two")
    finally:
        release.set()
    assert (await first).answer == "done"
    assert busy.value.agent_id == MASK and SECRET not in str(busy.value.evidence())
