"""A chat shows every turn under the redaction it holds now: a value a later turn learned is a secret is
masked in every earlier turn too, on every surface (issue 46, high 7)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from conversation_kit import Seen

from footprint_lab import Agent, Chat, Redaction, define_tool, verify
from footprint_lab.providers import mock
from footprint_lab.providers.types import LLMRequest

SECRET = "hunter2-Correct-Horse"


def shown(chat: Chat, tmp_path: Path) -> dict[str, str]:
    """Every surface a chat has, as text."""
    surfaces = {
        "frame": chat.frame().to_string(),
        "view": "".join(str(v) for v in chat._repr_mimebundle_().values()),
        "repr": repr(chat),
    }
    for k in range(len(chat)):
        turn = chat.turn(k)
        start = chat.rerun_start(chat[k].recording)
        surfaces |= {
            f"recording {k}": "".join(leg.recording.model_dump_json() for leg in turn.legs),
            f"turn {k}": repr(turn) + str(turn.message),
            f"rerun start {k}": repr(start) + str(start),
            f"run {k}": repr(chat[k]),
            f"checkpoints {k}": "".join(c.model_dump_json() + repr(c) for c in (turn.before, turn.after) if c),
            f"context {k}": chat.context(k).to_string(),
        }
    bundle = chat.bug_report(tmp_path / f"report-{len(chat)}.zip")
    with zipfile.ZipFile(bundle) as opened:
        surfaces["bug report"] = "".join(opened.read(name).decode() for name in opened.namelist())
    return surfaces


def leaks(chat: Chat, tmp_path: Path, secret: str = SECRET) -> list[str]:
    return [name for name, text in shown(chat, tmp_path).items() if secret in text]


def echo(request: LLMRequest) -> Any:
    """Echoes the last message it was sent; stores a password with the tool when asked to."""
    last = list(request.messages)[-1]
    if last["role"] == "user" and last["content"].startswith("store"):
        return {"tool": "vault", "args": {"password": SECRET}}
    return f"Noted: {last['content']}"


def desk(seen: Seen, **keywords: Any) -> Agent:
    vault = define_tool(name="vault", description="Stores a password.", fn=lambda password: {"password": password},
                        input_schema={"type": "object", "properties": {"password": {"type": "string"}}})
    return Agent(provider=seen.provider, tools=[vault], redact=Redaction(keys=["password"]), **keywords)


@pytest.mark.parametrize("later", [1, 2])  # learned in the next turn, or two turns on
async def test_a_password_typed_early_is_masked_everywhere_once_a_later_turn_learns_it(
        later: int, tmp_path: Path) -> None:
    seen = Seen(echo)
    chat = Chat(desk(seen))
    await chat.send(f"My password is {SECRET}, please remember.")
    for _ in range(later - 1):
        await chat.send("Anything else?")
    assert SECRET in chat.turn(0)._sent  # before: nothing said it was a secret, so it shows (nothing to mask)
    await chat.send("store it")  # the tool puts it under a covered key: now it is a secret
    assert leaks(chat, tmp_path) == []


async def test_a_secret_learned_from_a_structured_message_is_masked_in_the_turns_before(tmp_path: Path) -> None:
    seen = Seen(echo)
    chat = Chat(desk(seen))
    first = await chat.send(f"Remember {SECRET}.")  # the model echoes it: in the answer too
    assert SECRET in (first.answer or "")
    await chat.send({"message": "That was my password.", "password": SECRET})
    assert leaks(chat, tmp_path) == []
    assert SECRET in first.answer  # the live answer is the model's own, as with any run


async def test_a_secret_in_an_earlier_tool_result_is_masked_once_learned(tmp_path: Path) -> None:
    def model(request: LLMRequest) -> Any:
        last = list(request.messages)[-1]
        if last["role"] == "user":
            return {"tool": "note" if "note" in last["content"] else "vault", "args": {}}
        return f"Done: {last['content']}"

    note = define_tool(name="note", description="Reads a note.", fn=lambda: f"the note says {SECRET}")
    vault = define_tool(name="vault", description="Reads the vault.", fn=lambda: {"pin": SECRET})
    chat = Chat(Agent(provider=Seen(model).provider, tools=[note, vault], redact=Redaction(keys=["pin"])))
    await chat.send("Read the note.")
    await chat.send("Open the vault.")
    assert leaks(chat, tmp_path) == []


async def test_a_rerun_still_sends_what_the_turn_sent() -> None:
    seen = Seen(echo)
    chat = Chat(desk(seen, system="Desk."))
    await chat.send(f"My password is {SECRET}.")
    await chat.send("store it")
    before = len(seen.requests)
    await chat.rerun(0, without=["system-prompt"])
    rerun = seen.requests[before]
    assert SECRET in rerun.messages[-1]["content"]  # the model reads the message as the turn sent it
    assert SECRET not in repr(chat.rerun_start(chat[0].recording))


async def test_a_fork_and_its_parent_mask_what_either_learns(tmp_path: Path) -> None:
    seen = Seen(echo)
    chat = Chat(desk(seen))
    await chat.send(f"My password is {SECRET}.")
    await chat.send("Hello again.")
    fork = chat.fork(1)
    await fork.send("Carry on.")
    await chat.send("store it")  # the parent learns it after the fork was made
    (tmp_path / "fork").mkdir()
    assert leaks(fork, tmp_path / "fork") == [] and leaks(chat, tmp_path) == []
    other = Chat(desk(seen))
    await other.send(f"Mine is {SECRET} too.")
    sibling = other.fork(1)
    await sibling.send({"message": "that was a password", "password": SECRET})
    assert leaks(other, tmp_path) == [] and leaks(sibling, tmp_path) == []


async def test_a_policy_the_agent_is_given_later_masks_the_turns_before_it(tmp_path: Path) -> None:
    seen = Seen(echo)
    agent = Agent(provider=seen.provider)
    chat = Chat(agent)
    await chat.send("Card 4111-2222-3333 was charged.")
    agent.redact = Redaction(patterns={"card": r"4111-\d{4}-\d{4}"})
    assert leaks(chat, tmp_path, "4111-2222-3333") == []
    await chat.send("Thanks.")
    assert leaks(chat, tmp_path, "4111-2222-3333") == []


@pytest.mark.parametrize("key", ["role", "args", "content"])
async def test_a_secret_a_later_turn_learns_under_a_field_named_key_is_masked_in_every_earlier_turn(key: str) -> None:
    """A covered key named like a message field (``role``, ``args``, ``content``) is still a key in a tool's
    arguments: the value a later turn puts under it is masked in the turns before, each shown with one plain
    mask (never a mask inside a mask), the roles and the chat's own words as they were."""
    from footprint_lab import Chat, define_tool

    secret = "ArgSecret-7731"

    def respond(request: LLMRequest) -> Any:
        last = request.messages[-1]
        if last["role"] == "user" and "store" in str(last["content"]):
            return {"tool": "vault", "args": {key: secret}}
        return "Stored it." if last["role"] == "tool" else f"Noted: {last['content']}"

    vault = define_tool(name="vault", description="Stores.", fn=lambda **args: "stored",
                        input_schema={"type": "object", "properties": {key: {"type": "string"}}})
    chat = Chat(Agent(provider=mock(respond=respond), tools=[vault], redact=Redaction(keys=[key])))
    await chat.send(f"remember {secret}")
    await chat.send("store it")
    for turn in (0, 1):
        recording = chat.turn(turn).legs[0].recording
        assert secret not in recording.model_dump_json()
        assert [m["role"] for m in recording.messages][:2] == ["user", "assistant"]
        assert recording.messages[0]["content"] == f"remember [redacted:{key}]"
        assert recording.redaction is not None and recording.redaction["keys"] == [key]


def test_a_policy_given_after_a_turn_masks_that_turn_in_every_field_and_keeps_its_roles() -> None:
    """The turn ran with no policy: masked again, every field of it is masked with all the recording teaches (the
    tool call's password masked in the answer, the reads and the commits), and its messages keep their roles
    (a covered value's key ``user`` is learned, never a role)."""
    secret = "hunter2secret"
    vault = define_tool(name="vault", description="Open the vault.", fn=lambda credentials: "opened",
                        input_schema={"type": "object", "properties": {"credentials": {"type": "object"}}})
    agent = Agent(provider=mock(replies=[{"tool": "vault", "args": {"credentials": {"user": "ana", "pin": secret}}},
                                         f"Your password is {secret}."]), tools=[vault], seal=True)
    chat = Chat(agent)
    chat.send_sync("open my vault")
    agent.redact = Redaction(keys=["credentials"])
    (turn,) = chat.turns
    assert secret not in turn.recording.model_dump_json()
    assert turn.recording.answer == "Your password is [redacted:credentials]."
    assert [m["role"] for m in turn.recording.messages] == ["user", "assistant", "tool", "assistant"]
    assert verify(turn.recording).holds
