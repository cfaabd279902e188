"""Integrity: a run's contradictions found without a question, with a disposition for every check."""

from __future__ import annotations

import re

import pytest
from saved_kit import saved_run

from footprint_lab import Agent, Recording, Run, tool
from footprint_lab.context import define_skill
from footprint_lab.errors import ExplainConfigError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import integrity
from footprint_lab.explain.checks.integrity import CHECKS
from footprint_lab.providers import mock


@tool
def lookup_order(order_id: str) -> dict:
    """Find an order by its id."""
    return {"order_id": order_id, "age_days": 47}


@tool
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    return "refunded"


def scripted(*replies, tools=(lookup_order,), **settings) -> Agent:
    return Agent(provider=mock(replies=list(replies)), tools=list(tools), **settings)


def lookup(order_id: str) -> dict:
    return {"tool": "lookup_order", "args": {"order_id": order_id}}


async def test_a_duplicate_lookup_then_an_invented_order_id_are_both_reported_with_every_disposition():
    agent = scripted(lookup("A-1001"), lookup("A-1001"), lookup("B-7731"), "DECLINED: 47 days old.")
    report = integrity(await agent.run("Refund order A-1001, please."))

    duplicate, = report.of_kind("duplicate_tool_call")
    assert duplicate.steps == ("call-llm#3", "tool#4", "call-llm#6", "tool#7")
    invented, = report.of_kind("invented_identifier")
    assert invented.steps == ("call-llm#9", "tool#10")
    assert "B-7731" in invented.what and "order_id" in invented.what
    assert [(d.check, d.status) for d in report.dispositions] == [
        ("ungrounded_tool", "not_applicable"), ("invented_identifier", "failed"),
        ("duplicate_tool_call", "failed"), ("answer_contradicts_tool", "not_applicable"),
        ("unsupported_value", "passed"), ("tool_failed", "passed"), ("run_failed", "passed")]
    assert not report.ok
    text = str(report)
    assert all(name in text for name in CHECKS)
    assert "NOT APPLICABLE" in text and "claims=" in text
    assert report.by_step()["call-llm#9"] == ["invented_identifier"]


async def test_run_integrity_is_the_same_report_as_the_function():
    run = await scripted(lookup("A-1001"), lookup("A-1001"), "DECLINED: 47 days old.").run("Refund A-1001.")
    by_method, by_function = run.integrity(), integrity(run)
    assert by_method == by_function and by_method.of_kind("duplicate_tool_call")


async def test_a_clean_run_passes_and_says_which_checks_had_nothing_to_look_at():
    report = integrity(saved_run("planted_fact"))
    assert report.findings == []
    assert report.ok
    assert {d.check: d.status for d in report.dispositions} == {
        "ungrounded_tool": "not_applicable", "invented_identifier": "passed",
        "duplicate_tool_call": "passed", "answer_contradicts_tool": "not_applicable", "unsupported_value": "passed",
        "tool_failed": "passed", "run_failed": "passed"}


async def test_no_tool_at_all_is_not_applicable_never_a_pass():
    report = integrity(await Agent(provider=mock(reply="hello")).run("hi"))
    assert report.findings == []
    assert report.disposition("duplicate_tool_call") == "not_applicable"
    assert report.disposition("invented_identifier") == "not_applicable"


async def test_an_identifier_from_a_tool_result_or_the_users_message_is_not_invented():
    @tool
    def latest_order() -> dict:
        """The customer's latest order."""
        return {"order_id": "Z-9001"}

    agent = scripted({"tool": "latest_order", "args": {}}, lookup("Z-9001"), lookup("a-1001"), "ok",
                     tools=(latest_order, lookup_order))
    report = integrity(await agent.run("What about order A-1001?"))
    assert report.of_kind("invented_identifier") == []
    assert report.disposition("invented_identifier") == "passed"


async def test_the_same_tool_with_other_arguments_or_in_another_turn_is_no_duplicate():
    agent = scripted(lookup("A-1001"), lookup("A-1002"), "ok")
    first = await agent.run("Orders A-1001 and A-1002?")
    second = await agent.run("Orders A-1001 and A-1002 again?")
    for run in (first, second):
        assert integrity(run).disposition("duplicate_tool_call") == "passed"


async def test_a_skill_tool_still_offered_after_its_instructions_were_dropped():
    billing = define_skill(id="billing", description="Refund rules", tools=[issue_refund],
                           body="Refund only orders younger than 30 days. " * 3)
    agent = scripted({"tool": "read_skill", "args": {"skill": "billing"}}, {"tool": "issue_refund",
                     "args": {"order_id": "A-1001"}}, "done", tools=(), system="Help.", context=[billing],
                     budgets={"system": 60})
    report = integrity(await agent.run("Refund A-1001"))
    finding, = report.of_kind("ungrounded_tool")
    assert finding.steps == ("tool#4", "call-llm#6", "call-llm#9")
    assert "issue_refund" in finding.what and "dropped" in finding.what
    assert report.disposition("ungrounded_tool") == "failed"


async def test_a_skill_tool_offered_with_its_instructions_in_place_passes():
    billing = define_skill(id="billing", description="Refund rules", tools=[issue_refund], body="Refund young orders.")
    agent = scripted({"tool": "read_skill", "args": {"skill": "billing"}}, "done", tools=(), context=[billing])
    report = integrity(await agent.run("Refund A-1001"))
    assert report.disposition("ungrounded_tool") == "passed"


async def test_an_answer_contradicting_a_declared_field_is_found_and_an_agreeing_one_passes():
    claims = {"age_days": r"(\d+) days"}
    wrong = await scripted(lookup("A-1001"), "APPROVED: the order is 12 days old.").run("Refund A-1001")
    report = integrity(wrong, claims=claims)
    finding, = report.of_kind("answer_contradicts_tool")
    assert finding.steps == ("tool#4", "final#7")
    assert "age_days = 12" in finding.what and "47" in finding.what
    right = await scripted(lookup("A-1001"), "DECLINED: the order is 47 days old.").run("Refund A-1001")
    assert integrity(right, claims=claims).disposition("answer_contradicts_tool") == "passed"
    silent = await scripted(lookup("A-1001"), "DECLINED.").run("Refund A-1001")
    assert integrity(silent, claims=claims).disposition("answer_contradicts_tool") == "passed"
    by_function = integrity(wrong, claims={"age_days": lambda answer: 12 if "12" in answer else None})
    assert by_function.disposition("answer_contradicts_tool") == "failed"


async def test_a_claim_reader_that_breaks_is_could_not_run_and_the_other_checks_still_run():
    run = await scripted(lookup("A-1001"), "ok").run("Refund A-1001")
    report = integrity(run, claims={"age_days": lambda answer: 1 / 0})
    assert report.disposition("answer_contradicts_tool") == "could_not_run"
    assert "ZeroDivisionError" in str(report)
    assert report.disposition("duplicate_tool_call") == "passed"


@pytest.mark.parametrize("claims", [["age_days"], {"age_days": 3}, {"age_days": "(unclosed"}, {1: "x"}])
def test_a_claims_declaration_no_check_can_use_is_refused_before_anything_runs(claims):
    with pytest.raises(ExplainConfigError) as refused:
        integrity("not a run", claims=claims)
    assert refused.value.setting == "claims"
    assert "claims={'age_days'" in str(refused.value)


async def test_a_recording_loaded_from_json_gives_the_same_findings_and_html_is_escaped():
    agent = scripted({"tool": "lookup_order", "args": {"order_id": "<b>X-1234</b>"}}, "ok")
    run = await agent.run("Refund")
    loaded = Run.from_recording(Recording.model_validate_json(run.recording.model_dump_json()))
    assert str(integrity(loaded)) == str(integrity(run))
    bundle = integrity(run)._repr_mimebundle_()
    assert "<b>X-1234</b>" in bundle["text/plain"]
    assert "<b>X-1234" not in bundle["text/html"] and "&lt;b&gt;X-1234" in bundle["text/html"]
    assert "<script" not in bundle["text/html"]
    scope = re.compile(r"fl[0-9a-f]{6}")  # each output has its own id
    assert scope.sub("§", integrity(run)._repr_html_()) == scope.sub("§", bundle["text/html"])


async def test_a_member_runs_duplicate_is_found_with_its_joined_step_ids(compose):
    agent = scripted(lookup("A-1001"), lookup("A-1001"), "ok")
    recording, member, mount = await compose(agent, "Refund order A-1001")
    finding, = integrity(recording).of_kind("duplicate_tool_call")
    assert all(step.startswith(f"{mount}/") for step in finding.steps)
    assert set(finding.steps) <= {step.step_id for step in member.steps}


async def test_a_redacted_run_is_checked_on_its_masked_values_and_no_covered_value_shows():
    from footprint_lab import Redaction

    @tool
    def find_ticket(ticket: str) -> dict:
        """Find a support ticket."""
        return {"ticket": ticket, "age_days": 3}

    agent = Agent(provider=mock(replies=[{"tool": "find_ticket", "args": {"ticket": "TCK-123456"}},
                                         {"tool": "find_ticket", "args": {"ticket": "TCK-123456"}}, "ok"]),
                  tools=[find_ticket], redact=Redaction(patterns={"ticket": r"TCK-\d{6}"}))
    report = integrity(await agent.run("Status of TCK-123456?"))
    assert report.of_kind("invented_identifier") == []
    assert len(report.of_kind("duplicate_tool_call")) == 1
    shown = str(report) + report._repr_mimebundle_()["text/html"]
    assert "TCK-123456" not in shown


async def test_the_answer_view_shows_findings_and_badges_the_steps_they_concern():
    from footprint_lab.lab.views import answer_view

    agent = scripted(lookup("A-1001"), lookup("A-1001"), {"tool": "lookup_order", "args": {"order_id": "<i>Z-9999"}},
                     "DECLINED")
    page = answer_view((await agent.run("Refund order A-1001, please.")).recording)
    assert "Integrity: 2 findings" in page
    flag = ' <span class="fl-flag" style="[^"]*">'
    assert len(re.findall(flag + r"\[duplicate_tool_call\]</span>", page)) >= 1 + 4  # the finding, then its 4 steps
    assert re.search("<code>call-llm#9</code>" + flag + r"\[invented_identifier\]</span>", page)
    assert "&lt;i&gt;Z-9999" in page and "<i>Z-9999" not in page
    assert "<script" not in page
    clean = answer_view((await planted_fact_agent().run(REFUND_REQUEST)).recording)
    assert "Integrity: no findings." in clean and 'class="fl-flag"' not in clean
