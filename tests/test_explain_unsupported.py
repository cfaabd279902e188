"""The unsupported_value check: what an answer states that nothing its call was sent holds."""

from __future__ import annotations

from typing import Any

import pytest

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.explain import integrity
from footprint_lab.providers import mock

ORDER = {"order_id": "A-1001", "customer": "Maria Lopez", "total": "1200 EUR", "refund": 120,
         "placed": "2026-03-14", "pickup": "10:30", "items": 3}


def lookup() -> Any:
    return define_tool(name="lookup_order", description="Look up an order.", fn=lambda: ORDER)


async def answered(answer: str, *, system: str = "You are a support desk.", message: str = "Status of my order?",
                   **agent: Any) -> Any:
    provider = mock(replies=[{"tool": "lookup_order", "args": {}}, answer])
    return await Agent(provider=provider, system=system, tools=[lookup()], **agent).run(message)


@pytest.mark.parametrize("answer", [
    "Order A-1001 for Maria Lopez: the total was 1200 EUR and 120 EUR will be refunded.",
    "Maria Lopez, your order A-1001 totalled €1,200.00; we refund 120 euros.",
    "The order of 14 March 2026 (3 items) totals 1,200 EUR. Pickup at 10:30.",
    "Placed on March 14, 2026 and on 14/03/2026 in your timezone; refund: EUR 120.",
    "Dear Maria, the total of 1 200 EUR is confirmed.",
    "Your order is on its way.",
    "Ms Lopez, the refund is 120.",
])
async def test_an_answer_that_quotes_its_evidence_has_no_finding(answer: str) -> None:
    report = integrity(await answered(answer))
    assert report.of_kind("unsupported_value") == []
    assert report.disposition("unsupported_value") == "passed"


async def test_the_user_message_and_the_system_prompt_are_evidence_too() -> None:
    run = await answered("Noted, Jonas: ticket TCK-778899 stays open until 2026-04-01.",
                         system="Tickets stay open until 2026-04-01.", message="I am Jonas, ticket TCK-778899.")
    assert integrity(run).of_kind("unsupported_value") == []


@pytest.mark.parametrize(("answer", "shown", "said"), [
    ("We refund 135 EUR.", "135 EUR", "the result of tool 'lookup_order' said 120"),
    ("The total was 1,250 EUR.", "1,250 EUR", "said 1200 EUR"),
    ("Your order was placed on 2026-03-15.", "2026-03-15", "said 2026-03-14"),
    ("Order A-1002 is delayed.", "A-1002", "said A-1001"),
    ("Hello Maria Lopes, it is sorted.", "Maria Lopes", "said Maria Lopez"),
    ("Pickup is at 11:30.", "11:30", "said 10:30"),
    ("You bought 4 items.", "4", "said 3"),
])
async def test_an_invented_value_is_named_with_the_nearest_evidence(answer: str, shown: str, said: str) -> None:
    run = await answered(answer)
    report = integrity(run)
    (finding,) = report.of_kind("unsupported_value")
    assert finding.what.startswith(f"{shown} (")
    assert said in finding.what
    assert report.disposition("unsupported_value") == "failed" and not report.ok
    assert finding.steps[0] == run.recording.exchanges[-1].step_id
    assert finding.steps[1].startswith("tool#")  # the step that landed the nearest value


async def test_an_invented_name_with_nothing_near_it_is_listed_alone() -> None:
    (finding,) = integrity(await answered("Your courier is Bartholomew Quince.")).of_kind("unsupported_value")
    assert finding.what.startswith("Bartholomew Quince (name)") and "said" not in finding.what
    assert len(finding.steps) == 1


async def test_every_invented_value_is_its_own_finding() -> None:
    report = integrity(await answered("Refund of 99 EUR sent to Oskar Wilde on 2026-01-02."))
    shown = [finding.what.split(" (")[0] for finding in report.of_kind("unsupported_value")]
    assert shown == ["99 EUR", "Oskar Wilde", "2026-01-02"]


async def test_a_run_without_a_call_or_an_answer_is_not_applicable() -> None:
    guarded = Agent(provider=mock(reply="x"), input_guard=lambda message: "I cannot help with that.")
    report = integrity(await guarded.run("anything"))
    assert report.disposition("unsupported_value") == "not_applicable"


async def test_masked_values_are_no_values() -> None:
    run = await answered("Card 4111-1111-1111-1111 gets 120 EUR back.", message="My card is 4111-1111-1111-1111.",
                         redact=Redaction(patterns={"card": r"\d{4}(?:-\d{4}){3}"}))
    assert "[redacted:card]" in run.recording.answer
    assert integrity(run).of_kind("unsupported_value") == []
