"""A paused composition's checkpoint is plain JSON: it round-trips exactly, resumes on a freshly built
composition (in another process too), and a tampered one is refused by name before anything runs."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from flow_kit import approver, nested_flow
from paths_kit import ROOT, TESTS

from footprint_lab import Identity, Parallel, Run, Sequence, ToolContext
from footprint_lab.core.member_run import open_run_count
from footprint_lab.core.runner import Mount, Runner
from footprint_lab.errors import (
    ConversationMismatchError,
    InvalidCheckpointError,
    InvalidRunInputError,
    ResumeIdentityConflictError,
)
from footprint_lab.flow import FlowCheckpoint

ANA = Identity(principal="ana", tenant="acme")
SENTINEL = "ZQX-caller-data"
DEEP = "paused.fan.paused.deep.paused.pass-1.paused.approve"


class Stuck(Runner):
    """A hand-built runner that says it paused but leaves nothing a resume could read."""

    kind = "stuck"

    async def _execute(self, bag: dict[str, Any], mount: Mount) -> Run:
        return Run(run_id=mount.run_id, status="paused", answer=None, question="?", checkpoint={"nothing": 1})


async def paused_nested(identity: Identity | None = ANA) -> Any:
    run = await nested_flow().run("refund please", identity=identity)
    assert run.paused
    return run


async def test_a_nested_pause_round_trips_through_json_exactly_and_resumes_on_a_new_composition() -> None:
    paused = await paused_nested()
    checkpoint = paused.checkpoint
    assert isinstance(checkpoint, FlowCheckpoint) and checkpoint.schema_version == 1
    assert checkpoint.question == "Refund 120 EUR?" and checkpoint.asking == "fan"
    text = checkpoint.model_dump_json()
    loaded = FlowCheckpoint.model_validate_json(text)
    assert loaded == checkpoint and loaded.model_dump_json() == text
    assert isinstance(loaded.paused["fan"], FlowCheckpoint)
    assert json.loads(text)["paused"]["fan"]["answers"] == {"side": "side(first(refund please))"}
    seen: list[ToolContext] = []
    for form in (text, json.loads(text), loaded):
        fresh = nested_flow(seen)
        done = await fresh.resume(form, "yes")
        assert done.status == "finished" and done.run_id == paused.run_id
        assert done.answer == "side(first(refund please)) | approved: yes"
        assert done.recording.identity == ANA.as_dict()
    assert seen == []  # the asking tool never ran again: the answer is its result
    assert open_run_count() == 0


def test_a_pause_stored_by_one_process_resumes_in_another(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)])}
    stored = tmp_path / "paused.json"
    pause = ("import asyncio, sys; from flow_kit import nested_flow; "
             "run = asyncio.run(nested_flow().run('refund please', identity={'principal': 'ana'})); "
             "open(sys.argv[1], 'w').write(run.checkpoint.model_dump_json()); print(run.run_id)")
    resume = ("import asyncio, sys; from flow_kit import nested_flow; "
              "run = asyncio.run(nested_flow().resume(open(sys.argv[1]).read(), 'yes')); "
              "print(run.run_id); print(run.answer)")
    first = subprocess.run([sys.executable, "-c", pause, str(stored)], env=env, capture_output=True, text=True,
                           check=True)
    second = subprocess.run([sys.executable, "-c", resume, str(stored)], env=env, capture_output=True, text=True,
                            check=True)
    run_id, answer = second.stdout.splitlines()
    assert run_id == first.stdout.strip()
    assert answer == "side(first(refund please)) | approved: yes"


def at(data: dict[str, Any], dotted: str) -> dict[str, Any]:
    node: Any = data
    for part in dotted.split("."):
        node = node[part]
    return node


TAMPERED = [
    (lambda d: d.update(schema_version=2), "schema_version"),
    (lambda d: d.pop("answers"), "answers"),
    (lambda d: d.update(extra=SENTINEL), "checkpoint"),
    (lambda d: d.update(run_id=" "), "run_id"),
    (lambda d: d.update(runner={"kind": "loop", "id": None, "name": None}), "runner.kind"),
    (lambda d: d["runner"].update(id="another-desk"), None),  # only an explicit id on both sides can differ
    (lambda d: d.update(identity={"principal": ""}), "identity.principal"),
    (lambda d: d.update(input={"text": SENTINEL}), "input"),
    (lambda d: d["input"].update(parent_run=SENTINEL), "input"),
    (lambda d: d["answers"].update({SENTINEL: "x"}), "answers"),
    (lambda d: d["answers"].update(first=7), "answers"),
    (lambda d: d.update(paused={}), "paused"),
    (lambda d: d["paused"].update({SENTINEL: {}}), "paused"),
    (lambda d: d["answers"].update(fan="done"), "paused.fan"),
    (lambda d: at(d, "paused.fan").update(runner={"kind": "sequence", "id": None, "name": None}),
     "paused.fan.runner.kind"),
    (lambda d: at(d, "paused.fan").update(run_id="run-000000000000"), "paused.fan.run_id"),
    (lambda d: at(d, DEEP)["history"][0].update(role=SENTINEL), f"{DEEP}.history[0].role"),
    (lambda d: at(d, DEEP).pop("history"), f"{DEEP}.history"),
    (lambda d: at(d, DEEP).update(pause=None), f"{DEEP}.history"),
    (lambda d: at(d, DEEP).update(run_id="run-000000000000"), "paused.fan.paused.deep.paused.pass-1.paused."
                                                              "approve.run_id"),
    (lambda d: at(d, "paused.fan.paused.deep").update(paused={"pass-2": {}}), "paused.fan.paused.deep.paused"),
]


@pytest.mark.parametrize(("tamper", "field"), TAMPERED)
async def test_a_tampered_checkpoint_is_refused_naming_the_field_before_anything_runs(
    tamper: Any, field: str | None,
) -> None:
    paused = await paused_nested()
    data = copy.deepcopy(paused.checkpoint.model_dump(mode="json"))
    tamper(data)
    seen: list[ToolContext] = []
    fresh = nested_flow(seen)
    events: list[Any] = []
    if field is None:  # the paused composition had no explicit id: another id is no conflict
        assert (await fresh.resume(data, "yes")).status == "finished"
        return
    with pytest.raises(InvalidCheckpointError) as caught:
        await fresh.resume(json.dumps(data), "yes", on_event=events.append)
    assert caught.value.code == "ERR_INVALID_CHECKPOINT"
    assert (caught.value.door, caught.value.field) == ("Sequence.resume", field)
    assert SENTINEL not in str(caught.value) and "refund please" not in str(caught.value)
    assert events == [] and seen == [] and open_run_count() == 0  # nothing ran
    assert (await fresh.resume(paused.checkpoint, "yes")).status == "finished"  # and the intact one still resumes


async def test_a_composition_with_an_explicit_id_refuses_another_ones_checkpoint() -> None:
    paused = await Sequence({"approve": approver()}, id="refunds").run("go")
    with pytest.raises(InvalidCheckpointError) as caught:
        await Sequence({"approve": approver()}, id="returns").resume(paused.checkpoint, "yes")
    assert caught.value.field == "runner.id"
    assert (await Sequence({"approve": approver()}, id="refunds").resume(paused.checkpoint, "ok")).answer == \
        "approved: ok"


async def test_a_checkpoint_resumed_on_a_composition_of_another_shape_is_refused() -> None:
    paused = await Sequence({"approve": approver(id="refund-desk")}).run("go")
    with pytest.raises(InvalidCheckpointError) as caught:
        await Sequence({"confirm": approver()}).resume(paused.checkpoint, "yes")
    assert caught.value.field == "paused"
    with pytest.raises(InvalidCheckpointError) as caught:
        await Sequence({"approve": Stuck()}).resume(paused.checkpoint.model_dump_json(), "yes")
    assert caught.value.field == "paused.approve"  # a runner that never pauses cannot be waiting
    with pytest.raises(ConversationMismatchError):
        await Sequence({"approve": approver(id="other-desk")}).resume(paused.checkpoint, "yes")


async def test_a_nested_checkpoint_for_another_person_is_refused() -> None:
    paused = await paused_nested()
    data = paused.checkpoint.model_dump(mode="json")
    data["paused"]["fan"]["identity"] = {"principal": "mallory"}
    with pytest.raises(ResumeIdentityConflictError) as caught:
        await nested_flow().resume(data, "yes")
    assert "mallory" not in str(caught.value) and "ana" not in str(caught.value)
    ownerless = (await paused_nested(identity=None)).checkpoint
    with pytest.raises(ResumeIdentityConflictError):
        await nested_flow().resume(ownerless, "yes", identity={"principal": "mallory"})
    assert (await nested_flow().resume(ownerless, "yes")).status == "finished"


async def test_an_unusable_answer_is_refused_at_the_compositions_door_before_anything_runs() -> None:
    paused = await paused_nested()
    events: list[Any] = []
    with pytest.raises(InvalidRunInputError) as caught:
        await nested_flow().resume(paused.checkpoint, None, on_event=events.append)
    assert caught.value.runner == "Sequence.resume"
    assert events == []


async def test_members_waiting_side_by_side_survive_a_json_trip_between_answers() -> None:
    fan = Parallel({"left": approver(name="left"), "right": approver(name="right")},
                   merge=lambda a: a["left"] + " / " + a["right"])
    paused = await fan.run("go")
    assert set(paused.checkpoint.questions) == {"left", "right"}
    still = await Parallel({"left": approver(name="left"), "right": approver(name="right")},
                           merge=lambda a: a["left"] + " / " + a["right"]).resume(paused.checkpoint.model_dump_json(),
                                                                                   "A")
    assert still.paused and len(still.checkpoint.paused) == 1
    done = await fan.resume(still.checkpoint.model_dump_json(), "B")
    assert sorted(done.answer.split(" / ")) == ["approved: A", "approved: B"]


async def test_a_member_that_pauses_without_a_resumable_checkpoint_fails_the_run() -> None:
    with pytest.raises(TypeError, match="could never be resumed"):
        await Sequence({"stuck": Stuck()}).run("go")
    assert open_run_count() == 0


def test_flow_checkpoint_is_public_but_imported_only_when_asked_for() -> None:
    code = ("import sys, footprint_lab.flow; assert 'pydantic' not in sys.modules; "
            "from footprint_lab.flow import FlowCheckpoint; print(FlowCheckpoint.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "FlowCheckpoint"


async def test_a_run_started_with_extra_input_keys_resumes_with_them_on_record() -> None:
    paused = await Sequence({"approve": approver()}).run({"message": "go", "ticket": "T-1"})
    assert paused.checkpoint.input == {"message": "go", "ticket": "T-1"}
    done = await Sequence({"approve": approver()}).resume(paused.checkpoint.model_dump_json(), "yes")
    assert done.recording.input == {"message": "go", "ticket": "T-1"} and done.answer == "approved: yes"


async def test_a_resume_refuses_a_redact_that_is_not_a_policy() -> None:
    from footprint_lab.errors import RedactionConfigError

    paused = await Sequence({"approve": approver()}).run("go")
    with pytest.raises(RedactionConfigError) as caught:
        await Sequence({"approve": approver()}).resume(paused.checkpoint, "yes", redact={"keys": ["password"]})
    assert caught.value.setting == "redact"


@pytest.mark.parametrize(("given", "received"), [("{not json", "text that is not JSON"), (42, "an int"),
                                                  ({"schema_version": 1}, "nothing")])
async def test_what_is_no_flow_checkpoint_at_all_is_refused_teaching_where_one_comes_from(
    given: Any, received: str,
) -> None:
    with pytest.raises(InvalidCheckpointError) as caught:
        await nested_flow().resume(given, "yes")
    assert caught.value.received == received
    assert "FlowCheckpoint.model_validate_json" in str(caught.value)
    assert open_run_count() == 0
