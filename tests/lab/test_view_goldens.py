"""The views against their golden outlines (tests/golden/): what a reader gets, element by element and word by word.

Each golden file is the view's outline (``golden_kit.outline``: tags, classes, hooks and text;
no style, no geometry, durations and run ids as placeholders). A change to a view shows here as
a diff to read; ``FOOTPRINT_GOLDEN=update`` writes the files anew, on purpose only.
"""

from __future__ import annotations

from golden_kit import assert_golden, outline

from footprint_lab import Agent, define_tool
from footprint_lab.errors import InvalidRunInputError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import ask, find_dropped_context, localize
from footprint_lab.lab.cards import error_card_html
from footprint_lab.lab.views import slots_view
from footprint_lab.providers import mock


def _order_tool() -> object:
    return define_tool(name="lookup_order", description="Find an order by its id.", fn=lambda order_id: {"age": 47},
                       input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}})


async def test_the_backtrack_and_the_context_of_a_call():
    run = await planted_fact_agent().run(REFUND_REQUEST)
    names = {run.recording.run_id: "RUN"}
    assert_golden("backtrack", run.backtrack()._repr_mimebundle_()["text/html"], names)
    assert_golden("context_first_call", slots_view(run.recording, run.recording.exchanges[0], left_out=True), names)


async def test_an_integrity_report_with_findings():
    calls = [{"tool": "lookup_order", "args": {"order_id": order}} for order in ("A-1001", "A-1001", "B-7731")]
    run = await Agent(provider=mock(replies=[*calls, "DECLINED"]), tools=[_order_tool()]).run("Refund order A-1001.")
    report = run.integrity()
    assert report.findings
    assert_golden("integrity_findings", report._repr_mimebundle_()["text/html"], {run.recording.run_id: "RUN"})


async def test_localize_and_find_dropped_context():
    agent = planted_fact_agent()
    run = await agent.run(REFUND_REQUEST)
    found = await localize(run, rerun=agent, samples=1, top=2, progress=False)
    assert_golden("localization", found._repr_mimebundle_()["text/html"])
    budget = planted_fact_agent(variant="budget")
    dropped = await find_dropped_context(await budget.run(REFUND_REQUEST), rerun=budget, progress=False)
    assert_golden("dropped", dropped._repr_mimebundle_()["text/html"])


async def test_an_explanation_and_an_error_card():
    run = await planted_fact_agent().run(REFUND_REQUEST)
    replies = [{"tool": "list_calls", "args": {}}, "Approved because of [call-llm#6], not [call-llm#9]."]
    explanation = await ask(run, "Why was the refund approved?", provider=mock(replies=replies))
    assert_golden("explanation", explanation._repr_mimebundle_()["text/html"])
    try:
        await planted_fact_agent().run(["not", "a", "message"])
    except InvalidRunInputError as refusal:
        assert_golden("error_card", error_card_html(refusal))


def test_a_timeline_time_outlines_alike_in_every_form_the_view_writes_it() -> None:
    """A step's start and length are written with three decimals under 10 ms, one under 1 s and whole above: a run
    slower on a busy machine writes another form of the same field, and its outline must not differ for it."""
    for written in ("0.031", "11.7", "1,234"):
        drawn = outline(f'<table><tr><td class="fl-num">{written}</td><td>{written}</td></tr></table>')
        assert drawn.count("'N.NN'") == (2 if "." in written else 1), drawn
