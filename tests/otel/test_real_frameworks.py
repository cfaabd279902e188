"""Agents people already have, on a real model: four frameworks, traced, imported and explained by replay.

Each framework (``footprint_lab.examples.any_agent``: a LangChain chain, a LlamaIndex retriever and
``FunctionAgent``, an OpenAI Agents SDK agent, a pydantic-ai agent) answers "where is order
A-4411?" from four retrieved documents, one planted (the package is in Lisbon), on llama.cpp's
server with SmolLM2-135M at temperature 0; its instrumentation's spans are captured and imported.
What must hold whatever the model's words: the imported run shows each document as a piece of the
answering call, in its view too; ``localize(run, replay=provider)`` with the analyst's comparator
and default trials confirms the planted document and no benign one
(``tests/otel/test_otel_documents_in_system.py`` shows a removal sends the recorded system text without
that document alone).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest
from real_model_kit import MODEL, ModelServers

pytest.importorskip("openinference.instrumentation")

from footprint_lab.examples.any_agent import FRAMEWORKS, PLANTED, documents, system_message
from footprint_lab.examples.truth import REAL_SYSTEM
from footprint_lab.explain import localize
from footprint_lab.explain.compare import Mentions
from footprint_lab.providers import openai

pytestmark = pytest.mark.real_model

ORDER, CITY, DOCS = documents(0)
BENIGN = set(DOCS) - {PLANTED}


async def imported(framework: str, url: str) -> Any:
    build = FRAMEWORKS[framework]
    if inspect.iscoroutinefunction(build):
        return await build(url, MODEL)
    return await asyncio.to_thread(build, url, MODEL)  # LlamaIndex and the Agents SDK run their own event loop


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
async def test_a_framework_agent_on_the_real_model_is_imported_and_replay_confirms_the_planted_document(
        framework: str, model_server: ModelServers) -> None:
    url = model_server("patient").url
    run = await imported(framework, url)
    assert Mentions(CITY).mentions(run.answer or ""), run.answer  # the answer to explain names the city
    recording = run.recording
    answering = recording.exchanges[-1]  # the only call: no tools, one answer
    assert answering.system == system_message(DOCS) and not answering.tools  # what the framework sent
    assert "retrieve" in [s.stage for s in recording.steps]
    pieces = {p.source_id: p for p in recording.call_pieces(answering)}
    assert {d: pieces[d].content for d in DOCS} == DOCS
    assert all(pieces[d].source_kind == "rag" and pieces[d].verdict == "admitted" for d in DOCS)
    assert REAL_SYSTEM in [p.content for p in pieces.values() if p.source_kind == "base"]
    shown = run.to_html()
    assert all(f'data-fl-piece="{d}"' in shown for d in DOCS)  # the view names every document

    provider = openai(MODEL, base_url=url, options={"temperature": 0}, max_tokens=32, timeout=120.0)
    report = await localize(run, replay=provider, comparator=Mentions(CITY))
    assert PLANTED in report.confirmed, str(report)
    assert not BENIGN & set(report.confirmed), str(report)
    assert report.failed == 0 and report.reruns <= report.budget, str(report)
    planted = next(s for s in report.suspects if s.source_id == PLANTED)
    assert planted.flips * max(planted.noise_samples, 1) > planted.noise_flips * planted.samples
