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


# -- reading as a reader reads (issue 46) ---------------------------------------------------


async def said(result: Any, answer: str) -> list[str]:
    """The findings of an answer whose only tool result is ``result``: each as ``shown (kind...)``."""
    tool = define_tool(name="lookup", description="Look up.", fn=lambda: result)
    provider = mock(replies=[{"tool": "lookup", "args": {}}, answer])
    run = await Agent(provider=provider, system="You are a desk.", tools=[tool]).run("Well?")
    return [finding.what.split(" in the answer")[0] for finding in integrity(run).of_kind("unsupported_value")]


@pytest.mark.parametrize("answer", [
    "## Summary\nOrder A-1001 for Maria Lopez totals 1200 EUR.",
    "**Decision:** we refund 120 EUR to Maria Lopez.",
    "1. **Age**: placed on 2026-03-14\n2. **Items**: 3\n7. **Total**: 1200 EUR",
    "Well… Sadly, order A-1001 is late.",
    "Well... Unfortunately the pickup moved to 10:30.",
    "### Next Steps\n- **Refund**: 120 EUR\n- *Pickup*: 10:30\n  4) Confirm with Maria Lopez",
    "| Field | Value |\n|---|---|\n| Total | 1200 EUR |\n| Customer | Maria Lopez |",
    "> **Note:** the refund is 120 EUR.\n> Otherwise nothing changes.",
    "__Status__: shipped. `A-1001` totals **1,200 EUR**.",
    "## Order Summary For Your Records\n**Next Steps:** none, Maria Lopez.",
    "Done! Excellent. Regards, Maria Lopez",
    "Was it 3 items? Yes: Confirmed.",
])
async def test_markdown_and_sentence_openers_are_not_read_as_values(answer: str) -> None:
    assert await said(ORDER, answer) == []


@pytest.mark.parametrize(("answer", "flagged"), [
    ("## Summary\n**Decision:** refund 135 EUR to Maria Lopes.", ["135 EUR (amount)", "Maria Lopes (name)"]),
    ("## Refund approved for Oskar Wilde\n1. **Total**: 99 EUR", ["Oskar Wilde (name)", "99 EUR (amount)"]),
    ("| Customer | Total |\n|---|---|\n| Maria Lopez | 1300 EUR |", ["1300 EUR (amount)"]),
    ("Well… Sadly Bartholomew Quince took it.", ["Bartholomew Quince (name)"]),
])
async def test_values_inside_markdown_are_still_read(answer: str, flagged: list[str]) -> None:
    assert await said(ORDER, answer) == flagged


@pytest.mark.parametrize(("held", "stated"), [
    ("12345678901234567890", "12345678901234567891"),
    ("98765432109876543210123", "98765432109876543211123"),
    ("4000000000000001", "4000000000000002"),
    ("0.12345678901234567890", "0.12345678901234567891"),
    ("1,234,567,890,123,456,789", "1,234,567,890,123,456,788"),
    ("007", "7"),
    ("01234", "1234"),
    ("7", "007"),
])
async def test_long_numbers_and_codes_compare_digit_for_digit(held: str, stated: str) -> None:
    assert await said({"ref": held}, f"Your reference is {stated}.") == [f"{stated} (number)"]
    assert await said({"ref": held}, f"Your reference is {held}.") == []


@pytest.mark.parametrize(("held", "stated"), [
    ("1234567890123456789", "1,234,567,890,123,456,789"),
    ("1200", "1 200"),
    ("1200", "1\u202f200"),
    ("1200", "1'200"),
    ("1200.50", "1.200,50"),
    ("-5", "−5"),
])
async def test_separators_are_normalised_on_purpose(held: str, stated: str) -> None:
    assert await said({"ref": held}, f"It is {stated} now.") == []


@pytest.mark.parametrize("unseen", ["\u200d", "\u00ad", "\u200b", "\u2060", "\ufeff", "\u200e", "\u200c", "\ufe0f",
                                    "\u034f", "\U000e0041"])
async def test_invisible_format_characters_do_not_split_a_value(unseen: str) -> None:
    assert await said(ORDER, f"Order A-10{unseen}01 for Maria Lo{unseen}pez: 1{unseen}200 EUR.") == []
    assert await said({"ref": f"TCK-77{unseen}8899"}, "Ticket TCK-778899 is open.") == []
    assert await said(ORDER, f"Order A-10{unseen}02 is late.") == ["A-1002 (identifier)"]
    assert await said(ORDER, f"We refund 13{unseen}5 EUR.") == ["135 EUR (amount)"]


@pytest.mark.parametrize("name", ["Zoë", "Müller", "Łukasz Nowak", "Ólafur Arnalds", "Δημήτρης", "Иван Петров",
                                  "Çelik", "東京", "대한", "محمد"])
async def test_names_in_any_script_are_read(name: str) -> None:
    assert await said(ORDER, f"The parcel goes to {name} by courier.") == [f"{name} (name)"]
    assert await said({"to": f"{name}, by courier"}, f"The parcel goes to {name} by courier.") == []


async def test_a_name_matches_however_its_accents_are_encoded_and_with_a_possessive() -> None:
    assert await said({"to": "Zoe\u0308 Mu\u0308ller"}, "Send it to Zoë Müller today.") == []
    assert await said({"to": "Maria Lopez"}, "It is Maria Lopez's order, Maria’s call.") == []
    assert await said({"to": "東京都渋谷区"}, "It ships to 東京 and then 渋谷 today.") == []
    assert await said({"to": "東京都渋谷区"}, "It ships to 大阪 today.") == ["大阪 (name)"]
    assert await said({"total": "合計1350円"}, "The total is 1350 yen.") == []


async def test_an_answer_written_without_capitals_is_not_read_for_names() -> None:
    # no word there tells a name by its shape; its numbers are still read
    assert await said({"total": 1200}, "ご注文の合計は1350です。発送済みです。") == ["1350 (number)"]


@pytest.mark.parametrize(("held", "stated", "flagged"), [
    ({"balance": -5}, "Your balance is 5.", "5 (number)"),
    ({"balance": 5}, "Your balance is -5.", "-5 (number)"),
    ({"balance": 5}, "Your balance is −5.", "−5 (number)"),
    ({"refund": "-120 EUR"}, "You get 120 EUR back.", "120 EUR (amount)"),
    ({"refund": "120 EUR"}, "You are charged -120 EUR.", "-120 EUR (amount)"),
    ({"delta": "-0.5"}, "It moved by 0.5 points.", "0.5 (number)"),
])
async def test_a_sign_makes_a_different_value(held: dict[str, Any], stated: str, flagged: str) -> None:
    assert await said(held, stated) == [flagged]


@pytest.mark.parametrize(("held", "stated"), [
    ({"balance": -5}, "Your balance is -5."),
    ({"range": [10, 20]}, "It takes 10-20 days."),
    ({"order": "A-5"}, "Order A-5 is here."),
    ({"placed": "2026-03-14"}, "Placed in 2026."),
    ({"url": "https://shop.example/orders/A-1001/items"}, "Order A-1001 is shipped."),
    ({"refund": "-120 EUR"}, "You get -120 EUR."),
])
async def test_hyphens_that_are_no_sign_and_values_inside_longer_ones(held: dict[str, Any], stated: str) -> None:
    assert await said(held, stated) == []


@pytest.mark.parametrize(("answer", "expected"), [
    (" ".join(["Refund 135 EUR."] * 20_000), ["135 EUR (amount, stated 20,000 times)"]),
    ("Refund 135 EUR, that is €135, EUR 135.", ["135 EUR (amount, stated 3 times)"]),
    ("Ask Oskar Wilde. " * 3 + "Order A-1002, not A-1002!", ["Oskar Wilde (name, stated 3 times)",
                                                             "A-1002 (identifier, stated 2 times)"]),
])
async def test_a_value_stated_again_is_one_finding_with_its_count(answer: str, expected: list[str]) -> None:
    assert await said(ORDER, answer) == expected


@pytest.mark.parametrize("length", [201, 5_000])
async def test_a_very_long_identifier_is_reported_without_comparing_its_spelling(length: int) -> None:
    held = "A-" + "7" * length
    assert await said({"ref": held}, f"Ref {held} ok.") == []
    tool = define_tool(name="lookup", description="Look up.", fn=lambda: {"ref": held})
    provider = mock(replies=[{"tool": "lookup", "args": {}}, f"Ref {held[:-1]}8 ok."])
    run = await Agent(provider=provider, tools=[tool]).run("Well?")
    (finding,) = integrity(run).of_kind("unsupported_value")
    assert finding.what.startswith(f"{held[:-1]}8 (identifier)") and " said " not in finding.what
