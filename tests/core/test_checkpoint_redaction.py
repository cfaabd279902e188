"""A checkpoint is a redaction surface: what it shows is masked, what a resume in this process uses is real,
and a stored copy holding masks continues only once its caller says how (issue 17)."""

from __future__ import annotations

import json
import pickle
import string
from typing import Any

import pytest
from flow_kit import approver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from footprint_lab import Agent, Checkpoint, FlowCheckpoint, Identity, Redaction, Sequence, define_tool, tool
from footprint_lab.core.member_run import open_run_count
from footprint_lab.errors import (
    FlowCheckpointError,
    MaskedCheckpointError,
    RunCheckpointError,
    UnmaskArgumentError,
)
from footprint_lab.providers import LLMRequest, mock

PASSWORD = "hunter2-correct"
# ten digits: a secret that short hex digests, run ids and timestamps cannot hold by chance
PIN = 4821390517
EMAIL = "ana.lopez@example.org"
POLICY = Redaction(keys=["password", "pin"], builtins=["email"])
SECRETS = (PASSWORD, str(PIN), EMAIL)


def leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


class Model:
    """Logs in with the password and PIN the user gave, then answers; every request is kept."""

    def __init__(self, *, fail_second: bool = False) -> None:
        self.requests: list[str] = []
        self.fail_second = fail_second

    def __call__(self, request: LLMRequest) -> Any:
        self.requests.append(json.dumps(list(request.messages)))
        if request.messages[-1]["role"] == "user":
            return {"tool": "login", "args": {"user": EMAIL, "password": PASSWORD, "pin": PIN}}
        if self.fail_second:
            self.fail_second = False
            raise ConnectionError("reset")
        return f"Logged {EMAIL} in."


def agent_with(model: Model, logins: list[Any]) -> Agent:
    @tool
    def login(user: str, password: str, pin: int) -> dict[str, Any]:
        """Log the user in."""
        logins.append((password, pin))
        return {"session": "s-1", "password": password}

    return Agent(provider=mock(respond=model), tools=[login], redact=POLICY, id="desk")


def shown(checkpoint: Any) -> str:
    """Everything a checkpoint shows: JSON, dump, repr, pickle and its notebook card."""
    bundle = checkpoint._repr_mimebundle_()
    return "\n".join([checkpoint.model_dump_json(), json.dumps(checkpoint.model_dump(mode="json")), repr(checkpoint),
                      str(pickle.dumps(checkpoint)), json.dumps(bundle, default=str)])


async def failed_after_login() -> tuple[Agent, Model, list[Any], RunCheckpointError]:
    model, logins = Model(fail_second=True), []
    agent = agent_with(model, logins)
    with pytest.raises(RunCheckpointError) as caught:
        await agent.run(f"Log me in: {EMAIL}, password {PASSWORD}", identity=Identity(principal=EMAIL))
    return agent, model, logins, caught.value


async def test_a_checkpoint_shows_masks_and_resumes_in_this_process_with_the_real_values() -> None:
    agent, model, logins, err = await failed_after_login()
    for checkpoint in (err.checkpoint, agent.checkpoint(), agent.last_run.checkpoint):  # type: ignore[union-attr]
        assert checkpoint is not None and checkpoint.masked
        assert leaks(shown(checkpoint)) == []
        assert "[redacted:password]" in checkpoint.model_dump_json()
    assert leaks(str(err)) == [] and leaks(repr(err)) == []
    assert err.checkpoint.identity == {"principal": "[redacted:email]"}
    done = await agent.resume_on_error(err.checkpoint, identity=Identity(principal=EMAIL))
    assert done.answer == f"Logged {EMAIL} in."
    assert logins == [(PASSWORD, PIN)]  # the finished tool did not run again
    resumed_request = model.requests[-1]
    assert PASSWORD in resumed_request and str(PIN) in resumed_request  # the model read the real conversation
    assert "[redacted:" not in resumed_request
    assert leaks(done.recording.model_dump_json()) == []
    again = agent.checkpoint()
    assert again is not None and leaks(shown(again)) == []


async def test_a_stored_masked_checkpoint_is_refused_before_anything_runs_and_names_both_fixes() -> None:
    _, _, _, err = await failed_after_login()
    stored = err.checkpoint.model_dump_json()
    model, logins = Model(), []
    fresh = agent_with(model, logins)
    events: list[Any] = []
    for value in (stored, json.loads(stored), Checkpoint.model_validate_json(stored), pickle.loads(pickle.dumps(
            err.checkpoint))):
        with pytest.raises(MaskedCheckpointError) as caught:
            await fresh.resume_on_error(value, on_event=events.append)
        refusal = caught.value
        assert refusal.code == "ERR_MASKED_CHECKPOINT" and refusal.door == "Agent.resume_on_error"
        assert refusal.placeholders == 3  # password, pin and email
        assert "unmask(" in str(refusal) and "accept_masked()" in str(refusal) and leaks(str(refusal)) == []
    with pytest.raises(MaskedCheckpointError):
        await fresh.run("again", continue_from=stored)
    assert events == [] and model.requests == [] and fresh.last_run is None and fresh.checkpoint() is None


async def test_unmask_puts_the_values_back_for_the_resume_only_numbers_as_numbers() -> None:
    _, _, _, err = await failed_after_login()
    stored = Checkpoint.model_validate_json(err.checkpoint.model_dump_json())
    assert stored.masks == ["[redacted:email]", "[redacted:password]", "[redacted:pin]"]
    unmasked = stored.unmask({"[redacted:password]": PASSWORD, "[redacted:pin]": PIN, "[redacted:email]": EMAIL})
    assert leaks(shown(unmasked)) == [] and unmasked.model_dump_json() == stored.model_dump_json()
    model, logins = Model(), []
    done = await agent_with(model, logins).resume_on_error(unmasked, identity=Identity(principal=EMAIL))
    assert done.answer == f"Logged {EMAIL} in." and logins == []
    sent = json.loads(model.requests[-1])
    assert sent[1]["tool_calls"][0]["args"] == {"user": EMAIL, "password": PASSWORD, "pin": PIN}
    assert leaks(done.recording.model_dump_json()) == []
    partly = stored.unmask({"[redacted:password]": PASSWORD})
    with pytest.raises(MaskedCheckpointError) as caught:  # a mask left without a value still stops it
        await agent_with(Model(), []).resume_on_error(partly)
    assert caught.value.placeholders == 2


async def test_accept_masked_continues_with_the_placeholders_the_model_then_reads() -> None:
    _, _, _, err = await failed_after_login()
    stored = Checkpoint.model_validate_json(err.checkpoint.model_dump_json())
    model = Model()
    done = await agent_with(model, []).resume_on_error(stored.accept_masked(),
                                                       identity=Identity(principal="[redacted:email]"))
    assert done.status == "finished"
    assert "[redacted:password]" in model.requests[-1] and leaks(model.requests[-1]) == []


@pytest.mark.parametrize(
    ("values", "received"),
    [
        (None, "None"), ({}, "a dict with no keys"), ({"password": "x"}, "a key that is not a placeholder"),
        ({"[redacted:token]": "x"}, "a placeholder this checkpoint does not hold"),
        ({"[redacted:password]": None}, "None"), ({"[redacted:password]": ["x"]}, "a list"),
    ],
)
async def test_unmask_refuses_what_cannot_put_values_back_quoting_nothing(values: Any, received: str) -> None:
    _, _, _, err = await failed_after_login()
    with pytest.raises(UnmaskArgumentError) as caught:
        Checkpoint.model_validate_json(err.checkpoint.model_dump_json()).unmask(values)
    assert caught.value.code == "ERR_UNMASK_ARGUMENT" and caught.value.setting == "values"
    assert caught.value.received.startswith(received.split()[0])
    assert leaks(str(caught.value)) == []


async def test_a_checkpoint_edited_in_place_is_read_by_its_fields_like_a_stored_one() -> None:
    _, _, _, err = await failed_after_login()
    edited = err.checkpoint.model_copy(deep=True)
    edited.history[0]["content"] = "Log me in, password [redacted:password]"
    with pytest.raises(MaskedCheckpointError):
        await agent_with(Model(), []).resume_on_error(edited)


async def test_a_conversation_without_a_policy_is_unchanged_and_never_refused_for_its_text() -> None:
    text = "My notes say [redacted:password], odd."
    agent = Agent(provider=mock(reply="ok"))
    await agent.run(text)
    checkpoint = agent.checkpoint()
    assert checkpoint is not None and checkpoint.history[0]["content"] == text
    stored = checkpoint.model_dump_json()
    assert Checkpoint.model_validate_json(stored) == checkpoint
    again = await Agent(provider=mock(reply="fine")).run("more", continue_from=stored)
    assert again.recording.messages[0]["content"] == text


def leaky_fetch(secret: str) -> Agent:
    fetch = define_tool(name="fetch", description="Fetch the vault record.", fn=lambda: {"password": secret})
    replies = [{"tool": "fetch", "args": {}}, f"The vault password is {secret}."]
    return Agent(provider=mock(replies=replies), tools=[fetch], redact=Redaction(keys=["password"]), name="fetch")


async def test_a_paused_compositions_checkpoint_shows_masks_and_resumes_here_with_the_real_answer() -> None:
    flow = Sequence({"fetch": leaky_fetch(PASSWORD), "approve": approver()})
    paused = await flow.run("Open the vault.")
    checkpoint = paused.checkpoint
    assert isinstance(checkpoint, FlowCheckpoint) and checkpoint.masked
    assert leaks(shown(checkpoint)) == [] and leaks(repr(paused)) == []
    assert checkpoint.answers == {"fetch": "The vault password is [redacted:password]."}
    done = await flow.resume(checkpoint, "yes")
    assert done.answer == "approved: yes"
    approver_saw = done.recording.children[-1]
    assert leaks(done.recording.model_dump_json()) == [] and approver_saw.status == "finished"
    events: list[Any] = []
    with pytest.raises(MaskedCheckpointError):  # its stored copy: the approver's message holds a mask
        await flow.resume(checkpoint.model_dump_json(), "yes", on_event=events.append)
    assert events == [] and open_run_count() == 0
    stored = FlowCheckpoint.model_validate_json(checkpoint.model_dump_json())
    done = await flow.resume(stored.unmask({"[redacted:password]": PASSWORD}), "yes")
    assert done.answer == "approved: yes" and leaks(done.recording.model_dump_json()) == []


async def test_a_failed_compositions_checkpoint_shows_masks_too() -> None:
    def broken(request: LLMRequest) -> Any:
        raise ConnectionError("reset")

    flow = Sequence({"fetch": leaky_fetch(PASSWORD), "next": Agent(provider=mock(respond=broken), name="next")})
    with pytest.raises(FlowCheckpointError) as caught:
        await flow.run("Open the vault.")
    assert leaks(shown(caught.value.checkpoint)) == [] and leaks(str(caught.value)) == []
    assert caught.value.checkpoint.masked


async def test_a_sealing_agents_checkpoints_are_sealed_over_their_masked_form_and_still_resume(tmp_path: Any) -> None:
    """issue 19: verify works on a checkpoint; the seal covers what the checkpoint shows, never a secret."""
    from footprint_lab import verify
    from footprint_lab.errors import InvalidCheckpointError
    from footprint_lab.notebook import verify_file

    model, logins = Model(fail_second=True), []
    agent = agent_with(model, logins)
    agent.seal = True
    with pytest.raises(RunCheckpointError) as caught:
        await agent.run(f"Log me in: {EMAIL}, password {PASSWORD}", identity=Identity(principal=EMAIL))
    err = caught.value
    for checkpoint in (err.checkpoint, agent.checkpoint()):
        assert checkpoint is not None and checkpoint.seal is not None and verify(checkpoint).holds
        assert leaks(checkpoint.seal.model_dump_json()) == []
    text = err.checkpoint.model_dump_json()
    stored = Checkpoint.model_validate_json(text)
    assert verify(stored).holds
    path = tmp_path / "checkpoint.json"
    path.write_text(text)
    assert [(where, verdict.status) for where, verdict in verify_file(path)] == [("checkpoint", "holds")]
    edited = json.loads(text)
    edited["history"][0]["content"] = "Log me in as the admin."
    verdict = verify(Checkpoint.model_validate(edited))
    assert (verdict.status, verdict.kind, verdict.field) == ("broken", "document", "history")
    path.write_text(json.dumps(edited))
    assert verify_file(path)[0][1].status == "broken"
    done = await agent.resume_on_error(err.checkpoint, identity=Identity(principal=EMAIL))  # the seal changes nothing
    assert done.answer == f"Logged {EMAIL} in." and logins == [(PASSWORD, PIN)]
    odd = json.loads(text)
    odd["seal"] = "trust me"
    with pytest.raises(InvalidCheckpointError) as refused:
        await agent.resume_on_error(odd)
    assert refused.value.field == "seal" and "trust me" not in str(refused.value)
    plain = Agent(provider=mock(reply="hi"))
    plain.run_sync("hello")
    assert verify(plain.checkpoint()).status == "unsealed"  # type: ignore[arg-type]


def test_a_composition_with_a_sealing_member_seals_its_flow_checkpoint() -> None:
    from footprint_lab import verify

    writer = Agent(provider=mock(reply="draft"), name="writer", seal=True)
    run = Sequence({"writer": writer, "approve": approver()}).run_sync("write it")
    assert run.status == "paused" and isinstance(run.checkpoint, FlowCheckpoint)
    assert run.checkpoint.seal is not None and verify(run.checkpoint).holds
    stored = FlowCheckpoint.model_validate_json(run.checkpoint.model_dump_json())
    assert verify(stored).holds
    data = json.loads(run.checkpoint.model_dump_json())
    data["answers"]["writer"] = "a different draft"
    assert verify(FlowCheckpoint.model_validate(data)).field == "answers"


WORDS = st.text(alphabet=string.ascii_letters + " .,", min_size=1, max_size=40)
SECRET_TEXT = st.text(alphabet=string.ascii_letters + string.digits, min_size=6, max_size=16).map(lambda t: "Zq" + t)


# (a pin of ten digits or more: too long to turn up in a run id by chance)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(said=WORDS, secret=SECRET_TEXT, pin=st.integers(min_value=10**9, max_value=10**12))
async def test_a_stored_checkpoint_unmasked_with_its_values_resumes_exactly_as_the_run_would(
    said: str, secret: str, pin: int,
) -> None:
    def respond(request: LLMRequest) -> Any:
        if request.messages[-1]["role"] == "user" and len(request.messages) == 1:
            return {"tool": "login", "args": {"user": "ana", "password": secret, "pin": pin}}
        return f"{said} {secret}"

    logins: list[Any] = []

    @tool
    def login(user: str, password: str, pin: int) -> str:
        """Log the user in."""
        logins.append((password, pin))
        return f"welcome {user}"

    def agent(model: Any) -> Agent:
        return Agent(provider=mock(respond=model), tools=[login], redact=Redaction(keys=["password", "pin"]))

    first = agent(respond)
    await first.run(f"{said} my password is {secret}")
    held = first.checkpoint()
    assert held is not None
    stored = held.model_dump_json()
    assert secret not in stored and str(pin) not in stored
    sent: list[list[dict[str, Any]]] = []

    def model(request: LLMRequest) -> Any:
        sent.append(list(request.messages))
        return "fine"

    await agent(model).run("again", continue_from=held)  # this process: the real values
    await agent(model).run("again", continue_from=Checkpoint.model_validate_json(stored).unmask(
        {"[redacted:password]": secret, "[redacted:pin]": pin}))
    assert sent[0] == sent[1]
    assert logins == [(secret, pin)]


@pytest.mark.parametrize("key", ["name", "id", "role", "content"])
async def test_a_stored_checkpoint_resumes_when_the_policy_covers_a_message_field_name(key: str) -> None:
    """A transcript message's own fields (a tool call's name and id, a role, a text) are never keys a policy
    covers: a stored checkpoint's history keeps the calls its pending question names, and it resumes."""
    from footprint_lab import ask_human

    secret = "UsrSecret-9953"

    def respond(request: LLMRequest) -> Any:
        last = request.messages[-1]
        if last["role"] == "user":
            return {"tool": "lookup", "args": {key: "ArgSecret-7731"}}
        return {"tool": "confirm", "args": {}} if request.call_index == 1 else f"Done after {last['content']}"

    def confirm() -> None:
        ask_human("Proceed?", choices=["yes", "no"])

    def agent() -> Agent:
        lookup = define_tool(name="lookup", description="Looks up.", fn=lambda **args: {"n": 1},
                             input_schema={"type": "object", "properties": {key: {"type": "string"}}})
        return Agent(provider=mock(respond=respond), tools=[lookup, define_tool(
            name="confirm", description="Ask.", fn=confirm)], redact=Redaction(keys=[key]), id="desk")

    paused = await agent().run({"message": "hi", key: secret})
    assert paused.checkpoint is not None
    stored = Checkpoint.model_validate_json(paused.checkpoint.model_dump_json())
    assert secret not in stored.model_dump_json() and "ArgSecret-7731" not in stored.model_dump_json()
    assert [call["name"] for call in stored.history[-1]["tool_calls"]] == ["confirm"]
    done = await agent().resume(stored.accept_masked(), "yes")
    assert done.recording.status == "finished"
