"""The settings door of every explanation: a wrong argument is refused before any walk or rerun.

Rule kept here: ``backtrack``, ``suspects``, ``localize``, ``rerun_without`` and
``find_dropped_context`` judge their arguments here, by shape, before they read a recording
or start a rerun, and refuse with :class:`ExplainConfigError` naming the setting and the fix
(it lives with the rebuild protocol, :mod:`footprint_lab.context.source_ids`, whose id lists
are judged the same way).
A recording is accepted as a ``Recording`` or as anything holding one in ``.recording`` (a
``Run``), so this layer never needs to know the ``Run`` class; a type checker reads that as
:data:`RunLike` (a :class:`HasRecording`, or the ``Recording`` itself).

Role: explain layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from footprint_lab.base.refusal import describe_shape
from footprint_lab.context.source_ids import ExplainConfigError, id_list

if TYPE_CHECKING:
    from footprint_lab.record.recording import Recording

__all__ = ["ExplainConfigError", "HasRecording", "RunLike", "fraction", "id_list", "recording_of", "whole_number"]


class HasRecording(Protocol):
    """Anything that holds a run's recording in ``.recording``: a ``Run`` (native, loaded, imported from spans,
    a member's, a chat's turn), or a replay's result."""

    @property
    def recording(self) -> Recording: ...


#: what every explanation reads: a run (anything holding its ``Recording`` in ``.recording``) or the recording
RunLike: TypeAlias = "HasRecording | Recording"


def recording_of(run: Any, function: str, setting: str = "run") -> Recording:
    """The recording a run (or a recording) holds; refused, naming ``function``'s ``setting``, when there is none."""
    from footprint_lab.record.recording import Recording  # pydantic: only once a recording is asked for

    if isinstance(run, Recording):
        return run
    recording = getattr(run, "recording", None)
    if isinstance(recording, Recording):
        return recording
    raise ExplainConfigError(
        function, setting, describe_shape(run),
        "must be a finished run (what `await agent.run(...)` returns) or its Recording, e.g. "
        "Run.from_recording(load_recording(text)) for a saved one",
    )


def whole_number(function: str, setting: str, value: Any, low: int, high: int, *, low_why: str = "") -> int:
    """``value`` when it is a whole number from ``low`` to ``high``; refused otherwise (a whole number out of range is
    said to be below or above the range, never quoted). ``low_why`` says where the least comes from."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        whole = isinstance(value, int) and not isinstance(value, bool)
        received = (f"a whole number {'below' if value < low else 'above'} that" if whole else describe_shape(value))
        least = f"{low} ({low_why})" if low_why else f"{low}"
        raise ExplainConfigError(function, setting, received, f"must be a whole number from {least} to {high}")
    return value


def fraction(function: str, setting: str, value: Any) -> float:
    """``value`` when it is a number from 0 to 1; refused otherwise."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise ExplainConfigError(function, setting, describe_shape(value), "must be a number from 0 to 1")
    return float(value)
