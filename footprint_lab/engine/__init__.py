"""The recorded engine: step ids, the tracked scope, events, and the ``Recording``.

Nothing here knows about LLMs, agents, explanations or notebooks. The names below load on
first use, so ``import footprint_lab`` (whose root wires the display registry,
:mod:`footprint_lab.engine.display`) does not pay for the recorder.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "EVENT_TYPES": "recorder", "Recorder": "recorder", "Scrubber": "recorder", "summarize": "recorder",
    "Refusal": "refusal", "describe_shape": "refusal",
    "StepId": "step_id", "format_step_id": "step_id", "parse_step_id": "step_id",
}

if TYPE_CHECKING:
    from footprint_lab.engine.recorder import EVENT_TYPES, Recorder, Scrubber, summarize
    from footprint_lab.engine.refusal import Refusal, describe_shape
    from footprint_lab.engine.step_id import StepId, format_step_id, parse_step_id


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'footprint_lab.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"footprint_lab.engine.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "EVENT_TYPES",
    "Recorder",
    "Refusal",
    "Scrubber",
    "StepId",
    "describe_shape",
    "format_step_id",
    "parse_step_id",
    "summarize",
]
