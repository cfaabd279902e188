"""The notebook views: every footprint_lab object shows itself, with no JavaScript needed.

Importing this package registers one renderer per kind with the display registry below the
core (:mod:`footprint_lab.base.display`); the package root adds the loader that imports it
the first time anything is displayed, so ``Run._repr_mimebundle_`` works without
``%load_ext`` and ``core`` never imports ``lab``.

Public names:

- :func:`answer_view` (a recording's answer view, HTML) and :func:`run_bundle` (a run's whole
  bundle: ``text/plain``, ``text/html`` and the recording under :data:`RECORDING_MIME`);
- :func:`tree_figure` (a run tree as a plotly ``Figure``) and :func:`tree_html`;
- :func:`slots_view` (what one LLM call was given, for ``%fp_context``).

A run's display bundle stays within :data:`BUNDLE_BUDGET` (2 MB, every MIME type together):
each view draws a bounded amount of any one value (``markup.elements``), and the recording rides
along only when the whole bundle still fits. A larger recording (a 20 MB answer is held seven
times over: the answer, the reply, the transcript, the commit, the events...) is left out of the
notebook, and the view says so and how to save it whole; the run in the kernel keeps all of it.

Role: lab layer.
"""

from __future__ import annotations

from typing import Any

import orjson

from footprint_lab.base import display
from footprint_lab.lab.cards import error_card_html
from footprint_lab.lab.views.answer import answer_view, bundle_text, slots_view
from footprint_lab.lab.views.ask import explanation_html
from footprint_lab.lab.views.difference import difference_explanation_html, difference_html
from footprint_lab.lab.views.explain import (
    backtrack_html,
    checkpoint_html,
    culprits_html,
    dropped_html,
    integrity_html,
    localization_html,
    ranking_html,
    replay_html,
    text_bundle,
)
from footprint_lab.lab.views.messages import call_messages_html
from footprint_lab.lab.views.runset import runset_bundle
from footprint_lab.lab.views.timeline import timeline_html
from footprint_lab.lab.views.tree import tree_bundle, tree_figure, tree_html
from footprint_lab.markup.elements import shown
from footprint_lab.record.recording import RECORDING_MIME, Recording
from footprint_lab.record.saved_form import packed

__all__ = ["RECORDING_MIME", "answer_view", "run_bundle", "slots_view", "tree_figure", "tree_html"]


#: the most a run's display bundle holds, every MIME type together (bytes of JSON / characters of HTML)
BUNDLE_BUDGET = 2_000_000


def run_bundle(recording: Recording, *, budget: int | None = BUNDLE_BUDGET) -> dict[str, Any]:
    """The whole display bundle of a run: one line of text, the answer view, and the recording as JSON
    when the bundle stays within ``budget`` with it (otherwise the view says why it is not there).

    ``budget=None`` always carries the recording: ``notebook.export`` writes a file of evidence.
    """
    plain = bundle_text(recording)
    data = recording_data(recording)
    if budget is None:
        return {"text/plain": plain, "text/html": answer_view(recording), RECORDING_MIME: data}
    size = len(orjson.dumps(data))
    if size > budget:  # it cannot fit, whatever the view weighs
        return {"text/plain": plain, "text/html": answer_view(recording, note=recording_left_out(size), carried=False)}
    view = answer_view(recording)
    if len(plain) + len(view) + size <= budget:
        return {"text/plain": plain, "text/html": view, RECORDING_MIME: data}
    return {"text/plain": plain, "text/html": answer_view(recording, note=recording_left_out(size), carried=False)}


def recording_left_out(size: int) -> str:
    """The note of a view whose bundle leaves its recording out (``size``: its JSON, in bytes)."""
    return (f"This run's recording is {size / 1e6:,.1f} MB of JSON, more than a notebook output should hold "
            f"({BUNDLE_BUDGET / 1e6:g} MB), so the notebook keeps this view of it and not the recording "
            "(load_runs() will not find it there). run.recording.model_dump_json() saves it whole, "
            "load_recording() reads it back, and notebook.export([run], path) writes a notebook that holds it.")


def recording_data(recording: Recording) -> dict[str, Any]:
    """The recording as compact JSON-native data: ``Recording.model_validate(data) == recording``
    (its long lists as tables, fields at their defaults left out: see ``record.recording.packed``)."""
    return packed(recording)


def _run(run: Any) -> dict[str, Any]:
    data = run_bundle(run.recording)
    data["text/plain"] = repr(run)
    return data


def _explained(obj: Any, html: str) -> dict[str, Any]:
    """An explanation's bundle: its text (bounded, invisible controls made marks) beside its view."""
    return {"text/plain": shown(str(obj), whole="str() of this object"), "text/html": html}


def _checkpoint(checkpoint: Any) -> dict[str, Any]:
    pause = checkpoint.pause or {}
    facts = [("run_id", checkpoint.run_id), ("first_run_id", checkpoint.first_run_id),
             ("turns", len(checkpoint.history)), ("agent_id", checkpoint.agent_id),
             ("identity", "named" if checkpoint.identity else "none"),
             ("paused on", pause.get("question", "") if pause else "not paused")]
    title = "Checkpoint: a conversation ready to continue" + (" (waiting on a person)" if pause else "")
    return {"text/plain": repr(checkpoint), "text/html": checkpoint_html(title, facts)}


def _flow_checkpoint(checkpoint: Any) -> dict[str, Any]:
    runner = checkpoint.runner
    facts = [("run_id", checkpoint.run_id), ("composition", runner.get("kind")),
             ("name", runner.get("name") or runner.get("id") or ""),
             ("answers kept", ", ".join(checkpoint.answers) or "none"),
             ("waiting", ", ".join(checkpoint.paused)), ("asking", checkpoint.asking),
             ("question", checkpoint.question)]
    return {"text/plain": repr(checkpoint),
            "text/html": checkpoint_html("FlowCheckpoint: a paused composition", facts)}


def _register() -> None:
    display.register("run", _run)
    display.register("recording", run_bundle)
    display.register("tree", tree_bundle)
    display.register("backtrack", lambda bt: _explained(bt.render(limit=40), backtrack_html(bt)))
    display.register("localization", lambda found: _explained(found, localization_html(found)))
    display.register("dropped", lambda found: _explained(found, dropped_html(found)))
    display.register("integrity", lambda report: _explained(report, integrity_html(report)))
    display.register("culprits", lambda found: _explained(found, culprits_html(found)))
    display.register("explanation", lambda answer: _explained(answer, explanation_html(answer)))
    display.register("difference", lambda found: _explained(found, difference_html(found)))
    display.register("difference_explanation", lambda found: _explained(found, difference_explanation_html(found)))
    display.register("rerun_report", lambda report: text_bundle(report.summary(), str(report)))
    display.register("replay", lambda found: _explained(found, replay_html(found)))
    display.register("ranking_confidence",
                     lambda ranked: {"text/plain": str(ranked),
                                     "text/html": ranking_html("Ranking confidence", ranked.reason)})
    display.register("checkpoint", _checkpoint)
    display.register("runset", runset_bundle)
    display.register("timeline", lambda timeline: _explained(timeline, timeline_html(timeline)))
    display.register("call_messages", lambda messages: _explained(messages, call_messages_html(messages)))
    display.register("flow_checkpoint", _flow_checkpoint)
    display.register("refusal", lambda refusal: {"text/plain": f"{type(refusal).__name__} [{refusal.code}]: "
                                                               f"{refusal}", "text/html": error_card_html(refusal)})


_register()
