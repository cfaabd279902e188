"""Unsupported values: the numbers, amounts, dates and names in an answer that no evidence it was sent holds.

Rule kept here: an answer may only state what its call was given. Every number, amount, date,
time, identifier and proper name in the final answer is looked for in what the answering LLM
call was sent (its system text piece by piece, the user's messages, tool results, earlier
replies); one found nowhere is reported once, with how many times the answer states it, and
with a near value of its kind that the evidence does hold and where that came from ("135 EUR
in the answer; the result of tool 'lookup' said 120 EUR"). A value the model worked out (a sum
of two amounts the tool gave) is reported too: it is in no evidence, and the finding says so.

How a text's values are read (as a reader sees them, by meaning, with what is not read as a name)
is :mod:`footprint_lab.explain.checks._text_values`'s; what the evidence holds, and the near value
shown with a finding, :mod:`footprint_lab.explain.checks._value_evidence`'s.

Cost: each side is read once, into sets of what it holds, and each value of the answer is looked
up there, so the check is linear in the text.

Role: explain layer; registered as the ``unsupported_value`` check of
:mod:`footprint_lab.explain.checks.integrity`, a pure function of a ``Recording``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.checks._text_values import Value, values_in
from footprint_lab.explain.checks._value_evidence import Evidence

if TYPE_CHECKING:
    from footprint_lab.record.recording import LLMExchange, Recording


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A value of the answer that no evidence holds (stated ``count`` times), with a near one the evidence holds."""

    value: Value
    nearest: Value | None
    source: str | None
    step: str | None
    count: int = 1

    def what(self, call: str) -> str:
        said = f"; {self.source} said {self.nearest.shown}" if self.nearest is not None else ""
        times = f", stated {self.count:,} times" if self.count > 1 else ""
        return f"{self.value.shown} ({self.value.kind}{times}) in the answer appears in nothing {call} was sent{said}"


def unsupported_values(recording: Recording) -> tuple[list[Unsupported], str | None, int, str]:
    """``(unsupported values, the answering call's step, values read, note)`` for one recording.

    Each distinct value of the answer is one entry, however often the answer states it.
    """
    answer = recording.answer
    if answer is None:
        return [], None, 0, "the run has no answer to read"
    found = _answering_call(recording, answer)
    if found is None:
        return [], None, 0, "no LLM call wrote the answer (nothing was sent to compare it with)"
    home, exchange = found
    stated = values_in(answer, names_at_sentence_start=False)
    if not stated:
        return [], exchange.step_id, 0, "the answer states no number, amount, date, identifier or name"
    distinct: dict[tuple[str, tuple[Any, ...]], list[Any]] = {}
    for value in stated:
        distinct.setdefault((value.kind, value.keys), [value, 0])[1] += 1
    evidence = Evidence(home, [piece for piece in home.call_pieces(exchange) if piece.content])
    missing = [Unsupported(value, *evidence.nearest(value), count=count)
               for value, count in distinct.values() if not evidence.holds(value)]
    done = "looked for in" if missing else "found in"
    return missing, exchange.step_id, len(stated), f"{len(stated)} value(s) of the answer {done} its evidence"


def _answering_call(recording: Recording, answer: str) -> tuple[Recording, LLMExchange] | None:
    """The call whose reply is the answer (in a composition, the member's that wrote it), else the last call."""
    found: list[tuple[Recording, LLMExchange]] = []
    pending = [recording]
    while pending:
        current = pending.pop()
        found += [(current, x) for x in current.exchanges if (x.response.content or "").strip() == answer.strip()]
        pending += current.children
    if found:
        return found[-1] if recording.exchanges == [] else next(
            (pair for pair in reversed(found) if pair[0] is recording), found[-1])
    return (recording, recording.exchanges[-1]) if recording.exchanges else None

