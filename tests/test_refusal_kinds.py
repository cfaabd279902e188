"""Every error ``footprint_lab.errors`` exports is a refusal or a run failure, and a refusal of a bad value or
type the caller passed is also a ``ValueError`` or ``TypeError`` (issue 43), so code written against the
built-in exceptions catches it. A refusal about state (a turn in flight, a pending question) is neither, and a
run failure never is.

The table is the contract a reviewer reads: one row an exported class. A class added to
``footprint_lab.errors`` must be given a row here.
"""

from __future__ import annotations

import inspect
import pickle

import pytest

import footprint_lab.errors as errors
from footprint_lab import Agent
from footprint_lab.base.refusal import CodedError, Refusal, RunFailure
from footprint_lab.providers import mock

R, RV, RT, F, ROOT = "refusal", "refusal, ValueError", "refusal, TypeError", "failure", "root"
#: a value the caller passed that no run can take: a message, an identity, a recording or notebook file, an id that
#: names nothing, a tool or declaration that cannot be offered, spans that are not spans, a folder that is not a set
BAD_VALUES = """
        BugReportError CallNotFoundError CommandLineError ContextDeclarationError DuplicateContextIdError
        DuplicateToolError FactRoleError InfluenceStrategyError InvalidAnnotationError InvalidIdentityError
        InvalidQuestionError InvalidRecordingError InvalidRunInputError MissingApiKeyError
        MockScriptError NotebookFileError OtelCaptureError OtelExportError OtelReceiverError
        OtelSpanFieldError OtelSpanLoopError OtelSpansError ProviderConfigError
        RecordingVersionError ReplayPieceError ReplaySourceError RunSetFolderError SealSourceError
        ToolCatalogError ToolDefinitionError UnknownFactReferenceError UnknownRunError UnknownSourceError
        UnknownStepError UnknownTurnError
"""

KINDS: dict[str, str] = {
    # the roots
    "CodedError": ROOT, "ProviderError": ROOT, "Refusal": R, "RunFailure": F,
    # a setting no run could use: every SettingRefusal is a ValueError
    "AgentConfigError": RV, "BatchConfigError": RV, "ChatConfigError": RV, "ComparatorError": RV,
    "ContextConfigError": RV, "ExplainConfigError": RV, "LabConfigError": RV, "MagicInputError": RV,
    "RedactionConfigError": RV, "SharingConfigError": RV, "UnmaskArgumentError": RV,
    # a keyword a builder does not take, as Python's own TypeError for one
    "UnknownKeywordError": RT,
    # a composition built in a way no run could use
    "CompositionConfigError": RV, "DuplicateStepError": RV, "EmptyCompositionError": RV, "GraphCycleError": RV,
    "LoopBudgetError": RV,
    # a checkpoint that is not one this library wrote, or another agent's
    "InvalidCheckpointError": RV, "ConversationMismatchError": RV,
    # state, not a value: the runner is busy, waits on a person, or a resume went elsewhere
    "RunInFlightError": R, "PendingQuestionError": R, "NoConversationError": R, "ResumeDivergedError": R,
    "ResumeIdentityConflictError": R, "ResumeRequestConflictError": R, "ParentRunRefusedError": R,
    "MemberIdentityError": R, "LLMCallContextError": R, "MaskedCheckpointError": R, "ResumeRedactionError": R,
    "SameAnswerError": R, "NothingToLocalizeError": R,
    # a bad value the caller passed
    **dict.fromkeys(BAD_VALUES.split(), RV),
    # a listener that cannot be called, as Python's own TypeError for a call of a non-callable
    "ListenerError": RT,
    # an HTTP request to the notebook's OTLP receiver from elsewhere: refused to the sender, no caller's value
    "OtlpRequestRefused": R,
    # failed while running: never a ValueError or TypeError
    "RunCheckpointError": F, "FlowCheckpointError": F, "ContextWindowError": F, "ModelNotFoundError": F,
    "OtlpExportFailed": F, "ProviderAuthError": F, "ProviderConnectionError": F, "ProviderRateLimitError": F,
    "ProviderRequestError": F, "ProviderResponseError": F, "ProviderTimeoutError": F,
    "ProviderUnavailableError": F, "ReplayMismatchError": F,
}


def _exported() -> dict[str, type]:
    named = {name: getattr(errors, name) for name in dir(errors) if not name.startswith("_")}  # exports load lazily
    return {name: value for name, value in named.items() if inspect.isclass(value) and issubclass(value, BaseException)}


def _kind(cls: type) -> str:
    kind = ROOT if cls in (CodedError, errors.ProviderError) else R if issubclass(cls, Refusal) else F
    builtin = [name for base, name in ((ValueError, "ValueError"), (TypeError, "TypeError")) if issubclass(cls, base)]
    return ", ".join([kind, *builtin])


def test_every_exported_error_has_a_row() -> None:
    assert sorted(_exported()) == sorted(KINDS)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_error_is_the_kind_its_row_says(name: str) -> None:
    cls = _exported()[name]
    assert issubclass(cls, CodedError)
    assert _kind(cls) == KINDS[name]
    if issubclass(cls, RunFailure):
        assert not issubclass(cls, ValueError | TypeError)


def test_except_value_error_catches_a_bad_setting() -> None:
    with pytest.raises(ValueError) as caught:
        Agent(provider=mock(reply="ok"), max_iterations=-1)
    assert isinstance(caught.value, errors.AgentConfigError) and caught.value.code == "ERR_AGENT_CONFIG"
    with pytest.raises(TypeError) as unknown:
        Agent(provider=mock(reply="ok"), max_iteration=3)  # type: ignore[call-arg]
    assert isinstance(unknown.value, errors.UnknownKeywordError)


def test_a_refusal_that_is_a_value_error_keeps_its_message_and_evidence_and_pickles() -> None:
    with pytest.raises(ValueError) as caught:
        Agent(provider=mock(reply="ok"), max_iterations=-1)
    refusal = caught.value
    assert isinstance(refusal, Refusal)
    assert str(refusal) == refusal.message and "max_iterations" in str(refusal)  # type: ignore[attr-defined]
    again = pickle.loads(pickle.dumps(refusal))
    assert type(again) is type(refusal) and str(again) == str(refusal)
    assert again.evidence() == refusal.evidence()  # type: ignore[attr-defined]


def test_except_value_error_catches_a_bad_message_and_an_unknown_id() -> None:
    agent = Agent(provider=mock(reply="ok"))
    with pytest.raises(ValueError) as message:
        agent.run_sync(["not", "a", "message"])  # type: ignore[arg-type]
    assert isinstance(message.value, errors.InvalidRunInputError)
    run = agent.run_sync("hi")
    with pytest.raises(ValueError) as call:
        run.context("call-llm#99")
    assert isinstance(call.value, errors.CallNotFoundError)


def test_no_handler_of_value_errors_turns_a_refusal_raised_in_its_block_into_another() -> None:
    """A refusal is a ValueError now: a ``try`` whose block raises one and whose handler catches ValueError (a name
    the system cannot take, say) must let the refusal through first, or its precise reason becomes a vaguer one."""
    import ast
    from pathlib import Path

    import footprint_lab

    broad = {"ValueError", "TypeError", "Exception", "BaseException"}
    found = []
    for path in Path(footprint_lab.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Try):
                continue
            raised = {ast.unparse(r.exc.func) for statement in node.body for r in ast.walk(statement)
                      if isinstance(r, ast.Raise) and isinstance(r.exc, ast.Call)}
            raised = {name for name in raised if hasattr(errors, name) and issubclass(getattr(errors, name), Refusal)}
            for handler in node.handlers:
                names = ({ast.unparse(e) for e in handler.type.elts} if isinstance(handler.type, ast.Tuple)
                         else {ast.unparse(handler.type)} if handler.type is not None else {"BaseException"})
                if names & raised or "Refusal" in names:
                    break                                # the refusal is let through (or handled) before
                if names & broad and raised:
                    found.append(f"{path.name}:{node.lineno}")
                    break
    assert found == []
