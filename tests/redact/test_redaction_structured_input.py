"""A value the run's own input names under a covered key is masked in every record of that run, from its
first (issue 46): the carried history, the message as written, the checkpoint and what listeners were sent,
whichever way the run started and whenever its recording or checkpoint is read."""

from __future__ import annotations

from typing import Any

import pytest
from conversation_kit import Seen

from footprint_lab import Agent, Redaction
from footprint_lab.providers.types import LLMRequest

SECRET = "hunter2-Correct-Horse"


def echo(request: LLMRequest) -> Any:
    """Repeats the last message it was sent: a value said earlier is in the answers too."""
    return f"Noted: {list(request.messages)[-1]['content']}"


def agent(seen: Seen, key: str) -> Agent:
    return Agent(provider=seen.provider, redact=Redaction(keys=[key]))


async def started(how: str, desk: Agent, said: dict[str, Any], events: list[Any]) -> Any:
    """The run that names the secret under a covered key, started ``how``; the earlier turn says it plainly."""
    if how == "run":  # the same message says it plainly too
        return await desk.run({**said, "message": f"My password is {SECRET}."}, on_event=events.append)
    await desk.run(f"Remember {SECRET}, please.")
    if how == "follow_up":
        return await desk.follow_up(said, on_event=events.append)
    return await desk.run(said, continue_from=desk.checkpoint(), on_event=events.append)


@pytest.mark.parametrize("how", ["run", "continue_from", "follow_up"])
@pytest.mark.parametrize(("key", "value"), [("password", SECRET), ("account", {"password": SECRET})])
@pytest.mark.parametrize("checkpoint_first", [True, False])
async def test_a_secret_named_by_the_runs_own_input_is_masked_in_its_earlier_records(
        how: str, key: str, value: Any, checkpoint_first: bool) -> None:
    desk = agent(Seen(echo), "password")
    events: list[Any] = []
    run = await started(how, desk, {"message": "That was my password.", key: value}, events)
    assert run.status == "finished"
    # read in either order: what the run learned from its input holds from its first record, not from a read
    if checkpoint_first:
        checkpoint = desk.checkpoint().model_dump_json()
        recording = run.recording.model_dump_json()
    else:
        recording = run.recording.model_dump_json()
        checkpoint = desk.checkpoint().model_dump_json()
    assert SECRET not in recording
    assert SECRET not in checkpoint
    assert SECRET not in repr(events)
    assert "password" in recording  # the key is kept, its value masked


async def test_a_value_under_a_key_no_policy_covers_is_left_as_said() -> None:
    desk = agent(Seen(echo), "token")
    run = await started("continue_from", desk, {"message": "That was my password.", "password": SECRET}, [])
    assert SECRET in run.recording.model_dump_json()  # nothing said it is a secret: nothing to mask


@pytest.mark.parametrize("said", [{"password": SECRET}, {"message": "hi", "account": {"password": SECRET}}])
def test_a_recording_sweeps_what_its_input_names_whoever_ran_it(said: dict[str, Any]) -> None:
    """A runner that never read its input before recording: the build reads it first, then sweeps every record."""
    from footprint_lab.record.build import build_recording
    from footprint_lab.record.recorder import Recorder

    rec = Recorder("r1", policy=Redaction(keys=["password"]).for_run())
    rec.begin("step")
    rec.write(("said",), "set", f"my password is {SECRET}")
    rec.end()
    rec.emit("run_end", "", {"status": "finished"})
    recording = build_recording(rec, runner={"kind": "test"}, status="finished", input=said, answer=None,
                                ended_ns=rec.started_ns)
    assert SECRET not in recording.model_dump_json()
