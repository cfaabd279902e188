"""Every shipped notebook executes top to bottom on the embedded mock provider, in a real kernel."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

FOLDER = Path(__file__).parent.parent / "notebooks"
NOTEBOOKS = sorted(p.name for p in FOLDER.glob("*.ipynb"))


#: each notebook's failed cells: the kernel's reply for each (``ename``, ``evalue``), by cell index. A refusal shows
#: as its card alone (no traceback under it), so a cell's failure is read from the reply, not from its outputs.
FAILED: dict[str, dict[int, nbformat.NotebookNode]] = {}


@cache
def executed(name: str) -> nbformat.NotebookNode:
    """A shipped notebook, executed once per test session in a fresh kernel."""
    notebook = nbformat.read(FOLDER / name, as_version=4)
    failed = FAILED.setdefault(name, {})

    def keep(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        failed[cell_index] = nbformat.from_dict(execute_reply["content"])

    NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True, on_cell_error=keep,
                   resources={"metadata": {"path": str(FOLDER)}}).execute()
    return notebook


def outputs(name: str) -> list[nbformat.NotebookNode]:
    return [o for c in executed(name).cells if c.cell_type == "code" for o in c.get("outputs", [])]


def printed_by(name: str) -> str:
    return "\n".join(o.get("text", "") for o in outputs(name) if o.output_type == "stream")


#: notebooks that start a real model server of their own: they run with the real-model tier
REAL_MODEL = {"any_agent.ipynb"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.real_model) if n in REAL_MODEL else n
                                  for n in NOTEBOOKS])
def test_notebook_executes_without_errors(name):
    """Only a cell tagged ``raises-exception`` (a refusal shown on purpose) may fail, and it must."""
    notebook = executed(name)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            expected = "raises-exception" in cell.metadata.get("tags", [])
            assert (index in FAILED[name]) == expected, cell.source
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source  # a card, no traceback


def test_quickstart_shows_the_answer_and_the_refusal_card():
    text = printed_by("quickstart.ipynb")
    assert "DECLINED: order A-1001 is 47 days old (window 30 days)." in text
    assert "ERR_INVALID_RUN_INPUT" in text
    cards = [o.data["text/html"] for o in outputs("quickstart.ipynb")
             if o.output_type == "display_data" and "fl-card" in o.data.get("text/html", "")]
    assert len(cards) == 1 and "InvalidRunInputError" in cards[0]


def test_planted_fact_notebook_walks_the_wrong_answer_back_to_the_planted_fact():
    text = printed_by("planted_fact.ipynb")
    assert "APPROVED: order A-1001 is refunded under the customer's VIP override." in text
    assert "BORN     define_fact('vip-override') at In[2]:" in text and "[not proven]" not in text
    assert "Clear winner: 'vip-override'" in text
    assert ("CONFIRMED: removing 'vip-override' flipped the outcome in 3/3 reruns against noise 0/3 (p = 0.016"
            in text)
    assert "NOT CONFIRMED: removing 'customer'" in text and "NOT CONFIRMED: removing 'lookup_order'" in text
    assert "instruction 'refund-policy' (system slot of call-llm#6): dropped" in text


def test_localize_shows_a_progress_bar_in_the_kernel():
    notebook = executed("planted_fact.ipynb")
    cell = next(c for c in notebook.cells if c.cell_type == "code" and "await localize(" in c.source)
    views = [o for o in cell.outputs if o.output_type == "display_data"
             and "application/vnd.jupyter.widget-view+json" in o.data]
    assert len(views) == 1


def test_pipeline_notebook_proves_the_upstream_fact_on_the_whole_pipeline():
    text = printed_by("pipeline.ipynb")
    assert "APPROVED: order A-1001 is refunded under the customer's VIP override." in text
    assert "fact 'vip-status' of member 'triage'" in text
    assert "CARRIED  the answer of member 'triage', written by sequence-step#2/final#4, was passed by" in text
    assert "CONFIRMED: removing 'vip-status' in member 'triage' flipped the outcome in 3/3 reruns" in text
    assert "NOT CONFIRMED: removing 'refunds/customer' in member 'refunds'" in text
    assert "[not proven]" not in text and "['vip-status']" in text


RECORDING = "application/vnd.footprint-lab.recording.v1+json"
PLOTLY = "application/vnd.plotly.v1+json"
#: the size goals of one output (its bundle as saved JSON); a composed run holds each member's view, and so does
#: its tree's list of members
RUN_GOAL = 50_000
COMPOSED_GOAL = 150_000
#: the size goals of a saved notebook: the tour, and one that shows three composed runs and their three trees
TOUR_GOAL = 1_000_000
THREE_TREES_GOAL = 600_000


def cell_outputs(name: str, needle: str) -> list[nbformat.NotebookNode]:
    """The outputs of the first code cell of a notebook whose source holds ``needle``."""
    return next(c.outputs for c in executed(name).cells if c.cell_type == "code" and needle in c.source)


def printed_in(name: str, needle: str) -> str:
    """What that cell printed, and nothing else: the kernel sends printed text in as many stream
    messages as its flush timer cuts it into (a line and its newline can arrive apart), so the
    text is joined; a warning on stderr, a display or an error in the cell still fails."""
    shown = cell_outputs(name, needle)
    assert shown and all(o.output_type == "stream" and o.name == "stdout" for o in shown), shown
    return "".join(o.text for o in shown)


def test_quickstart_ends_on_the_displayed_run():
    last = [c for c in executed("quickstart.ipynb").cells if c.cell_type == "code"][-1]
    assert last.source.strip() == "run"
    (shown,) = last.outputs
    assert {"text/plain", "text/html", RECORDING} <= set(shown.data)
    assert "data-fl-answer" in shown.data["text/html"] and "DECLINED" in shown.data["text/html"]


def test_lab_tour_shows_every_view_with_its_mime_types():
    (run,) = cell_outputs("lab_tour.ipynb", "run = await agent.run(")
    assert {"text/plain", "text/html", RECORDING} <= set(run.data)
    assert run.data[RECORDING]["answer"].startswith("APPROVED")
    (why,) = next(c.outputs for c in executed("lab_tour.ipynb").cells if c.source.strip() == "%fp_why")
    assert 'data-fl-piece="vip-override"' in why.data["text/html"]
    (tree,) = cell_outputs("lab_tour.ipynb", "%fp_tree flow_run")
    assert {PLOTLY, "text/html", "text/plain"} <= set(tree.data)
    names = [t for trace in tree.data[PLOTLY]["data"] for t in (trace.get("text") or [])]
    assert {"triage", "route", "refunds", "summary"} <= set(names)
    (composed,) = cell_outputs("lab_tour.ipynb", "flow_run = await support.run(")
    html = composed.data["text/html"]
    for member in ("triage", "route", "summary"):
        assert f"<b>{member}</b>" in html
    (localized,) = cell_outputs("lab_tour.ipynb", "await localize(")
    assert "CONFIRMED" in localized.data["text/html"]


def test_lab_tour_shows_a_sealed_run_a_close_tool_choice_and_a_broken_seal_named():
    (lint,) = cell_outputs("lab_tour.ipynb", "lint_tools(tools)")
    assert "confusable" in lint.data["text/html"] and "what-not-when" in lint.data["text/html"]
    (twins,) = cell_outputs("lab_tour.ipynb", "twins_run = await Agent(")
    html = twins.data["text/html"]
    assert 'data-fl-seal="holds"' in html and "close call, chose between twins" in html
    assert twins.data[RECORDING]["seal"]["algorithm"] == "sha256-chain/6"
    assert set(twins.data[RECORDING]["seal"]["display"]) == {"text/plain", "text/html"}  # what it shows is held
    printed = printed_in("lab_tour.ipynb", "print(verify(twins_run))")
    assert printed.splitlines() == ["seal holds: the recording is as it was sealed",
                                         "seal broken at header.answer: changed after the run was sealed"]


def test_lab_tour_refusal_cell_fails_with_its_card():
    outputs = cell_outputs("lab_tour.ipynb", "%fp_why no_such_run")
    index = next(k for k, cell in enumerate(executed("lab_tour.ipynb").cells) if cell.source == "%fp_why no_such_run")
    assert FAILED["lab_tour.ipynb"][index].ename == "UnknownRunError"   # the cell fails: Run all stops there
    assert not [o for o in outputs if o.output_type == "error"]             # and shows its card alone
    cards = [o for o in outputs if o.output_type == "display_data" and "fl-card" in o.data.get("text/html", "")]
    assert len(cards) == 1 and "ERR_UNKNOWN_RUN" in cards[0].data["text/html"]


@pytest.mark.parametrize("name", ["lab_tour.ipynb", "quickstart.ipynb"])
def test_no_output_is_over_its_size_goal_and_none_carries_a_script(name):
    import json

    for output in outputs(name):
        data = output.get("data", {})
        size = len(json.dumps(data, separators=(",", ":")))
        composed = (RECORDING in data and data[RECORDING].get("children")) or PLOTLY in data
        assert size <= (COMPOSED_GOAL if composed else RUN_GOAL), (size, data.get("text/plain", "")[:80])
        html = data.get("text/html", "")
        assert "<script" not in html and "plotly.js v" not in html, data.get("text/plain", "")[:80]


def test_the_executed_tour_is_at_most_a_megabyte_and_its_tree_is_an_svg_picture():
    saved = nbformat.writes(executed("lab_tour.ipynb"))
    assert len(saved.encode("utf-8")) <= TOUR_GOAL
    (tree,) = cell_outputs("lab_tour.ipynb", "%fp_tree flow_run")
    html = tree.data["text/html"]
    assert "<svg" in html and "<script" not in html
    for member in ("triage", "route", "refunds", "summary"):
        assert f"{member} " in html  # each member's name is a text of the picture (and a row of the list)


THREE_TREES = [
    "%load_ext footprint_lab\n"
    "from footprint_lab import Agent, Conditional, LLMCall, Sequence\n"
    "from footprint_lab.examples.scenarios import planted_fact_agent\n"
    "from footprint_lab.providers import mock\n"
    "support = Sequence({\n"
    "    'triage': LLMCall(provider=mock(reply='refund request'), system='Classify the request.'),\n"
    "    'route': Conditional([('refunds', lambda text: 'refund' in text, planted_fact_agent())],\n"
    "                         otherwise=('general', Agent(provider=mock(reply='Forwarded.')))),\n"
    "    'summary': LLMCall(provider=mock(reply='Summary: done.'), system='Summarize.'),\n"
    "}, name='support')",
    *(f"run_{n} = await support.run('Please refund order A-100{n}.')\nrun_{n}" for n in range(3)),
    *(f"%fp_tree run_{n}" for n in range(3)),
]


def test_a_notebook_with_three_runs_and_three_trees_is_at_most_600_kb(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in THREE_TREES])
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                   ).execute()
    saved = nbformat.writes(notebook)
    assert len(saved.encode("utf-8")) <= THREE_TREES_GOAL, len(saved)
    trees = [o for c in notebook.cells if c.source.startswith("%fp_tree") for o in c.outputs]
    assert len(trees) == 3 and all(PLOTLY in o.data and "<svg" in o.data["text/html"] for o in trees)
    assert "plotly.js v" not in saved and "<script" not in saved


def test_a_redaction_policy_keeps_its_secret_out_of_the_saved_notebook():
    saved = nbformat.writes(executed("lab_tour.ipynb"))
    assert "TCK-423456" not in saved and "[redacted:ticket]" in saved


@pytest.mark.real_model
def test_real_model_notebook_confirms_the_planted_fact_on_a_sampling_model():
    text = printed_by("real_model.ipynb")
    assert "lisbon" in text.lower() and "smollm2 answers at http://127.0.0.1:" in text
    assert "The baseline is unstable under TextDifference" in text and "Mentions('...')" in text
    assert "CONFIRMED: removing 'where' flipped the outcome in" in text
    for benign in ("hours", "returns", "tone"):
        assert f"CONFIRMED: removing '{benign}'" not in text.replace("NOT CONFIRMED", "")


@pytest.mark.real_model
def test_any_agent_notebook_imports_a_langchain_run_and_replay_confirms_the_planted_note():
    text = printed_by("any_agent.ipynb")
    assert "smollm2 answers at http://127.0.0.1:" in text and "lisbon" in text.lower()
    assert "CONFIRMED: removing 'where' flipped the outcome in" in text
    for benign in ("shipping", "gifts", "address"):
        assert f"CONFIRMED: removing '{benign}'" not in text.replace("NOT CONFIRMED", "")
    (context,) = cell_outputs("any_agent.ipynb", "run.context()")
    rows = context.data["text/plain"]
    assert all(note in rows for note in ("where", "shipping", "gifts", "address")) and "rag" in rows
    (view,) = next(c.outputs for c in executed("any_agent.ipynb").cells if c.source.strip() == "run")
    assert 'data-fl-piece="where"' in view.data["text/html"]


def test_eval_set_notebook_finds_the_failures_and_charts_the_planted_causes_on_a_cluster():
    text = printed_by("eval_set.ipynb")
    assert "workers: 2" in text and "200 runs: {'finished': 195, 'failed': 5}" in text
    assert "5 failed runs (TimeoutError), 64 wrong answers" in text
    planted = next(line for line in text.splitlines() if line.startswith("planted causes:"))
    confirmed = next(line for line in text.splitlines() if line.startswith("confirmed:"))
    assert planted.split(":", 1)[1].strip() == confirmed.split(":", 1)[1].strip()
    (chart,) = cell_outputs("eval_set.ipynb", "px.bar(")
    bars = chart.data[PLOTLY]["data"]
    assert {name for trace in bars for name in trace["x"]} == {"fraud-screen", "holiday-extension", "bulk-promo"}
    assert "Newcombe's interval for paired proportions" in text and "the arms differ" in text
    bars_shown = [o for o in cell_outputs("eval_set.ipynb", "await runs.localize(")
                  if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(bars_shown) == 1  # the progress bar of a long call


def test_lab_tour_explains_a_chat_turn_by_turn():
    (shown,) = cell_outputs("lab_tour.ipynb", "chat = Chat(planted_fact_agent())")
    assert shown.data["text/html"].count('class="fl-chat-turn"') == 2 and "data-fl-answer" in shown.data["text/html"]
    (why,) = cell_outputs("lab_tour.ipynb", "%fp_why chat[1]")
    assert 'data-fl-piece="history#1"' in why.data["text/html"]
    (context,) = cell_outputs("lab_tour.ipynb", "chat.context(1)")
    assert "history#0" in context.data["text/plain"]
    reruns = printed_in("lab_tour.ipynb", "held = await chat.rerun(1")
    assert reruns.splitlines()[:2] == [
        "Turn 1: Rerun without 'vip-override': the outcome did not change (text difference 0.00).",
        "Turn 0: Rerun without 'vip-override': the outcome changed (text difference 0.57)."]
    fork = printed_in("lab_tour.ipynb", "branch = chat.fork(1)")
    assert fork.strip() == "2 turns in the chat; 2 in the fork, forked at turn 1"
    invented = printed_in("lab_tour.ipynb", "inventing = Agent(")
    assert "135 EUR (amount) in the answer" in invented and "said 120 EUR" in invented
    bundle = printed_in("lab_tour.ipynb", "bundle = chat.bug_report(")
    assert bundle.split()[0] == "manifest.json" and "recordings/run-1.json" in bundle
