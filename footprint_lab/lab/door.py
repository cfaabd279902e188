"""The ``Lab(...)`` door: what the widget is built from, checked before anything is drawn.

Rule kept here: a Lab is built around something that runs, an optional starting message and
an optional identity; anything else is refused by name, describing what arrived by shape
only. Kept apart from the widget so the refusal can be imported without loading anywidget.

Role: lab layer. Refusal raised here: :class:`LabConfigError` (an identity of the wrong shape
is refused by the identity door, ``InvalidIdentityError``).
"""

from __future__ import annotations

from typing import Any

from footprint_lab.core.identity import coerce_identity
from footprint_lab.engine.refusal import SettingRefusal, describe_shape


class LabConfigError(SettingRefusal):
    """Raised when ``Lab(...)`` is built with something it cannot run or show.

    Carries ``setting`` (``runner`` or ``message``) and ``received`` (its shape, never its value).
    """

    code = "ERR_LAB_CONFIG"


def check_lab(runner: Any, identity: Any, message: Any) -> dict[str, str]:
    """Refuse what a Lab cannot use; return the identity's fields (empty when none was named)."""
    if not callable(getattr(runner, "run", None)):
        raise LabConfigError("Lab", "runner", describe_shape(runner),
                             "must be something that runs: an Agent, an LLMCall or a composition (Sequence, ...)")
    if message is not None and not isinstance(message, str):
        raise LabConfigError("Lab", "message", describe_shape(message),
                             "must be the text to start the message box with, or be left out")
    named = coerce_identity(identity, "Lab")
    return named.as_dict() if named is not None else {}
