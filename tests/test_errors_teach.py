"""Errors that teach: a near miss is answered with the name that was meant, never with what was typed;
a misused magic says its usage and an example; a refusal in a notebook is one card, no traceback beside it.
"""

from __future__ import annotations

from functools import cache

import pytest
from notebook_kit import Executed

from footprint_lab import Agent, Conditional, LLMCall, Loop, Parallel, Refusal, Sequence
from footprint_lab.errors import (
    ExplainConfigError,
    ProviderConfigError,
    UnknownSourceError,
    UnknownStepError,
)
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import localize, rerun_without
from footprint_lab.providers import mock, provider_from_string


def agent() -> Agent:
    return Agent(provider=mock(reply="ok"), system="Answer.")


def said(error: BaseException) -> str:
    return str(error)


@pytest.mark.parametrize(("build", "typed", "meant"), [
    (lambda **k: Agent(provider=mock(reply="x"), **k), "sytem", "system"),
    (lambda **k: Agent(provider=mock(reply="x"), **k), "max_iteratoins", "max_iterations"),
    (lambda **k: LLMCall(provider=mock(reply="x"), **k), "redcat", "redact"),
    (lambda **k: Loop(agent(), times=2, **k), "untill", "until"),
    (lambda **k: Sequence({"a": agent()}, **k), "naem", "name"),
    (lambda **k: Parallel({"a": agent()}, **k), "mrege", "merge"),
    (lambda **k: Conditional([("a", lambda text: True, agent())], **k), "otherwize", "otherwise"),
])
def test_a_misspelt_keyword_of_a_runner_is_refused_naming_the_one_meant(build, typed, meant):
    with pytest.raises(Refusal) as caught:
        build(**{typed: None})
    assert caught.value.code == "ERR_UNKNOWN_KEYWORD" and meant in caught.value.known
    assert f"did you mean '{meant}'?" in said(caught.value) and typed not in said(caught.value)


def test_a_keyword_near_nothing_is_refused_with_the_list_and_never_quoted():
    secret = "sk-live-0123456789abcdef"
    with pytest.raises(Refusal) as caught:
        Agent(provider=mock(reply="x"), **{secret: 1, "colour": 2})
    text = said(caught.value)
    assert "did you mean" not in text and secret not in text and "colour" not in text
    assert "provider, model, system" in text and "(received 2 keywords it does not take)" in text


async def test_a_misspelt_source_id_is_answered_with_the_id_meant_at_every_door():
    bad = planted_fact_agent()
    run = await bad.run(REFUND_REQUEST)
    doors = [
        lambda: bad.without(["vip-overide"]),
        lambda: bad.with_forced(["vip-overide"]),
        lambda: rerun_without(run, ["vip-overide"], rerun=bad),
        lambda: Sequence({"triage": bad}).without(["triage/vip-overide"]),
    ]
    for door in doors:
        with pytest.raises(UnknownSourceError) as caught:
            result = door()
            if hasattr(result, "__await__"):
                await result
        assert "did you mean 'vip-override'?" in said(caught.value) or "did you mean 'triage/vip-override'?" in said(
            caught.value)
        assert "vip-overide" not in said(caught.value)
    with pytest.raises(UnknownSourceError) as caught:
        bad.without(["something-else-entirely"])
    assert "did you mean" not in said(caught.value) and caught.value.unknown == 1


async def test_a_misspelt_step_id_is_answered_with_a_step_the_run_holds():
    run = await agent().run("hi")
    for typed in ("call-lm#3", "cal-llm#3"):
        with pytest.raises(UnknownStepError) as caught:
            run.backtrack(at=typed)
        assert "did you mean 'call-llm#3'?" in said(caught.value) and typed not in said(caught.value)
    with pytest.raises(UnknownStepError) as caught:
        run.backtrack(at="zzzz")
    assert "did you mean" not in said(caught.value)


@pytest.mark.parametrize(("spec", "meant"), [("opnai:gpt-4o-mini", "openai"), ("Antropic:claude", "anthropic"),
                                             ("olama:llama3.2", "ollama"), ("mistral:large", None)])
def test_a_misspelt_provider_name_is_answered_with_the_provider_meant(spec, meant):
    with pytest.raises(ProviderConfigError) as caught:
        provider_from_string(spec)
    text = said(caught.value)
    assert spec.split(":")[0] not in text
    assert (f"did you mean '{meant}'?" in text) if meant else "did you mean" not in text


async def test_trial_settings_and_localize_refusals_name_the_setting_meant_and_the_fix():
    run = await agent().run("hi")
    with pytest.raises(ExplainConfigError) as caught:
        await localize(run, rerun=agent(), samplez=3)
    assert "did you mean 'samples'?" in said(caught.value) and "samplez" not in said(caught.value)
    with pytest.raises(ExplainConfigError) as caught:
        await localize(run)
    assert caught.value.setting == "rerun" and "rerun=agent" in said(caught.value)
    with pytest.raises(ExplainConfigError) as caught:
        await localize(run, rerun=lambda: agent())
    assert "exclude" in caught.value.received and "def factory(exclude=(), seed=None)" in said(caught.value)


# -- in a real kernel ------------------------------------------------------------------------------
CELLS = [
    "%load_ext footprint_lab",
    "from footprint_lab import Agent\nfrom footprint_lab.providers import mock\n"
    "from footprint_lab.providers.errors import ProviderRateLimitError\n"
    "agent = Agent(provider=mock(reply='ok'))\nrun = agent.run_sync('hi')\n"
    "def refuse(request):\n"
    "    raise ProviderRateLimitError('too many requests', provider='mock', status=429, attempts=1,"
    " retry_after=None)\n"
    "failing = Agent(provider=mock(respond=refuse))",
    "Agent(provider=mock(reply='ok'), sytem='x')",  # 2: a refusal
    "%fp_why run --bogus",  # 3: a magic's usage
    "%%fp_run\nhello",  # 4: a cell magic's usage, its argument left out
    "failing.run_sync('hi')",  # 5: a failure while running
    "%tb",  # 6: the traceback is still there when asked for
    "%fp_why --at call-lm#3 run",  # 7: a refusal from the explanation a magic calls
]


@cache
def executed() -> Executed:
    return Executed(CELLS)


@pytest.mark.parametrize(("cell", "name", "code"), [
    (2, "UnknownKeywordError", "ERR_UNKNOWN_KEYWORD"), (3, "MagicInputError", "ERR_MAGIC_INPUT"),
    (4, "MagicInputError", "ERR_MAGIC_INPUT"), (5, "ProviderRateLimitError", "ERR_PROVIDER_RATE_LIMITED"),
    (7, "UnknownStepError", "ERR_UNKNOWN_STEP"),
])
def test_an_error_in_a_cell_is_one_card_and_the_cell_still_fails(cell, name, code):
    kernel = executed()
    outputs = kernel.outputs(cell)
    assert [o.output_type for o in outputs] == ["display_data"]  # no traceback, no stream repeating the card
    card = outputs[0].data
    assert code in card["text/html"] and card["text/plain"].startswith(f"{name} [{code}]")
    failed, = kernel.errors(cell)  # the kernel still replies "error": Run all stops at the cell
    assert failed.ename == name


def test_a_magic_used_wrongly_says_its_usage_and_an_example_never_what_arrived():
    kernel = executed()
    why = kernel.data(3)["text/plain"]
    assert "%fp_why [--at AT] [run]" in why and "e.g. %fp_why run --at call-llm#3" in why and "bogus" not in why
    run = kernel.data(4)["text/plain"]
    assert "%%fp_run [--identity IDENTITY] runner" in run and "e.g. %%fp_run agent" in run


def test_the_traceback_is_still_there_when_asked_for():
    printed = "".join(o.get("text", "") for o in executed().outputs(6) if o.output_type == "stream")
    printed += "".join("".join(o.get("traceback", [])) for o in executed().outputs(6) if o.output_type == "error")
    assert "ProviderRateLimitError" in printed and "refuse" in printed


def test_a_misspelt_step_in_a_magic_is_answered_with_the_step_meant():
    text = executed().data(7)["text/plain"]
    assert "did you mean 'call-llm#3'?" in text and "call-lm#3" not in text
