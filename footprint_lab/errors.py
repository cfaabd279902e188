"""Every refusal footprint_lab can raise, in one place.

Each is raised before anything runs, carries a stable ``code``, describes what arrived by
shape only, and says how to fix it. The tree::

    Refusal                              footprint_lab.engine.refusal
    ├── InvalidRunInputError             ERR_INVALID_RUN_INPUT      core.door
    ├── RunInFlightError                 ERR_RUN_IN_FLIGHT          core.conversation
    ├── AgentConfigError                 ERR_AGENT_CONFIG           core.agent
    ├── DuplicateToolError               ERR_DUPLICATE_TOOL         core.agent
    ├── InvalidIdentityError             ERR_INVALID_IDENTITY       core.identity
    ├── ToolDefinitionError              ERR_TOOL_DEFINITION        core.tools
    ├── ParentRunRefusedError            ERR_PARENT_RUN_REFUSED     core.member_run
    ├── MemberIdentityError              ERR_MEMBER_NO_IDENTITY     core.member_run
    ├── ResumeRequestConflictError       ERR_RESUME_REQUEST_CONFLICT core.member_run
    ├── CompositionConfigError           ERR_COMPOSITION_CONFIG     flow.refusals
    ├── EmptyCompositionError            ERR_EMPTY_COMPOSITION      flow.refusals
    ├── DuplicateStepError               ERR_DUPLICATE_STEP         flow.refusals
    ├── LoopBudgetError                  ERR_LOOP_BUDGET            flow.refusals
    ├── GraphCycleError                  ERR_GRAPH_CYCLE            flow.refusals
    ├── ResumeDivergedError              ERR_RESUME_DIVERGED        flow.refusals
    └── MockScriptError                  ERR_MOCK_SCRIPT            providers.mock
"""

from __future__ import annotations

from footprint_lab.core.agent import AgentConfigError, DuplicateToolError
from footprint_lab.core.conversation import RunInFlightError
from footprint_lab.core.door import InvalidRunInputError
from footprint_lab.core.identity import InvalidIdentityError
from footprint_lab.core.member_run import MemberIdentityError, ParentRunRefusedError, ResumeRequestConflictError
from footprint_lab.core.tools import ToolDefinitionError
from footprint_lab.engine.refusal import Refusal
from footprint_lab.flow.refusals import (
    CompositionConfigError,
    DuplicateStepError,
    EmptyCompositionError,
    GraphCycleError,
    LoopBudgetError,
    ResumeDivergedError,
)
from footprint_lab.providers.mock import MockScriptError

__all__ = [
    "AgentConfigError",
    "CompositionConfigError",
    "DuplicateStepError",
    "DuplicateToolError",
    "EmptyCompositionError",
    "GraphCycleError",
    "InvalidIdentityError",
    "InvalidRunInputError",
    "LoopBudgetError",
    "MemberIdentityError",
    "MockScriptError",
    "ParentRunRefusedError",
    "Refusal",
    "ResumeDivergedError",
    "ResumeRequestConflictError",
    "RunInFlightError",
    "ToolDefinitionError",
]
