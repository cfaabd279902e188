"""The ``Lab(...)`` door: what the widget is built from, checked before anything is drawn.

Rule kept here: a Lab is built around something that runs, an optional starting message, an
optional identity and an optional explainer for its Ask box (a provider, or a string such as
``openai:gpt-4o-mini``); anything else is refused by name, describing what arrived by shape
only. Kept apart from the widget so the refusal can be imported without loading anywidget.

Role: lab layer. Refusal raised here: :class:`LabConfigError` (an identity of the wrong shape
is refused by the identity door, ``InvalidIdentityError``).
"""

from __future__ import annotations

from typing import Any

from footprint_lab.core._identity import coerce_identity
from footprint_lab.engine._refusal import SettingRefusal, describe_shape
from footprint_lab.providers import provider_from_string
from footprint_lab.providers._errors import ProviderConfigError


class LabConfigError(SettingRefusal):
    """Raised when ``Lab(...)`` is built with something it cannot run or show.

    Carries ``setting`` (``runner``, ``message`` or ``explainer``) and ``received`` (its shape, never its value).
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


_EXPLAINER_FIX = ("must be the provider the Ask box questions runs with: a provider object such as "
                  "footprint_lab.providers.openai('gpt-4o-mini'), a string such as 'openai:gpt-4o-mini', or left out")


def check_explainer(explainer: Any) -> Any:
    """The provider the Ask box uses (built from a ``provider:model`` string), or ``None`` when none was given."""
    if explainer is None or callable(getattr(explainer, "complete", None)):
        return explainer
    if not isinstance(explainer, str):
        raise LabConfigError("Lab", "explainer", describe_shape(explainer), _EXPLAINER_FIX)
    try:
        return provider_from_string(explainer)
    except ProviderConfigError as wrong:
        if wrong.setting != "spec":  # the string named a provider that refused its own settings: its refusal says why
            raise
        raise LabConfigError("Lab", "explainer", "a string that is not of the form 'provider:model'",
                             _EXPLAINER_FIX) from None
