"""``%fp_ask``: ask a run why from a notebook cell, in a real kernel; its words resolved or refused by name."""

from __future__ import annotations

import json

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from footprint_lab.errors import MagicInputError, UnknownRunError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.lab.ask_magic import parse
from footprint_lab.providers import mock

SETUP = '''
import re
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.providers import mock

def respond(request):
    results = [m["content"] for m in request.messages if m["role"] == "tool"]
    if not results:
        return {"tool": "suspects", "args": {}}
    top = re.search(r"^1\\. \\w+ '([^']+)'", results[0], re.M).group(1)
    return f"It rests on [{top}] <b>ranked first</b>."

explainer = mock(respond=respond)
run = planted_fact_agent().run_sync(REFUND_REQUEST)
from footprint_lab import Agent, Redaction
guarded = Agent(provider=mock(reply="Noted."), redact=Redaction(patterns={"ticket": r"TCK-\\d{6}"})).run_sync(
    "Ticket TCK-123456 please")
'''


def test_fp_ask_in_a_kernel_answers_with_an_explanation_and_refuses_a_missing_provider_as_a_card():
    cells = ["%load_ext footprint_lab", SETUP, "%%fp_ask -p explainer run\nWhy wasn't it declined?",
             "%fp_ask Why ?", "%fp_ask -p explainer What reached the answer",
             "%%fp_ask -p explainer guarded\nWhy did TCK-654321 get no answer?",
             "_.question, _.run.recording.model_dump_json()"]
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True).execute()

    answered, = [o for o in notebook.cells[2].outputs if o.output_type == "execute_result"]
    assert "Q: Why wasn't it declined?" in answered.data["text/plain"]
    assert "Cited, and shown by a view: vip-override" in answered.data["text/plain"]
    assert "&lt;b&gt;ranked first&lt;/b&gt;" in answered.data["text/html"]
    assert "<b>ranked first" not in answered.data["text/html"]

    one_line, = [o for o in notebook.cells[4].outputs if o.output_type == "execute_result"]
    assert "Q: What reached the answer" in one_line.data["text/plain"]

    masked, = [o for o in notebook.cells[5].outputs if o.output_type == "execute_result"]
    assert "Q: Why did [redacted:ticket] get no answer?" in masked.data["text/plain"]
    recorded, = [o for o in notebook.cells[6].outputs if o.output_type == "execute_result"]
    assert "[redacted:ticket]" in recorded.data["text/plain"]
    for output in (masked, recorded):
        assert "TCK-654321" not in json.dumps(output.data) and "TCK-123456" not in json.dumps(output.data)

    refused = notebook.cells[3].outputs
    assert not any(o.output_type == "error" for o in refused)  # the card alone, no traceback repeating it
    assert any(o.output_type == "display_data" and o.data["text/plain"].startswith("MagicInputError") for o in refused)
    assert any(o.output_type == "display_data" and "ERR_MAGIC_INPUT" in o.data.get("text/html", "") for o in refused)


async def test_parse_resolves_the_provider_the_run_and_the_question():
    older = await planted_fact_agent().run(REFUND_REQUEST)
    newer = await planted_fact_agent().run(REFUND_REQUEST)
    provider = mock(reply="x")
    namespace = {"older": older, "newer": newer, "fp_explainer": provider, "p2": mock(reply="y")}

    def last():
        return newer

    assert parse("older Why was it approved?", namespace, None, last) == (provider, older, "Why was it approved?")
    assert parse("Why was it approved?", namespace, None, last) == (provider, newer, "Why was it approved?")
    chosen, runs, question = parse("--provider p2 Why, older?", namespace, None, last)
    assert chosen is namespace["p2"] and runs is newer and question == "Why, older?"
    both = [older, newer]
    assert parse("-p p2 both Which differs?", {**namespace, "both": both}, None, last)[1] is both
    assert parse("-p p2 older", namespace, "Why?\n", last) == (namespace["p2"], older, "Why?")


@pytest.mark.parametrize(("line", "setting"), [
    ("Why?", "-p"),                    # no -p and no fp_explainer
    ("-p", "-p"),
    ("-p nowhere Why?", "-p"),
    ("-p mine", "question"),
    ("-p mine run", "question"),
])
async def test_words_that_name_nothing_usable_are_refused_by_name(line, setting):
    run = await planted_fact_agent().run(REFUND_REQUEST)
    with pytest.raises(MagicInputError) as refused:
        parse(line, {"mine": mock(reply="x"), "run": run}, None, lambda: run)
    assert refused.value.setting == setting
    assert refused.value.code == "ERR_MAGIC_INPUT"


def test_without_any_run_the_last_run_lookup_refuses():
    def no_run():
        raise UnknownRunError("fp_ask", "nothing, and no run has been made yet", [])

    with pytest.raises(UnknownRunError):
        parse("Why?", {"fp_explainer": mock(reply="x")}, None, no_run)
