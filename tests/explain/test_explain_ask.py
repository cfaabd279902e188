"""Ask a run why: an explainer agent that opens the recording only through bounded, read-only views.

Reaches explain.asking._evidence_views: the views (EvidenceDesk, page) are the explainer's own, with no public name.
"""

from __future__ import annotations

import json
import re

import pytest

from footprint_lab import Agent
from footprint_lab.errors import ExplainConfigError
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
from footprint_lab.explain import Explanation, ask
from footprint_lab.explain.asking._evidence_views import EvidenceDesk, page
from footprint_lab.providers import LLMRequest, mock

TOP = re.compile(r"^1\. \w+ '([^']+)'", re.M)
READ = re.compile(r"READ\s+(\S+) was sent it")


def tool_results(request: LLMRequest) -> list[str]:
    return [str(m["content"]) for m in request.messages if m.get("role") == "tool"]


class ScriptedExplainer:
    """A mock explainer: list the calls, rank the suspects, follow the top one's custody, then answer.

    It knows no id of the run: every id it cites is read from a tool's output.
    """

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> object:
        self.requests.append(request)
        results = tool_results(request)
        if not results:
            return {"tool": "list_calls", "args": {}}
        if len(results) == 1:
            return {"tool": "suspects", "args": {}}
        top = TOP.search(results[1])
        assert top is not None
        if len(results) == 2:
            return {"tool": "custody", "args": {"source_id": top.group(1)}}
        read = READ.search(results[2])
        assert read is not None
        return (f"It was approved because [{top.group(1)}] was sent to [{read.group(1)}], the call that answered; "
                "the ranking is correlation, and the custody proves it reached that call.")


@pytest.fixture
async def planted_run():
    return await planted_fact_agent().run(REFUND_REQUEST)


async def test_why_was_the_refund_approved_cites_vip_override_from_the_tools_output(planted_run):
    explainer = ScriptedExplainer()
    explanation = await ask(planted_run, "Why was the refund approved?", provider=mock(respond=explainer))
    assert isinstance(explanation, Explanation)
    assert "[vip-override]" in (explanation.answer or "")
    assert explanation.cited == ["vip-override", "call-llm#6"]
    assert explanation.unsupported == []
    assert explanation.opened == ["list_calls()", "suspects()", "custody(source_id='vip-override')"]
    # the id reached the explainer through a tool's output, never through its opening request
    assert "vip-override" in tool_results(explainer.requests[-1])[1]
    text = str(explanation)
    assert "Q: Why was the refund approved?" in text and "Cited, and shown by a view: vip-override" in text


async def test_the_first_request_holds_no_recording_content(planted_run):
    explainer = ScriptedExplainer()
    await ask(planted_run, "Why was the refund approved?", provider=mock(respond=explainer))
    first = explainer.requests[0]
    sent = json.dumps({"system": first.system, "messages": list(first.messages), "tools": list(first.tools)})
    recording = planted_run.recording
    evidence = {recording.run_id, recording.answer or "", *(s.step_id for s in recording.steps),
                *(p.content for p in recording.context_pieces), *(p.source_id for p in recording.context_pieces)}
    leaked = [item for item in evidence if item and item in sent]
    assert leaked == []
    assert "Why was the refund approved?" in sent


async def test_the_explainer_run_is_itself_recorded_and_explainable(planted_run):
    explanation = await ask(planted_run, "Why was the refund approved?", provider=mock(respond=ScriptedExplainer()))
    own = explanation.run.recording
    assert own.runner.name == "explainer"
    assert [c.name for x in own.exchanges for c in x.response.tool_calls] == ["list_calls", "suspects", "custody"]
    assert explanation.run.backtrack().candidate("call_3_1") is not None  # the custody result reached its answer


async def test_an_id_no_view_showed_is_reported_as_unsupported(planted_run):
    replies = [{"tool": "list_calls", "args": {}}, "Approved because of [vip-override] at [call-llm#9]."]
    explanation = await ask(planted_run, "Why?", provider=mock(replies=replies))
    assert explanation.cited == []
    assert explanation.unsupported == ["vip-override", "call-llm#9"]
    assert "shown by no view" in str(explanation)


async def test_several_runs_are_opened_by_number():
    approved = await planted_fact_agent().run(REFUND_REQUEST)
    declined = await planted_fact_agent().without(["vip-override"]).run(REFUND_REQUEST)
    replies = [{"tool": "list_calls", "args": {"run": 1}}, {"tool": "list_calls", "args": {"run": 7}}, "done"]
    explanation = await ask([approved, declined], "What differs?", provider=mock(replies=replies))
    first, second = (p.content for p in explanation.run.recording.context_pieces if p.source_kind == "tool_result")
    assert first.startswith("run 1:") and "DECLINED" in first
    assert second == "There is no run 7: the runs are numbered 0 to 1."
    assert "(You can open 2 recorded runs (run=0 to run=1).)" in explanation.run.recording.input["message"]


async def test_a_runner_factory_builds_the_explainer_by_duck_typing(planted_run):
    built: list[dict] = []

    def factory(**settings):
        built.append(settings)
        return Agent(**settings)

    await ask(planted_run, "Why?", provider=mock(reply="No idea."), model="m-1", runner_factory=factory)
    assert sorted(built[0]) == ["max_iterations", "model", "name", "provider", "system", "tools"]
    assert [t.name for t in built[0]["tools"]] == ["list_calls", "show_call", "custody", "suspects", "left_out",
                                                  "show_step", "search"]


@pytest.mark.parametrize(("arguments", "setting"), [
    ({"run_or_runs": [], "question": "Why?"}, "run_or_runs"),
    ({"run_or_runs": "a run", "question": "Why?"}, "run"),
    ({"question": "  "}, "question"),
    ({"question": "Why?", "provider": "mock"}, "provider"),
    ({"question": "Why?", "max_iterations": 0}, "max_iterations"),
])
async def test_what_no_explainer_can_use_is_refused_before_any_call(planted_run, arguments, setting):
    provider = mock(reply="unused")
    arguments = {"run_or_runs": planted_run, "provider": provider, **arguments}
    with pytest.raises(ExplainConfigError) as refused:
        await ask(arguments.pop("run_or_runs"), arguments.pop("question"), **arguments)
    assert refused.value.setting == setting
    assert provider.calls == 0


# -- the views ------------------------------------------------------------------------------
async def test_every_view_is_capped_and_its_cursor_reaches_every_line(planted_run):
    desk = EvidenceDesk([planted_run.recording], limit=300)
    seen: list[str] = []
    more = 0
    for _ in range(50):
        text = desk.suspects(more=more)
        assert len(text) <= 300
        lines = text.splitlines()
        cursor = re.fullmatch(r"\[more=(\d+): .*\]", lines[-1])
        seen += lines[:-1] if cursor else lines
        if not cursor:
            break
        more = int(cursor.group(1))
    full = EvidenceDesk([planted_run.recording], limit=100_000).suspects()
    assert [line[:60] for line in seen] == [line[:60] for line in full.splitlines()]
    assert desk.suspects(more=999).startswith("[nothing past line")


def test_page_cuts_an_overlong_line_and_keeps_the_limit():
    text = page(["x" * 5000, "short"], 0, 500)
    assert len(text) <= 500 and text.endswith("[more=1: 1 more line(s); call again with more=1]")


async def test_views_answer_a_wrong_id_with_the_ids_that_exist(planted_run):
    desk = EvidenceDesk([planted_run.recording])
    assert desk.show_call("call-llm#4").startswith("No LLM call of this run has that id. Its LLM call ids: "
                                                   "call-llm#3, call-llm#6.")
    assert "No step of this run has that id" in desk.show_step("nope#1")
    assert desk.custody("not-a-source").startswith("No piece with that source id reached the answer.")
    assert "Give the text to look for" in desk.search("  ")


async def test_the_views_show_the_recordings_own_ids(planted_run):
    desk = EvidenceDesk([planted_run.recording])
    call = desk.show_call("call-llm#6")
    assert "fact 'vip-override' (piece 11, landed by assemble#5)" in call
    assert "call-llm#6 replied: APPROVED" in call
    step = desk.show_step("final#7")
    assert "read last_response (written by call-llm#6)" in step and "commit: set answer = APPROVED" in step
    hits = desk.search("vip override")
    assert "fact 'vip-override' (piece 4, sent to call-llm#3)" in hits
    assert "reply of call-llm#6" in hits and "the answer (final#7)" in hits
    budget = await planted_fact_agent(variant="budget").run(REFUND_REQUEST)
    assert "instruction 'refund-policy' (system slot of call-llm#6): dropped" in EvidenceDesk([budget.recording]) \
        .left_out()
