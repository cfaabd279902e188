"""``%fp_ask``: ask a run why from a notebook cell, in a real kernel; its words resolved or refused by name."""

from __future__ import annotations

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from footprint_lab.errors import MagicUsageError
from footprint_lab.lab.ask_magic import parse
from footprint_lab.lab.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.providers import mock

SETUP = '''
import re
from footprint_lab.lab.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.providers import mock

def respond(request):
    results = [m["content"] for m in request.messages if m["role"] == "tool"]
    if not results:
        return {"tool": "suspects", "args": {}}
    top = re.search(r"^1\\. \\w+ '([^']+)'", results[0], re.M).group(1)
    return f"It rests on [{top}] <b>ranked first</b>."

explainer = mock(respond=respond)
run = planted_fact_agent().run_sync(REFUND_REQUEST)
'''


def test_fp_ask_in_a_kernel_answers_with_an_explanation_and_refuses_a_missing_provider_as_a_card():
    cells = ["%load_ext footprint_lab", SETUP, "%%fp_ask -p explainer run\nWhy wasn't it declined?",
             "%fp_ask Why ?", "%fp_ask -p explainer What reached the answer"]
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True).execute()

    answered, = [o for o in notebook.cells[2].outputs if o.output_type == "execute_result"]
    assert "Q: Why wasn't it declined?" in answered.data["text/plain"]
    assert "Cited, and shown by a view: vip-override" in answered.data["text/plain"]
    assert "&lt;b&gt;ranked first&lt;/b&gt;" in answered.data["text/html"]
    assert "<b>ranked first" not in answered.data["text/html"]

    one_line, = [o for o in notebook.cells[4].outputs if o.output_type == "execute_result"]
    assert "Q: What reached the answer" in one_line.data["text/plain"]

    refused = notebook.cells[3].outputs
    assert any(o.output_type == "error" and o.ename == "MagicUsageError" for o in refused)
    assert any(o.output_type == "display_data" and "ERR_MAGIC_USAGE" in o.data.get("text/html", "") for o in refused)


async def test_parse_resolves_the_provider_the_run_and_the_question():
    older = await planted_fact_agent().run(REFUND_REQUEST)
    newer = await planted_fact_agent().run(REFUND_REQUEST)
    provider = mock(reply="x")
    namespace = {"older": older, "newer": newer, "fp_explainer": provider, "p2": mock(reply="y")}
    assert parse("older Why was it approved?", namespace) == (provider, older, "Why was it approved?")
    assert parse("Why was it approved?", namespace) == (provider, newer, "Why was it approved?")
    chosen, runs, question = parse("--provider p2 Why, older?", namespace)
    assert chosen is namespace["p2"] and runs is newer and question == "Why, older?"
    both = [older, newer]
    assert parse("-p p2 both Which differs?", {**namespace, "both": both})[1] is both
    assert parse("-p p2 older", namespace, "Why?\n") == (namespace["p2"], older, "Why?")


@pytest.mark.parametrize(("line", "problem"), [
    ("Why?", "provider"),                    # no -p and no fp_explainer
    ("-p", "provider"),
    ("-p nowhere Why?", "provider"),
    ("-p mine", "question"),
    ("-p mine run", "question"),
])
async def test_words_that_name_nothing_usable_are_refused_by_name(line, problem):
    run = await planted_fact_agent().run(REFUND_REQUEST)
    with pytest.raises(MagicUsageError) as refused:
        parse(line, {"mine": mock(reply="x"), "run": run})
    assert refused.value.problem == problem
    assert refused.value.code == "ERR_MAGIC_USAGE"


def test_without_any_run_in_the_notebook_the_magic_says_to_make_one():
    with pytest.raises(MagicUsageError) as refused:
        parse("Why?", {"fp_explainer": mock(reply="x")})
    assert refused.value.problem == "run" and "run an agent first" in str(refused.value)
