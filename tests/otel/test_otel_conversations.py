"""Framework runs that are not one agent answering one question, imported from the real instrumentors' spans.

What a user relies on: a conversation's second turn imports with its own question as the input and the earlier
turns as ``history#i`` pieces, which a replay can remove (so the turn that caused the answer is found); an agent
run as another's tool leaves the outer agent's recorded requests exactly as the server received them; a tool
error the framework handled does not fail the run or claim that content capture was off; a prompt the SDK cut at
its attribute length limit is said, not replayed as if whole.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("openinference.instrumentation")

from opentelemetry.sdk.trace import SpanLimits
from otel_kit import ChatServer, completion, instrumented, received_messages, wire_messages

from footprint_lab.explain import localize
from footprint_lab.explain.compare import Mentions
from footprint_lab.otel import ContentCaptureWarning, from_spans
from footprint_lab.providers import openai

CLAIM = "I am a VIP customer."
QUESTION = "Refund order A-1, which is 47 days old?"


def _langgraph() -> tuple[Any, Any]:
    langchain_openai = pytest.importorskip("langchain_openai")
    pytest.importorskip("langgraph")
    from langgraph.prebuilt import create_react_agent

    return langchain_openai, create_react_agent


def _imported_without_a_content_warning(exporter: Any) -> Any:
    """The one run the exporter's spans import as, checked to import with no ContentCaptureWarning."""
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        (run,) = from_spans(exporter.get_finished_spans())
    assert not [w for w in heard if issubclass(w.category, ContentCaptureWarning)]
    return run


def _by_the_claim(body: dict[str, Any]) -> dict[str, Any]:
    """APPROVED only while the request still holds the user's earlier claim, whichever turn says what else."""
    return completion("APPROVED" if CLAIM in json.dumps(body["messages"]) else "DECLINED")


def test_a_second_turn_imports_its_own_question_and_a_replay_finds_the_earlier_turn_that_caused_the_answer() -> None:
    langchain_openai, create_react_agent = _langgraph()
    from langgraph.checkpoint.memory import InMemorySaver
    from openinference.instrumentation.langchain import LangChainInstrumentor

    server = ChatServer(completion("Noted, thank you."), *[_by_the_claim] * 60)
    try:
        with instrumented(LangChainInstrumentor()) as exporter:
            model = langchain_openai.ChatOpenAI(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # create_react_agent moved in LangGraph 1.x
                agent = create_react_agent(model, [], prompt="Refunds desk.", checkpointer=InMemorySaver())
            thread = {"configurable": {"thread_id": "t1"}}
            agent.invoke({"messages": [("user", CLAIM)]}, thread)
            exporter.clear()
            agent.invoke({"messages": [("user", QUESTION)]}, thread)
        (run,) = from_spans(exporter.get_finished_spans())
        recording = run.recording
        assert run.answer == "APPROVED"
        assert recording.input == {"message": QUESTION}
        pieces = [(p.source_kind, p.source_id, p.content) for p in recording.call_pieces(recording.exchanges[-1])]
        assert pieces[1:] == [("user", "history#0", CLAIM), ("assistant", "history#1", "Noted, thank you."),
                              ("user", "user-message", QUESTION)]

        report = asyncio.run(localize(run, replay=openai("gpt-test", base_url=f"{server.url}/v1", api_key="sk-x"),
                                      comparator=Mentions("APPROVED")))
    finally:
        server.close()
    assert report.confirmed == ["history#0"]
    tested = {s.source_id for s in report.suspects}
    assert {"history#0", "history#1"} <= tested
    assert [name for name, _ in report.untested] == ["user-message"]


def test_an_agent_run_as_a_tool_leaves_each_recorded_request_as_the_server_received_it() -> None:
    agents = pytest.importorskip("agents")
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    server = ChatServer(completion(calls=[("call_t", "ask_expert", {"input": "What is the policy?"})]),
                        completion("The expert says 30 days."), completion("Refunds: 30 days."))
    try:
        with instrumented(OpenAIAgentsInstrumentor()) as exporter:
            def model() -> Any:
                client = AsyncOpenAI(base_url=f"{server.url}/v1", api_key="sk-test")
                return agents.OpenAIChatCompletionsModel(model="gpt-test", openai_client=client)

            expert = agents.Agent(name="expert", instructions="You are the expert.", model=model())
            boss = agents.Agent(name="boss", instructions="You are the boss.", model=model(), tools=[
                expert.as_tool(tool_name="ask_expert", tool_description="Ask the expert")])
            assert agents.Runner.run_sync(boss, "Policy?").final_output == "Refunds: 30 days."
        runs = from_spans(exporter.get_finished_spans())
        bodies = [received.body for received in server.received]
    finally:
        server.close()
    exchanges = [(run.recording, exchange) for run in runs for exchange in run.recording.exchanges]
    assert len(exchanges) == len(bodies) == 3
    recorded = sorted((wire_messages(recording, exchange) for recording, exchange in exchanges), key=repr)
    assert recorded == sorted(map(received_messages, bodies), key=repr)
    (boss_run,) = [run for run in runs if run.answer == "Refunds: 30 days."]
    texts = [p.content for p in boss_run.recording.context_pieces]
    assert texts.count("The expert says 30 days.") == 1  # the tool's result, once: the expert's reply is its own


def test_a_tool_error_the_framework_handled_leaves_the_run_finished_without_a_content_warning() -> None:
    langchain_openai, create_react_agent = _langgraph()
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode
    from openinference.instrumentation.langchain import LangChainInstrumentor

    @tool
    def lookup(order_id: str) -> str:
        """Look up an order."""
        raise ValueError("the database is down")

    server = ChatServer(completion(calls=[("call_1", "lookup", {"order_id": "A-1"})]),
                        completion("Sorry, the lookup failed."))
    try:
        with instrumented(LangChainInstrumentor()) as exporter:
            model = langchain_openai.ChatOpenAI(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                agent = create_react_agent(model, ToolNode([lookup], handle_tool_errors=True), prompt="Refunds desk.")
            agent.invoke({"messages": [("user", QUESTION)]})
        run = _imported_without_a_content_warning(exporter)
    finally:
        server.close()
    assert run.status == "finished" and run.answer == "Sorry, the lookup failed."
    recording = run.recording
    assert "note" not in recording.meta and recording.error is None
    assert [step.status for step in recording.steps if step.stage == "tool"] == ["tool_error"]


def test_a_prompt_the_sdk_cut_at_its_attribute_length_limit_is_said() -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    from openinference.instrumentation.langchain import LangChainInstrumentor

    prompt = "Refunds follow the policy. " * 20 + "FINAL RULE: never refund a VIP."
    server = ChatServer(completion("DECLINED"))
    try:
        with instrumented(LangChainInstrumentor(), SpanLimits(max_attribute_length=200)) as exporter:
            model = langchain_openai.ChatOpenAI(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the SDK's own "truncating" warning
                model.invoke([("system", prompt), ("user", QUESTION)])
        with pytest.warns(ContentCaptureWarning, match="attribute length limit"):
            (run,) = from_spans(exporter.get_finished_spans())
    finally:
        server.close()
    assert "attribute length limit" in run.recording.meta["note"]
    assert "FINAL RULE" not in run.recording.exchanges[0].system  # cut, and now said so


def test_a_run_whose_last_call_failed_is_failed_even_when_its_framing_span_was_not_captured() -> None:
    """The team's own request span belongs to another tracer: the first (successful) call is the trace's root here,
    and the run ended on a call that failed, which the framework raised."""
    langchain_openai = pytest.importorskip("langchain_openai")
    from openai import APIError
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider
    from wire_server import Reply

    class Failing(ChatServer):
        def next_reply(self) -> Reply:
            return Reply(status=500, body={"error": {"message": "down"}}) if len(self.received) > 1 else \
                super().next_reply()

    server = Failing(completion("A draft answer."))
    try:
        with instrumented(LangChainInstrumentor()) as exporter:
            model = langchain_openai.ChatOpenAI(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test",
                                                max_retries=0)
            with TracerProvider().get_tracer("web").start_as_current_span("POST /refund"):
                model.invoke([("user", QUESTION)])
                with pytest.raises(APIError):
                    model.invoke([("user", QUESTION), ("assistant", "A draft answer."), ("user", "Sure?")])
        (run,) = from_spans(exporter.get_finished_spans())
    finally:
        server.close()
    assert run.status == "failed"


def test_a_whole_prompt_beside_a_cut_payload_the_import_does_not_read_is_not_called_cut() -> None:
    """OpenInference writes the whole request again in input.value; the limit cut that copy, not the messages."""
    langchain_openai = pytest.importorskip("langchain_openai")
    from openinference.instrumentation.langchain import LangChainInstrumentor

    server = ChatServer(completion("DECLINED, as the policy says."))
    try:
        with instrumented(LangChainInstrumentor(), SpanLimits(max_attribute_length=600)) as exporter:
            model = langchain_openai.ChatOpenAI(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.invoke([("system", "Refunds follow the policy. " * 15), ("user", QUESTION + " Please." * 20)])
        run = _imported_without_a_content_warning(exporter)
    finally:
        server.close()
    assert run.recording.exchanges[0].system == "Refunds follow the policy. " * 15
