"""A runner's own labels are text like any other: a redaction policy that covers an agent's ``name`` or
``id``, or a composition member's name, masks it in every record, event, frame, view and error, as it
masks the run's content (issue 46: an agent named with a secret showed it in the view's header)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from footprint_lab import Agent, Conditional, Graph, Loop, Parallel, Redaction, Sequence, Workflow, step
from footprint_lab.errors import DuplicateStepError, FlowCheckpointError, GraphCycleError, InvalidRunInputError
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
