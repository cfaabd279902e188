"""Compositions: runners made of runners, each member run for the run that mounted it.

``Sequence``, ``Parallel``, ``Conditional``, ``Loop``, ``Workflow`` and ``Graph`` are all
runners (same door, same ``Run``, ``run_sync``) and nest in any combination; a paused run's
``FlowCheckpoint`` is plain JSON that resumes in any process. The patterns
(``reflection``, ``debate``, ``self_consistency``, ``map_reduce``, ``swarm``) are built only
from them. See docs/compositions.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.engine._exports import public

if TYPE_CHECKING:
    from footprint_lab.flow._checkpoint import FlowCheckpoint, FlowCheckpointError
    from footprint_lab.flow._composition import Composition
    from footprint_lab.flow._conditional import Conditional
    from footprint_lab.flow._loop import MAX_PASSES, Loop
    from footprint_lab.flow._parallel import LLMMerge, Parallel, merge_with_llm
    from footprint_lab.flow._patterns import (
        debate,
        handoff_target,
        majority_vote,
        map_reduce,
        reflection,
        self_consistency,
        swarm,
    )
    from footprint_lab.flow._refusals import (
        CompositionConfigError,
        DuplicateStepError,
        EmptyCompositionError,
        GraphCycleError,
        LoopBudgetError,
        ResumeDivergedError,
    )
    from footprint_lab.flow._sequence import Sequence
    from footprint_lab.flow._workflow import FlowStep, Graph, Workflow, find_cycle, step

__all__, __getattr__, __dir__ = public(__name__)

