"""Every error footprint_lab can raise on purpose, in one place.

Two roots, one shape (``CodedError``: a stable ``code``, typed ``fields``, a message that
says what arrived by shape only and how to fix it):

- a ``Refusal`` is raised at a door *before anything runs*: nothing was sent, billed or recorded;
- a ``RunFailure`` happens *while running*: steps ran and calls may have been charged, and the
  error says what was done, where it is kept, and (``retryable`` / ``resumable``) whether
  trying again can help.

The tree::

    CodedError                           ERR_FOOTPRINT_LAB          engine._refusal
    ├── Refusal                          ERR_REFUSED                engine._refusal
    │   ├── InvalidRunInputError         ERR_INVALID_RUN_INPUT      core._door
    │   ├── ListenerError                ERR_LISTENER               core._runner
    │   ├── RunInFlightError             ERR_RUN_IN_FLIGHT          core._conversation
    │   ├── PendingQuestionError         ERR_PENDING_QUESTION       core._conversation
    │   ├── NoConversationError          ERR_NO_CONVERSATION        core._conversation
    │   ├── ResumeIdentityConflictError  ERR_SESSION_OWNERSHIP_CONFLICT  core._conversation
    │   ├── ResumeRedactionError         ERR_RESUME_REDACTION       core._conversation
    │   ├── ChatConfigError              ERR_CHAT_CONFIG            core._chat
    │   ├── UnknownTurnError             ERR_UNKNOWN_TURN           core._chat
    │   ├── InvalidCheckpointError       ERR_INVALID_CHECKPOINT     core._checkpoint
    │   ├── ConversationMismatchError    ERR_CONVERSATION_MISMATCH  core._checkpoint
    │   ├── MaskedCheckpointError        ERR_MASKED_CHECKPOINT      core._concealed
    │   ├── UnmaskArgumentError          ERR_UNMASK_ARGUMENT        core._concealed
    │   ├── InvalidQuestionError         ERR_INVALID_QUESTION       core._pause
    │   ├── UnknownKeywordError          ERR_UNKNOWN_KEYWORD        engine._refusal
    │   ├── AgentConfigError             ERR_AGENT_CONFIG           core._agent_door
    │   ├── DuplicateToolError           ERR_DUPLICATE_TOOL         core._agent_door
    │   ├── LLMCallContextError          ERR_LLM_CALL_CONTEXT       core._llm_call
    │   ├── InvalidIdentityError         ERR_INVALID_IDENTITY       core._identity
    │   ├── ToolDefinitionError          ERR_TOOL_DEFINITION        core._tools
    │   ├── ParentRunRefusedError        ERR_PARENT_RUN_REFUSED     core._member_run
    │   ├── MemberIdentityError          ERR_MEMBER_NO_IDENTITY     core._member_run
    │   ├── ResumeRequestConflictError   ERR_RESUME_REQUEST_CONFLICT core._member_run
    │   ├── CompositionConfigError       ERR_COMPOSITION_CONFIG     flow._refusals
    │   ├── EmptyCompositionError        ERR_EMPTY_COMPOSITION      flow._refusals
    │   ├── DuplicateStepError           ERR_DUPLICATE_STEP         flow._refusals
    │   ├── LoopBudgetError              ERR_LOOP_BUDGET            flow._refusals
    │   ├── GraphCycleError              ERR_GRAPH_CYCLE            flow._refusals
    │   ├── ResumeDivergedError          ERR_RESUME_DIVERGED        flow._refusals
    │   ├── RedactionConfigError         ERR_REDACTION_CONFIG       engine._redaction
    │   ├── InvalidRecordingError        ERR_INVALID_RECORDING      engine._recording_door
    │   │   └── RecordingVersionError    ERR_RECORDING_VERSION      engine._recording_door
    │   │           a recording written by a newer footprint_lab (its schema version is higher)
    │   ├── SealSourceError              ERR_SEAL_SOURCE            engine._seal
    │   ├── CallNotFoundError            ERR_CALL_NOT_FOUND         core._run
    │   ├── InvalidAnnotationError       ERR_INVALID_ANNOTATION     core._run
    │   ├── ContextDeclarationError      ERR_CONTEXT_DECLARATION    context._refusals
    │   ├── FactRoleError                ERR_FACT_ROLE              context._declarations
    │   ├── ContextConfigError           ERR_CONTEXT_CONFIG         context._assembly
    │   ├── DuplicateContextIdError      ERR_DUPLICATE_CONTEXT_ID   context._assembly
    │   ├── UnknownFactReferenceError    ERR_UNKNOWN_FACT_REF       context._assembly
    │   ├── ExplainConfigError           ERR_EXPLAIN_CONFIG         context._source_ids
    │   ├── UnknownStepError             ERR_UNKNOWN_STEP           explain._custody
    │   ├── InfluenceStrategyError       ERR_INFLUENCE_STRATEGY     explain._influence
    │   ├── ToolCatalogError             ERR_TOOL_CATALOG           explain._tool_lint
    │   ├── UnknownSourceError           ERR_UNKNOWN_SOURCE         context._source_ids
    │   ├── NothingToLocalizeError       ERR_NOTHING_TO_LOCALIZE    explain._ablation
    │   ├── ReplayPieceError             ERR_REPLAY_PIECE           explain._replay
    │   ├── SameAnswerError              ERR_SAME_ANSWER            explain._difference
    │   ├── ComparatorError              ERR_COMPARATOR             explain.compare
    │   ├── UnknownRunError              ERR_UNKNOWN_RUN            lab.refusals
    │   ├── MagicInputError              ERR_MAGIC_INPUT            lab.refusals
    │   ├── LabConfigError               ERR_LAB_CONFIG             lab.door
    │   ├── MockScriptError              ERR_MOCK_SCRIPT            providers._mock
    │   ├── ReplaySourceError            ERR_REPLAY_SOURCE          providers._replay
    │   ├── OtelSpansError               ERR_OTEL_SPANS             otel._refusals
    │   ├── OtelSpanFieldError           ERR_OTEL_SPAN_FIELD        otel._refusals
    │   ├── OtelSpanLoopError            ERR_OTEL_SPAN_LOOP         otel._refusals
    │   ├── OtelCaptureError             ERR_OTEL_CAPTURE           otel._refusals
    │   ├── OtelExportError              ERR_OTEL_EXPORT            otel._refusals
    │   │   └── OtelReceiverError        ERR_OTEL_RECEIVER          otel._refusals
    │   ├── OtlpRequestRefused           ERR_OTLP_REQUEST           otel._refusals (the receiver's HTTP reply)
    │   ├── NotebookFileError            ERR_NOTEBOOK_FILE          notebook._read
    │   ├── SharingConfigError           ERR_SHARING_CONFIG         notebook._scrub
    │   ├── BugReportError               ERR_BUG_REPORT             notebook._bug_report
    │   ├── CommandLineError             ERR_COMMAND_LINE           notebook.cli
    │   ├── BatchConfigError             ERR_BATCH_CONFIG           batch._refusals
    │   ├── RunSetFolderError            ERR_RUN_SET_FOLDER         batch._refusals
    │   ├── MissingApiKeyError           ERR_PROVIDER_MISSING_KEY   providers._errors (also a ProviderError)
    │   └── ProviderConfigError          ERR_PROVIDER_CONFIG        providers._errors (also a ProviderError)
    └── RunFailure                       ERR_RUN_FAILED             engine._refusal
        ├── RunCheckpointError           ERR_RUN_CHECKPOINT         core._checkpoint
        │       a run failed after at least one completed tool round; .checkpoint keeps what was done
        ├── FlowCheckpointError          ERR_FLOW_CHECKPOINT        flow._checkpoint
        │       a composition failed after members answered; .checkpoint keeps the answers and what
        │       the failed member kept, for composition.resume_on_error(err.checkpoint)
        ├── ProviderAuthError            ERR_PROVIDER_AUTH          providers._errors (also a ProviderError)
        ├── ModelNotFoundError           ERR_PROVIDER_MODEL_NOT_FOUND
        ├── ContextWindowError           ERR_PROVIDER_CONTEXT_WINDOW
        ├── ProviderRequestError         ERR_PROVIDER_REQUEST
        ├── ProviderRateLimitError       ERR_PROVIDER_RATE_LIMITED
        ├── ProviderUnavailableError     ERR_PROVIDER_UNAVAILABLE
        ├── ProviderTimeoutError         ERR_PROVIDER_TIMEOUT
        ├── ProviderConnectionError      ERR_PROVIDER_UNREACHABLE
        ├── ProviderResponseError        ERR_PROVIDER_RESPONSE
        ├── OtlpExportFailed             ERR_OTLP_EXPORT_FAILED     otel._refusals
        └── ReplayMismatchError          ERR_PROVIDER_REPLAY_MISMATCH  providers._replay

``ProviderError`` (``ERR_PROVIDER``, providers._errors) is the family of the provider classes
above, on both sides: ``except ProviderError`` catches them all, and each says in
``retryable`` whether calling again (or resuming the run from its checkpoint) can help.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.engine._exports import public

# The one list of every refusal and failure: typed for the type checker, each imported when first used
# (``from footprint_lab import InvalidRunInputError`` loads the door that raises it, not every layer).
if TYPE_CHECKING:
    from footprint_lab.batch._refusals import BatchConfigError, RunSetFolderError
    from footprint_lab.context._assembly import ContextConfigError, DuplicateContextIdError, UnknownFactReferenceError
    from footprint_lab.context._declarations import FactRoleError
    from footprint_lab.context._refusals import ContextDeclarationError
    from footprint_lab.context._source_ids import ExplainConfigError, UnknownSourceError
    from footprint_lab.core._agent_door import AgentConfigError, DuplicateToolError
    from footprint_lab.core._chat import ChatConfigError, UnknownTurnError
    from footprint_lab.core._checkpoint import ConversationMismatchError, InvalidCheckpointError, RunCheckpointError
    from footprint_lab.core._concealed import MaskedCheckpointError, UnmaskArgumentError
    from footprint_lab.core._conversation import (
        NoConversationError,
        PendingQuestionError,
        ResumeIdentityConflictError,
        ResumeRedactionError,
        RunInFlightError,
    )
    from footprint_lab.core._door import InvalidRunInputError
    from footprint_lab.core._identity import InvalidIdentityError
    from footprint_lab.core._llm_call import LLMCallContextError
    from footprint_lab.core._member_run import MemberIdentityError, ParentRunRefusedError, ResumeRequestConflictError
    from footprint_lab.core._pause import InvalidQuestionError
    from footprint_lab.core._run import CallNotFoundError, InvalidAnnotationError
    from footprint_lab.core._runner import ListenerError
    from footprint_lab.core._tools import ToolDefinitionError
    from footprint_lab.engine._recording_door import InvalidRecordingError, RecordingVersionError
    from footprint_lab.engine._redaction import RedactionConfigError
    from footprint_lab.engine._refusal import CodedError, Refusal, RunFailure, UnknownKeywordError
    from footprint_lab.engine._seal import SealSourceError
    from footprint_lab.explain._ablation import NothingToLocalizeError
    from footprint_lab.explain._custody import UnknownStepError
    from footprint_lab.explain._difference import SameAnswerError
    from footprint_lab.explain._influence import InfluenceStrategyError
    from footprint_lab.explain._replay import ReplayPieceError
    from footprint_lab.explain._tool_lint import ToolCatalogError
    from footprint_lab.explain.compare import ComparatorError
    from footprint_lab.flow._checkpoint import FlowCheckpointError
    from footprint_lab.flow._refusals import (
        CompositionConfigError,
        DuplicateStepError,
        EmptyCompositionError,
        GraphCycleError,
        LoopBudgetError,
        ResumeDivergedError,
    )
    from footprint_lab.lab.door import LabConfigError
    from footprint_lab.lab.refusals import MagicInputError, UnknownRunError
    from footprint_lab.notebook._bug_report import BugReportError
    from footprint_lab.notebook._read import NotebookFileError
    from footprint_lab.notebook._scrub import SharingConfigError
    from footprint_lab.notebook.cli import CommandLineError
    from footprint_lab.otel._refusals import (
        OtelCaptureError,
        OtelExportError,
        OtelReceiverError,
        OtelSpanFieldError,
        OtelSpanLoopError,
        OtelSpansError,
        OtlpExportFailed,
        OtlpRequestRefused,
    )
    from footprint_lab.providers._errors import (
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
    from footprint_lab.providers._mock import MockScriptError
    from footprint_lab.providers._replay import ReplayMismatchError, ReplaySourceError

__all__, __getattr__, __dir__ = public(__name__)
