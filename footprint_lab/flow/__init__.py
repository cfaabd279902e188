"""Compositions: runners made of runners, each member run for the run that mounted it.

``Sequence``, ``Parallel``, ``Conditional``, ``Loop``, ``Workflow`` and ``Graph`` are all
runners (same door, same ``Run``, ``run_sync``) and nest in any combination; a paused run's
``FlowCheckpoint`` is plain JSON that resumes in any process. The patterns
(``reflection``, ``debate``, ``self_consistency``, ``map_reduce``, ``swarm``) are built only
from them. See docs/compositions.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.base.exports import public

if TYPE_CHECKING:
    from footprint_lab.flow._composition import Composition as Composition
    from footprint_lab.flow._patterns import debate as debate
    from footprint_lab.flow._patterns import handoff_target as handoff_target
    from footprint_lab.flow._patterns import majority_vote as majority_vote
    from footprint_lab.flow._patterns import map_reduce as map_reduce
    from footprint_lab.flow._patterns import reflection as reflection
    from footprint_lab.flow._patterns import self_consistency as self_consistency
    from footprint_lab.flow._patterns import swarm as swarm
    from footprint_lab.flow.checkpoint import FlowCheckpoint as FlowCheckpoint
    from footprint_lab.flow.checkpoint import FlowCheckpointError as FlowCheckpointError
    from footprint_lab.flow.conditional import Conditional as Conditional
    from footprint_lab.flow.loop import MAX_PASSES as MAX_PASSES
    from footprint_lab.flow.loop import Loop as Loop
    from footprint_lab.flow.parallel import LLMMerge as LLMMerge
    from footprint_lab.flow.parallel import Parallel as Parallel
    from footprint_lab.flow.parallel import merge_with_llm as merge_with_llm
    from footprint_lab.flow.refusals import CompositionConfigError as CompositionConfigError
    from footprint_lab.flow.refusals import DuplicateStepError as DuplicateStepError
    from footprint_lab.flow.refusals import EmptyCompositionError as EmptyCompositionError
    from footprint_lab.flow.refusals import GraphCycleError as GraphCycleError
    from footprint_lab.flow.refusals import LoopBudgetError as LoopBudgetError
    from footprint_lab.flow.refusals import ResumeDivergedError as ResumeDivergedError
    from footprint_lab.flow.sequence import Sequence as Sequence
    from footprint_lab.flow.workflow import FlowStep as FlowStep
    from footprint_lab.flow.workflow import Graph as Graph
    from footprint_lab.flow.workflow import Workflow as Workflow
    from footprint_lab.flow.workflow import find_cycle as find_cycle
    from footprint_lab.flow.workflow import step as step

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
__getattr__, __dir__ = public(__name__)

