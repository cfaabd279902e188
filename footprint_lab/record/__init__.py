"""The record: step ids, the recorder (tracked scope, commits, decisions, events) and the ``Recording`` it leaves.

What it holds, honestly: a generic core that knows nothing of LLMs, agents, explanations or
notebooks (step ids, the recorder and its tracked scope, commits, decisions, events), and the
recording's schema, which does name what LLM runs send and receive: context pieces land in a
request's slots (``record.schema``), and each LLM call's exchange is kept by ``record.exchange``.
The generic core never imports ``record.exchange`` (an import-linter contract checks it).
Redaction (``footprint_lab.redact``) and the seal (``footprint_lab.sealing``) sit beside it; the
refusals, registries and progress every room shares sit below it (``footprint_lab.base``). The
names below load on first use, so ``import footprint_lab`` does not pay for the recorder.
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

