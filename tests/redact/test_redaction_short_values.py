"""A covered value too short to hunt as a bare word shows in no text the library writes from the data holding it.

What a user relies on: with ``Redaction(keys=["cvv", "pin"])``, a CVV's ``737`` or a PIN's ``42`` is masked where
it is data under its key, and in each text the library writes from that data: the model's turn
(``pay({"cvv": ...})``), a tool's structured result read as text, an error that prints the arguments, a run
imported from spans. None of those reaches the recording, ``run.context()``, the HTML view, the live events or an
exported notebook. The same digits elsewhere (``Order 737 shipped``, ``{"order": 737}``) stay as they are: the
value is hunted only where its key is written beside it. And a covered key inside JSON text held as a string (a
tool called with ``{"payload": "{\\"password\\": ...}"}``) is read like one in data.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_redaction_escaped import held, served, showing

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.providers import mock
from footprint_lab.redact.scrubber import RunScrubber

POLICY = Redaction(keys=["cvv", "pin"])


def near_key(key: str, value: str) -> re.Pattern[str]:
    """``value`` written beside ``key``, through any quoting or escaping a reader may add (JSON, ``repr``, HTML)."""
    return re.compile(rf"{key}(?:[\W_]|&quot;|&#x?\w+;|\\[nt])*{value}\b")


def leaks(texts: dict[str, str], *found: re.Pattern[str]) -> dict[str, str]:
    """Where (by name) any of ``found`` shows, and what it matched."""
    return {where: match.group() for where, text in texts.items() for pattern in found
            if (match := pattern.search(text)) is not None}


def pay_tool() -> Any:
    return define_tool(name="pay", description="Pay with a card.",
                       input_schema={"type": "object", "properties": {"cvv": {"type": "string"},
                                                                      "pin": {"type": "integer"}}},
                       fn=lambda cvv, pin: {"status": "paid", "cvv": cvv, "pin": pin})


def pieces(run: Any, opening: str) -> list[str]:
    return [piece.content for piece in run.recording.context_pieces if piece.content.startswith(opening)]


async def test_a_short_covered_value_shows_in_no_text_written_from_its_data(tmp_path: Path) -> None:
    """``Zq7`` shows in no hash or time; ``42`` may, so it is looked for beside its key."""
    agent = Agent(provider=mock(replies=[{"tool": "pay", "args": {"cvv": "Zq7", "pin": 42}}, "Paid."]),
                  tools=[pay_tool()], redact=POLICY)
    events: list[Any] = []
    run = await agent.run("Pay my bill.", on_event=events.append)
    texts = served(run, tmp_path, events)
    assert showing("Zq7", texts) == {}
    assert leaks(texts, near_key("pin", "42")) == {}
    # the model's turn and the tool's result keep their shape, each value masked under its key
    assert pieces(run, "pay(") == ['pay({"cvv": "[redacted:cvv]", "pin": "[redacted:pin]"})']
    assert pieces(run, '{"status"') == ['{"status": "paid", "cvv": "[redacted:cvv]", "pin": "[redacted:pin]"}']
    tool_ends = [event.payload for event in events if event.type == "tool_end"]
    assert tool_ends and all("Zq7" not in json.dumps(payload) for payload in tool_ends)


async def test_the_same_digits_elsewhere_are_not_masked(tmp_path: Path) -> None:
    """``737`` as an order number (in a tool's text, a tool's data under another key, the answer) is no CVV."""
    orders = define_tool(name="orders", description="Orders.", fn=lambda: "Order 737 shipped")
    order = define_tool(name="order", description="One order.", fn=lambda: {"order": 737, "total": "737.00"})
    agent = Agent(provider=mock(replies=[{"tool": "pay", "args": {"cvv": "737", "pin": 42}},
                                         {"tool": "orders", "args": {}}, {"tool": "order", "args": {}},
                                         "Order 737 shipped, 42 items."]),
                  tools=[pay_tool(), orders, order], redact=POLICY)
    run = await agent.run("Pay, then tell me about my order.")
    texts = served(run, tmp_path)
    assert leaks(texts, near_key("cvv", "737"), near_key("pin", "42")) == {}
    results = [message["content"] for message in run.recording.messages if message["role"] == "tool"]
    assert results[1:] == ["Order 737 shipped", '{"order": 737, "total": "737.00"}']
    assert run.recording.answer == "Order 737 shipped, 42 items."
    assert "Order 737 shipped" in run.context().to_string() and "Order 737 shipped" in texts["html"]


async def test_an_error_that_prints_the_arguments_shows_no_short_value(tmp_path: Path) -> None:
    """A tool that raises with its arguments in the message (``{'cvv': '737', 'pin': 42}``, a ``repr``)."""

    def decline(cvv: str, pin: int) -> str:
        raise ValueError(f"card declined: {dict(cvv=cvv, pin=pin)}")

    tool = define_tool(name="pay", description="Pay.", fn=decline,
                       input_schema={"type": "object", "properties": {"cvv": {"type": "string"},
                                                                      "pin": {"type": "integer"}}})
    agent = Agent(provider=mock(replies=[{"tool": "pay", "args": {"cvv": "737", "pin": 42}}, "Declined."]),
                  tools=[tool], redact=POLICY)
    events: list[Any] = []
    run = await agent.run("Pay.", on_event=events.append)
    texts = served(run, tmp_path, events)
    assert "card declined" in texts["recording"]
    assert leaks(texts, near_key("cvv", "737"), near_key("pin", "42")) == {}


async def test_a_short_value_inside_a_covered_mapping_shows_nowhere(tmp_path: Path) -> None:
    """``keys=["card"]``: the card's number is long enough to hunt, its CVV is not; the turn shows neither."""
    agent = Agent(provider=mock(replies=[{"tool": "pay", "args": {"card": {"number": "4111 1111 1111 1111",
                                                                           "cvv": "737"}}}, "Paid."]),
                  tools=[define_tool(name="pay", description="Pay.", fn=lambda card: "paid")],
                  redact=Redaction(keys=["card"]))
    run = await agent.run("Pay.")
    texts = served(run, tmp_path)
    assert leaks(texts, near_key("cvv", "737")) == {} and showing("4111 1111 1111 1111", texts) == {}
    (turn,) = pieces(run, "pay(")
    assert turn == 'pay({"card": "[redacted:card]"})'  # the JSON the turn writes is read: the covered key whole


async def test_a_covered_key_inside_json_text_held_as_a_string_is_read(tmp_path: Path) -> None:
    """A tool called with JSON text as an argument, and a tool that returns JSON text: the password under its key
    in either is masked everywhere, long or short, though no call ever put it under the key as data."""
    password, pin = "hunter2-Falcon-9913", "Zq7"
    profile = define_tool(name="profile", description="A profile, as JSON text.",
                          fn=lambda: json.dumps({"user": "ana", "password": "Oriole-Quartz-5521", "pin": "Yx4"}))
    agent = Agent(provider=mock(replies=[{"tool": "send", "args": {"payload": json.dumps(
                                             {"password": password, "pin": pin})}},
                                         {"tool": "profile", "args": {}}, "Sent."]),
                  tools=[define_tool(name="send", description="Send.", fn=lambda payload: "sent"), profile],
                  redact=Redaction(keys=["password", "pin"]))
    events: list[Any] = []
    run = await agent.run("Send it.", on_event=events.append)
    texts = served(run, tmp_path, events)
    for value in (password, pin, "Oriole-Quartz-5521", "Yx4"):
        assert showing(value, texts) == {}, value
    assert "ana" in texts["recording"]


def test_a_run_imported_from_spans_masks_a_short_argument_in_the_model_turn() -> None:
    """A run recorded with no policy, exported as spans (its arguments written as compact JSON) and imported under
    one: the model's turn the import writes, and the tool's result, show the CVV nowhere."""
    pytest.importorskip("opentelemetry.sdk")
    from footprint_lab.otel import from_spans, to_spans

    agent = Agent(provider=mock(replies=[{"tool": "pay", "args": {"cvv": "Zq7", "pin": 42}}, "Paid."]),
                  tools=[pay_tool()])
    (run,) = from_spans(to_spans(agent.run_sync("Pay my bill.")), redact=POLICY)
    assert pieces(run, "pay(") == ['pay({"cvv": "[redacted:cvv]", "pin": "[redacted:pin]"})']
    shown = {"recording": run.recording.model_dump_json(), "context": run.context().to_string(), "html": run.to_html()}
    assert showing("Zq7", shown) == {}
    assert leaks(shown, near_key("pin", "42")) == {}


def test_a_short_value_is_hunted_only_beside_its_key_in_each_written_form() -> None:
    """What the scrubber learns of ``{"cvv": "737", "pin": 42}``: the pair, as JSON, a ``repr`` and JSON inside JSON
    write it, each mask keeping the key; the bare digits and another key's ``737`` are left."""
    scrubber = POLICY.for_run()
    assert scrubber.scrub({"cvv": "737", "pin": 42}) == {"cvv": "[redacted:cvv]", "pin": "[redacted:pin]"}
    written = {
        'pay({"cvv": "737", "pin": 42})': 'pay({"cvv": "[redacted:cvv]", "pin": "[redacted:pin]"})',
        "declined: {'cvv': '737', 'pin': 42}": "declined: {'cvv': '[redacted:cvv]', 'pin': '[redacted:pin]'}",
        '{"note": "{\\"cvv\\": \\"737\\"}"}': '{"note": "{\\"cvv\\": \\"[redacted:cvv]\\"}"}',
        "Order 737 shipped, 42 items": "Order 737 shipped, 42 items",
        '{"order": "737", "count": 42}': '{"order": "737", "count": 42}',
        # a JSON object written in a text is read for its covered keys, whatever their values
        'pay({"cvv": "7377"})': 'pay({"cvv": "[redacted:cvv]"})',
    }
    for text, shown in written.items():
        assert scrubber.scrub(text) == shown, text
        assert scrubber.sweep(text) == shown, text
    assert scrubber.scrub(737) == 737 and scrubber.scrub("737") == "737"
    carried = RunScrubber.of_values(scrubber.known())  # what goes on to the next leg of the conversation
    assert carried.scrub('pay({"cvv": "737"})') == 'pay({"cvv": "[redacted:cvv]"})'


async def test_a_short_value_in_a_tool_json_text_never_reaches_a_listener() -> None:
    """A tool's result shows ``{"cvv":"Zq7"}`` as JSON text before a call puts ``Zq7`` under ``cvv`` as data."""
    wallet = define_tool(name="wallet", description="The wallet, as compact JSON text (as JavaScript writes it).",
                         fn=lambda: json.dumps({"card": "visa", "cvv": "Zq7"}, separators=(",", ":")))
    agent = Agent(provider=mock(replies=[{"tool": "wallet", "args": {}},
                                         {"tool": "pay", "args": {"cvv": "Zq7", "pin": 42}}, "Paid."]),
                  tools=[wallet, pay_tool()], redact=POLICY)
    events: list[Any] = []
    await agent.run("Pay.", on_event=events.append)
    assert showing("Zq7", {"live events": json.dumps(held(events), ensure_ascii=False)}) == {}


def test_every_value_learned_is_masked_however_many_were_learned() -> None:
    """A long run learns hundreds of values (each password, each short value beside its key); a text holding any of
    them, the first learned or the last, overlapping another or not, shows none."""
    scrubber = Redaction(keys=["password", "id"]).for_run()
    for at in range(300):
        scrubber.scrub({"id": at, "password": f"pw-{at:03d}-Quartz"})
    scrubber.scrub({"password": "Quartz-Lynx-7"})  # overlaps the end of every password above
    text = 'lookup({"id": 0, "password": "pw-000-Quartz"}) then {"id": 299} and 299 items; pw-150-Quartz-Lynx-7'
    for shown in (scrubber.scrub(text), scrubber.sweep(text)):
        assert shown.startswith('lookup({"id": "[redacted:id]", "password": "[redacted:password]"}) then '
                                '{"id": "[redacted:id]"} and 299 items; ')
        assert "pw-150-Quartz" not in shown and "Quartz-Lynx-7" not in shown


async def test_a_streamed_answer_that_writes_the_pair_shows_it_in_no_token() -> None:
    """The model's streamed answer writes ``"cvv": "Zq7"`` across tokens: the token gate holds the pair whole (it
    holds a space), so no token event shows the value, and the recorded answer masks it beside its key."""
    agent = Agent(provider=mock(replies=[{"tool": "pay", "args": {"cvv": "Zq7", "pin": 42}},
                                         'Charged with {"cvv": "Zq7"} just now.'], stream=True),
                  tools=[pay_tool()], redact=POLICY)
    events: list[Any] = []
    run = await agent.run("Pay.", on_event=events.append)
    tokens = "".join(str(event.payload.get("text", "")) for event in events if event.type == "token")
    assert tokens.count("{") == 1 and "Zq7" not in json.dumps(held(events))
    assert run.recording.answer == 'Charged with {"cvv": "[redacted:cvv]"} just now.'


async def test_a_tool_returning_a_model_or_a_dataclass_is_written_as_data_and_masked(tmp_path: Path) -> None:
    """A tool that returned a pydantic model was written by its ``str`` (``cvv='Zq7' ...``), which no policy reads
    as a key, and a dataclass likewise: the CVV showed, and a dataclass's long password too. Both are now written as
    their data, as JSON, which the model reads as it reads a dict and the policy masks under its keys."""
    import dataclasses

    from pydantic import BaseModel

    class Receipt(BaseModel):
        status: str
        cvv: str

    @dataclasses.dataclass
    class Login:
        user: str
        password: str

    tools = [define_tool(name="pay", description="Pay.", fn=lambda: Receipt(status="paid", cvv="Zq7")),
             define_tool(name="login", description="Log in.", fn=lambda: Login(user="ana", password="hunter2-pass"))]
    agent = Agent(provider=mock(replies=[[{"tool": "pay", "args": {}}, {"tool": "login", "args": {}}], "Done."]),
                  tools=tools, redact=Redaction(keys=["cvv", "password"]))
    events: list[Any] = []
    run = await agent.run("Pay and log in.", on_event=events.append)
    texts = served(run, tmp_path, events)
    assert showing("Zq7", texts) == {} and showing("hunter2-pass", texts) == {}
    results = [piece.content for piece in run.recording.context_pieces if piece.source_kind == "tool_result"]
    assert json.loads(results[0]) == {"status": "paid", "cvv": "[redacted:cvv]"}
    assert json.loads(results[1]) == {"user": "ana", "password": "[redacted:password]"}
