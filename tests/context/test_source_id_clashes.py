"""One source id, one source: the ids an agent's pieces are cited by never name two things.

A recording cites every piece of context by its source id, and a rerun removes a source by it
(``agent.without(id)``, ``localize``). So, before anything runs:

- a declaration may not take an id the runner gives its own pieces (``system-prompt``,
  ``user-message``, ``read_skill``: the one list, ``context.source_ids.RESERVED_IDS``), refused by the
  declaration's door as an id like ``call-llm#3`` is;
- a declaration may not share its id with one of the agent's tools, nor a tool take the id of the
  runner's own pieces: refused by the agent's door, where declarations and tools meet.
"""

from __future__ import annotations

import pytest

from footprint_lab import Agent, LLMCall, Refusal, define_tool
from footprint_lab import context as ctx
from footprint_lab.context.source_ids import RESERVED_IDS
from footprint_lab.errors import ContextDeclarationError, DuplicateContextIdError
from footprint_lab.providers import mock
from footprint_lab.record.schema import READ_SKILL, SYSTEM_PROMPT, USER_MESSAGE

SECRET = "acct-4417-secret-balance"

#: every declaration door, given an id
DECLARE = {
    "define_fact": lambda id: ctx.define_fact(id=id, data=SECRET),
    "define_steering": lambda id: ctx.define_steering(id=id, prompt=SECRET),
    "define_instruction": lambda id: ctx.define_instruction(id=id, prompt=SECRET),
    "define_skill": lambda id: ctx.define_skill(id=id, description="d", body=SECRET),
    "define_memory": lambda id: ctx.define_memory(id=id, store=ctx.InMemoryStore()),
    "define_rag": lambda id: ctx.define_rag(id=id, corpus=[SECRET]),
}


def fact(id: str):
    return ctx.define_fact(id=id, data=SECRET)


def a_tool(name: str):
    return define_tool(name=name, description="Look up an order.", input_schema={"type": "object"},
                       fn=lambda: SECRET)


def assert_taught(refusal: Refusal, code: str) -> str:
    assert isinstance(refusal, Refusal) and isinstance(refusal, ValueError)
    assert refusal.code == code
    text = str(refusal)
    assert SECRET not in text
    for name in refusal.fields:
        assert SECRET not in repr(getattr(refusal, name))
    return text


def test_the_reserved_ids_are_the_ids_the_runner_gives_its_own_pieces():
    assert set(RESERVED_IDS) == {SYSTEM_PROMPT, USER_MESSAGE, READ_SKILL}


@pytest.mark.parametrize("reserved", [SYSTEM_PROMPT, USER_MESSAGE, READ_SKILL])
@pytest.mark.parametrize("door", sorted(DECLARE))
def test_a_declaration_may_not_take_an_id_the_runner_reserves(door, reserved):
    with pytest.raises(ContextDeclarationError) as caught:
        DECLARE[door](reserved)
    text = assert_taught(caught.value, "ERR_CONTEXT_DECLARATION")
    assert caught.value.declaration == door and caught.value.setting == "id"
    assert caught.value.received == f"the id of {RESERVED_IDS[reserved]}"
    assert "choose another id" in text  # the fix
    assert "system-prompt, user-message, read_skill" in text  # the reserved ids, listed by the door


def test_an_id_that_only_contains_a_reserved_one_is_fine():
    for id_ in ("user-message-2", "my-system-prompt", "read_skill_notes"):
        assert ctx.define_fact(id=id_, data="x").id == id_


@pytest.mark.parametrize("door", sorted(DECLARE))
def test_a_declaration_named_as_a_tool_is_refused_before_anything_runs(door):
    provider = mock(reply="never")
    declaration = DECLARE[door]("order_status")
    with pytest.raises(DuplicateContextIdError) as caught:
        Agent(provider=provider, tools=[a_tool("order_status")], context=[declaration])
    text = assert_taught(caught.value, "ERR_DUPLICATE_CONTEXT_ID")
    assert caught.value.context_id == "order_status"
    assert caught.value.kinds == ("tool", declaration.kind)
    assert "rename" in text and "id=" in text and "name=" in text  # the fix, for either side
    assert provider.calls == 0


def test_the_probe_agent_is_refused_and_renaming_the_fact_lets_it_run():
    provider = mock(reply="ok")
    tools = [a_tool("order_status")]
    with pytest.raises(DuplicateContextIdError):
        Agent(provider=provider, tools=tools,
              context=[fact("order_status"), fact("customer")])
    assert provider.calls == 0
    agent = Agent(provider=provider, tools=tools,
                  context=[fact("order-note"), fact("customer")])
    assert sorted(agent.source_ids()) == ["customer", "order-note", "order_status"]
    assert agent.run_sync("go").answer == "ok"


@pytest.mark.parametrize("reserved", [SYSTEM_PROMPT, USER_MESSAGE])
def test_a_tool_may_not_take_the_id_of_the_runners_own_pieces(reserved):
    provider = mock(reply="never")
    with pytest.raises(DuplicateContextIdError) as caught:
        Agent(provider=provider, system="Decide.", tools=[a_tool(reserved)])
    text = assert_taught(caught.value, "ERR_DUPLICATE_CONTEXT_ID")
    assert caught.value.context_id == reserved
    assert caught.value.kinds == (RESERVED_IDS[reserved], "tool")
    assert "rename the tool" in text
    assert provider.calls == 0


def test_a_tool_may_still_be_called_read_skill_when_no_skill_is_declared():
    agent = Agent(provider=mock(reply="ok"), tools=[a_tool(READ_SKILL)], context=[ctx.define_fact(id="f", data="x")])
    assert READ_SKILL in agent.source_ids()


def test_an_llm_call_refuses_reserved_ids_too():
    with pytest.raises(ContextDeclarationError):
        LLMCall(provider=mock(reply="x"), context=[ctx.define_fact(id=USER_MESSAGE, data=SECRET)])


def test_a_rebuilt_agent_keeps_its_ids_apart():
    agent = Agent(provider=mock(reply="ok"), system="S.", tools=[a_tool("lookup")],
                  context=[ctx.define_fact(id="plan", data="pro")])
    assert sorted(agent.without(["plan"]).source_ids()) == ["lookup", SYSTEM_PROMPT]
    assert sorted(agent.without(["lookup"]).source_ids()) == ["plan", SYSTEM_PROMPT]


def test_an_id_or_a_tool_name_with_a_trailing_newline_is_refused():
    """``$`` matches before a final newline: an id is matched whole, so ``'plan\\n'`` is not a second ``plan``."""
    from footprint_lab.errors import ToolDefinitionError

    with pytest.raises(ContextDeclarationError) as caught:
        ctx.define_fact(id="plan\n", data=SECRET)
    assert caught.value.received == "a string that is not"
    with pytest.raises(ContextDeclarationError):
        ctx.define_fact(id=USER_MESSAGE + "\n", data=SECRET)
    with pytest.raises(ToolDefinitionError):
        a_tool("order_status\n")
