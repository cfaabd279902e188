"""No evidence that cannot be saved (issue 17, finding 3): lone surrogates never reach a record.

A lone surrogate ("\\udcff") is no character and cannot be written as UTF-8. Handed in
before anything runs (the message, a system prompt, a declared text) it is refused by name;
arriving while running (a model's reply, a tool's result) it becomes U+FFFD, the same for
the model and the record, so the recording and the checkpoint always serialise.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from footprint_lab import Agent, Identity, define_tool
from footprint_lab.context import define_fact, define_rag
from footprint_lab.errors import (
    AgentConfigError,
    ContextDeclarationError,
    InvalidIdentityError,
    InvalidRunInputError,
    ToolDefinitionError,
)
from footprint_lab.providers import mock
from footprint_lab.providers.types import LLMRequest

LONE = "\udcff"


def saved(run: Any, agent: Agent) -> tuple[str, str]:
    """The run's recording and the agent's checkpoint as JSON, encoded as UTF-8 (what a file holds)."""
    recording = run.recording.model_dump_json()
    checkpoint = agent.checkpoint()
    assert checkpoint is not None
    stored = checkpoint.model_dump_json()
    recording.encode("utf-8"), stored.encode("utf-8")
    return recording, stored


def test_a_message_holding_a_lone_surrogate_is_refused_at_the_door_by_name() -> None:
    agent = Agent(provider=mock(reply="ok"))
    with pytest.raises(InvalidRunInputError) as refused:
        agent.run_sync(f"my file is caf{LONE}.txt")
    assert refused.value.code == "ERR_INVALID_RUN_INPUT"
    assert "lone surrogate" in refused.value.received and "caf" not in str(refused.value)
    assert agent.last_run is None  # nothing ran
    with pytest.raises(InvalidRunInputError) as refused_bag:
        agent.run_sync({"message": "hello", "note": f"x{LONE}"})
    assert refused_bag.value.received.startswith("an input holding a lone surrogate")
    with pytest.raises(InvalidIdentityError):
        agent.run_sync("hello", identity=Identity(tenant=f"acme{LONE}", principal="ana"))


def test_declared_text_and_a_system_prompt_holding_one_are_refused_when_built() -> None:
    with pytest.raises(ContextDeclarationError) as refused:
        define_fact(id="f", data=f"x{LONE}")
    assert refused.value.received == "a string holding a lone surrogate"
    with pytest.raises(AgentConfigError) as refused_too:
        Agent(provider=mock(reply="ok"), system=f"be nice{LONE}")
    assert refused_too.value.setting == "system"
    for corpus in ([f"refunds {LONE} policy"], {f"doc{LONE}": "refunds"}):
        with pytest.raises(ContextDeclarationError) as refused_rag:
            define_rag(id="policies", corpus=corpus)
        assert refused_rag.value.received == "a corpus holding a lone surrogate"
    schema = {"type": "object", "properties": {}}
    with pytest.raises(ToolDefinitionError) as refused_tool:
        define_tool(name="t", description=f"Reads{LONE}", input_schema=schema, fn=lambda: 1)
    assert refused_tool.value.problem == "description"
    with pytest.raises(ToolDefinitionError) as refused_schema:
        define_tool(name="t", description="Reads.", fn=lambda: 1,
                    input_schema={"type": "object", "properties": {f"x{LONE}": {"type": "string"}}})
    assert refused_schema.value.problem == "input_schema"


async def test_a_tool_result_and_a_model_reply_holding_one_are_recorded_in_a_form_that_saves() -> None:
    calls: list[dict[str, Any]] = []

    def respond(request: LLMRequest) -> Any:
        calls.append({"messages": [dict(m) for m in request.messages]})
        if request.call_index == 0:
            return {"tool": "read_file", "args": {"path": f"caf{LONE}.txt"}}
        return f"The file says: na{LONE}ve"

    tool = define_tool(name="read_file", description="Read a file.",
                       input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
                       fn=lambda path: {"path": path, "text": "bytes \udc80\udcff and a pair \ud83d\ude00"})
    agent = Agent(provider=mock(respond=respond), tools=[tool])
    run = await agent.run("read it")
    recording, stored = saved(run, agent)
    assert run.answer == "The file says: na\ufffdve"
    # the model was sent what the record holds: the replaced text, never the lone surrogate
    sent = json.dumps(calls[-1]["messages"], ensure_ascii=False)
    assert "\ufffd" in sent and "😀" in sent
    for text in (recording, stored):
        assert "caf\ufffd.txt" in text and "\ufffd\ufffd" in text and "😀" in text


SURROGATE_TEXT = st.text(
    alphabet=st.one_of(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), st.sampled_from("ab é😀\n")),
    min_size=1, max_size=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=SURROGATE_TEXT, place=st.sampled_from(["message", "tool result", "reply", "tool args", "tool result key"]))
async def test_text_with_surrogates_anywhere_is_refused_by_name_or_saved(text: str, place: str) -> None:
    result: Any = {f"k{text}": 1} if place == "tool result key" else f"r{text}" if place == "tool result" else "ok"
    tool = define_tool(name="echo", description="Echo.", input_schema={"type": "object", "properties": {}},
                       fn=lambda **given: result)
    args = {"x": text} if place == "tool args" else {}
    reply = f"done {text}" if place == "reply" else "done"
    agent = Agent(provider=mock(replies=[{"tool": "echo", "args": args}, reply]), tools=[tool])
    try:
        run = await agent.run(f"go {text}" if place == "message" else "go")
    except InvalidRunInputError as refusal:
        assert place == "message" and refusal.code == "ERR_INVALID_RUN_INPUT"
        return
    saved(run, agent)  # the recording and the checkpoint serialise, as UTF-8


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["history"][0].update(content="bad \udcff"), "history[0].content"),
        (lambda d: d["history"][1]["tool_calls"][0]["args"].update(note="x\udcffy"),
         "history[1].tool_calls[0].args.note"),
        (lambda d: d["history"][2].update(content="\ud800"), "history[2].content"),
    ],
)
async def test_a_checkpoint_holding_a_lone_surrogate_is_refused_naming_where(edit: Any, field: str) -> None:
    from footprint_lab.errors import InvalidCheckpointError

    lookup = define_tool(name="lookup", description="Look up.",
                         input_schema={"type": "object", "properties": {}, "additionalProperties": True},
                         fn=lambda **_: "ok")
    agent = Agent(provider=mock(replies=[{"tool": "lookup", "args": {"q": 1}}, "done"]), tools=[lookup])
    await agent.run("hi")
    data = agent.checkpoint().model_dump(mode="json")  # type: ignore[union-attr]
    edit(data)
    fresh = Agent(provider=mock(reply="ok"), tools=[lookup])
    with pytest.raises(InvalidCheckpointError) as caught:
        await fresh.run("more", continue_from=data)
    assert caught.value.field == field and "lone surrogate" in caught.value.received
    assert fresh.last_run is None


async def test_unmask_refuses_a_value_that_could_not_be_saved() -> None:
    from footprint_lab import Redaction
    from footprint_lab.errors import UnmaskArgumentError

    agent = Agent(provider=mock(reply="ok"), redact=Redaction(builtins=["email"]))
    await agent.run("mail ana@example.org")
    stored = agent.checkpoint().model_validate_json(agent.checkpoint().model_dump_json())  # type: ignore[union-attr]
    with pytest.raises(UnmaskArgumentError) as caught:
        stored.unmask({"[redacted:email]": "ana\udcff@example.org"})
    assert caught.value.received == "a string holding a lone surrogate"
