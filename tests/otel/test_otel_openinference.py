"""Runs of LangChain (LangGraph), LlamaIndex and the OpenAI Agents SDK, traced by the real OpenInference
instrumentors against a scripted OpenAI-compatible server, imported through ``from_spans``.

What a user relies on: each framework's run imports with its pieces and their provenance (a system
message, the user's message, the assistant's tool call, the tool result tied to the call that asked
for it, retrieved documents as rag pieces), and each call's recorded request is the request the
server received, so it can be sent again; the same spans as OTLP JSON or protobuf import the same.
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("openinference.instrumentation")

from otel_kit import (
    QUESTION,
    RESULT,
    SYSTEM,
    ChatServer,
    completion,
    instrumented,
    received_messages,
    tool_then_answer,
    wire_messages,
)

from footprint_lab import load_recording
from footprint_lab.otel import from_spans

ANSWER = "DECLINED: the order is 47 days old."


def lookup_order(order_id: str) -> str:
    """Find an order by its id."""
    return json.dumps({**RESULT, "order_id": order_id})


def langgraph_spans(server: ChatServer) -> list[Any]:
    langchain_openai = pytest.importorskip("langchain_openai")
    pytest.importorskip("langgraph")
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent
    from openinference.instrumentation.langchain import LangChainInstrumentor

    with instrumented(LangChainInstrumentor()) as exporter:
        model = langchain_openai.ChatOpenAI(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test",
                                            temperature=0.2)
        with pytest.warns(Warning):  # LangGraph 1.x says create_react_agent moved; the agent is the same
            agent = create_react_agent(model, [tool(lookup_order)], prompt=SYSTEM)
        agent.invoke({"messages": [("user", QUESTION)]})
    return list(exporter.get_finished_spans())


def llama_index_spans(server: ChatServer) -> list[Any]:
    pytest.importorskip("llama_index.llms.openai_like")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai_like import OpenAILike
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    with instrumented(LlamaIndexInstrumentor()) as exporter:
        model = OpenAILike(model="gpt-test", api_base=f"{server.url}/v1", api_key="sk-test", is_chat_model=True,
                           is_function_calling_model=True)
        agent = FunctionAgent(tools=[FunctionTool.from_defaults(lookup_order)], llm=model, system_prompt=SYSTEM)

        async def run() -> Any:
            return await agent.run(QUESTION)

        asyncio.run(run())
    return list(exporter.get_finished_spans())


def openai_agents_spans(server: ChatServer, *, streamed: bool = False) -> list[Any]:
    """The OpenAI Agents SDK's run; ``streamed``: with ``Runner.run_streamed``, whose instrumentor writes each reply
    only in ``output.value`` (an OpenAI Responses object), with no ``llm.output_messages`` (once imported with no
    answer)."""
    agents = pytest.importorskip("agents")
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    with instrumented(OpenAIAgentsInstrumentor()) as exporter:
        client = AsyncOpenAI(base_url=f"{server.url}/v1", api_key="sk-test")
        agent = agents.Agent(name="refunds", instructions=SYSTEM, tools=[agents.function_tool(lookup_order)],
                             model=agents.OpenAIChatCompletionsModel(model="gpt-test", openai_client=client),
                             model_settings=agents.ModelSettings(temperature=0.2))

        async def run() -> Any:
            going = agents.Runner.run_streamed(agent, QUESTION)
            async for _ in going.stream_events():
                pass
            return going.final_output

        answer = asyncio.run(run()) if streamed else agents.Runner.run_sync(agent, QUESTION).final_output
        assert answer == ANSWER
    return list(exporter.get_finished_spans())


FRAMEWORKS = {"langgraph": langgraph_spans, "llama_index": llama_index_spans, "openai_agents": openai_agents_spans,
              "openai_agents_streamed": functools.partial(openai_agents_spans, streamed=True)}


@pytest.fixture(scope="module", params=list(FRAMEWORKS))
def traced(request: pytest.FixtureRequest) -> tuple[str, list[Any], list[Any]]:
    """(framework, its finished spans, the request bodies the server received), once per framework."""
    server = tool_then_answer(ANSWER)
    try:
        spans = FRAMEWORKS[request.param](server)
        return request.param, spans, [received.body for received in server.received]
    finally:
        server.close()


def test_a_framework_run_imports_with_its_pieces_and_their_provenance(traced: tuple[str, list[Any], list[Any]]) -> None:
    _, spans, _ = traced
    (run,) = from_spans(spans)
    assert run.answer == ANSWER and run.status == "finished"
    recording = run.recording
    assert [s.stage for s in recording.steps] == ["seed", "assemble", "call-llm", "tool", "assemble", "call-llm",
                                                  "final"]
    rows = {(r.source_kind, r.source_id, r.slot): r.content for r in run.context().itertuples()}
    assert rows[("base", "system-part-1", "system")] == SYSTEM
    assert rows[("user", "user-message", "messages")] == QUESTION
    first_call = recording.exchanges[0].step_id
    assert rows[("assistant", first_call, "messages")] == 'lookup_order({"order_id": "A-1"})'
    assert json.loads(rows[("tool_result", "call_1", "messages")]) == RESULT
    (result,) = [p for p in recording.context_pieces if p.source_kind == "tool_result"]
    assert result.detail["requested_by"] == first_call and result.detail["tool"] == "lookup_order"
    hops = {c.piece.source_id: {h.kind: h.proven for h in c.hops} for c in run.backtrack().candidates}
    assert hops["call_1"]["ASKED"] and hops["call_1"]["READ"] and hops["call_1"]["LANDED"]
    assert not hops["system-part-1"]["BORN"] and not hops["system-part-1"]["ALLOWED"]  # spans cannot prove these
    assert load_recording(recording.model_dump_json()) == recording


def test_each_recorded_request_is_the_request_the_server_received(traced: tuple[str, list[Any], list[Any]]) -> None:
    framework, spans, bodies = traced
    (run,) = from_spans(spans)
    recording = run.recording
    assert len(recording.exchanges) == len(bodies) == 2
    for exchange, body in zip(recording.exchanges, bodies, strict=True):
        assert wire_messages(recording, exchange) == received_messages(body)
        assert exchange.model == body["model"]
        options = exchange.wire["request"]["options"]
        if "temperature" in options:  # LlamaIndex's instrumentation does not record the settings
            assert options["temperature"] == body["temperature"]
        if exchange.tools:  # the OpenAI Agents SDK's records none on a chat-completions call
            assert [t["name"] for t in exchange.tools] == [t["function"]["name"] for t in body["tools"]]
            assert exchange.tools[0]["input_schema"] == body["tools"][0]["function"]["parameters"]
    if framework != "llama_index":
        assert recording.exchanges[0].wire["request"]["options"] == {"temperature": 0.2}


def test_otlp_json_and_protobuf_of_the_same_spans_import_the_same(traced: tuple[str, list[Any], list[Any]]) -> None:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    _, spans, _ = traced
    (direct,) = from_spans(spans)
    request = encode_spans(spans)
    for form in (MessageToDict(request), json.dumps(MessageToDict(request)), request.SerializeToString(), request):
        (again,) = from_spans(form)
        assert again.answer == direct.answer
        assert list(again.context()["content"]) == list(direct.context()["content"])
        assert [e.model_dump() for e in again.recording.exchanges] == [
            e.model_dump() for e in direct.recording.exchanges]


def test_a_retrieved_document_is_a_rag_piece_with_its_id_and_one_never_sent_is_kept_skipped() -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    from langchain_core.documents import Document
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda
    from openinference.instrumentation.langchain import LangChainInstrumentor

    class Policies(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Document]:
            # LangChain's instrumentation records a document's metadata, not Document.id
            return [Document(page_content="Final-sale items cannot be refunded.", metadata={"id": "policy-7"}),
                    Document(page_content="Gift cards never expire.", metadata={"id": "policy-9"})]

    server = ChatServer(completion("DECLINED: a final-sale item."))
    try:
        with instrumented(LangChainInstrumentor()) as exporter:
            prompt = ChatPromptTemplate.from_messages([("system", "Policy: {context}"), ("user", "{question}")])
            model = langchain_openai.ChatOpenAI(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test")
            chain = {"context": Policies() | RunnableLambda(lambda docs: docs[0].page_content),
                     "question": RunnableLambda(lambda q: q)} | prompt | model
            chain.invoke(QUESTION)
        (run,) = from_spans(exporter.get_finished_spans())
    finally:
        server.close()
    recording = run.recording
    assert [s.stage for s in recording.steps] == ["seed", "retrieve", "assemble", "call-llm", "final"]
    rag = {p.source_id: p for p in recording.context_pieces if p.source_kind == "rag"}
    assert rag["policy-7"].verdict == "admitted" and rag["policy-7"].slot == "system"
    assemble = next(s.step_id for s in recording.steps if s.stage == "assemble")
    assert rag["policy-7"].detail["rank"] == 1 and rag["policy-7"].landed_by == assemble
    assert rag["policy-9"].verdict == "skipped"  # retrieved, never sent: kept and said so
    hops = {c.piece.source_id: {h.kind: h.proven for h in c.hops} for c in run.backtrack().candidates}
    assert hops["policy-7"]["READ"] and hops["policy-7"]["LANDED"] and not hops["policy-7"]["BORN"]


def test_a_second_separate_conversation_in_one_trace_is_recorded_as_that_calls_own_messages() -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    from langchain_core.runnables import RunnableLambda
    from openinference.instrumentation.langchain import LangChainInstrumentor

    server = ChatServer(completion("The order is 47 days old."), completion("DECLINED"))
    try:
        with instrumented(LangChainInstrumentor()) as exporter:
            model = langchain_openai.ChatOpenAI(model="gpt-test", base_url=f"{server.url}/v1", api_key="sk-test",
                                                temperature=0)
            summarize = RunnableLambda(lambda reply: [("system", "Answer APPROVED or DECLINED."),
                                                      ("user", f"Facts: {reply.content}")])
            (model | summarize | model).invoke([("user", QUESTION)])
        (run,) = from_spans(exporter.get_finished_spans())
        bodies = [received.body for received in server.received]
    finally:
        server.close()
    recording = run.recording
    assert run.answer == "DECLINED"
    second = recording.exchanges[1]
    assert second.system == "Answer APPROVED or DECLINED." and second.injected_messages
    assert wire_messages(recording, second) == received_messages(bodies[1])
    assert wire_messages(recording, recording.exchanges[0]) == received_messages(bodies[0])
    assert second.wire["request"]["options"] == {"temperature": 0}
    pieces = recording.call_pieces(second)
    assert [p.content for p in pieces if p.slot == "messages"] == ["Facts: The order is 47 days old."]
