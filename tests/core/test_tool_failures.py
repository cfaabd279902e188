"""Failures show: a tool that raised, or a provider that failed, is marked on its step, the run's view and integrity.

A tool that raises does not stop the run (the model reads the error as the call's result), so
the run ends "finished": the tool step keeps the exception's type, its message (masked by the
run's redaction policy, then bounded) and the frame of the tool's own code where it was raised;
``integrity`` reports the call (``tool_failed``), and the answer view says "1 tool failed" beside
the status. A tool that returns an error text is a result, not a failure. A run the provider
failed is reported the same way (``run_failed``), once, at the member that failed.
"""

from __future__ import annotations

import inspect
import json

import pytest
from golden_kit import dom

from footprint_lab import Agent, Redaction, Sequence, tool
from footprint_lab.explain import integrity
from footprint_lab.lab.views.answer import answer_view
from footprint_lab.providers import mock
from footprint_lab.providers.errors import ProviderRateLimitError

SECRET = "TCK-480215"
POLICY = {"patterns": {"ticket": r"TCK-\d{6}"}}


class LedgerLocked(Exception):
    """A tool's own exception type."""


def _locked_ledger(order_id: str) -> dict:
    raise LedgerLocked(f"ledger for {order_id} is locked by ticket {SECRET}")


@tool
def refund(order_id: str) -> dict:
    """Refund an order."""
    return _locked_ledger(order_id)


@tool
def lookup(order_id: str) -> dict:
    """Find an order."""
    if not order_id.startswith("A-"):
        raise ValueError("order ids start with A-")
    return {"order_id": order_id, "age_days": 47}


@tool
async def parse(text: str) -> dict:
    """Read a JSON record."""
    return json.loads(text)  # raises in the standard library: the frame kept is this line


@tool
def status(order_id: str) -> str:
    """An order's status; says so in words when it has none."""
    return "Error: no status is known for this order"


def raise_line(function) -> str:
    """``file:line`` of the first ``raise`` or ``json.loads`` in a function's source."""
    lines, first = inspect.getsourcelines(function)
    at = next(first + n for n, line in enumerate(lines) if "raise " in line or "json.loads" in line)
    return f"{inspect.getsourcefile(function)}:{at}"


def call(name: str, **args) -> dict:
    return {"tool": name, "args": args}


def agent(*replies, tools=(refund, lookup, parse, status), **settings) -> Agent:
    return Agent(provider=mock(replies=list(replies)), tools=list(tools), **settings)


def results(recording):
    return [p for p in recording.context_pieces if p.source_kind == "tool_result"]


def view(run) -> str:
    return answer_view(run.recording)


async def test_a_tool_raising_valueerror_is_kept_on_its_step_reported_and_shown():
    run = await agent(call("lookup", order_id="B-1"), "It could not be found.").run("Where is B-1?")
    assert run.status == "finished"
    piece, = results(run.recording)
    assert piece.detail["error_type"] == "ValueError"
    assert piece.detail["error_message"] == "order ids start with A-"
    assert piece.detail["error_frame"] == f"{raise_line(lookup.fn)} in lookup"
    step = next(s for s in run.recording.steps if s.step_id == piece.landed_by)
    assert step.status == "tool_error"
    end = next(e for e in run.recording.events if e.type == "tool_end")
    assert end.payload["error_type"] == "ValueError" and end.payload["error_frame"] == piece.detail["error_frame"]

    report = integrity(run)
    found, = report.of_kind("tool_failed")
    assert found.steps == ("call-llm#3", piece.landed_by)
    assert "tool 'lookup' raised ValueError" in found.what and "order ids start with A-" in found.what
    assert report.disposition("tool_failed") == "failed" and not report.ok

    page = dom(view(run))
    badge = page.find(cls="fl-tag", has="data-fl-failed-tools")
    assert badge.text() == "1 tool failed"
    assert "✓ finished" in page.find(cls="fl-head").text()
    # the steps table's row (the one custody links reach by its id) carries the finding's badge
    row = next(row for row in page.find_all("tr") if row.text().startswith(piece.landed_by) and row.attrs.get("id"))
    assert "[tool_failed]" in row.text() and "tool_error" in row.text()
    timed = next(row for row in page.find_all("tr") if row.attrs.get("data-fl-step") == piece.landed_by)
    assert "fl-failed" in (timed.attrs.get("class") or "") and "✗ tool_error" in timed.text()   # and the timeline
    assert "Integrity: 1 finding" in page.text()


async def test_the_frame_is_the_tools_own_innermost_line_not_the_library_or_the_package():
    # raised two calls down in the tool's own module; raised inside json (the standard library), from an async tool
    run = await agent(call("refund", order_id="A-1"), call("parse", text="{not json"), "Done.").run("Refund A-1.")
    kept = {p.detail["tool"]: p.detail for p in results(run.recording)}
    assert kept["refund"]["error_frame"] == f"{raise_line(_locked_ledger)} in _locked_ledger"
    assert kept["parse"]["error_type"] == "JSONDecodeError"
    assert kept["parse"]["error_frame"] == f"{raise_line(parse.fn)} in parse"
    assert all("footprint_lab" not in detail["error_frame"] for detail in kept.values())


async def test_a_secret_in_the_exception_message_is_masked_everywhere_it_is_kept():
    run = await agent(call("refund", order_id="A-1"), "The refund failed.",
                      redact=Redaction(**POLICY)).run("Refund A-1.")
    piece, = results(run.recording)
    assert piece.detail["error_message"] == "ledger for A-1 is locked by ticket [redacted:ticket]"
    shown = [run.recording.model_dump_json(), view(run), str(integrity(run)), integrity(run)._repr_html_()]
    assert all(SECRET not in text and "480215" not in text for text in shown)
    assert all("[redacted:ticket]" in text for text in shown)


async def test_a_long_message_is_bounded_after_masking_so_no_part_of_a_secret_is_left():
    class Verbose(Exception):
        pass

    @tool
    def noisy() -> str:
        """Fails at length."""
        raise Verbose("x" * 290 + SECRET + "y" * 5000)

    run = await agent(call("noisy"), "ok", tools=[noisy], redact=Redaction(**POLICY)).run("go")
    message = results(run.recording)[0].detail["error_message"]
    assert len(message) <= 300 and message.startswith("x" * 290 + "[redacted")
    assert "TCK" not in run.recording.model_dump_json()


async def test_an_error_text_returned_an_unknown_tool_and_bad_arguments_are_not_failures():
    run = await agent(call("status", order_id="A-1"), call("teleport"), call("lookup", order_id=7),
                      "No status.").run("Status of A-1?")
    assert all("error_type" not in p.detail for p in results(run.recording))
    report = integrity(run)
    assert report.of_kind("tool_failed") == [] and report.disposition("tool_failed") == "passed"
    assert "data-fl-failed-tools" not in view(run)


async def test_a_run_without_tools_has_nothing_to_check():
    report = integrity(await agent("hello", tools=()).run("hi"))
    assert report.disposition("tool_failed") == "not_applicable"
    assert report.disposition("run_failed") == "passed"


async def test_several_failures_are_each_reported_and_counted_in_words():
    run = await agent([call("lookup", order_id="B-1"), call("lookup", order_id="C-2")],
                      call("refund", order_id="A-1"), "Nothing worked.").run("go")
    report = integrity(run)
    found = report.of_kind("tool_failed")
    assert [f.what.split(" raised ")[1].split(" ")[0] for f in found] == ["ValueError", "ValueError", "LedgerLocked"]
    assert len({f.steps[-1] for f in found}) == 3
    assert dom(view(run)).find(has="data-fl-failed-tools").text() == "3 tools failed"


async def test_a_tool_raising_inside_a_composition_member_shows_on_the_composition():
    member = agent(call("lookup", order_id="B-1"), "Not found.", redact=Redaction(**POLICY))
    flow = Sequence({"first": Agent(provider=mock(reply=f"Look up B-1 for {SECRET}")), "lookup": member})
    run = await flow.run("go")
    assert run.status == "finished"
    found, = integrity(run).of_kind("tool_failed")
    mounted = run.recording.children[1].path
    assert all(step.startswith(mounted + "/") for step in found.steps)
    html = view(run)
    assert dom(html).find(cls="fl-head").find(has="data-fl-failed-tools").text() == "1 tool failed"
    assert SECRET not in html


@pytest.mark.parametrize("failure", [
    ProviderRateLimitError(f"the provider refused: too many requests for {SECRET}", provider="mock", status=429,
                           attempts=3, retry_after=None),
    ConnectionError(f"connection reset while sending {SECRET}"),
])
async def test_a_provider_failure_shows_in_the_view_and_integrity(failure):
    def respond(request):
        raise failure

    failing = Agent(provider=mock(respond=respond), redact=Redaction(**POLICY))
    with pytest.raises(type(failure)):
        await failing.run("hi")
    run = failing.last_run
    error = run.recording.error
    assert error["type"] == type(failure).__name__ and "[redacted:ticket]" in error["message"]
    assert error["frame"] == f"{raise_line(respond)} in {respond.__qualname__}"
    report = integrity(run)
    found, = report.of_kind("run_failed")
    assert found.steps == (error["step_id"],) and type(failure).__name__ in found.what
    html = view(run)
    box = dom(html).find(has="data-fl-answer")
    assert f"Failed at {error['step_id']} : {type(failure).__name__} raised at" in box.text()
    assert "[redacted:ticket]" in box.text() and respond.__qualname__ in box.text()
    assert SECRET not in html and SECRET not in run.recording.model_dump_json()


async def test_a_member_that_failed_is_reported_once_at_the_member():
    def respond(request):
        raise ConnectionError("reset")

    flow = Sequence({"first": Agent(provider=mock(reply="a")), "second": Agent(provider=mock(respond=respond))})
    with pytest.raises(Exception):  # noqa: B017 - the composition wraps the member's error (its checkpoint)
        await flow.run("go")
    found, = integrity(flow.last_run).of_kind("run_failed")
    member = flow.last_run.recording.children[1]
    assert found.steps == (member.error["step_id"],) and found.what.startswith(f"member {member.path} failed")
