"""A covered value is masked in every form the library writes it in, not only as it was given.

What a user relies on: a password under a covered key that holds a quote, a backslash, a tab, a line break or
a non-ASCII letter is written escaped wherever JSON or a ``repr`` writes it: the model's turn shows a call's
arguments as JSON (``login({"password": "back\\\\slash"})``), a tool may return JSON text holding it, an error's
message may be a ``repr``. None of those forms reaches the recording, ``run.context()``, a view, an exported
notebook or a bug report, whether the value was learned before or after it showed; ``notebook.scan`` finds
one left in a notebook and ``scrub`` leaves none. A value too short to hunt (a CVV) is masked where it is data
under its key; a pattern covers it in text.
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from footprint_lab import Agent, Redaction, define_tool
from footprint_lab.notebook import export, scan, scrub
from footprint_lab.providers import mock
from footprint_lab.redact.scrubber import RunScrubber

POLICY = Redaction(keys=["password"])
MASK = "[redacted:password]"
#: each holds a character JSON escapes (a non-ASCII letter only under ``ensure_ascii``)
PASSWORDS = ['my"pass-4421', "back\\slash-4421", "two\nlines-4421", "tab\there-4421", "Crème-Brûlée-4421"]


def shown_forms(value: str) -> set[str]:
    """``value`` as any reader could meet it: JSON-escaped (with and without ``ensure_ascii``), ``repr``-escaped,
    HTML-escaped and quoted as CSV, up to three layers deep (a notebook holds a recording's JSON in JSON)."""
    forms = {value}
    for _ in range(3):
        forms |= {json.dumps(form, ensure_ascii=ascii_only)[1:-1] for form in forms for ascii_only in (False, True)}
        forms |= {html.escape(form) for form in forms} | {repr(form)[1:-1] for form in forms}
        forms |= {form.replace('"', '""') for form in forms}
    return forms


def showing(value: str, texts: dict[str, str]) -> dict[str, str]:
    """Where (by name) a form of ``value`` shows, and which form."""
    forms = sorted(shown_forms(value), key=len, reverse=True)
    return {where: next(form for form in forms if form in text)
            for where, text in texts.items() if any(form in text for form in forms)}


def login_tool() -> Any:
    return define_tool(name="login", description="Log in.",
                       input_schema={"type": "object", "properties": {"password": {"type": "string"}}},
                       fn=lambda password: "ok")


def served(run: Any, tmp_path: Path, events: Iterable[Any] = ()) -> dict[str, str]:
    """What a run's records, views and files serve, by where; and its live events as a subscriber holds them."""
    with zipfile.ZipFile(run.bug_report(tmp_path / "report.zip")) as opened:
        report = "".join(opened.read(name).decode() for name in opened.namelist())
    return {
        "recording": run.recording.model_dump_json(),
        "context": run.context().to_string() + run.context().to_csv(),
        "events frame": run.events.to_csv(),
        "html": run.to_html(),
        "notebook": export([run], tmp_path / "shared.ipynb", title="shared").read_text(),
        "bug report": report,
        "live events": json.dumps(held(events), ensure_ascii=False, default=str),
    }


def held(events: Iterable[Any]) -> dict[int, Any]:
    """Each live event's payload by ``seq``, as a subscriber that applies recalls holds it."""
    payloads: dict[int, Any] = {}
    for event in events:
        if event.type == "recall":
            payloads.update((entry["seq"], entry["payload"]) for entry in event.payload["events"])
        else:
            payloads[event.seq] = event.payload
    return payloads


@pytest.mark.parametrize("password", PASSWORDS)
async def test_a_covered_value_shows_in_no_escaped_form_once_learned(password: str, tmp_path: Path) -> None:
    """Learned first (the login call), then written by the model's turn and by a tool's JSON text."""
    audit = define_tool(name="audit", description="The audit log, as JSON text.",
                        fn=lambda: json.dumps({"event": "login", "used": password}))
    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": password}},
                                         {"tool": "audit", "args": {}}, "Done."]),
                  tools=[login_tool(), audit], redact=POLICY)
    events: list[Any] = []
    run = await agent.run("Log me in.", on_event=events.append)
    assert showing(password, served(run, tmp_path, events)) == {}
    turns = [piece.content for piece in run.recording.context_pieces if piece.content.startswith("login(")]
    assert turns == [f'login({{"password": "{MASK}"}})']
    assert any(f'"used": "{MASK}"' in piece.content for piece in run.recording.context_pieces)


@pytest.mark.parametrize("password", PASSWORDS)
async def test_a_value_learned_late_is_swept_and_recalled_in_its_escaped_form(password: str, tmp_path: Path) -> None:
    """A tool result shows the value (the recording writes it as JSON text) before a call puts it under the key."""
    whoami = define_tool(name="whoami", description="Who am I.", fn=lambda: {"note": password})
    agent = Agent(provider=mock(replies=[{"tool": "whoami", "args": {}},
                                         {"tool": "login", "args": {"password": password}}, "Done."]),
                  tools=[whoami, login_tool()], redact=POLICY)
    events: list[Any] = []
    run = await agent.run("Log me in.", on_event=events.append)
    assert [event for event in events if event.type == "recall"]  # the early tool result went out, then was recalled
    assert showing(password, served(run, tmp_path, events)) == {}


def test_an_error_message_that_shows_the_value_by_its_repr_is_masked() -> None:
    password = "it's\\both\"-4421"  # a repr escapes its quote and its backslash

    def fail() -> str:
        raise KeyError(password)  # str(KeyError) is the repr of its key

    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": password}},
                                         {"tool": "fail", "args": {}}, "Done."]),
                  tools=[login_tool(), define_tool(name="fail", description="Fail.", fn=fail)], redact=POLICY)
    run = agent.run_sync("Log me in.")
    recorded = run.recording.model_dump_json()
    assert repr(password)[1:-1] != password and "KeyError" in recorded
    assert showing(password, {"recording": recorded, "html": run.to_html()}) == {}


def test_scan_finds_an_escaped_value_in_a_notebook_and_scrub_leaves_none(tmp_path: Path) -> None:
    """A run recorded without a policy, shared as a notebook: the policy learns the password from the call's
    arguments, and finds it JSON-escaped in the model's turn."""
    password = "back\\slash-4421"
    agent = Agent(provider=mock(replies=[{"tool": "login", "args": {"password": password}}, "Done."]),
                  tools=[login_tool()])
    run = agent.run_sync("Log me in.")
    assert 'login({"password": "back\\\\slash-4421"})' in [piece.content for piece in run.recording.context_pieces]
    path = export([run], tmp_path / "shared.ipynb", title="shared")
    assert {finding.where for finding in scan(path, redact=POLICY)} >= {"recording", "data[text/html]"}
    scrub(path, redact=POLICY)
    assert showing(password, {"notebook": path.read_text()}) == {}
    assert scan(path, redact=POLICY) == []


def test_a_run_imported_from_spans_masks_its_arguments_as_the_model_turn_writes_them() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from footprint_lab.otel import from_spans

    password = "back\\slash-Crème-4421"
    arguments = json.dumps({"user": "ana", "password": password})  # as a framework writes them: ensure_ascii
    call = {"message.role": "assistant", "message.tool_calls.0.tool_call.id": "c1",
            "message.tool_calls.0.tool_call.function.name": "login",
            "message.tool_calls.0.tool_call.function.arguments": arguments}
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    asked = {"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Log me in."}
    with tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT", "agent.name": "a"}):
        with tracer.start_as_current_span("llm", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "m", **asked,
                **{f"llm.output_messages.0.{name}": value for name, value in call.items()}}):
            pass
        with tracer.start_as_current_span("tool", attributes={
                "openinference.span.kind": "TOOL", "tool.name": "login", "tool_call.id": "c1",
                "input.value": arguments, "output.value": "ok"}):
            pass
        with tracer.start_as_current_span("llm", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "m", **asked,
                **{f"llm.input_messages.1.{name}": value for name, value in call.items()},
                "llm.input_messages.2.message.role": "tool", "llm.input_messages.2.message.content": "ok",
                "llm.input_messages.2.message.tool_call_id": "c1",
                "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": "Done."}):
            pass
    (run,) = from_spans(exporter.get_finished_spans(), redact=POLICY)
    turns = [piece.content for piece in run.recording.context_pieces if piece.content.startswith("login(")]
    assert turns and all(MASK in turn for turn in turns)
    shown = {"recording": run.recording.model_dump_json(), "context": run.context().to_string(), "html": run.to_html()}
    assert showing(password, shown) == {}


def test_a_short_covered_value_is_masked_as_data_and_a_pattern_masks_it_in_text() -> None:
    """``737`` is too short to hunt in every text (it would mask every other 737): it is masked where it is data
    under its key and where its key is written beside it, so free text the model writes ("CVV 737") keeps it; the
    pattern docs/how-to/redact.md gives masks it there too."""

    def paid(policy: Redaction) -> Any:
        pay = define_tool(name="pay", description="Pay.", fn=lambda cvv: {"status": "paid", "cvv": cvv})
        agent = Agent(provider=mock(replies=[{"tool": "pay", "args": {"cvv": "737"}}, "Paid; CVV 737 was used."]),
                      tools=[pay], redact=policy)
        return agent.run_sync("Pay my bill.")

    run = paid(Redaction(keys=["cvv"]))
    calls = [call for message in run.recording.messages for call in message.get("tool_calls") or ()]
    assert [call["args"] for call in calls] == [{"cvv": "[redacted:cvv]"}]
    assert run.recording.answer == "Paid; CVV 737 was used."
    run = paid(Redaction(keys=["cvv"], patterns={"cvv": r"(?i)cvv\W{0,4}\d{3,4}"}))
    shown = run.recording.model_dump_json() + run.context().to_string() + run.to_html()
    assert not re.search(r"(?i)cvv(?:\W|&quot;){0,8}737", shown)  # near its name: a hash may hold 737
    assert "[redacted:cvv]" in run.recording.answer


def test_every_reader_of_what_was_learned_meets_each_escaped_form() -> None:
    """One place learns a value's forms (JSON, ``repr``, a web page's and a URL's): the masking, the sweep, the hits a
    notebook reads, the quick test."""
    password = 'q"u\\o\te-Crème-4421'

    def in_json(text: str, ascii_only: bool = False) -> str:
        return json.dumps(text, ensure_ascii=ascii_only)[1:-1]

    written = {"raw": password, "JSON": in_json(password), "JSON, ASCII": in_json(password, True),
               "repr": repr(password)[1:-1], "JSON in JSON": in_json(in_json(password)),
               "JSON, ASCII, in JSON": in_json(in_json(password, True)),
               "repr in JSON": in_json(repr(password)[1:-1]), "HTML": html.escape(password),
               "URL": urllib.parse.quote(password), "HTML, as Jinja writes it": html.escape(password).replace(
                   "&quot;", "&#34;")}
    assert len(set(written.values())) == len(written)
    scrubber = POLICY.for_run()
    scrubber.scrub({"password": password})
    for how, form in written.items():
        text = f"note: {form}."
        assert scrubber.knows_any(text), how
        assert scrubber.scrub(text) == scrubber.sweep(text) != text, how
        assert showing(password, {how: scrubber.scrub(text)}) == {}
        assert scrubber.hits(text)[0][:2] == (6, 6 + len(form)), how
    assert scrubber.known() == {password: MASK}  # the value goes on to the next leg as it was: never escaped again
    assert RunScrubber.of_values(scrubber.known()).learned_count == scrubber.learned_count == len(written)


def test_a_plain_value_is_hunted_in_one_form_and_a_value_that_is_a_form_of_another_in_its_own() -> None:
    scrubber = POLICY.for_run()
    scrubber.scrub({"password": "plain-pass-4421"})
    assert scrubber.learned_since(0) == ["plain-pass-4421"]
    scrubber.scrub({"password": 'a"bcd'})
    hunted = scrubber.learned_count
    scrubber.scrub({"password": 'a\\"bcd'})  # a form of the value before, now a value of its own
    assert scrubber.learned_count > hunted and scrubber.knows_any('a\\"bcd') and not scrubber.knows_any("abcd")
    assert scrubber.scrub('{"note": "a\\"bcd"}') == '{"note": "[redacted:password]"}'


async def test_a_late_value_held_only_in_a_live_event_as_json_text_is_recalled() -> None:
    """The recall reads each delivered event as JSON: the tool's JSON text in it is escaped once more."""
    password = 'ab"cd\\ef-9913'
    whoami = define_tool(name="whoami", description="Who am I.", fn=lambda: json.dumps({"note": password}))
    agent = Agent(provider=mock(replies=[{"tool": "whoami", "args": {}},
                                         {"tool": "login", "args": {"password": password}}, "Done."]),
                  tools=[whoami, login_tool()], redact=POLICY)
    events: list[Any] = []
    await agent.run("Log me in.", on_event=events.append)
    recalled = [entry for event in events if event.type == "recall" for entry in event.payload["events"]]
    assert recalled and MASK in json.dumps(recalled)
    assert showing(password, {"live events": json.dumps(held(events), ensure_ascii=False)}) == {}


def test_scrubbers_that_share_their_learning_share_each_value_in_every_form() -> None:
    """A composition's members share one set of learned values (``share_learning``), escaped forms and all."""
    first, second = POLICY.for_run(), POLICY.for_run()
    first.scrub({"password": 'a"b-4421'})
    second.share_learning(first)
    assert second.scrub('{"note": "a\\"b-4421"}') == f'{{"note": "{MASK}"}}'
    second.scrub({"password": "Crème-4421"})
    assert first.scrub('{"note": "Cr\\u00e8me-4421"}') == f'{{"note": "{MASK}"}}'
