"""The recorded engine: step ids, the tracked scope, events, and the ``Recording``.

Nothing here knows about LLMs, agents, explanations or notebooks. The names below load on
first use, so ``import footprint_lab`` (whose root wires the display registry,
:mod:`footprint_lab.engine.display`) does not pay for the recorder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.engine._exports import public

if TYPE_CHECKING:
    from footprint_lab.engine.recorder import EVENT_TYPES, Recorder, Scrubber, summarize
    from footprint_lab.engine.refusal import Refusal, describe_shape
    from footprint_lab.engine.step_id import StepId, format_step_id, parse_step_id

__all__, __getattr__, __dir__ = public(__name__)

