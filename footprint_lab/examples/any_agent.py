"""Agents built with other frameworks, on an OpenAI-compatible server, traced and imported into footprint_lab.

Each builder answers one support question with one framework's own agent or chain: a retriever
returns four short documents (:func:`documents`, one of them planted: where the order's package
is), the answering call is sent the instructions and the documents in its system message (the
instructions, then each document, a blank line between), no tools, and the spans its
instrumentation writes are captured (``footprint_lab.otel.capture``) and imported. The run comes
back as footprint_lab records any run: each retrieved document is a ``rag`` piece of the call it
was sent, named by its id, so ``localize(run, replay=provider)`` can take one out and send the
call again.

- :func:`langchain_run`: a LangChain chain (retriever, prompt, ``ChatOpenAI``), traced by
  ``openinference-instrumentation-langchain``;
- :func:`llama_index_run`: a LlamaIndex retriever and ``FunctionAgent`` on ``OpenAILike``, traced by
  ``openinference-instrumentation-llama-index``;
- :func:`openai_agents_run`: an OpenAI Agents SDK ``Agent`` whose instructions retrieve, on
  ``OpenAIChatCompletionsModel``, traced by ``openinference-instrumentation-openai-agents``;
- :func:`pydantic_ai_run`: a pydantic-ai ``Agent`` whose instructions retrieve, on
  ``OpenAIChatModel``, traced by pydantic-ai's own instrumentation (the GenAI conventions).

LangChain and LlamaIndex trace their retrievers themselves. The OpenAI Agents SDK and pydantic-ai
have no retriever of their own, so the retrieval step there is traced by hand as an OpenInference
``RETRIEVER`` span (:func:`traced_retrieval`), as a team does for a step its framework does not
trace. Every builder takes the server's base URL, the model name and the generation settings
(``temperature``, ``max_tokens``), and imports nothing until it runs.

Role: examples (used by ``notebooks/any_agent.ipynb`` and ``tests/otel/test_real_frameworks.py``); imports anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from footprint_lab.examples.truth import REAL_SYSTEM, planted_context

#: The ids the documents are retrieved under: the planted one first, as :func:`planted_context` orders them.
PLANTED = "where"
#: What joins the instructions and each document in the answering call's system message.
BLANK_LINE = "\n\n"
#: The settings every framework's model is given (greedy, short: the small model answers in one sentence).
SETTINGS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 32}


def documents(variant: int = 0) -> tuple[str, str, dict[str, str]]:
    """The ``variant``-th case's order, its city, and the documents a retriever returns (id to text): the planted
    fact ``where`` and three benign notes (:func:`~footprint_lab.examples.truth.planted_context`)."""
    order, city, pieces = planted_context(variant)
    return order, city, {piece.id: piece.text for piece in pieces}


def system_message(docs: dict[str, str]) -> str:
    """The answering call's system message: the instructions, then each document, a blank line between."""
    return BLANK_LINE.join([REAL_SYSTEM, *docs.values()])


def traced_retrieval(tracer_provider: Any, query: str, docs: dict[str, str]) -> dict[str, str]:
    """Return ``docs`` for ``query`` inside an OpenInference ``RETRIEVER`` span on ``tracer_provider``: how a team
    traces a retrieval step its framework does not trace."""
    tracer = tracer_provider.get_tracer("support-retriever")
    attributes: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": query}
    for n, (doc_id, text) in enumerate(docs.items()):
        attributes[f"retrieval.documents.{n}.document.id"] = doc_id
        attributes[f"retrieval.documents.{n}.document.content"] = text
    with tracer.start_as_current_span("retrieve", attributes=attributes):
        return dict(docs)


def _instrumented(instrumentor: Any, tracer_provider: Any, run: Callable[[], Any]) -> Any:
    """``run()`` with ``instrumentor`` reporting to ``tracer_provider``; uninstrumented after, whatever happens."""
    instrumentor.instrument(tracer_provider=tracer_provider)
    try:
        return run()
    finally:
        instrumentor.uninstrument()


def _one(cap: Any) -> Any:
    (run,) = cap.runs
    return run


def langchain_run(base_url: str, model: str, variant: int = 0, **settings: Any) -> Any:
    """A LangChain chain (a retriever, a chat prompt, ``ChatOpenAI``) answers the case; its imported run."""
    from langchain_core.documents import Document
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnableLambda, RunnablePassthrough
    from langchain_openai import ChatOpenAI
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from pydantic import SecretStr

    from footprint_lab.otel import capture

    order, _, docs = documents(variant)
    chosen = {**SETTINGS, **settings}

    class Notes(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Document]:
            # LangChain's instrumentation records a document's metadata, where its id is found
            return [Document(page_content=text, metadata={"id": doc_id}) for doc_id, text in docs.items()]

    prompt = ChatPromptTemplate.from_messages([("system", "{instructions}\n\n{context}"), ("user", "{question}")])
    llm = ChatOpenAI(model=model, base_url=base_url, api_key=SecretStr("none"), temperature=chosen["temperature"],
                     max_completion_tokens=chosen["max_tokens"])

    def joined(found: list[Document]) -> str:
        return BLANK_LINE.join(d.page_content for d in found)

    def instructions(_: str) -> str:
        return REAL_SYSTEM

    chain = ({"context": Notes() | RunnableLambda(joined), "question": RunnablePassthrough(),
              "instructions": RunnableLambda(instructions)} | prompt | llm)
    with capture() as cap:
        _instrumented(LangChainInstrumentor(), cap.tracer_provider, lambda: chain.invoke(f"Where is order {order}?"))
    return _one(cap)


def llama_index_run(base_url: str, model: str, variant: int = 0, **settings: Any) -> Any:
    """A LlamaIndex retriever finds the documents and a ``FunctionAgent`` (no tools) on ``OpenAILike`` answers from
    them, in one traced span; its imported run."""
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
    from llama_index.llms.openai_like import OpenAILike
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    from footprint_lab.otel import capture

    order, _, docs = documents(variant)
    chosen = {**SETTINGS, **settings}

    class Notes(BaseRetriever):
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            return [NodeWithScore(node=TextNode(id_=doc_id, text=text), score=1.0) for doc_id, text in docs.items()]

    llm = OpenAILike(model=model, api_base=base_url, api_key="none", is_chat_model=True, is_function_calling_model=True,
                     temperature=chosen["temperature"], max_tokens=chosen["max_tokens"])
    question = f"Where is order {order}?"

    def answer() -> Any:
        found = Notes().retrieve(question)
        agent = FunctionAgent(tools=[], llm=llm,
                              system_prompt=system_message({n.node.node_id: n.node.get_content() for n in found}))

        async def run() -> Any:
            return await agent.run(question)

        return asyncio.run(run())

    with capture() as cap:
        tracer = cap.tracer_provider.get_tracer("support")

        def traced() -> Any:
            with tracer.start_as_current_span("support"):  # the retrieval and the agent: one trace, one run
                return answer()

        _instrumented(LlamaIndexInstrumentor(), cap.tracer_provider, traced)
    return _one(cap)


def openai_agents_run(base_url: str, model: str, variant: int = 0, **settings: Any) -> Any:
    """An OpenAI Agents SDK agent whose instructions retrieve the documents (a hand-traced retrieval), on
    ``OpenAIChatCompletionsModel``; its imported run."""
    import agents
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    from footprint_lab.otel import capture

    order, _, docs = documents(variant)
    chosen = {**SETTINGS, **settings}
    question = f"Where is order {order}?"
    with capture() as cap:
        provider = cap.tracer_provider

        def instructions(context: Any, agent: Any) -> str:
            return system_message(traced_retrieval(provider, question, docs))

        client = AsyncOpenAI(base_url=base_url, api_key="none")
        agent = agents.Agent(name="support", instructions=instructions,
                             model=agents.OpenAIChatCompletionsModel(model=model, openai_client=client),
                             model_settings=agents.ModelSettings(temperature=chosen["temperature"],
                                                                 max_tokens=chosen["max_tokens"]))
        tracer = provider.get_tracer("support")

        def traced() -> Any:
            with tracer.start_as_current_span("support"):
                return agents.Runner.run_sync(agent, question)

        _instrumented(OpenAIAgentsInstrumentor(), provider, traced)
    return _one(cap)


async def pydantic_ai_run(base_url: str, model: str, variant: int = 0, **settings: Any) -> Any:
    """A pydantic-ai agent whose instructions retrieve the documents (a hand-traced retrieval), on
    ``OpenAIChatModel``, traced by pydantic-ai itself; its imported run."""
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from footprint_lab.otel import capture

    order, _, docs = documents(variant)
    chosen = {**SETTINGS, **settings}
    question = f"Where is order {order}?"
    with capture() as cap:
        provider = cap.tracer_provider

        def notes() -> str:  # pydantic-ai joins its instructions with a blank line
            return BLANK_LINE.join(traced_retrieval(provider, question, docs).values())

        instructions: list[Any] = [REAL_SYSTEM, notes]
        agent = Agent(OpenAIChatModel(model, provider=OpenAIProvider(base_url=base_url, api_key="none")),
                      instructions=instructions, model_settings={"temperature": chosen["temperature"],
                                                                 "max_tokens": chosen["max_tokens"]})
        agent.instrument = InstrumentationSettings(tracer_provider=provider)
        await agent.run(question)
    return _one(cap)


#: Each framework's builder: ``build(base_url, model, variant=0, **settings)`` gives the imported run (pydantic-ai's
#: is a coroutine function).
FRAMEWORKS: dict[str, Callable[..., Any]] = {
    "langchain": langchain_run, "llama_index": llama_index_run, "openai_agents": openai_agents_run,
    "pydantic_ai": pydantic_ai_run,
}


__all__ = ["BLANK_LINE", "FRAMEWORKS", "PLANTED", "SETTINGS", "documents", "langchain_run", "llama_index_run",
           "openai_agents_run", "pydantic_ai_run", "system_message", "traced_retrieval"]
