"""Every refusal footprint_lab can raise, in one place.

Each is raised before anything runs, carries a stable ``code``, describes what arrived by
shape only, and says how to fix it. The tree::

    Refusal                              footprint_lab.engine.refusal
    ├── InvalidRunInputError             ERR_INVALID_RUN_INPUT      core.door
    ├── RunInFlightError                 ERR_RUN_IN_FLIGHT          core.conversation
    ├── PendingQuestionError             ERR_PENDING_QUESTION       core.conversation
    ├── NoConversationError              ERR_NO_CONVERSATION        core.conversation
    ├── ResumeIdentityConflictError      ERR_SESSION_OWNERSHIP_CONFLICT  core.conversation
    ├── ResumeRedactionError             ERR_RESUME_REDACTION       core.conversation
    ├── InvalidCheckpointError           ERR_INVALID_CHECKPOINT     core.checkpoint
    ├── ConversationMismatchError        ERR_CONVERSATION_MISMATCH  core.checkpoint
    ├── InvalidQuestionError             ERR_INVALID_QUESTION       core.pause
    ├── AgentConfigError                 ERR_AGENT_CONFIG           core.agent
    ├── DuplicateToolError               ERR_DUPLICATE_TOOL         core.agent
    ├── InvalidIdentityError             ERR_INVALID_IDENTITY       core.identity
    ├── ToolDefinitionError              ERR_TOOL_DEFINITION        core.tools
    ├── RedactionConfigError             ERR_REDACTION_CONFIG       engine.redaction
    └── MockScriptError                  ERR_MOCK_SCRIPT            providers.mock

Not a refusal (work was done before it), but coded the same way::

    RunCheckpointError                   ERR_RUN_CHECKPOINT         core.checkpoint
        a run failed after at least one completed tool round; .checkpoint keeps what was done
"""

from __future__ import annotations

from footprint_lab.core.agent import AgentConfigError, DuplicateToolError
from footprint_lab.core.checkpoint import ConversationMismatchError, InvalidCheckpointError, RunCheckpointError
from footprint_lab.core.conversation import (
    NoConversationError,
    PendingQuestionError,
    ResumeIdentityConflictError,
    ResumeRedactionError,
    RunInFlightError,
)
from footprint_lab.core.door import InvalidRunInputError
from footprint_lab.core.identity import InvalidIdentityError
from footprint_lab.core.pause import InvalidQuestionError
from footprint_lab.core.tools import ToolDefinitionError
from footprint_lab.engine.redaction import RedactionConfigError
from footprint_lab.engine.refusal import Refusal
from footprint_lab.providers.mock import MockScriptError

__all__ = [
    "AgentConfigError",
    "ConversationMismatchError",
    "DuplicateToolError",
    "InvalidCheckpointError",
    "InvalidIdentityError",
    "InvalidQuestionError",
    "InvalidRunInputError",
    "MockScriptError",
    "NoConversationError",
    "PendingQuestionError",
    "RedactionConfigError",
    "Refusal",
    "ResumeIdentityConflictError",
    "ResumeRedactionError",
    "RunCheckpointError",
    "RunInFlightError",
    "ToolDefinitionError",
]
