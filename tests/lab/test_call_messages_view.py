"""``Run.messages(call)``: one LLM call's messages as a chat, with the raw request and response one click away."""

from __future__ import annotations

import html as html_lib
import json
import re

import pytest
from markup_kit import assert_inert, parse

from footprint_lab import Agent, Redaction, Run, define_tool
from footprint_lab.errors import CallNotFoundError
from footprint_lab.examples.pipelines import refund_pipeline
from footprint_lab.examples.support_desk import build_desk, support_eval
from footprint_lab.lab.views.messages import CLIP, messages_html
from footprint_lab.providers import mock

HOSTILE = '<script>alert(1)</script>" onmouseover="alert(2)" x=\'</details></pre></li>'
SECRET = "tok-" + "Zq81Lm27Pw44Xr90Kd"


def desk_run() -> Run:
    return build_desk().run_sync(support_eval(3).inputs[0])


def bubbles(html: str) -> list[str]:
    """Each bubble's opening tag, in order."""
    return re.findall(r'<li class="fl-msg[^"]*"[^>]*>', html)


def raw_json(html: str, part: str) -> object:
    found = re.search(rf'fl-raw-{part}"><summary>[^<]*</summary><pre>(.*?)</pre></details>', html, flags=re.S)
    assert found is not None, part
    return json.loads(html_lib.unescape(found.group(1)))


def test_the_answering_call_by_default_its_messages_in_order_each_with_its_piece() -> None:
    run = desk_run()
    messages = run.messages()
    assert messages.call == run.recording.exchanges[-1].step_id == "call-llm#6"
    html = messages.to_html()
    roles = [re.search(r"fl-role-(\w+)", tag).group(1) for tag in bubbles(html)]  # type: ignore[union-attr]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]  # the last: the reply
    sent = run.context(messages.call)
    pieces = re.findall(r'<li [^>]*data-fl-piece="([^"]+)" data-fl-slot="messages"', html)  # the bubbles
    assert pieces == sent.loc[sent["slot"] == "messages", "source_id"].tolist() == messages.to_frame()["piece"].tolist()
    for system_piece in sent.loc[sent["slot"] == "system", "source_id"]:
        assert f">{system_piece}</code>" in html  # the system bubble names the pieces it was assembled from
    words = parse(html).words()
    assert "→ calls lookup_order with {\"order_id\": \"A-10000\"} call id call_1_1" in words
    assert "result of lookup_order for call call_1_1" in words
    assert "reply the reply, as received call-llm#6 stop: end_turn" in words and "APPROVED: the order" in words


def test_an_earlier_call_by_id_or_index_and_a_members_call_by_its_full_id() -> None:
    run = desk_run()
    assert run.messages("call-llm#3").call == run.messages(0).call == "call-llm#3"
    assert run.messages(-1).call == "call-llm#6"
    first = run.messages(0).to_html()
    assert "lookup_order" in first and "fl-role-tool" not in first  # the first call had no tool result yet
    pipeline = refund_pipeline().run_sync("Please refund order A-1001.")
    assert pipeline.messages().call == "sequence-step#3/call-llm#6"
    triage = pipeline.messages("sequence-step#2/call-llm#3")
    assert triage.home.path == "sequence-step#2" and pipeline.messages(0).call == triage.call
    assert "in member triage sequence-step#2" in parse(triage.to_html()).words()


def test_a_call_the_run_did_not_make_is_refused_with_a_near_id_and_nothing_typed_quoted() -> None:
    run = desk_run()
    typed = 'call-llm#7<img src=x onerror="alert(1)">'
    with pytest.raises(CallNotFoundError) as caught:
        run.messages("call-llm#66")
    assert caught.value.code == "ERR_CALL_NOT_FOUND" and caught.value.calls == 2
    assert "did you mean 'call-llm#6'?" in str(caught.value) and "call-llm#66" not in str(caught.value)
    for wrong in (typed, 2, -3, True, 1.5, ["call-llm#3"]):
        with pytest.raises(CallNotFoundError) as caught:
            run.messages(wrong)  # type: ignore[arg-type]
        assert "onerror" not in str(caught.value) and str(caught.value).startswith("run.messages:")
    without_calls = Run.from_recording(run.recording.model_copy(update={"exchanges": []}))
    with pytest.raises(CallNotFoundError, match="made no LLM call"):
        without_calls.messages()


def test_a_long_message_shows_its_beginning_and_all_of_it_one_click_away() -> None:
    long = "The order history: " + "line of history. " * 300
    run = Agent(provider=mock(reply="Noted.")).run_sync(long)
    html = run.messages().to_html()
    user = re.search(r'<li class="fl-msg fl-role-user".*?</li>', html, flags=re.S).group()  # type: ignore[union-attr]
    assert f"<pre>{long[:CLIP]}…</pre>" in user
    assert f"<summary>show all {len(long):,} characters</summary><pre>{long}</pre>" in user


def test_the_raw_request_and_response_are_the_json_the_recording_holds() -> None:
    run = desk_run()
    messages = run.messages()
    html = messages.to_html()
    assert messages.request_source == "recorded" and "Raw request (as recorded: no HTTP exchange" in html
    request = raw_json(html, "request")
    assert request == messages.request
    assert request["messages"] == run.recording.request_messages(run.recording.exchanges[-1])  # type: ignore[index]
    assert raw_json(html, "response") == run.recording.exchanges[-1].response.model_dump(mode="json")


def test_a_wire_exchange_is_shown_as_sent_and_received() -> None:
    run = desk_run()
    recording = run.recording
    wire = {"request": {"method": "POST", "url": "http://127.0.0.1:9/v1/chat/completions", "headers": {},
                        "body": {"model": "m", "messages": [{"role": "user", "content": HOSTILE}]}},
            "response": {"status": 200, "headers": {}, "body": {"choices": [{"message": {"content": "ok"}}]}},
            "attempts": 1}
    exchanges = [*recording.exchanges[:-1], recording.exchanges[-1].model_copy(update={"wire": wire})]
    messages = Run.from_recording(recording.model_copy(update={"exchanges": exchanges})).messages()
    html = messages.to_html()
    assert messages.request_source == "wire" and "Raw request (as sent on the wire)" in html
    assert raw_json(html, "request") == wire["request"] and raw_json(html, "response") == wire["response"]
    assert_inert(html)


def hostile_run(**settings: object) -> Run:
    tool = define_tool(name="lookup", description=f"Look an order up. {HOSTILE}", fn=lambda order_id: HOSTILE,
                       input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}})
    replies = [{"tool": "lookup", "args": {"order_id": HOSTILE}}, f"Answer: {HOSTILE}"]
    return Agent(provider=mock(replies=replies), tools=[tool], system=f"System {HOSTILE}",
                 **settings).run_sync(f"User {HOSTILE}")  # type: ignore[arg-type]


def test_every_value_a_chat_draws_is_escaped_attributes_included() -> None:
    run = hostile_run()
    for call in (0, -1):
        html = run.messages(call).to_html()
        parsed = assert_inert(html)
        assert "<script" not in html and '" onmouseover=' not in html
        starts = sum(tag == "details" for tag, _ in parsed.tags)
        assert starts == html.count("</details>")  # a value's "</details>" closed nothing
        assert html.count(HOSTILE) == 0 and parsed.words().count(HOSTILE) >= 2  # escaped, and reads as typed


def test_a_secret_under_a_redaction_policy_never_reaches_the_chat() -> None:
    tool = define_tool(name="lookup", description="Look an order up.", fn=lambda order_id: f"session {SECRET}",
                       input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}})
    replies = [{"tool": "lookup", "args": {"order_id": SECRET}}, f"Done, {SECRET}"]
    policy = Redaction(patterns={"session": r"tok-[A-Za-z0-9]{12,}"})
    run = Agent(provider=mock(replies=replies), tools=[tool], system=f"Key {SECRET}",
                redact=policy).run_sync(f"Where is {SECRET}?")
    for call in (0, 1):
        messages = run.messages(call)
        shown = [messages.to_html(), str(messages), repr(messages), messages.to_frame().to_csv(),
                 json.dumps(messages.request), json.dumps(messages._repr_mimebundle_())]
        assert all(SECRET not in text for text in shown)
    assert "[redacted:session]" in messages.to_html()  # the masked value's place is still shown


def test_messages_html_draws_a_call_from_a_recording_alone() -> None:
    recording = desk_run().recording
    html = messages_html(recording, recording.exchanges[0])
    assert "Messages of call-llm#3" in parse(html).words() and "<script" not in html
