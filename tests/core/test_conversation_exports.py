"""The conversation names are where users look for them, and every refusal carries its evidence."""

from __future__ import annotations

import footprint_lab
from footprint_lab import errors
from footprint_lab.base.refusal import Refusal, RunFailure
from footprint_lab.core import checkpoint, identity, pause
from footprint_lab.redact import policy as redaction

CONVERSATION_ERRORS = {
    "RunInFlightError": "ERR_RUN_IN_FLIGHT",
    "PendingQuestionError": "ERR_PENDING_QUESTION",
    "NoConversationError": "ERR_NO_CONVERSATION",
    "ResumeIdentityConflictError": "ERR_SESSION_OWNERSHIP_CONFLICT",
    "ResumeRedactionError": "ERR_RESUME_REDACTION",
    "InvalidCheckpointError": "ERR_INVALID_CHECKPOINT",
    "ConversationMismatchError": "ERR_CONVERSATION_MISMATCH",
    "InvalidQuestionError": "ERR_INVALID_QUESTION",
    "RedactionConfigError": "ERR_REDACTION_CONFIG",
    "RunCheckpointError": "ERR_RUN_CHECKPOINT",
}


def test_public_names_are_exported_at_the_top_level() -> None:
    homes = {"Checkpoint": checkpoint, "Redaction": redaction, "ask_human": pause, "Identity": identity}
    for name in ("Checkpoint", "Redaction", "ask_human", "Identity"):
        assert name in dir(footprint_lab) and name in footprint_lab.__all__
        # the top-level name is the very object its module defines
        assert getattr(footprint_lab, name) is getattr(homes[name], name)
    for name in CONVERSATION_ERRORS:   # a specific refusal lives in footprint_lab.errors, never at the root
        assert name in errors.__all__ and name not in footprint_lab.__all__


def test_the_root_holds_the_analysts_concepts_and_the_two_kinds_of_error() -> None:
    public = set(footprint_lab.__all__)
    assert {"Agent", "LLMCall", "Chat", "Run", "Recording", "Lab", "Sequence", "Parallel", "Conditional", "Loop",
            "Workflow", "Graph", "tool", "Refusal", "RunFailure"} <= public
    assert len(public) <= 40
    assert not {name for name in public if name.endswith(("Error", "Refused", "Failed"))}
    assert "normalize_run_input" not in public and "Refusal" in errors.__all__

def test_each_error_has_its_code_fields_and_place_in_the_tree() -> None:
    for name, code in CONVERSATION_ERRORS.items():
        cls = getattr(errors, name)
        assert name in (errors.__doc__ or "")
        assert cls.code == code and cls.fields
        is_refusal = name != "RunCheckpointError"  # work was done before it: a failure while running
        assert issubclass(cls, Refusal) == is_refusal and issubclass(cls, RunFailure) != is_refusal
        assert name in errors.__all__
