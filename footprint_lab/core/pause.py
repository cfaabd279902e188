"""Pausing for a person: ``ask_human`` stops a run where a tool needs an answer it cannot get.

Rule kept here: a question to a person is unfinished work, not a failure. A tool calls
``ask_human("Refund 120 EUR to this card?")``; the run stops at that tool call, with every
step before it committed and the tool calls after it in the same batch not run, and
``run()`` returns a ``Run`` whose ``paused`` is true, with the ``question`` and a
``checkpoint``. ``agent.resume(run.checkpoint, answer)`` continues exactly there: the answer
becomes that tool call's result and no earlier tool runs again.

``ask_human`` raises :class:`HumanQuestion`, a ``BaseException`` like ``asyncio.CancelledError``,
so a tool's own ``except Exception`` cannot swallow the pause by accident.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from footprint_lab.base.refusal import Refusal, describe_shape


class InvalidQuestionError(Refusal, ValueError):
    """Raised by ``ask_human`` when its question is not a non-empty string (or ``choices`` not strings).

    Carries ``received`` (the shape of what arrived). Raised inside the asking tool, so the
    run records it as that tool's error.
    """

    code = "ERR_INVALID_QUESTION"
    fields = ("received",)

    def __init__(self, received: str) -> None:
        super().__init__(
            "ask_human: the question must be a non-empty string a person can read, and choices, when "
            f"given, a list of strings (received {received}). Example: ask_human('Refund the order?', "
            "choices=['yes', 'no'])."
        )
        self.received = received


class HumanQuestion(BaseException):
    """The signal ``ask_human`` raises; the runner turns it into a paused run."""

    def __init__(self, question: str, choices: list[str] | None) -> None:
        super().__init__(
            "ask_human() stops a run to ask a person something; call it from inside a tool that an "
            "Agent runs, and answer with agent.resume(run.checkpoint, answer)."
        )
        self.question = question
        self.choices = choices


def ask_human(question: str, *, choices: Sequence[str] | None = None) -> NoReturn:
    """Stop the run to ask a person ``question`` (optionally offering ``choices``).

    Call it from inside a tool. The run returns paused; the person's answer, given with
    ``agent.resume(run.checkpoint, answer)``, becomes this tool call's result.
    """
    if not isinstance(question, str) or not question.strip():
        raise InvalidQuestionError(describe_shape(question) if not isinstance(question, str) else "a blank string")
    if choices is not None and (
        isinstance(choices, str) or not isinstance(choices, Sequence) or not all(isinstance(c, str) for c in choices)
    ):
        raise InvalidQuestionError(f"choices as {describe_shape(choices)}")
    raise HumanQuestion(question, list(choices) if choices is not None else None)


@dataclass(frozen=True, slots=True)
class Pause:
    """A question a paused run is waiting on: what ``abandon_pause()`` returns, and a checkpoint's ``pause``."""

    question: str
    tool_name: str
    tool_call_id: str
    run_id: str
    choices: list[str] | None = None

    def as_data(self) -> dict[str, Any]:
        """The pause as a checkpoint carries it (the run id is the checkpoint's own)."""
        return {"question": self.question, "tool_name": self.tool_name, "tool_call_id": self.tool_call_id,
                "choices": self.choices}
