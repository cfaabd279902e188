"""Hostile strings pushed through every view as answers, tool results, fact data, ids and names: none is markup.

Each view is parsed with the standard HTML parser (``markup_kit.assert_inert``): the only
elements and attribute names are the ones the views write themselves, no attribute is an event
handler, every link is an in-page anchor, and the plotly figure's texts hold no tag but the
ones plotly's hover is given on purpose. ``test_hostile_values.py`` drives more variants.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from markup_kit import assert_inert

from footprint_lab import Agent, Conditional, Run, Sequence, define_tool
from footprint_lab.context import define_fact
from footprint_lab.errors import InvalidRunInputError
from footprint_lab.explain import find_dropped_context, localize, ranking_confidence, rerun_without
from footprint_lab.providers import mock

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "javascript:alert(3)",
    '"><svg onload=alert(4)>',
    "</details></div></section><b>unbalanced",
    "' onmouseover='alert(5)' x='",
    "<a href=\"javascript:alert(6)\">click</a>",
]
JOINED = " | ".join(HOSTILE)


def hostile_agent(name: str = JOINED[:60]) -> Agent:
    tool = define_tool(name="fetch", description="Fetch a record.", fn=lambda: JOINED)
    return Agent(
        provider=mock(replies=[{"tool": "fetch", "args": {}, "id": HOSTILE[3]}, JOINED]),  # a hostile call id
        system=f"System {HOSTILE[0]}", tools=[tool], name=name,
        context=[define_fact(id="planted", data=JOINED), define_fact(id="other", data={"k": HOSTILE[1]})],
    )


@pytest.fixture
async def run() -> Run:
    return await hostile_agent().run(JOINED)


def test_the_answer_view_and_the_run_bundle(run):
    bundle = run._repr_mimebundle_()
    assert_inert(bundle["text/html"])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in bundle["text/html"]
    assert_inert(run.recording._repr_mimebundle_()["text/html"])


def test_the_slots_view(run):
    from footprint_lab.lab.views import slots_view

    for exchange in run.recording.exchanges:
        assert_inert(slots_view(run.recording, exchange, left_out=True))


def test_the_explanations(run):
    views = [run.backtrack(), ranking_confidence(run.suspects()), run.tree(), run.tree(steps=True)]
    for view in views:
        bundle = view._repr_mimebundle_()
        assert_inert(bundle["text/html"], scripts_allowed=True)


async def test_reruns_localization_and_dropped_context(run):
    def factory(exclude: Any = (), force: Any = ()) -> Agent:
        agent = hostile_agent()
        return agent.with_forced(list(force), exclude=list(exclude)) if force else agent.without(list(exclude))

    report = await rerun_without(run, ignore=["planted"], rerun=factory)
    found = await localize(run, rerun=factory, samples=1, top=2, progress=False)
    dropped = await find_dropped_context(run, rerun=factory)
    for view in (report, found, dropped):
        assert_inert(view._repr_mimebundle_()["text/html"])


async def test_compositions_with_hostile_names_and_member_keys():
    flow = Sequence({HOSTILE[3]: hostile_agent(), "second": Conditional(
        [(HOSTILE[5], lambda text: True, hostile_agent(name=HOSTILE[1]))],
        otherwise=("other", Agent(provider=mock(reply=HOSTILE[0]))))}, name=HOSTILE[4])
    composed = await flow.run(JOINED)
    assert_inert(composed._repr_mimebundle_()["text/html"])
    tree = composed.tree(steps=True)
    bundle = tree._repr_mimebundle_()
    assert_inert(bundle["text/html"], scripts_allowed=True)
    for trace in bundle["application/vnd.plotly.v1+json"]["data"]:
        for text in [*(trace.get("text") or []), *(trace.get("hovertext") or [])]:
            assert "<" not in re.sub(r"</?b>|<br>", "", text), text


def test_checkpoints_and_cards():
    agent = Agent(provider=mock(reply=JOINED), name=HOSTILE[0])
    agent.run_sync(JOINED)
    assert_inert(agent.checkpoint()._repr_mimebundle_()["text/html"])
    with pytest.raises(InvalidRunInputError) as refused:
        agent.run_sync([HOSTILE[0]])
    assert_inert(refused.value._repr_mimebundle_()["text/html"])
