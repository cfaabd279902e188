"""Retrieved documents sent inside a call's system message, imported so a replay can take each one out.

What a user relies on: when a framework writes the documents it retrieved into the system message
(the instructions, then each document, a blank line between: LangChain's ``"\\n\\n".join`` of
documents, pydantic-ai's joined instructions), each document is a ``rag`` piece of that call of its
own, and the text around them a ``base`` piece, joining back to the system text exactly; so
``replay(run, provider, without=[doc])`` sends the recorded system text without that document and
nothing else changed, and ``localize(run, replay=...)`` tests each document. A layout where a
document does not stand between blank lines keeps the system text one piece, as before.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from footprint_lab.explain import localize, replay
from footprint_lab.explain.compare import Mentions
from footprint_lab.otel import from_spans
from footprint_lab.providers import LLMRequest, mock

DOCS = {"where": "The package for order A-4411 is in Lisbon.", "hours": "Support is open from 9 to 17.",
        "gifts": "Gift cards never expire."}
QUESTION = "Where is order A-4411?"


def traced(system: str, retrievals: int = 1, answer: str = "It is in Lisbon.", **extra: Any) -> Any:
    """One trace as OpenInference writes it: ``retrievals`` retriever spans returning DOCS, then an LLM span that
    was sent ``system`` and the question; imported."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("chain", attributes={"openinference.span.kind": "CHAIN"}):
        for _ in range(retrievals):  # LlamaIndex writes two nested retriever spans for one retrieval
            documents = {f"retrieval.documents.{n}.document.{key}": value for n, (doc_id, text) in
                         enumerate(DOCS.items()) for key, value in (("id", doc_id), ("content", text))}
            with tracer.start_as_current_span("retrieve", attributes={"openinference.span.kind": "RETRIEVER",
                                                                      **documents}):
                pass
        with tracer.start_as_current_span("llm", attributes={
            "openinference.span.kind": "LLM", "llm.model_name": "m",
            "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": system,
            "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": QUESTION,
            "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": answer,
            **extra}):
            pass
    (run,) = from_spans(exporter.get_finished_spans())
    return run


def system_pieces(run: Any) -> list[tuple[str, str, str]]:
    recording = run.recording
    (exchange,) = recording.exchanges
    pieces = recording.context_pieces
    return [(pieces[i].source_kind, pieces[i].source_id, pieces[i].content)
            for i in recording.exchange_pieces(exchange)["system"]]


def by_lisbon(request: LLMRequest) -> str:
    """A model that names the city exactly while the planted document is in its system text."""
    return "It is in Lisbon." if DOCS["where"] in request.system else "I do not know."


LAYOUTS = {  # the system text, and the (kind, id) of each system piece it is cut into
    "instructions first": ("Answer briefly.\n\n" + "\n\n".join(DOCS.values()),
                           [("base", "system-part-1"), ("rag", "where"), ("rag", "hours"), ("rag", "gifts")]),
    "documents first, text after": ("\n\n".join(DOCS.values()) + "\n\nAnswer briefly.",
                                    [("rag", "where"), ("rag", "hours"), ("rag", "gifts"), ("base", "system-part-1")]),
    "text between documents": (f"{DOCS['hours']}\n\nContext:\n\n{DOCS['where']}\n\nEnd.",
                               [("rag", "hours"), ("base", "system-part-1"), ("rag", "where"),
                                ("base", "system-part-1.2")]),
    "one document alone": (DOCS["where"], [("rag", "where")]),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("retrievals", [1, 2])
def test_documents_between_blank_lines_are_pieces_of_their_own_that_join_back_to_the_system_text(
        layout: str, retrievals: int) -> None:
    system, expected = LAYOUTS[layout]
    run = traced(system, retrievals)
    pieces = system_pieces(run)
    assert [(kind, source_id) for kind, source_id, _ in pieces] == expected
    assert "\n\n".join(text for _, _, text in pieces) == run.recording.exchanges[0].system == system
    sent = {source_id for kind, source_id in expected if kind == "rag"}
    verdicts = [(p.source_id, p.verdict) for p in run.recording.context_pieces if p.source_kind == "rag"]
    # a document sent is admitted once, even when retrieved twice; one never sent is kept as skipped
    assert sorted(verdicts) == sorted([(d, "admitted") for d in sent] + [(d, "skipped") for d in DOCS if d not in sent]
                                      * retrievals)


async def test_a_replay_without_one_document_sends_the_system_text_without_it_and_localize_confirms_it() -> None:
    system = "Answer briefly.\n\n" + "\n\n".join(DOCS.values())
    run = traced(system)
    sent: list[str] = []

    def model(request: LLMRequest) -> str:
        sent.append(request.system)
        return by_lisbon(request)

    result = await replay(run, mock(respond=model), without=["where"], samples=1, comparator=Mentions("Lisbon"))
    assert "Answer briefly.\n\n" + DOCS["hours"] + "\n\n" + DOCS["gifts"] in sent
    assert system in sent  # the unchanged replay sends the recorded system text as it was
    assert [r.answer for r in result.replays] == ["I do not know."]
    assert [r.answer for r in result.unchanged] == ["It is in Lisbon."]
    report = await localize(run, replay=mock(respond=by_lisbon), comparator=Mentions("Lisbon"))
    assert report.confirmed == ["where"], str(report)


@pytest.mark.parametrize("system", [
    "Policy: " + DOCS["where"],                         # a document after text on its own line
    DOCS["where"] + "\nAnswer briefly.",                # text after a document without a blank line
    "Answer briefly.\n\n" + DOCS["where"] + " Thanks.",  # a document that runs on into text
])
def test_a_document_that_does_not_stand_between_blank_lines_leaves_the_system_text_one_piece(system: str) -> None:
    run = traced(system)
    pieces = system_pieces(run)
    assert pieces[0] == ("base", "system-part-1", system)  # as imported before: the text whole, the document beside
    assert ("rag", "where") in [(kind, source_id) for kind, source_id, _ in pieces]


async def test_localize_by_replay_says_a_document_inside_a_text_sent_whole_was_sent_not_that_it_was_not() -> None:
    """A document that does not stand between blank lines is sent inside the system text, which a replay sends
    whole: it is named untested as sent but not removable alone, never as "not sent to the answering call"."""
    run = traced("Policy: " + DOCS["where"])
    report = await localize(run, replay=mock(respond=by_lisbon), comparator=Mentions("Lisbon"))
    why = dict(report.untested)
    assert "where" in why and why["where"].startswith("sent to the answering call inside a text a replay sends whole")


async def test_a_replay_sends_the_generation_settings_the_call_was_recorded_with_unless_the_provider_sets_its_own(
        ) -> None:
    """The span recorded temperature 0.2 and 50 tokens: a replay sends them again (a replay at another temperature
    is another experiment); a setting the provider given sets itself is its own; a setting one provider's wire
    knows and another's would refuse (a penalty) and the seed (the replay's own) are not sent."""
    import json

    settings = {"temperature": 0.2, "max_tokens": 50, "frequency_penalty": 0.5, "seed": 7}
    run = traced("Answer briefly.\n\n" + "\n\n".join(DOCS.values()),
                 **{"llm.invocation_parameters": json.dumps(settings)})
    sent: list[dict[str, Any]] = []

    def model(request: LLMRequest) -> str:
        sent.append(dict(request.options))
        return by_lisbon(request)

    await replay(run, mock(respond=model), without=["where"], samples=1, comparator=Mentions("Lisbon"))
    assert sent and all(options == {"temperature": 0.2, "max_tokens": 50} for options in sent)

    class Tuned:
        """A provider of one's own that sets its temperature."""

        name = "tuned"

        def __init__(self) -> None:
            self.options = {"temperature": 0}
            self.inner = mock(respond=model)

        async def complete(self, request: LLMRequest) -> Any:
            return await self.inner.complete(request)

    sent.clear()
    await replay(run, Tuned(), without=["where"], samples=1, comparator=Mentions("Lisbon"))
    assert sent and all(options == {"max_tokens": 50} for options in sent)
