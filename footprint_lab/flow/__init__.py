"""Compositions: runners made of runners, each member run for the run that mounted it.

``Sequence``, ``Parallel``, ``Conditional``, ``Loop``, ``Workflow`` and ``Graph`` are all
runners (same door, same ``Run``, ``run_sync``) and nest in any combination; a paused run's
``FlowCheckpoint`` is plain JSON that resumes in any process. The patterns
(``reflection``, ``debate``, ``self_consistency``, ``map_reduce``, ``swarm``) are built only
from them. See docs/compositions.md.
"""

from typing import TYPE_CHECKING, Any

from footprint_lab.flow._composition import Composition
from footprint_lab.flow.conditional import Conditional
from footprint_lab.flow.loop import MAX_PASSES, Loop
from footprint_lab.flow.parallel import LLMMerge, Parallel, merge_with_llm
from footprint_lab.flow.patterns import (
    debate,
    handoff_target,
    majority_vote,
    map_reduce,
    reflection,
    self_consistency,
    swarm,
)
from footprint_lab.flow.refusals import (
    CompositionConfigError,
    DuplicateStepError,
    EmptyCompositionError,
    GraphCycleError,
    LoopBudgetError,
    ResumeDivergedError,
)
from footprint_lab.flow.sequence import Sequence
from footprint_lab.flow.workflow import FlowStep, Graph, Workflow, find_cycle, step

if TYPE_CHECKING:
    from footprint_lab.flow.checkpoint import FlowCheckpoint, FlowCheckpointError


def __getattr__(name: str) -> Any:
    # FlowCheckpoint is a pydantic model: imported when first asked for, so the flow layer stays light.
    if name in ("FlowCheckpoint", "FlowCheckpointError"):
        from footprint_lab.flow import checkpoint

        return getattr(checkpoint, name)
    raise AttributeError(f"module 'footprint_lab.flow' has no attribute {name!r}")

__all__ = [
    "MAX_PASSES",
    "Composition",
    "CompositionConfigError",
    "Conditional",
    "DuplicateStepError",
    "EmptyCompositionError",
    "FlowCheckpoint",
    "FlowCheckpointError",
    "FlowStep",
    "Graph",
    "GraphCycleError",
    "LLMMerge",
    "Loop",
    "LoopBudgetError",
    "Parallel",
    "ResumeDivergedError",
    "Sequence",
    "Workflow",
    "debate",
    "find_cycle",
    "handoff_target",
    "majority_vote",
    "map_reduce",
    "merge_with_llm",
    "reflection",
    "self_consistency",
    "step",
    "swarm",
]
