"""Runtime step ids, ``[path/]stage#n``: rendered and parsed in this module only.

Each step of a run takes the next number from one per-run counter, so an id is unique in its run
and sorts in execution order. A member run's ids sit under the mounting step's id
(``sequence#2/call-llm#3``), so ids join across the whole tree of a composed run.

Role: record layer, generic core.
"""

from __future__ import annotations

from typing import NamedTuple


class StepId(NamedTuple):
    """A parsed step id."""

    path: str
    stage: str
    number: int

    def __str__(self) -> str:
        return format_step_id(self.stage, self.number, self.path)


def format_step_id(stage: str, number: int, path: str = "") -> str:
    """Render a step id; ``path`` is the mounting step's id, or empty for a top-level run."""
    return f"{path}/{stage}#{number}" if path else f"{stage}#{number}"


def parse_step_id(text: str) -> StepId | None:
    """Parse ``[path/]stage#n``; ``None`` when the text is not a step id."""
    if not isinstance(text, str):
        return None
    path, _, last = text.rpartition("/")
    stage, hash_sign, number = last.rpartition("#")
    if not hash_sign or not stage or not number.isdigit():
        return None
    return StepId(path, stage, int(number))
