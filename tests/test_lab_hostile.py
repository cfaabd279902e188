"""Hostile strings pushed through every view as answers, tool results, fact data, ids and names: none is markup.

Each view is parsed with the standard HTML parser; the only elements allowed are the ones the
views write themselves, no attribute is an event handler, every link is an in-page anchor,
and the plotly figure's texts hold no tag but the ones plotly's hover is given on purpose.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest

from footprint_lab import Agent, Conditional, InvalidRunInputError, Run, Sequence, define_tool
from footprint_lab.context import define_fact
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
#: every element the views write themselves
ALLOWED = {"div", "style", "span", "b", "code", "pre", "details", "summary", "section", "h4", "h5", "p", "small",
           "ol", "ul", "li", "a", "table", "tr", "td", "th", "script", "i", "mark", "noscript"}


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


def assert_inert(html: str, *, scripts_allowed: bool = False) -> None:
    parser = _Collect()
    parser.feed(html)
    for tag, attrs in parser.tags:
        assert tag in ALLOWED, tag
        assert scripts_allowed or tag != "script"
        for name, value in attrs:
            assert not name.startswith("on"), name
            if name == "href":
                assert value is not None and value.startswith("#"), value
            assert "javascript:" not in (value or "").replace(" ", "").lower() or name.startswith("data-fl"), value
    for script in parser.scripts:  # the figure only, whose JSON escapes every '<'
        assert "newPlot" in script and "<" not in script


def hostile_agent(name: str = JOINED[:60]) -> Agent:
    tool = define_tool(name="fetch", description="Fetch a record.", fn=lambda: JOINED)
    return Agent(
        provider=mock(replies=[{"tool": "fetch", "args": {}, "id": HOSTILE[3]}, JOINED]),  # a hostile call id
        system=f"System {HOSTILE[0]}", tools=[tool], name=name,
        context=[define_fact(id="planted", data=JOINED), define_fact(id="other", data={"k": HOSTILE[1]})],
    )


@pytest.fixture(autouse=True)
def without_plotlyjs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leave plotly.js (the package's own code, 4.8 MB) out of the pages parsed here."""
    from footprint_lab.lab.views import tree

    monkeypatch.setattr(tree, "_plotlyjs_sent", True)


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
        return hostile_agent()

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
