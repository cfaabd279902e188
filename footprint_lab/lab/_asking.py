"""The Lab's Ask box at work: a question to the latest run through ``explain.ask``, and its cited ids.

Rules kept here: the question runs as a task on the kernel's loop, as a run does (**Stop**
cancels it); it reaches the explainer and the view masked by the run's redaction policy, so
neither the widget's saved state nor the answer shows what the policy covers; without an
explainer, or before a run, the box says why nothing was asked. An id the answer cites opens
the LLM call or the piece it names. The answer's HTML is :mod:`footprint_lab.lab.ask_box`'s.

Role: lab layer; mixed into :class:`footprint_lab.lab.widget.Lab`, whose traits it sets.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from footprint_lab.base.refusal import CodedError, Refusal
from footprint_lab.explain import ask
from footprint_lab.lab import ask_box, panels
from footprint_lab.lab.cards import error_card_html


class Asking:
    """The Lab's Ask button (``press_ask``) and the chips of the ids its answer cites (``press_cite``)."""

    explainer: Any
    explanation: Any
    run: Any
    ask_question: str
    ask_state: str
    ask_html: str
    busy: str
    progress: dict[str, Any]
    _task: asyncio.Task[Any] | None

    if TYPE_CHECKING:
        def _in_flight(self) -> bool: ...

        def _schedule(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

        def open_call(self, call: str) -> None: ...

        def open_piece(self, piece: str, slot: str, *, call: Any = None, with_call: bool = True) -> None: ...

    def press_ask(self, content: dict[str, Any] | None = None) -> None:
        """What the Ask button does: question the latest run with the explainer, as a task on the loop."""
        if self._in_flight():
            return
        if content is not None and isinstance(content.get("question"), str):
            self.ask_question = content["question"]
        if self.explainer is None:
            self.ask_state = "off"
            self.ask_html = ask_box.note_html(ask_box.HINT)
            return
        if self.run is None:
            self.ask_state = "waiting"
            self.ask_html = ask_box.note_html(ask_box.NO_RUN)
            return

        # Like a sent message, the question leaves the box; the explainer and the view get it masked by
        # the run's policy, so neither the widget's saved state nor the answer shows what it covers.
        run, question = self.run, self.run.masked(self.ask_question)
        self.ask_question = ""
        self.ask_state = "asking"
        self.ask_html = ""
        self.busy = "asking…"
        self.progress = {}

        async def work() -> None:
            try:
                explanation = await ask(run, question, provider=self.explainer)
            except Refusal as refusal:
                self.ask_state, self.ask_html = "refused", error_card_html(refusal)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None:
                    task.uncancel()
                self.ask_state = "cancelled"
                self.ask_html = ask_box.note_html("Stopped: the question was cancelled before an answer.")
            except Exception as failure:
                self.ask_state = "failed"
                self.ask_html = error_card_html(failure) if isinstance(failure, CodedError) else ask_box.note_html(
                    f"The explainer failed: {type(failure).__name__}; the run itself is unchanged.")
            else:
                self.explanation = explanation
                self.ask_state = explanation.status
                self.ask_html = panels.bounded(ask_box.answer_html(explanation, run.recording), "The answer")
            finally:
                self.busy = ""

        self._task = self._schedule(work())

    def press_cite(self, content: dict[str, Any]) -> None:
        """A click on an id the answer cites: open the LLM call or the piece it names."""
        cited = content.get("id")
        if self.run is None or not isinstance(cited, str):
            return
        opens = ask_box.target(self.run.recording, cited)
        if opens is None:
            return
        kind, call, slot = opens
        if kind == "call" and call is not None:
            self.open_call(call)
        else:
            self.open_piece(cited, slot, call=call or panels.answering_call(self.run.recording))

