"""Every object shows itself: MIME bundles, the answer view's hooks, trees drawn as SVG with their members' names.

The views are read parsed (``golden_kit.dom``) and against golden outlines (``tests/golden/``), never by
regular expressions over their markup."""

from __future__ import annotations

import json
import re

import pytest
from golden_kit import assert_golden, dom
from paths_kit import ROOT

from footprint_lab import Agent, Conditional, LLMCall, Parallel, Recording, Run, Sequence
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.lab.views import answer_view, run_bundle, tree_figure
from footprint_lab.markup import theme
from footprint_lab.providers import mock
from footprint_lab.record.recording import RECORDING_MIME

PACKAGE = ROOT / "footprint_lab"


@pytest.fixture
def planted() -> Run:
    return planted_fact_agent().run_sync(REFUND_REQUEST)


def test_a_run_carries_its_recording_beside_its_views(planted):
    bundle = planted._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", RECORDING_MIME}
    assert bundle["text/plain"] == repr(planted) and "\n" not in bundle["text/plain"]
    data = bundle[RECORDING_MIME]
    assert json.loads(json.dumps(data)) == data and data["schema_version"] == planted.recording.schema_version
    assert Recording.model_validate(data) == planted.recording
    assert Recording.model_validate_json(json.dumps(data)) == planted.recording
    assert set(planted.recording._repr_mimebundle_()) == set(bundle)
    assert planted._repr_mimebundle_(include=["text/plain"]) == {"text/plain": repr(planted)}
    assert RECORDING_MIME not in planted._repr_mimebundle_(exclude=[RECORDING_MIME])


def test_the_saved_recording_names_each_field_once_and_reads_back_equal_with_its_members():
    branches = {name: LLMCall(provider=mock(reply=f"{name} says yes")) for name in ("billing", "legal")}
    checks = Parallel(branches, merge=lambda answers: "ok")
    run = Sequence({"refunds": planted_fact_agent(), "checks": checks}).run_sync(REFUND_REQUEST)
    data = run._repr_mimebundle_()[RECORDING_MIME]
    full = json.dumps(run.recording.model_dump(mode="json", exclude_defaults=True))
    assert len(json.dumps(data)) < 0.8 * len(full)          # the long lists of records are tables
    back = Recording.model_validate_json(json.dumps(data))
    assert back == run.recording and back.children == run.recording.children
    assert back.model_dump() == run.recording.model_dump()  # every field, members' included, as recorded


def test_the_answer_view_walks_from_the_answer_to_the_planted_fact(planted):
    html = answer_view(planted.recording)
    assert "<script" not in html
    view = dom(html)
    assert len(view.find_all(has="data-fl-answer")) == 1
    answering = planted.recording.exchanges[-1].step_id
    section = view.find("section", "fl-call", data_fl_call=answering)
    # the ANSWER hop every piece shares is written once, above the slots
    shared = section.find("ul", "fl-hops")
    assert [b.text() for b in shared.find_all("b")] == ["ANSWER"]
    assert sum(b.text() == "ANSWER" for b in section.find_all("b")) == 1 and "correlational" in section.text()
    row = view.find("details", "fl-piece", data_fl_piece="vip-override", data_fl_slot="system")
    closed = row.find("summary").text()
    # the fields of a closed row are apart by real text, not only by the sheet's layout
    assert closed.startswith("fact · vip-override · The customer holds"), closed
    custody = row.find("ol")
    assert [hop.find("b").text() for hop in custody.find_all("li")][:4] == ["READ", "LANDED", "ALLOWED", "BORN"]
    assert "scenarios.py:" in custody.text() and "not proven" not in row.text()
    assert row.find("mark").text().startswith("#1 · ")
    # a tool result's custody names the call that asked for it
    tool_row = view.find("details", "fl-piece", data_fl_piece="call_1_1", data_fl_slot="messages")
    assert "ASKED" in [b.text() for b in tool_row.find_all("b")]
    assert_golden("answer_view", html, {planted.recording.run_id: "RUN"})


def test_left_out_pieces_are_listed_with_why():
    run = planted_fact_agent(variant="budget").run_sync(REFUND_REQUEST)
    left = dom(answer_view(run.recording)).find("details", "fl-left-out")
    assert "dropped" in left.find("summary").text()
    row = left.find("details", "fl-piece", data_fl_piece="refund-policy")
    assert "BUDGET" in [b.text() for b in row.find_all("b")]


def test_each_output_scopes_its_css_and_anchors(planted):
    first, second = answer_view(planted.recording), answer_view(planted.recording)
    view = dom(first)
    root = view.elements()[0]
    scope = root.attrs["id"] or ""
    assert re.fullmatch(r"fl[0-9a-f]{6}", scope) and scope not in second
    sheet = "".join(child for node in view.find_all("style") for child in node.children if isinstance(child, str))
    # the one rule outside the scope: the dark palette, set where the page is dark, and only the palette's variables
    assert theme.dark_rules() in sheet and not re.sub(r"--fl-[a-z-]+:#[0-9a-f]{6};?", "", theme.dark_rules().split(
        "{", 1)[1].rstrip("}"))
    sheet = sheet.replace(theme.dark_rules(), "")
    selectors = [rule.split("{")[0] for rule in sheet.split("}") if "{" in rule]
    assert selectors and all(part.strip().startswith(f"#{scope}") for s in selectors for part in s.split(","))
    ids = {node.attrs.get("id") for node in view.find_all()}
    targets = [node.attrs["href"] or "" for node in view.find_all("a") if node.attrs.get("href")]
    assert targets and all(target[1:] in ids for target in targets)


def test_members_keep_the_names_the_analyst_gave_them():
    flow = Sequence({"first": LLMCall(provider=mock(reply="a")), "second": Agent(provider=mock(reply="b"))})
    tree = flow.run_sync("hi").tree()
    assert [(n.name, n.member) for n in tree.nodes[1:]] == [("first", "first"), ("second", "second")]
    loaded = Run.from_recording(Recording.model_validate_json(flow.run_sync("hi").recording.model_dump_json()))
    assert [n.name for n in loaded.tree().nodes[1:]] == ["first", "second"]


def test_a_member_named_by_its_runner_keeps_that_name():
    flow = Sequence({"key": Agent(provider=mock(reply="b"), name="writer")})
    assert flow.run_sync("hi").tree().nodes[1].name == "writer"


def test_steps_add_a_node_per_llm_call_and_tool(planted):
    tree = planted.tree(steps=True)
    kinds = [node.kind for node in tree.nodes]
    assert kinds == ["agent", "call-llm", "tool", "call-llm"]
    assert {node.parent for node in tree.nodes[1:]} == {""}
    assert [node.name for node in tree.nodes[1:]] == ["call-llm#3 (mock-model)", "tool#4 (lookup_order)",
                                                      "call-llm#6 (mock-model)"]


def test_a_tree_is_a_plain_plotly_figure_with_the_decision_on_its_edge():
    import plotly.graph_objects as go

    flow = Conditional([("refunds", lambda text: "refund" in text, Agent(provider=mock(reply="yes")))],
                       otherwise=("other", Agent(provider=mock(reply="no"))))
    run = flow.run_sync("a refund please")
    tree = run.tree()
    bundle = tree._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "application/vnd.plotly.v1+json", "text/html"}
    figure = tree_figure(run)
    assert type(figure) is go.Figure
    texts = [t for trace in figure.data for t in (trace.text or ())]
    assert any("refunds" in t for t in texts)
    chosen = tree.edges[0].chosen
    assert chosen is not None and any(chosen in t for t in texts)
    plotly_data = bundle["application/vnd.plotly.v1+json"]
    members = sum(len(trace["x"]) for trace in plotly_data["data"] if trace.get("mode", "").startswith("markers"))
    assert members == len(tree.nodes)
    view = dom(bundle["text/html"])
    listed = [node.attrs["data-fl-member"] for node in view.find("details", "fl-nojs").find_all("details", "fl-member")]
    assert listed == [node.path for node in tree.nodes]
    assert_golden("tree_conditional", bundle["text/html"], {run.recording.run_id: "RUN"})


def test_a_tree_draws_itself_as_svg_with_no_script_and_no_plotly_js():
    from footprint_lab.lab.views.svg import node_label

    flow = Sequence({"triage": Conditional([("refunds", lambda text: "refund" in text,
                                             Agent(provider=mock(reply="yes")))],
                                           otherwise=("other", Agent(provider=mock(reply="no")))),
                     "checks": Parallel({"a": LLMCall(provider=mock(reply="a")),
                                         "b": LLMCall(provider=mock(reply="b"))}, merge=lambda answers: "ok")})
    tree = flow.run_sync("a refund please").tree()
    first, second = (tree._repr_mimebundle_()["text/html"] for _ in range(2))
    for html in (first, second):  # the same every time: nothing is sent once per kernel
        assert "<script" not in html and "plotly" not in html.lower() and len(html) < 60_000
    picture = dom(first).find("svg", "fl-svg")
    nodes = {g.attrs["data-fl-member"]: g for g in picture.find_all("g", "fl-tree-node")}
    assert list(nodes) == [node.path for node in tree.nodes]
    for node in tree.nodes:
        *decided, name, kind, took = [t.text() for t in nodes[node.path].find_all("text")]
        assert name == node_label(node)
        assert kind == f"{node.kind} · ✓ {node.status}"  # the status in a word and a symbol, not a colour only
        assert took.endswith(f" ms · {node.tokens} tokens")
    route = next(edge for edge in tree.edges if edge.rule)
    decided = nodes[route.child].find_all("text")[0].text()
    assert decided == f"{route.rule} → {route.chosen}", decided


def test_a_tree_too_large_to_picture_says_so_and_keeps_its_list():
    from footprint_lab.lab.views.svg import SVG_NODES

    flow = Parallel({f"m{n}": LLMCall(provider=mock(reply="x")) for n in range(SVG_NODES)}, merge=lambda a: "ok")
    tree = flow.run_sync("hi").tree()
    view = dom(tree._repr_mimebundle_()["text/html"])
    assert not view.find_all("svg")
    assert f"more than a picture can show ({SVG_NODES})" in view.text()
    assert len(view.find("details", "fl-nojs").find_all("details", "fl-member")) == SVG_NODES + 1


def test_core_never_imports_the_lab():
    for path in (PACKAGE / "core").glob("*.py"):
        assert "footprint_lab.lab" not in path.read_text(encoding="utf-8"), path.name
    for layer in ("record", "redact", "sealing", "markup", "providers", "context", "explain", "flow"):
        for path in (PACKAGE / layer).rglob("*.py"):
            assert "footprint_lab.lab" not in path.read_text(encoding="utf-8"), path.name


def test_a_run_displays_without_the_extension_in_a_fresh_interpreter():
    import subprocess
    import sys

    code = ("from footprint_lab import Agent\nfrom footprint_lab.providers import mock\nimport sys\n"
            "run = Agent(provider=mock(reply='ok')).run_sync('hi')\n"
            "assert 'footprint_lab.lab.views' not in sys.modules\n"
            "bundle = run._repr_mimebundle_()\n"
            "assert 'data-fl-answer' in bundle['text/html'] and 'plotly' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_run_bundle_is_what_a_run_displays(planted):
    bundle = run_bundle(planted.recording)
    assert bundle[RECORDING_MIME] == planted._repr_mimebundle_()[RECORDING_MIME]


async def test_every_explanation_checkpoint_and_error_shows_itself(planted):
    from flow_kit import approver

    from footprint_lab import FlowCheckpoint
    from footprint_lab.errors import InvalidRunInputError
    from footprint_lab.examples.scenarios import planted_fact_agent as build
    from footprint_lab.explain import find_dropped_context, localize, ranking_confidence, rerun_without

    agent = build()
    shown = {
        "Backtrack": planted.backtrack(),
        "Localization": await localize(planted, rerun=agent, samples=1, top=2, progress=False),
        "RerunReport": await rerun_without(planted, ignore=["vip-override"], rerun=agent),
        "DroppedContext": await find_dropped_context(planted, rerun=agent, progress=False),
        "RankingConfidence": ranking_confidence(planted.suspects()),
    }
    paused = await Sequence({"approve": approver()}).run("refund")
    assert isinstance(paused.checkpoint, FlowCheckpoint)
    shown["FlowCheckpoint"] = paused.checkpoint
    single = await approver().run("refund")
    shown["Checkpoint"] = single.checkpoint
    with pytest.raises(InvalidRunInputError) as refused:
        await agent.run(["not", "a", "message"])
    shown["Refusal"] = refused.value
    for name, obj in shown.items():
        bundle = obj._repr_mimebundle_()
        assert set(bundle) == {"text/plain", "text/html"}, name
        assert bundle["text/plain"].strip() and "<script" not in bundle["text/html"], name
        first = dom(bundle["text/html"]).elements()[0]  # a view in its own scope, or a card after its sheet
        assert first.tag == "style" or re.fullmatch(r"fl[0-9a-f]{6}", first.attrs.get("id") or ""), name
    assert "CONFIRMED" in shown["Localization"]._repr_mimebundle_()["text/html"]
    assert "Refund 120 EUR?" in shown["FlowCheckpoint"]._repr_mimebundle_()["text/html"]
    assert "ERR_INVALID_RUN_INPUT" in shown["Refusal"]._repr_mimebundle_()["text/html"]
    backtrack = dom(shown["Backtrack"]._repr_mimebundle_()["text/html"])
    assert backtrack.find("details", "fl-piece", data_fl_piece="vip-override")


def test_a_long_runs_view_draws_the_ends_of_each_slot_and_the_latest_calls_and_says_where_the_rest_is(noop_tool):
    from footprint_lab.lab.views.calls import EARLIER_CALLS, FIRST_ROWS, SLOT_ROWS

    rounds = 60
    replies = [{"tool": "noop", "args": {}}] * rounds + ["done"]
    run = Agent(provider=mock(replies=replies), tools=[noop_tool], max_iterations=rounds + 1).run_sync("go")
    view = dom(answer_view(run.recording))
    answering = run.recording.exchanges[-1].step_id
    slot = view.find("section", "fl-call", data_fl_call=answering).find("div", "fl-slot", data_slot="messages")
    heading = slot.find("h5").text()
    assert heading.startswith("messages · ")
    total = int(heading.rsplit(" ", 1)[1])
    sent = run.context(answering)
    first = list(sent[sent["slot"] == "messages"]["source_id"])
    assert total == len(first) == 1 + 2 * rounds
    ids = [row.attrs["data-fl-piece"] for row in slot.find_all("details", "fl-piece", data_fl_slot="messages")]
    assert SLOT_ROWS <= len(ids) < total  # the ends, and any top suspect between
    assert ids[:FIRST_ROWS] == first[:FIRST_ROWS] and ids[-5:] == first[-5:]
    note = slot.find("p", "fl-note").text()
    said = (f'{total - len(ids)} more pieces of this slot are not drawn here: run.context("{answering}") lists '
            "every one.")
    assert note == said
    earlier = [node.attrs["data-fl-call"] for node in view.find_all("details", "fl-call")]
    calls = [x.step_id for x in run.recording.exchanges[:-1]]
    assert earlier == list(reversed(calls))[:EARLIER_CALLS]
    assert f"… and {len(calls) - EARLIER_CALLS} earlier calls, not drawn here" in view.text()


def test_a_long_runs_step_tree_displays_its_first_and_latest_steps_and_counts_the_rest(noop_tool):
    from footprint_lab.lab.views.tree import FIRST_STEPS, STEPS_PER_RUN

    rounds = 60
    replies = [{"tool": "noop", "args": {}}] * rounds + ["done"]
    run = Agent(provider=mock(replies=replies), tools=[noop_tool], max_iterations=rounds + 1).run_sync("go")
    tree = run.tree(steps=True)
    every = tree.to_frame()
    steps = list(every[every["kind"].isin(["call-llm", "tool"])]["path"])
    assert len(steps) == 2 * rounds + 1  # nothing is left out of the tree itself
    bundle = tree._repr_mimebundle_()
    view = dom(bundle["text/html"])
    drawn = [node.attrs["data-fl-member"] for node in view.find("details", "fl-nojs").find_all("details", "fl-member")]
    assert drawn == ["", *steps[:FIRST_STEPS], *steps[FIRST_STEPS - STEPS_PER_RUN:]]
    pictured = [g.attrs["data-fl-member"] for g in view.find_all("g", "fl-tree-node")]
    assert pictured == drawn
    left = len(steps) - STEPS_PER_RUN
    assert f"{left} more LLM-call and tool steps are not drawn" in view.text() and "tree.to_frame()" in view.text()
    assert bundle["text/plain"].endswith(f"… {left} more LLM-call and tool steps are not drawn (each run shows its "
                                         f"first {FIRST_STEPS} and its latest ones): tree.to_frame() lists every node")
    figure = bundle["application/vnd.plotly.v1+json"]
    marked = [path for trace in figure["data"] for path in trace.get("customdata", [])]
    assert marked.count("") == 1 and sorted(marked) == sorted(drawn)


def test_a_piece_chosen_in_the_widget_is_drawn_open_even_in_the_middle_of_a_long_slot(noop_tool):
    from footprint_lab.lab import panels

    rounds = 60
    replies = [{"tool": "noop", "args": {}}] * rounds + ["done"]
    run = Agent(provider=mock(replies=replies), tools=[noop_tool], max_iterations=rounds + 1).run_sync("go")
    answering = run.recording.exchanges[-1].step_id
    sent = run.context(answering)
    messages = list(sent[sent["slot"] == "messages"]["source_id"])
    drawn = {row.attrs["data-fl-piece"] for row in dom(answer_view(run.recording)).find_all("details", "fl-piece")}
    middle = next(piece for piece in messages[len(messages) // 2:] if piece not in drawn)
    panel = dom(panels.call_panel(run.recording, answering, chosen=("messages", middle)))
    (chosen,) = panel.find_all("details", "fl-piece", data_fl_piece=middle, data_fl_slot="messages")
    assert "open" in chosen.attrs
