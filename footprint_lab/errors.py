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
    ├── CallNotFoundError                ERR_CALL_NOT_FOUND         core.run
    ├── ContextDeclarationError          ERR_CONTEXT_DECLARATION    context.declarations
    ├── FactRoleError                    ERR_FACT_ROLE              context.declarations
    ├── ContextConfigError               ERR_CONTEXT_CONFIG         context.assembly
    ├── DuplicateContextIdError          ERR_DUPLICATE_CONTEXT_ID   context.assembly
    ├── UnknownFactReferenceError        ERR_UNKNOWN_FACT_REF       context.assembly
    ├── ExplainConfigError               ERR_EXPLAIN_CONFIG         explain.checks
    ├── UnknownStepError                 ERR_UNKNOWN_STEP           explain.custody
    ├── InfluenceStrategyError           ERR_INFLUENCE_STRATEGY     explain.influence
    ├── UnknownSourceError               ERR_UNKNOWN_SOURCE         explain.rerun
    ├── NothingToLocalizeError           ERR_NOTHING_TO_LOCALIZE    explain.ablation
    └── MockScriptError                  ERR_MOCK_SCRIPT            providers.mock
"""

from __future__ import annotations

from footprint_lab.context.assembly import ContextConfigError, DuplicateContextIdError, UnknownFactReferenceError
from footprint_lab.context.declarations import ContextDeclarationError, FactRoleError
from footprint_lab.core.agent import AgentConfigError, DuplicateToolError
from footprint_lab.core.conversation import RunInFlightError
from footprint_lab.core.door import InvalidRunInputError
from footprint_lab.core.identity import InvalidIdentityError
from footprint_lab.core.run import CallNotFoundError
from footprint_lab.core.tools import ToolDefinitionError
from footprint_lab.engine.refusal import Refusal
from footprint_lab.explain.ablation import NothingToLocalizeError
from footprint_lab.explain.checks import ExplainConfigError
from footprint_lab.explain.custody import UnknownStepError
from footprint_lab.explain.influence import InfluenceStrategyError
from footprint_lab.explain.rerun import UnknownSourceError
from footprint_lab.providers.mock import MockScriptError

__all__ = [
    "AgentConfigError",
    "CallNotFoundError",
    "ContextConfigError",
    "ContextDeclarationError",
    "DuplicateContextIdError",
    "DuplicateToolError",
    "ExplainConfigError",
    "FactRoleError",
    "InfluenceStrategyError",
    "InvalidIdentityError",
    "InvalidRunInputError",
    "MockScriptError",
    "NothingToLocalizeError",
    "Refusal",
    "RunInFlightError",
    "ToolDefinitionError",
    "UnknownFactReferenceError",
    "UnknownSourceError",
    "UnknownStepError",
]
