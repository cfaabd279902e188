"""Context declarations and the build-time door: what is refused, and how, before anything runs."""

from __future__ import annotations

import re

import pytest

import footprint_lab
from footprint_lab import Agent, define_tool
from footprint_lab.context import (
    InMemoryStore,
    define_fact,
    define_instruction,
    define_memory,
    define_rag,
    define_skill,
    define_steering,
    on_tool_return,
    rule,
)
from footprint_lab.errors import (
    ContextConfigError,
    ContextDeclarationError,
    DuplicateContextIdError,
    DuplicateToolError,
    FactRoleError,
    Refusal,
    UnknownFactReferenceError,
)
from footprint_lab.providers import mock

SECRET = "acct-4417-secret-balance"


def agent_with(context, **kwargs):
    return Agent(provider=mock(reply="ok"), context=context, **kwargs)


def assert_refusal(caught, code):
    refusal = caught.value
    assert isinstance(refusal, Refusal)
    assert refusal.code == code
    assert SECRET not in str(refusal)
    for name in refusal.fields:
        assert SECRET not in repr(getattr(refusal, name))


def test_every_define_is_exported_from_the_context_package():
    names = ("define_fact", "define_steering", "define_instruction", "define_skill", "define_memory", "define_rag")
    for name in names:
        assert callable(getattr(footprint_lab.context, name))
        assert name in footprint_lab.context.__all__


def test_a_declaration_remembers_where_it_was_written():
    fact = define_fact(id="plan", data="pro")
    file, line = fact.declared_at.rsplit(":", 1)
    assert file.endswith("test_context_declarations.py")
    assert int(line) > 0


def test_fact_data_lands_as_text_or_json():
    assert define_fact(id="a", data="Plain text.").text == "Plain text."
    assert define_fact(id="b", data={"tier": "pro", "seats": 3}).text == '{"seats": 3, "tier": "pro"}'


def test_defaults_for_trigger_and_cache():
    fact = define_fact(id="f", data="x")
    assert (fact.trigger.kind, fact.cache, fact.slot) == ("always", "while_active", "system")
    assert define_steering(id="s", prompt="Be brief.").cache == "always"
    assert define_memory(id="m", store=InMemoryStore()).cache == "never"
    assert define_skill(id="k", description="d", body="b").trigger.kind == "llm_activated"
    assert define_fact(id="g", data="x", active_when=lambda view: True).trigger.kind == "rule"
    assert define_fact(id="h", data="x", trigger=on_tool_return("lookup")).trigger.kind == "on_tool_return"


def test_role_tool_for_a_fact_is_refused_with_its_own_code():
    with pytest.raises(FactRoleError) as caught:
        define_fact(id="note", data=SECRET, slot="messages", role="tool")
    assert_refusal(caught, "ERR_FACT_ROLE")
    assert caught.value.fact_id == "note" and caught.value.received == "'tool'"
    assert "tool call" in str(caught.value)


@pytest.mark.parametrize("role", [None, "system", SECRET, 7])
def test_a_messages_fact_needs_a_user_or_assistant_role(role):
    with pytest.raises(FactRoleError) as caught:
        define_fact(id="note", data="x", slot="messages", role=role)
    assert_refusal(caught, "ERR_FACT_ROLE")


@pytest.mark.parametrize(
    ("make", "setting"),
    [
        (lambda: define_fact(id=SECRET + " with spaces", data="x"), "id"),
        (lambda: define_fact(id="f", data="   "), "data"),
        (lambda: define_fact(id="f", data=object()), "data"),
        (lambda: define_fact(id="f", data="x", slot="tools"), "slot"),
        (lambda: define_fact(id="f", data="x", role="user"), "role"),
        (lambda: define_fact(id="f", data="x", cache=SECRET), "cache"),
        (lambda: define_fact(id="f", data="x", active_when=SECRET), "active_when"),
        (lambda: define_fact(id="f", data="x", active_when=bool, trigger=on_tool_return("t")), "trigger"),
        (lambda: define_fact(id="f", data="x", trigger=SECRET), "trigger"),
        (lambda: define_instruction(id="i"), "prompt"),
        (lambda: define_instruction(id="i", prompt="a", template="b"), "prompt"),
        (lambda: define_instruction(id="i", template="Use {fact:" + SECRET + " now}"), "template"),
        (lambda: define_skill(id="k", description="d", body=""), "body"),
        (lambda: define_skill(id="k", description="d", body="b", tools=[SECRET]), "tools"),
        (lambda: define_memory(id="m", store={SECRET: 1}), "store"),
        (lambda: define_memory(id="m", store=InMemoryStore(), limit=0), "limit"),
        (lambda: define_rag(id="r", corpus=SECRET), "corpus"),
        (lambda: define_rag(id="r", corpus=[SECRET, ""]), "corpus"),
        (lambda: define_rag(id="r", corpus=["a b"], top_k=0), "top_k"),
        (lambda: on_tool_return(""), "tool"),
        (lambda: rule(SECRET), "predicate"),
    ],
)
def test_unusable_declarations_are_refused_by_setting(make, setting):
    with pytest.raises(ContextDeclarationError) as caught:
        make()
    assert_refusal(caught, "ERR_CONTEXT_DECLARATION")
    assert caught.value.setting == setting


def test_duplicate_ids_are_refused_at_build():
    with pytest.raises(DuplicateContextIdError) as caught:
        agent_with([define_fact(id="plan", data=SECRET), define_steering(id="plan", prompt=SECRET)])
    assert_refusal(caught, "ERR_DUPLICATE_CONTEXT_ID")
    assert caught.value.context_id == "plan"
    assert caught.value.kinds == ("fact", "steering")


def test_a_template_citing_an_unknown_fact_is_refused_at_build():
    instruction = define_instruction(id="refunds", template=f"{SECRET} applies to {{fact:plan}}.")
    with pytest.raises(UnknownFactReferenceError) as caught:
        agent_with([define_fact(id="tier", data=SECRET), instruction])
    assert_refusal(caught, "ERR_UNKNOWN_FACT_REF")
    assert (caught.value.instruction_id, caught.value.fact_id) == ("refunds", "plan")
    # a steering with that id is not a fact either
    with pytest.raises(UnknownFactReferenceError):
        agent_with([define_steering(id="plan", prompt="x"), instruction])


def test_a_template_is_rendered_with_the_agents_facts():
    instruction = define_instruction(id="refunds", template="Refunds for {fact:plan} ({fact:plan}) within {fact:days}.")
    agent = agent_with([define_fact(id="plan", data="pro"), define_fact(id="days", data="30 days"), instruction])
    run = agent.run_sync("go")
    assert "Refunds for pro (pro) within 30 days." in run.recording.exchanges[0].system


@pytest.mark.parametrize(
    ("kwargs", "setting"),
    [
        ({"context": define_fact(id="f", data="x")}, "context"),
        ({"context": [SECRET]}, "context"),
        ({"context": [], "budgets": {"system": -1}}, "budgets"),
        ({"context": [], "budgets": {SECRET: 10}}, "budgets"),
        ({"context": [], "budgets": {"system": True}}, "budgets"),
        ({"context": [], "budgets": [4000]}, "budgets"),
    ],
)
def test_context_and_budgets_are_checked_at_build(kwargs, setting):
    with pytest.raises(ContextConfigError) as caught:
        Agent(provider=mock(reply="ok"), **kwargs)
    assert_refusal(caught, "ERR_CONTEXT_CONFIG")
    assert caught.value.setting == setting


def test_skill_tools_may_not_clash_with_the_agents_tools_or_read_skill():
    def make(name):
        return define_tool(name=name, description="x", input_schema={"type": "object"}, fn=lambda: "ok")

    skill = define_skill(id="billing", description="d", body="b", tools=[make("refund")])
    with pytest.raises(DuplicateToolError) as caught:
        Agent(provider=mock(reply="ok"), tools=[make("refund")], context=[skill])
    assert caught.value.tool_name == "refund"
    with pytest.raises(DuplicateToolError) as caught:
        Agent(provider=mock(reply="ok"), tools=[make("read_skill")], context=[skill])
    assert caught.value.tool_name == "read_skill"
    # without any skill, an agent tool may be called read_skill
    Agent(provider=mock(reply="ok"), tools=[make("read_skill")], context=[define_fact(id="f", data="x")])


def test_a_regex_trigger_must_match_the_whole_tool_name():
    trigger = on_tool_return(re.compile(r"lookup_\w+"))
    assert trigger.matches("lookup_order")
    assert not trigger.matches("not_lookup_order")
    assert on_tool_return("lookup").matches("lookup") and not on_tool_return("lookup").matches("lookup_order")
