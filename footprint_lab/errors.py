"""Every error footprint_lab can raise on purpose, in one place.

Two roots, one shape (``CodedError``: a stable ``code``, typed ``fields``, a message that
says what arrived by shape only and how to fix it):

- a ``Refusal`` is raised at a door *before anything runs*: nothing was sent, billed or recorded;
- a ``RunFailure`` happens *while running*: steps ran and calls may have been charged, and the
  error says what was done, where it is kept, and (``retryable`` / ``resumable``) whether
  trying again can help.

The tree::

    CodedError                           ERR_FOOTPRINT_LAB          engine.refusal
    ├── Refusal                          ERR_REFUSED                engine.refusal
    │   ├── InvalidRunInputError         ERR_INVALID_RUN_INPUT      core.door
    │   ├── ListenerError                ERR_LISTENER               core.runner
    │   ├── RunInFlightError             ERR_RUN_IN_FLIGHT          core.conversation
    │   ├── PendingQuestionError         ERR_PENDING_QUESTION       core.conversation
    │   ├── NoConversationError          ERR_NO_CONVERSATION        core.conversation
    │   ├── ResumeIdentityConflictError  ERR_SESSION_OWNERSHIP_CONFLICT  core.conversation
    │   ├── ResumeRedactionError         ERR_RESUME_REDACTION       core.conversation
    │   ├── InvalidCheckpointError       ERR_INVALID_CHECKPOINT     core.checkpoint
    │   ├── ConversationMismatchError    ERR_CONVERSATION_MISMATCH  core.checkpoint
    │   ├── MaskedCheckpointError        ERR_MASKED_CHECKPOINT      core.concealed
    │   ├── UnmaskArgumentError          ERR_UNMASK_ARGUMENT        core.concealed
    │   ├── InvalidQuestionError         ERR_INVALID_QUESTION       core.pause
    │   ├── AgentConfigError             ERR_AGENT_CONFIG           core.agent
    │   ├── DuplicateToolError           ERR_DUPLICATE_TOOL         core.agent
    │   ├── LLMCallContextError          ERR_LLM_CALL_CONTEXT       core.llm_call
    │   ├── InvalidIdentityError         ERR_INVALID_IDENTITY       core.identity
    │   ├── ToolDefinitionError          ERR_TOOL_DEFINITION        core.tools
    │   ├── ParentRunRefusedError        ERR_PARENT_RUN_REFUSED     core.member_run
    │   ├── MemberIdentityError          ERR_MEMBER_NO_IDENTITY     core.member_run
    │   ├── ResumeRequestConflictError   ERR_RESUME_REQUEST_CONFLICT core.member_run
    │   ├── CompositionConfigError       ERR_COMPOSITION_CONFIG     flow.refusals
    │   ├── EmptyCompositionError        ERR_EMPTY_COMPOSITION      flow.refusals
    │   ├── DuplicateStepError           ERR_DUPLICATE_STEP         flow.refusals
    │   ├── LoopBudgetError              ERR_LOOP_BUDGET            flow.refusals
    │   ├── GraphCycleError              ERR_GRAPH_CYCLE            flow.refusals
    │   ├── ResumeDivergedError          ERR_RESUME_DIVERGED        flow.refusals
    │   ├── RedactionConfigError         ERR_REDACTION_CONFIG       engine.redaction
    │   ├── InvalidRecordingError        ERR_INVALID_RECORDING      engine.recording_door
    │   │   └── RecordingVersionError    ERR_RECORDING_VERSION      engine.recording_door
    │   │           a recording written by a newer footprint_lab (its schema version is higher)
    │   ├── SealSourceError              ERR_SEAL_SOURCE            engine.seal
    │   ├── CallNotFoundError            ERR_CALL_NOT_FOUND         core.run
    │   ├── InvalidAnnotationError       ERR_INVALID_ANNOTATION     core.run
    │   ├── ContextDeclarationError      ERR_CONTEXT_DECLARATION    context.declarations
    │   ├── FactRoleError                ERR_FACT_ROLE              context.declarations
    │   ├── ContextConfigError           ERR_CONTEXT_CONFIG         context.assembly
    │   ├── DuplicateContextIdError      ERR_DUPLICATE_CONTEXT_ID   context.assembly
    │   ├── UnknownFactReferenceError    ERR_UNKNOWN_FACT_REF       context.assembly
    │   ├── ExplainConfigError           ERR_EXPLAIN_CONFIG         explain.checks
    │   ├── UnknownStepError             ERR_UNKNOWN_STEP           explain.custody
    │   ├── InfluenceStrategyError       ERR_INFLUENCE_STRATEGY     explain.influence
    │   ├── ToolCatalogError             ERR_TOOL_CATALOG           explain.tool_lint
    │   ├── UnknownSourceError           ERR_UNKNOWN_SOURCE         explain.rerun
    │   ├── NothingToLocalizeError       ERR_NOTHING_TO_LOCALIZE    explain.ablation
    │   ├── ComparatorError              ERR_COMPARATOR             explain.compare
    │   ├── UnknownRunError              ERR_UNKNOWN_RUN            lab.refusals
    │   ├── MagicInputError              ERR_MAGIC_INPUT            lab.refusals
    │   ├── LabConfigError               ERR_LAB_CONFIG             lab.door
    │   ├── MockScriptError              ERR_MOCK_SCRIPT            providers.mock
    │   ├── ReplaySourceError            ERR_REPLAY_SOURCE          providers.replay
    │   ├── OtelSpansError               ERR_OTEL_SPANS             otel.refusals
    │   ├── OtelSpanFieldError           ERR_OTEL_SPAN_FIELD        otel.refusals
    │   ├── OtelSpanLoopError            ERR_OTEL_SPAN_LOOP         otel.refusals
    │   ├── OtelCaptureError             ERR_OTEL_CAPTURE           otel.refusals
    │   ├── OtelExportError              ERR_OTEL_EXPORT            otel.refusals
    │   ├── NotebookFileError            ERR_NOTEBOOK_FILE          notebook
    │   ├── SharingConfigError           ERR_SHARING_CONFIG         notebook
    │   ├── BatchConfigError             ERR_BATCH_CONFIG           batch
    │   ├── RunSetFolderError            ERR_RUN_SET_FOLDER         batch
    │   ├── MissingApiKeyError           ERR_PROVIDER_MISSING_KEY   providers.errors (also a ProviderError)
    │   └── ProviderConfigError          ERR_PROVIDER_CONFIG        providers.errors (also a ProviderError)
    └── RunFailure                       ERR_RUN_FAILED             engine.refusal
        ├── RunCheckpointError           ERR_RUN_CHECKPOINT         core.checkpoint
        │       a run failed after at least one completed tool round; .checkpoint keeps what was done
        ├── FlowCheckpointError          ERR_FLOW_CHECKPOINT        flow.checkpoint
        │       a composition failed after members answered; .checkpoint keeps the answers and what
        │       the failed member kept, for composition.resume_on_error(err.checkpoint)
        ├── ProviderAuthError            ERR_PROVIDER_AUTH          providers.errors (also a ProviderError)
        ├── ModelNotFoundError           ERR_PROVIDER_MODEL_NOT_FOUND
        ├── ContextWindowError           ERR_PROVIDER_CONTEXT_WINDOW
        ├── ProviderRequestError         ERR_PROVIDER_REQUEST
        ├── ProviderRateLimitError       ERR_PROVIDER_RATE_LIMITED
        ├── ProviderUnavailableError     ERR_PROVIDER_UNAVAILABLE
        ├── ProviderTimeoutError         ERR_PROVIDER_TIMEOUT
        ├── ProviderConnectionError      ERR_PROVIDER_UNREACHABLE
        ├── ProviderResponseError        ERR_PROVIDER_RESPONSE
        ├── OtlpExportFailed             ERR_OTLP_EXPORT_FAILED     otel.refusals
        └── ReplayMismatchError          ERR_PROVIDER_REPLAY_MISMATCH  providers.replay

``ProviderError`` (``ERR_PROVIDER``, providers.errors) is the family of the provider classes
above, on both sides: ``except ProviderError`` catches them all, and each says in
``retryable`` whether calling again (or resuming the run from its checkpoint) can help.
"""

from __future__ import annotations

from footprint_lab.batch import BatchConfigError, RunSetFolderError
from footprint_lab.context.assembly import ContextConfigError, DuplicateContextIdError, UnknownFactReferenceError
from footprint_lab.context.declarations import ContextDeclarationError, FactRoleError
from footprint_lab.core.agent import AgentConfigError, DuplicateToolError
from footprint_lab.core.checkpoint import ConversationMismatchError, InvalidCheckpointError, RunCheckpointError
from footprint_lab.core.concealed import MaskedCheckpointError, UnmaskArgumentError
from footprint_lab.core.conversation import (
    NoConversationError,
    PendingQuestionError,
    ResumeIdentityConflictError,
    ResumeRedactionError,
    RunInFlightError,
)
from footprint_lab.core.door import InvalidRunInputError
from footprint_lab.core.identity import InvalidIdentityError
from footprint_lab.core.llm_call import LLMCallContextError
from footprint_lab.core.member_run import MemberIdentityError, ParentRunRefusedError, ResumeRequestConflictError
from footprint_lab.core.pause import InvalidQuestionError
from footprint_lab.core.run import CallNotFoundError, InvalidAnnotationError
from footprint_lab.core.runner import ListenerError
from footprint_lab.core.tools import ToolDefinitionError
from footprint_lab.engine.recording_door import InvalidRecordingError, RecordingVersionError
from footprint_lab.engine.redaction import RedactionConfigError
from footprint_lab.engine.refusal import CodedError, Refusal, RunFailure
from footprint_lab.engine.seal import SealSourceError
from footprint_lab.explain.ablation import NothingToLocalizeError
from footprint_lab.explain.checks import ExplainConfigError
from footprint_lab.explain.compare import ComparatorError
from footprint_lab.explain.custody import UnknownStepError
from footprint_lab.explain.influence import InfluenceStrategyError
from footprint_lab.explain.rerun import UnknownSourceError
from footprint_lab.explain.tool_lint import ToolCatalogError
from footprint_lab.flow.checkpoint import FlowCheckpointError
from footprint_lab.flow.refusals import (
    CompositionConfigError,
    DuplicateStepError,
    EmptyCompositionError,
    GraphCycleError,
    LoopBudgetError,
    ResumeDivergedError,
)
from footprint_lab.lab.door import LabConfigError
from footprint_lab.lab.refusals import MagicInputError, UnknownRunError
from footprint_lab.notebook import NotebookFileError, SharingConfigError
from footprint_lab.otel.refusals import (
    OtelCaptureError,
    OtelExportError,
    OtelSpanFieldError,
    OtelSpanLoopError,
    OtelSpansError,
    OtlpExportFailed,
)
from footprint_lab.providers.errors import (
    ContextWindowError,
    MissingApiKeyError,
    ModelNotFoundError,
    ProviderAuthError,
    ProviderConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderRateLimitError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderTimeoutError,
    ProviderUnavailableError,
)
from footprint_lab.providers.mock import MockScriptError
from footprint_lab.providers.replay import ReplayMismatchError, ReplaySourceError

__all__ = [
    "AgentConfigError",
    "BatchConfigError",
    "CallNotFoundError",
    "CodedError",
    "ComparatorError",
    "CompositionConfigError",
    "ContextConfigError",
    "ContextDeclarationError",
    "ContextWindowError",
    "ConversationMismatchError",
    "DuplicateContextIdError",
    "DuplicateStepError",
    "DuplicateToolError",
    "EmptyCompositionError",
    "ExplainConfigError",
    "FactRoleError",
    "FlowCheckpointError",
    "GraphCycleError",
    "InfluenceStrategyError",
    "InvalidAnnotationError",
    "InvalidCheckpointError",
    "InvalidIdentityError",
    "InvalidQuestionError",
    "InvalidRecordingError",
    "InvalidRunInputError",
    "LLMCallContextError",
    "LabConfigError",
    "ListenerError",
    "LoopBudgetError",
    "MagicInputError",
    "MaskedCheckpointError",
    "MemberIdentityError",
    "MissingApiKeyError",
    "MockScriptError",
    "ModelNotFoundError",
    "NoConversationError",
    "NotebookFileError",
    "NothingToLocalizeError",
    "OtelCaptureError",
    "OtelExportError",
    "OtelSpanFieldError",
    "OtelSpanLoopError",
    "OtelSpansError",
    "OtlpExportFailed",
    "ParentRunRefusedError",
    "PendingQuestionError",
    "ProviderAuthError",
    "ProviderConfigError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderRateLimitError",
    "ProviderRequestError",
    "ProviderResponseError",
    "ProviderTimeoutError",
    "ProviderUnavailableError",
    "RecordingVersionError",
    "RedactionConfigError",
    "Refusal",
    "ReplayMismatchError",
    "ReplaySourceError",
    "ResumeDivergedError",
    "ResumeIdentityConflictError",
    "ResumeRedactionError",
    "ResumeRequestConflictError",
    "RunCheckpointError",
    "RunFailure",
    "RunInFlightError",
    "RunSetFolderError",
    "SealSourceError",
    "SharingConfigError",
    "ToolCatalogError",
    "ToolDefinitionError",
    "UnknownFactReferenceError",
    "UnknownRunError",
    "UnknownSourceError",
    "UnknownStepError",
    "UnmaskArgumentError",
]
