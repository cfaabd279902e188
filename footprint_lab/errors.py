"""Every error footprint_lab can raise on purpose, in one place.

Two roots, one shape (``CodedError``: a stable ``code``, typed ``fields``, a message that
says what arrived by shape only and how to fix it):

- a ``Refusal`` is raised at a door *before anything runs*: nothing was sent, billed or recorded;
- a ``RunFailure`` happens *while running*: steps ran and calls may have been charged, and the
  error says what was done, where it is kept, and (``retryable`` / ``resumable``) whether
  trying again can help.

A refusal of a value the caller passed is also a ``ValueError`` (a keyword a builder does not take, or a
listener that cannot be called, a ``TypeError``), so ``except ValueError`` catches it; a refusal about state
(a turn in flight, a pending question, a resume that went elsewhere) is neither, nor is any ``RunFailure``.
``tests/test_refusal_kinds.py`` holds the table, one row a class.

The tree::

    CodedError                           ERR_FOOTPRINT_LAB          base.refusal
    ├── Refusal                          ERR_REFUSED                base.refusal
    │   ├── InvalidRunInputError         ERR_INVALID_RUN_INPUT      core.door
    │   ├── ListenerError                ERR_LISTENER               core.runner
    │   ├── RunInFlightError             ERR_RUN_IN_FLIGHT          core.conversation
    │   ├── PendingQuestionError         ERR_PENDING_QUESTION       core.conversation
    │   ├── NoConversationError          ERR_NO_CONVERSATION        core.conversation
    │   ├── ResumeIdentityConflictError  ERR_SESSION_OWNERSHIP_CONFLICT  core.conversation
    │   ├── ResumeRedactionError         ERR_RESUME_REDACTION       core.conversation
    │   ├── ChatConfigError              ERR_CHAT_CONFIG            core.chat
    │   ├── UnknownTurnError             ERR_UNKNOWN_TURN           core.chat
    │   ├── InvalidCheckpointError       ERR_INVALID_CHECKPOINT     core.checkpoint
    │   ├── ConversationMismatchError    ERR_CONVERSATION_MISMATCH  core.checkpoint
    │   ├── MaskedCheckpointError        ERR_MASKED_CHECKPOINT      core.checkpoint_masks
    │   ├── UnmaskArgumentError          ERR_UNMASK_ARGUMENT        core.checkpoint_masks
    │   ├── InvalidQuestionError         ERR_INVALID_QUESTION       core.pause
    │   ├── UnknownKeywordError          ERR_UNKNOWN_KEYWORD        base.refusal
    │   ├── AgentConfigError             ERR_AGENT_CONFIG           core.agent_door
    │   ├── DuplicateToolError           ERR_DUPLICATE_TOOL         core.agent_door
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
    │   ├── RedactionConfigError         ERR_REDACTION_CONFIG       redact.policy
    │   ├── InvalidRecordingError        ERR_INVALID_RECORDING      record.recording_door
    │   │   └── RecordingVersionError    ERR_RECORDING_VERSION      record.recording_door
    │   │           a recording written by a newer footprint_lab (its schema version is higher), or by the
    │   │           unreleased 0.1 (schema version 1, or a seal of an earlier chain): record or seal it again
    │   ├── SealSourceError              ERR_SEAL_SOURCE            sealing.seal
    │   ├── CallNotFoundError            ERR_CALL_NOT_FOUND         core.run
    │   ├── InvalidAnnotationError       ERR_INVALID_ANNOTATION     core.run
    │   ├── ContextDeclarationError      ERR_CONTEXT_DECLARATION    context.refusals
    │   ├── FactRoleError                ERR_FACT_ROLE              context.declarations
    │   ├── ContextConfigError           ERR_CONTEXT_CONFIG         context.assembly
    │   ├── DuplicateContextIdError      ERR_DUPLICATE_CONTEXT_ID   context.assembly
    │   ├── UnknownFactReferenceError    ERR_UNKNOWN_FACT_REF       context.assembly
    │   ├── ExplainConfigError           ERR_EXPLAIN_CONFIG         context.source_ids
    │   ├── UnknownStepError             ERR_UNKNOWN_STEP           explain.provenance.custody
    │   ├── InfluenceStrategyError       ERR_INFLUENCE_STRATEGY     explain.provenance.influence
    │   ├── ToolCatalogError             ERR_TOOL_CATALOG           explain.checks.tool_lint
    │   ├── UnknownSourceError           ERR_UNKNOWN_SOURCE         context.source_ids
    │   ├── NothingToLocalizeError       ERR_NOTHING_TO_LOCALIZE    explain.trials.ablation
    │   ├── ReplayPieceError             ERR_REPLAY_PIECE           explain.trials.replay
    │   ├── SameAnswerError              ERR_SAME_ANSWER            explain.trials.difference
    │   ├── ComparatorError              ERR_COMPARATOR             explain.compare
    │   ├── UnknownRunError              ERR_UNKNOWN_RUN            lab.refusals
    │   ├── MagicInputError              ERR_MAGIC_INPUT            lab.refusals
    │   ├── LabConfigError               ERR_LAB_CONFIG             lab.door
    │   ├── MockScriptError              ERR_MOCK_SCRIPT            providers.mock_provider
    │   ├── ReplaySourceError            ERR_REPLAY_SOURCE          providers.replay
    │   ├── OtelSpansError               ERR_OTEL_SPANS             otel.refusals
    │   ├── OtelSpanFieldError           ERR_OTEL_SPAN_FIELD        otel.refusals
    │   ├── OtelSpanLoopError            ERR_OTEL_SPAN_LOOP         otel.refusals
    │   ├── OtelCaptureError             ERR_OTEL_CAPTURE           otel.refusals
    │   ├── OtelExportError              ERR_OTEL_EXPORT            otel.refusals
    │   │   └── OtelReceiverError        ERR_OTEL_RECEIVER          otel.refusals
    │   ├── OtlpRequestRefused           ERR_OTLP_REQUEST           otel.refusals (the receiver's HTTP reply)
    │   ├── NotebookFileError            ERR_NOTEBOOK_FILE          notebook.read
    │   ├── SharingConfigError           ERR_SHARING_CONFIG         notebook.read
    │   ├── BugReportError               ERR_BUG_REPORT             notebook.bug_bundle
    │   ├── CommandLineError             ERR_COMMAND_LINE           notebook.cli
    │   ├── BatchConfigError             ERR_BATCH_CONFIG           batch.refusals
    │   ├── RunSetFolderError            ERR_RUN_SET_FOLDER         batch.refusals
    │   ├── MissingApiKeyError           ERR_PROVIDER_MISSING_KEY   providers.errors (also a ProviderError)
    │   └── ProviderConfigError          ERR_PROVIDER_CONFIG        providers.errors (also a ProviderError)
    └── RunFailure                       ERR_RUN_FAILED             base.refusal
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

from typing import TYPE_CHECKING

from footprint_lab.base.exports import public

# The one list of every refusal and failure: typed for the type checker, each imported when first used
# (``from footprint_lab.errors import InvalidRunInputError`` loads the door that raises it, not every layer).
if TYPE_CHECKING:
    from footprint_lab.base.refusal import CodedError as CodedError
    from footprint_lab.base.refusal import Refusal as Refusal
    from footprint_lab.base.refusal import RunFailure as RunFailure
    from footprint_lab.base.refusal import UnknownKeywordError as UnknownKeywordError
    from footprint_lab.batch.refusals import BatchConfigError as BatchConfigError
    from footprint_lab.batch.refusals import RunSetFolderError as RunSetFolderError
    from footprint_lab.context.assembly import ContextConfigError as ContextConfigError
    from footprint_lab.context.assembly import DuplicateContextIdError as DuplicateContextIdError
    from footprint_lab.context.assembly import UnknownFactReferenceError as UnknownFactReferenceError
    from footprint_lab.context.declarations import FactRoleError as FactRoleError
    from footprint_lab.context.refusals import ContextDeclarationError as ContextDeclarationError
    from footprint_lab.context.source_ids import ExplainConfigError as ExplainConfigError
    from footprint_lab.context.source_ids import UnknownSourceError as UnknownSourceError
    from footprint_lab.core.agent_door import AgentConfigError as AgentConfigError
    from footprint_lab.core.agent_door import DuplicateToolError as DuplicateToolError
    from footprint_lab.core.chat import ChatConfigError as ChatConfigError
    from footprint_lab.core.chat import UnknownTurnError as UnknownTurnError
    from footprint_lab.core.checkpoint import ConversationMismatchError as ConversationMismatchError
    from footprint_lab.core.checkpoint import InvalidCheckpointError as InvalidCheckpointError
    from footprint_lab.core.checkpoint import RunCheckpointError as RunCheckpointError
    from footprint_lab.core.checkpoint_masks import MaskedCheckpointError as MaskedCheckpointError
    from footprint_lab.core.checkpoint_masks import UnmaskArgumentError as UnmaskArgumentError
    from footprint_lab.core.conversation_refusals import NoConversationError as NoConversationError
    from footprint_lab.core.conversation_refusals import PendingQuestionError as PendingQuestionError
    from footprint_lab.core.conversation_refusals import ResumeIdentityConflictError as ResumeIdentityConflictError
    from footprint_lab.core.conversation_refusals import ResumeRedactionError as ResumeRedactionError
    from footprint_lab.core.conversation_refusals import RunInFlightError as RunInFlightError
    from footprint_lab.core.door import InvalidRunInputError as InvalidRunInputError
    from footprint_lab.core.identity import InvalidIdentityError as InvalidIdentityError
    from footprint_lab.core.llm_call import LLMCallContextError as LLMCallContextError
    from footprint_lab.core.member_run import MemberIdentityError as MemberIdentityError
    from footprint_lab.core.member_run import ParentRunRefusedError as ParentRunRefusedError
    from footprint_lab.core.member_run import ResumeRequestConflictError as ResumeRequestConflictError
    from footprint_lab.core.pause import InvalidQuestionError as InvalidQuestionError
    from footprint_lab.core.run import CallNotFoundError as CallNotFoundError
    from footprint_lab.core.run import InvalidAnnotationError as InvalidAnnotationError
    from footprint_lab.core.runner import ListenerError as ListenerError
    from footprint_lab.core.tools import ToolDefinitionError as ToolDefinitionError
    from footprint_lab.explain.checks.tool_lint import ToolCatalogError as ToolCatalogError
    from footprint_lab.explain.compare import ComparatorError as ComparatorError
    from footprint_lab.explain.provenance.custody import UnknownStepError as UnknownStepError
    from footprint_lab.explain.provenance.influence import InfluenceStrategyError as InfluenceStrategyError
    from footprint_lab.explain.trials.ablation import NothingToLocalizeError as NothingToLocalizeError
    from footprint_lab.explain.trials.difference import SameAnswerError as SameAnswerError
    from footprint_lab.explain.trials.replay import ReplayPieceError as ReplayPieceError
    from footprint_lab.flow.checkpoint import FlowCheckpointError as FlowCheckpointError
    from footprint_lab.flow.refusals import CompositionConfigError as CompositionConfigError
    from footprint_lab.flow.refusals import DuplicateStepError as DuplicateStepError
    from footprint_lab.flow.refusals import EmptyCompositionError as EmptyCompositionError
    from footprint_lab.flow.refusals import GraphCycleError as GraphCycleError
    from footprint_lab.flow.refusals import LoopBudgetError as LoopBudgetError
    from footprint_lab.flow.refusals import ResumeDivergedError as ResumeDivergedError
    from footprint_lab.lab.door import LabConfigError as LabConfigError
    from footprint_lab.lab.refusals import MagicInputError as MagicInputError
    from footprint_lab.lab.refusals import UnknownRunError as UnknownRunError
    from footprint_lab.notebook.bug_bundle import BugReportError as BugReportError
    from footprint_lab.notebook.cli import CommandLineError as CommandLineError
    from footprint_lab.notebook.read import NotebookFileError as NotebookFileError
    from footprint_lab.notebook.read import SharingConfigError as SharingConfigError
    from footprint_lab.otel.refusals import OtelCaptureError as OtelCaptureError
    from footprint_lab.otel.refusals import OtelExportError as OtelExportError
    from footprint_lab.otel.refusals import OtelReceiverError as OtelReceiverError
    from footprint_lab.otel.refusals import OtelSpanFieldError as OtelSpanFieldError
    from footprint_lab.otel.refusals import OtelSpanLoopError as OtelSpanLoopError
    from footprint_lab.otel.refusals import OtelSpansError as OtelSpansError
    from footprint_lab.otel.refusals import OtlpExportFailed as OtlpExportFailed
    from footprint_lab.otel.refusals import OtlpRequestRefused as OtlpRequestRefused
    from footprint_lab.providers.errors import ContextWindowError as ContextWindowError
    from footprint_lab.providers.errors import MissingApiKeyError as MissingApiKeyError
    from footprint_lab.providers.errors import ModelNotFoundError as ModelNotFoundError
    from footprint_lab.providers.errors import ProviderAuthError as ProviderAuthError
    from footprint_lab.providers.errors import ProviderConfigError as ProviderConfigError
    from footprint_lab.providers.errors import ProviderConnectionError as ProviderConnectionError
    from footprint_lab.providers.errors import ProviderError as ProviderError
    from footprint_lab.providers.errors import ProviderRateLimitError as ProviderRateLimitError
    from footprint_lab.providers.errors import ProviderRequestError as ProviderRequestError
    from footprint_lab.providers.errors import ProviderResponseError as ProviderResponseError
    from footprint_lab.providers.errors import ProviderTimeoutError as ProviderTimeoutError
    from footprint_lab.providers.errors import ProviderUnavailableError as ProviderUnavailableError
    from footprint_lab.providers.mock_provider import MockScriptError as MockScriptError
    from footprint_lab.providers.replay import ReplayMismatchError as ReplayMismatchError
    from footprint_lab.providers.replay import ReplaySourceError as ReplaySourceError
    from footprint_lab.record.recording_door import InvalidRecordingError as InvalidRecordingError
    from footprint_lab.record.recording_door import RecordingVersionError as RecordingVersionError
    from footprint_lab.redact.policy import RedactionConfigError as RedactionConfigError
    from footprint_lab.sealing.seal import SealSourceError as SealSourceError

__all__ = [
    "AgentConfigError", "BatchConfigError", "BugReportError", "CallNotFoundError", "ChatConfigError", "CodedError",
    "CommandLineError", "ComparatorError", "CompositionConfigError", "ContextConfigError", "ContextDeclarationError",
    "ContextWindowError", "ConversationMismatchError", "DuplicateContextIdError", "DuplicateStepError",
    "DuplicateToolError", "EmptyCompositionError", "ExplainConfigError", "FactRoleError", "FlowCheckpointError",
    "GraphCycleError", "InfluenceStrategyError", "InvalidAnnotationError", "InvalidCheckpointError",
    "InvalidIdentityError", "InvalidQuestionError", "InvalidRecordingError", "InvalidRunInputError",
    "LLMCallContextError", "LabConfigError", "ListenerError", "LoopBudgetError", "MagicInputError",
    "MaskedCheckpointError", "MemberIdentityError", "MissingApiKeyError", "MockScriptError", "ModelNotFoundError",
    "NoConversationError", "NotebookFileError", "NothingToLocalizeError", "OtelCaptureError", "OtelExportError",
    "OtelReceiverError", "OtelSpanFieldError", "OtelSpanLoopError", "OtelSpansError", "OtlpExportFailed",
    "OtlpRequestRefused", "ParentRunRefusedError", "PendingQuestionError", "ProviderAuthError", "ProviderConfigError",
    "ProviderConnectionError", "ProviderError", "ProviderRateLimitError", "ProviderRequestError",
    "ProviderResponseError", "ProviderTimeoutError", "ProviderUnavailableError", "RecordingVersionError",
    "RedactionConfigError", "Refusal", "ReplayMismatchError", "ReplayPieceError", "ReplaySourceError",
    "ResumeDivergedError", "ResumeIdentityConflictError", "ResumeRedactionError", "ResumeRequestConflictError",
    "RunCheckpointError", "RunFailure", "RunInFlightError", "RunSetFolderError", "SameAnswerError", "SealSourceError",
    "SharingConfigError", "ToolCatalogError", "ToolDefinitionError", "UnknownFactReferenceError",
    "UnknownKeywordError", "UnknownRunError", "UnknownSourceError", "UnknownStepError", "UnknownTurnError",
    "UnmaskArgumentError",
]
__getattr__, __dir__ = public(__name__)
