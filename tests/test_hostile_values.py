"""Hostile ids and values, in every view and every panel of the widget: each is drawn as text, none is markup.

Every variant (quotes of both kinds, ``<`` and ``>``, backticks, newlines, a ``javascript:``
URL, ``&quot;`` already encoded, NUL, a value of 160,000 characters) goes in as an answer, a
tool result, a fact, an agent's and a member's name, a question to a person, the id of a
piece in a notebook someone tampered with, an id the Ask box cites, and a provider's tool-call
id. Each view is parsed as a browser parses it (``markup_kit``): no element, attribute name,
event handler, link or script came from the input, and the input is found again whole as the
text or the attribute value it was written as.

Reaches notebook._html for the tags Markdown may write (_TAGS), which have no public name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from markup_kit import PAGE_TAGS, Parsed, assert_inert, parse

from footprint_lab import Agent, Conditional, Run, Sequence, ask_human, define_tool, load_recording, tool
from footprint_lab.base.unicode import visible
from footprint_lab.context import define_fact
from footprint_lab.context.declarations import ContextDeclarationError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import find_dropped_context, localize, ranking_confidence, rerun_without
from footprint_lab.explain.asking.explainer import Explanation
from footprint_lab.lab import ask_box, panels
from footprint_lab.lab.cards import error_card_html
from footprint_lab.lab.live import DETAIL_LIMIT
from footprint_lab.lab.views import slots_view
from footprint_lab.lab.widget import Lab
from footprint_lab.markup.elements import TEXT_LIMIT, shown
from footprint_lab.notebook import to_html
from footprint_lab.notebook._html import _TAGS as MARKDOWN_TAGS
from footprint_lab.providers import LLMRequest, mock
from footprint_lab.providers.types import PLAIN_CALL_ID
from footprint_lab.record.recording import Recording

HOSTILE = {
    "double quotes": 'q1" onmouseover="alert(1)" x="',
    "single quotes": "q2' onfocus='alert(2)' autofocus='",
    "a tag": "<img src=x onerror=alert(3)>",
    "closing tags": "</code></pre></details></div><script>alert(4)</script>",
    "backticks": "`${alert(5)}`<svg/onload=alert(5)>",
    "newlines": 'line one\nline two\r\n" onclick="alert(6)\n<b>bold</b>',
    "a javascript URL": "javascript:alert(7)//<a href=javascript:alert(7)>x</a>",
    "pre-encoded": "&quot; onclick=&quot;alert(8)&quot; &lt;i&gt;x&lt;/i&gt; &#34;",
    "NUL": "nul\x00byte\" onload=\"alert(9)<iframe src=javascript:alert(9)>",
    "very long": "long" + "<\"'>`&" * 26_000,
}
VARIANTS = list(HOSTILE)
#: the id of the planted fact in the scenario a tampered notebook rewrites
PLANTED = "vip-override"


def drawn(value: str) -> str:
    """What a reader of a view finds of ``value``: its beginning as drawn, whitespace runs made one space."""
    return " ".join(visible(value[:60]).split())


def assert_drawn_as_text(parsed: Parsed, value: str) -> None:
    assert drawn(value) in parsed.words(), f"{drawn(value)!r} is not in the view's text"


def hostile_agent(value: str) -> Agent:
    """An agent whose tool result, answer, fact, system prompt, name and tool-call id all carry ``value``."""
    fetch = define_tool(name="fetch", description="Fetch a record.", fn=lambda: value)
    return Agent(
        provider=mock(replies=[{"tool": "fetch", "args": {}, "id": value}, value]),
        system=f"System {value}", tools=[fetch], name=value[:60],
        context=[define_fact(id="planted", data=value), define_fact(id="other", data={"k": value})])


def tampered(value: str) -> Recording:
    """The planted-fact run as a notebook someone edited would hold it: the fact's id replaced by ``value``."""
    text = planted_fact_agent().run_sync(REFUND_REQUEST).recording.model_dump_json()
    return load_recording(text.replace(PLANTED, json.dumps(value)[1:-1]))


def answering(recording: Recording) -> str:
    return recording.exchanges[-1].step_id


@pytest.fixture(params=VARIANTS)
def value(request: pytest.FixtureRequest) -> str:
    return HOSTILE[request.param]


async def test_the_answer_view_the_slots_the_backtrack_and_the_suspects(value):
    run = await hostile_agent(value).run(value)
    for html in (run._repr_mimebundle_()["text/html"], run.recording._repr_mimebundle_()["text/html"],
                 *(slots_view(run.recording, x, left_out=True) for x in run.recording.exchanges),
                 run.backtrack()._repr_mimebundle_()["text/html"]):
        assert_drawn_as_text(assert_inert(html), value)
    assert_inert(ranking_confidence(run.suspects())._repr_mimebundle_()["text/html"])


async def test_a_tampered_recordings_piece_id_is_an_attribute_value_and_text_never_markup(value):
    recording = tampered(value)
    run = Run.from_recording(recording)
    view = assert_inert(run._repr_mimebundle_()["text/html"])
    hooked = value[:TEXT_LIMIT] + ("…" if len(value) > TEXT_LIMIT else "")
    assert hooked in view.values("data-fl-piece")           # the hook holds the id exactly, as the widget sends it
    assert_drawn_as_text(view, value)
    for html in (slots_view(recording, recording.exchanges[-1], left_out=True),
                 run.backtrack()._repr_mimebundle_()["text/html"],
                 panels.call_panel(recording, answering(recording), chosen=("system", value))):
        assert hooked in assert_inert(html).values("data-fl-piece")


async def test_compositions_and_their_trees(value):
    name = value.replace("/", "|")  # a member's name may not hold '/', which separates a member's path
    flow = Sequence({name[:80]: hostile_agent(value), "second": Conditional(
        [(name[:40], lambda text: True, Agent(provider=mock(reply=value), name=value[:60]))],
        otherwise=("other", Agent(provider=mock(reply="other"))))}, name=value[:60])
    composed = await flow.run(value)
    assert_drawn_as_text(assert_inert(composed._repr_mimebundle_()["text/html"]), value)
    bundle = composed.tree(steps=True)._repr_mimebundle_()
    assert_inert(bundle["text/html"], scripts_allowed=True)
    for trace in bundle["application/vnd.plotly.v1+json"]["data"]:   # plotly's hover takes <b> and <br> only
        for text in [*(trace.get("text") or []), *(trace.get("hovertext") or []), trace.get("name") or ""]:
            assert_inert(re.sub(r"</?b>|<br>", " ", text))
            assert not parse(re.sub(r"</?b>|<br>", " ", text)).tags, text[:200]


async def test_reruns_localization_dropped_context_checkpoints_and_cards(value):
    run = await hostile_agent(value).run(value)

    def factory(exclude: Any = (), force: Any = ()) -> Agent:
        agent = hostile_agent(value)
        return agent.with_forced(list(force), exclude=list(exclude)) if force else agent.without(list(exclude))

    report = await rerun_without(run, ignore=["planted"], rerun=factory)
    found = await localize(run, rerun=factory, samples=1, top=2, progress=False)
    dropped = await find_dropped_context(run, rerun=factory)
    for view in (report, found, dropped):
        assert_inert(view._repr_mimebundle_()["text/html"])
    for html in (panels.rerun_panel(report), panels.localize_panel(found), panels.dropped_panel(dropped)):
        assert_inert(html)
    agent = hostile_agent(value)
    await agent.run(value)
    assert_inert(agent.checkpoint()._repr_mimebundle_()["text/html"])
    refusal = ContextDeclarationError(value, value, value, value, injection_id=value, received=value)
    card = assert_inert(error_card_html(refusal))
    assert_drawn_as_text(card, value)
    assert_inert(refusal._repr_mimebundle_()["text/html"])


def test_the_ask_box_cites_a_hostile_id_as_a_hook_and_text(value):
    recording = tampered(value)
    explanation = Explanation(question=value, answer=f"Approved because of [{value}] alone.", cited=[value],
                              unsupported=["<script>alert(0)</script>"], opened=[value], run=None, notes=[value])
    html = ask_box.answer_html(explanation, recording)
    parsed = assert_inert(html)
    cites = parsed.values("data-fl-cite")
    assert cites and all(cite == value[:TEXT_LIMIT] + ("…" if len(value) > TEXT_LIMIT else "") for cite in cites)
    assert_drawn_as_text(parsed, value)
    assert_inert(ask_box.note_html(value))
    assert_inert(explanation._repr_mimebundle_()["text/html"])


async def test_every_panel_of_the_widget_and_its_saved_state(value):
    lab = Lab(hostile_agent(value), message=value)
    lab.press_run()
    await lab._task
    assert lab.status == "finished"
    state = [lab.answer_html, panels.static_copy(lab.answer_html)]
    lab.press_click({"answer": True})
    state.append(lab.panel_html)
    piece = next(p for p in lab.run.recording.context_pieces if p.source_kind == "tool_result")
    lab.press_click({"piece": piece.source_id, "slot": piece.slot, "call": answering(lab.run.recording)})
    state.append(lab.panel_html)
    # the same widget over a notebook someone tampered with: a click names the hostile piece and opens it
    recording = tampered(value)
    lab.run = Run.from_recording(recording)
    lab.open_call(answering(recording))
    state.append(lab.panel_html)
    lab.press_cite({"id": value})
    assert "fl-lab-piece" in lab.panel_html or "kB of HTML" in lab.panel_html
    state.append(lab.panel_html)
    for html in state:
        assert_inert(html)
    # the live steps and the tree are text the browser writes with textContent: bounded, controls shown
    for row in lab.steps:
        for key in ("id", "label", "detail"):
            assert len(row[key]) <= DETAIL_LIMIT + 120 and "\x00" not in row[key]
    assert any(drawn(value)[:30] in " ".join(row["detail"].split()) for row in lab.steps)


async def test_a_question_to_a_person_and_its_choices(value):
    @tool
    def approve() -> str:
        """Ask a person."""
        ask_human(value, choices=[value, "no"])

    agent = Agent(provider=mock(replies=[{"tool": "approve", "args": {}}, "done"]), tools=[approve])
    run = await agent.run("go")
    assert_drawn_as_text(assert_inert(run._repr_mimebundle_()["text/html"]), value)
    lab = Lab(Agent(provider=mock(replies=[{"tool": "approve", "args": {}}, "done"]), tools=[approve]))
    lab.message = "go"
    lab.press_run()
    await lab._task
    assert lab.question["text"] == shown(value, whole="lab.run.question")
    assert lab.question["choices"] == [shown(value), "no"]
    lab.press_answer({"answer": lab.question["choices"][0], "choice": 0})  # the button sends its place in the list
    await lab._task
    assert lab.status == "finished"
    answered = [m["content"] for m in lab.run.recording.messages if m["role"] == "tool"]
    assert answered == [value]                                          # the choice itself was the answer


async def test_the_exported_page(value, tmp_path: Path):
    run = await hostile_agent(value).run(value)
    cell = nbformat.v4.new_code_cell(value)
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text=value),
        nbformat.v4.new_output("display_data", data=json.loads(json.dumps(run._repr_mimebundle_()))),
        nbformat.v4.new_output("display_data", data=json.loads(json.dumps(
            Run.from_recording(tampered(value))._repr_mimebundle_()))),
        nbformat.v4.new_output("display_data", data={"text/plain": value}),
        nbformat.v4.new_output("error", ename="Error", evalue=value, traceback=[value]),
    ]
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {value}\n\n{value}"), cell])
    path = tmp_path / "hostile.ipynb"
    nbformat.write(book, path)
    page = to_html(path, tmp_path / "hostile.html").read_text(encoding="utf-8")
    parsed = assert_inert(page, tags=PAGE_TAGS | MARKDOWN_TAGS)
    assert_drawn_as_text(parsed, value)


# -- a provider's tool-call id, where it enters ----------------------------------------------------------

@pytest.mark.parametrize("raw", [*HOSTILE.values(), "", "call with spaces", "x" * 65, "\u202ecall"])
async def test_a_tool_call_id_that_is_not_a_plain_token_is_replaced_where_it_enters(raw):
    sent_back: list[Any] = []

    def respond(request: LLMRequest) -> Any:
        if request.call_index == 0:
            return [{"tool": "fetch", "args": {}, "id": raw}, {"tool": "fetch", "args": {}, "id": raw + "2"}]
        sent_back.extend(request.messages)
        return "done"

    fetch = define_tool(name="fetch", description="Fetch a record.", fn=lambda: "a record")
    run = await Agent(provider=mock(respond=respond), tools=[fetch]).run("go")
    recording = run.recording
    ids = [call.id for call in recording.exchanges[0].response.tool_calls]
    assert all(PLAIN_CALL_ID.fullmatch(i) for i in ids) and len(set(ids)) == 2
    # one id everywhere the run writes it: the pieces, the events, the transcript, and what the model is sent back
    assert [p.source_id for p in recording.context_pieces if p.source_kind == "tool_result"][:2] == ids
    started = [e.payload["tool_call_id"] for e in recording.events if e.type == "tool_start"]
    assert started == ids
    assert [c["id"] for c in sent_back[1]["tool_calls"]] == ids
    assert [m["tool_call_id"] for m in sent_back[2:4]] == ids
    # the custody of each result still proves where it was born: the tool call its step started
    walked = [c for c in run.backtrack() if c.source_id in ids]
    assert len(walked) == 2
    assert all(hop.proven for c in walked for hop in c.hops if hop.kind == "BORN")
    # the same id is replaced the same way on every run
    again = await Agent(provider=mock(respond=respond), tools=[fetch]).run("go")
    assert [call.id for call in again.recording.exchanges[0].response.tool_calls] == ids


@pytest.mark.parametrize("plain", ["call_abc123", "toolu_01A09q90qw90lq917835lq9", "functions.get_weather:0",
                                   "call_1_1", "x" * 64])
async def test_a_plain_tool_call_id_is_kept_as_the_provider_sent_it(plain):
    fetch = define_tool(name="fetch", description="Fetch a record.", fn=lambda: "a record")
    run = await Agent(provider=mock(replies=[{"tool": "fetch", "args": {}, "id": plain}, "done"]),
                      tools=[fetch]).run("go")
    assert [c.id for c in run.recording.exchanges[0].response.tool_calls] == [plain]


# -- invisible controls: shown as marks wherever a value is drawn ------------------------------------------

#: each direction control, and what a view draws in its place
MARKS = {"\u202e": "⟨RLO⟩", "\u202d": "⟨LRO⟩", "\u202a": "⟨LRE⟩", "\u202b": "⟨RLE⟩", "\u202c": "⟨PDF⟩",
         "\u2066": "⟨LRI⟩", "\u2067": "⟨RLI⟩", "\u2068": "⟨FSI⟩", "\u2069": "⟨PDI⟩", "\u200e": "⟨LRM⟩",
         "\u200f": "⟨RLM⟩", "\u061c": "⟨ALM⟩"}
#: a piece that would read "refund approved" where it says "devorppa dnufer", and the other controls
REVERSED = ("Policy: \u202edevorppa dnufer\u202c; " + " ".join(f"x{control}y" for control in MARKS)
            + " nul\x00 esc\x1b[31m")
UNSEEN = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\x00\x1b]")


def assert_marked(text: str) -> None:
    assert not UNSEEN.search(text), f"a control drawn as it is: {UNSEEN.search(text)!r}"
    for mark in MARKS.values():
        assert mark in text, mark
    assert "␀" in text and "␛[31m" in text


async def test_direction_controls_are_drawn_as_marks_in_every_view_and_the_widget(tmp_path: Path):
    run = await hostile_agent(REVERSED).run(REVERSED)
    recording = tampered(REVERSED)
    flow = Sequence({"member": hostile_agent(REVERSED)}, name=REVERSED[:40])
    composed = await flow.run(REVERSED)
    tree = composed.tree()._repr_mimebundle_()
    explanation = Explanation(question=REVERSED, answer=f"Because of [{REVERSED}].", cited=[REVERSED],
                              unsupported=[], opened=[], run=None)
    views = {
        "answer view": run._repr_mimebundle_()["text/html"],
        "tampered answer view": Run.from_recording(recording)._repr_mimebundle_()["text/html"],
        "backtrack": run.backtrack()._repr_mimebundle_()["text/html"],
        "tree": tree["text/html"],
        "card": error_card_html(ContextDeclarationError(REVERSED, REVERSED, REVERSED, REVERSED)),
        "ask box": ask_box.answer_html(explanation, recording),
        "call panel": panels.call_panel(recording, answering(recording), chosen=("system", REVERSED)),
    }
    for name, html in views.items():
        words = assert_inert(html, scripts_allowed=name == "tree").words()
        if name == "tree":  # names and previews only: no control is left in them
            assert not UNSEEN.search(words)
        else:
            assert_marked(words)
    # an attribute the browser shows says the same; a hook keeps the id exact, so a click still names the piece
    assert REVERSED in parse(views["tampered answer view"]).values("data-fl-piece")
    for trace in tree["application/vnd.plotly.v1+json"]["data"]:
        for text in [*(trace.get("text") or []), *(trace.get("hovertext") or [])]:
            assert not UNSEEN.search(text), text
    # the widget: its synced texts (title, live steps, the tree, a question) and the panel a click opens
    lab = Lab(hostile_agent(REVERSED), message=REVERSED)
    lab.press_run()
    await lab._task
    assert_marked(" ".join(f"{row['label']} {row['detail']}" for row in lab.steps) + lab.title)
    lab.run = Run.from_recording(recording)
    lab.press_cite({"id": REVERSED})
    assert "fl-lab-piece" in lab.panel_html
    assert_marked(assert_inert(lab.panel_html).words())
    desk = Lab(flow, message="go")
    desk.press_run()
    await desk._task
    assert not any(UNSEEN.search(json.dumps(node, ensure_ascii=False)) for node in desk.tree["nodes"])
    # the explanation's own bundle, and the exported page
    assert not UNSEEN.search(explanation._repr_mimebundle_()["text/plain"])
    cell = nbformat.v4.new_code_cell("run")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=REVERSED),
                    nbformat.v4.new_output("display_data", data=json.loads(json.dumps(run._repr_mimebundle_())))]
    path = tmp_path / "marks.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    assert_marked(assert_inert(to_html(path, tmp_path / "marks.html").read_text(encoding="utf-8"),
                               tags=PAGE_TAGS | MARKDOWN_TAGS).words())


def test_a_drawn_attribute_shows_its_marks_and_a_hook_keeps_its_value():
    from footprint_lab.markup.elements import attr

    assert attr("a\u202eb", drawn=True) == "a⟨RLO⟩b"
    assert attr("a\u202eb") == "a\u202eb"
    assert attr('"<x>\'') == "&quot;&lt;x&gt;&#x27;"
