"""The recorded engine: step ids, the tracked scope, events, and the ``Recording``.

Nothing here knows about LLMs, agents, explanations or notebooks.
"""

from footprint_lab.engine.recorder import EVENT_TYPES, Recorder, Scrubber, summarize
from footprint_lab.engine.refusal import Refusal, describe_shape
from footprint_lab.engine.step_id import StepId, format_step_id, parse_step_id

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
