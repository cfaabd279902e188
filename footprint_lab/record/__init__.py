"""The record: step ids, the recorder (tracked scope, commits, decisions, events) and the ``Recording`` it leaves.

The generic core knows nothing of LLMs, agents, explanations or notebooks. The recording's schema
does name what an LLM run sends and receives: a request's slots (``record.schema``) and each call's
exchange (``record.exchange``). The generic core never imports ``record.exchange``; an import-linter
contract checks it.

Role: level 0, above ``footprint_lab.base``; redaction and the seal sit one level up. The names
below load on first use, so ``import footprint_lab`` does not pay for the recorder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.base.exports import public

if TYPE_CHECKING:
    from footprint_lab.base.refusal import Refusal as Refusal
    from footprint_lab.base.refusal import describe_shape as describe_shape
    from footprint_lab.record.events import EVENT_TYPES as EVENT_TYPES
    from footprint_lab.record.recorder import Recorder as Recorder
    from footprint_lab.record.recorder import Scrubber as Scrubber
    from footprint_lab.record.recorder import summarize as summarize
    from footprint_lab.record.step_id import StepId as StepId
    from footprint_lab.record.step_id import format_step_id as format_step_id
    from footprint_lab.record.step_id import parse_step_id as parse_step_id

__all__ = [
    "EVENT_TYPES", "Recorder", "Refusal", "Scrubber", "StepId", "describe_shape", "format_step_id", "parse_step_id",
    "summarize",
]
__getattr__, __dir__ = public(__name__)

