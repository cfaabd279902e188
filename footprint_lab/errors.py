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
    │   ├── MaskedCheckpointError        ERR_MASKED_CHECKPOINT      core._checkpoint_masks
    │   ├── UnmaskArgumentError          ERR_UNMASK_ARGUMENT        core._checkpoint_masks
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
    │   │           a recording written by a newer footprint_lab (its schema version is higher), or by the
    │   │           unreleased 0.1 (schema version 1, or a seal of an earlier chain): record or seal it again
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
    │   ├── SharingConfigError           ERR_SHARING_CONFIG         notebook._read
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
# (``from footprint_lab.errors import InvalidRunInputError`` loads the door that raises it, not every layer).
if TYPE_CHECKING:
    from footprint_lab.batch._refusals import BatchConfigError as BatchConfigError
    from footprint_lab.batch._refusals import RunSetFolderError as RunSetFolderError
    from footprint_lab.context._assembly import ContextConfigError as ContextConfigError
    from footprint_lab.context._assembly import DuplicateContextIdError as DuplicateContextIdError
    from footprint_lab.context._assembly import UnknownFactReferenceError as UnknownFactReferenceError
    from footprint_lab.context._declarations import FactRoleError as FactRoleError
    from footprint_lab.context._refusals import ContextDeclarationError as ContextDeclarationError
    from footprint_lab.context._source_ids import ExplainConfigError as ExplainConfigError
    from footprint_lab.context._source_ids import UnknownSourceError as UnknownSourceError
    from footprint_lab.core._agent_door import AgentConfigError as AgentConfigError
    from footprint_lab.core._agent_door import DuplicateToolError as DuplicateToolError
    from footprint_lab.core._chat import ChatConfigError as ChatConfigError
    from footprint_lab.core._chat import UnknownTurnError as UnknownTurnError
    from footprint_lab.core._checkpoint import ConversationMismatchError as ConversationMismatchError
    from footprint_lab.core._checkpoint import InvalidCheckpointError as InvalidCheckpointError
    from footprint_lab.core._checkpoint import RunCheckpointError as RunCheckpointError
    from footprint_lab.core._checkpoint_masks import MaskedCheckpointError as MaskedCheckpointError
    from footprint_lab.core._checkpoint_masks import UnmaskArgumentError as UnmaskArgumentError
    from footprint_lab.core._conversation import NoConversationError as NoConversationError
    from footprint_lab.core._conversation import PendingQuestionError as PendingQuestionError
    from footprint_lab.core._conversation import ResumeIdentityConflictError as ResumeIdentityConflictError
    from footprint_lab.core._conversation import ResumeRedactionError as ResumeRedactionError
    from footprint_lab.core._conversation import RunInFlightError as RunInFlightError
    from footprint_lab.core._door import InvalidRunInputError as InvalidRunInputError
    from footprint_lab.core._identity import InvalidIdentityError as InvalidIdentityError
    from footprint_lab.core._llm_call import LLMCallContextError as LLMCallContextError
    from footprint_lab.core._member_run import MemberIdentityError as MemberIdentityError
    from footprint_lab.core._member_run import ParentRunRefusedError as ParentRunRefusedError
    from footprint_lab.core._member_run import ResumeRequestConflictError as ResumeRequestConflictError
    from footprint_lab.core._pause import InvalidQuestionError as InvalidQuestionError
    from footprint_lab.core._run import CallNotFoundError as CallNotFoundError
    from footprint_lab.core._run import InvalidAnnotationError as InvalidAnnotationError
    from footprint_lab.core._runner import ListenerError as ListenerError
    from footprint_lab.core._tools import ToolDefinitionError as ToolDefinitionError
    from footprint_lab.engine._recording_door import InvalidRecordingError as InvalidRecordingError
    from footprint_lab.engine._recording_door import RecordingVersionError as RecordingVersionError
    from footprint_lab.engine._redaction import RedactionConfigError as RedactionConfigError
    from footprint_lab.engine._refusal import CodedError as CodedError
    from footprint_lab.engine._refusal import Refusal as Refusal
    from footprint_lab.engine._refusal import RunFailure as RunFailure
    from footprint_lab.engine._refusal import UnknownKeywordError as UnknownKeywordError
    from footprint_lab.engine._seal import SealSourceError as SealSourceError
    from footprint_lab.explain._ablation import NothingToLocalizeError as NothingToLocalizeError
    from footprint_lab.explain._custody import UnknownStepError as UnknownStepError
    from footprint_lab.explain._difference import SameAnswerError as SameAnswerError
    from footprint_lab.explain._influence import InfluenceStrategyError as InfluenceStrategyError
    from footprint_lab.explain._replay import ReplayPieceError as ReplayPieceError
    from footprint_lab.explain._tool_lint import ToolCatalogError as ToolCatalogError
    from footprint_lab.explain.compare import ComparatorError as ComparatorError
    from footprint_lab.flow._checkpoint import FlowCheckpointError as FlowCheckpointError
    from footprint_lab.flow._refusals import CompositionConfigError as CompositionConfigError
    from footprint_lab.flow._refusals import DuplicateStepError as DuplicateStepError
    from footprint_lab.flow._refusals import EmptyCompositionError as EmptyCompositionError
    from footprint_lab.flow._refusals import GraphCycleError as GraphCycleError
    from footprint_lab.flow._refusals import LoopBudgetError as LoopBudgetError
    from footprint_lab.flow._refusals import ResumeDivergedError as ResumeDivergedError
    from footprint_lab.lab.door import LabConfigError as LabConfigError
    from footprint_lab.lab.refusals import MagicInputError as MagicInputError
    from footprint_lab.lab.refusals import UnknownRunError as UnknownRunError
    from footprint_lab.notebook._bug_report import BugReportError as BugReportError
    from footprint_lab.notebook._read import NotebookFileError as NotebookFileError
    from footprint_lab.notebook._read import SharingConfigError as SharingConfigError
    from footprint_lab.notebook.cli import CommandLineError as CommandLineError
    from footprint_lab.otel._refusals import OtelCaptureError as OtelCaptureError
    from footprint_lab.otel._refusals import OtelExportError as OtelExportError
    from footprint_lab.otel._refusals import OtelReceiverError as OtelReceiverError
    from footprint_lab.otel._refusals import OtelSpanFieldError as OtelSpanFieldError
    from footprint_lab.otel._refusals import OtelSpanLoopError as OtelSpanLoopError
    from footprint_lab.otel._refusals import OtelSpansError as OtelSpansError
    from footprint_lab.otel._refusals import OtlpExportFailed as OtlpExportFailed
    from footprint_lab.otel._refusals import OtlpRequestRefused as OtlpRequestRefused
    from footprint_lab.providers._errors import ContextWindowError as ContextWindowError
    from footprint_lab.providers._errors import MissingApiKeyError as MissingApiKeyError
    from footprint_lab.providers._errors import ModelNotFoundError as ModelNotFoundError
    from footprint_lab.providers._errors import ProviderAuthError as ProviderAuthError
    from footprint_lab.providers._errors import ProviderConfigError as ProviderConfigError
    from footprint_lab.providers._errors import ProviderConnectionError as ProviderConnectionError
    from footprint_lab.providers._errors import ProviderError as ProviderError
    from footprint_lab.providers._errors import ProviderRateLimitError as ProviderRateLimitError
    from footprint_lab.providers._errors import ProviderRequestError as ProviderRequestError
    from footprint_lab.providers._errors import ProviderResponseError as ProviderResponseError
    from footprint_lab.providers._errors import ProviderTimeoutError as ProviderTimeoutError
    from footprint_lab.providers._errors import ProviderUnavailableError as ProviderUnavailableError
    from footprint_lab.providers._mock import MockScriptError as MockScriptError
    from footprint_lab.providers._replay import ReplayMismatchError as ReplayMismatchError
    from footprint_lab.providers._replay import ReplaySourceError as ReplaySourceError

__all__, __getattr__, __dir__ = public(__name__)
