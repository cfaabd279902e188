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

from footprint_lab.base.refusal import SettingRefusal, describe_shape
from footprint_lab.core.identity import coerce_identity
from footprint_lab.providers import provider_from_string
from footprint_lab.providers.errors import ProviderConfigError


class LabConfigError(SettingRefusal):
    """Raised when ``Lab(...)`` is built with something it cannot run or show.

    Carries ``setting`` (``runner``, ``message`` or ``explainer``) and ``received`` (its shape, never its value).
    """

    code = "ERR_LAB_CONFIG"


def check_lab(runner: Any, identity: Any, message: Any, run: Any = None, replay: Any = None) -> dict[str, str]:
    """Refuse what a Lab cannot use; return the identity's fields (empty when none was named)."""
    if runner is None and run is not None:
        if not hasattr(run, "recording"):
            raise LabConfigError("Lab", "run", describe_shape(run),
                                 "must be a finished run to explain (what agent.run returns, Run.from_recording(...) "
                                 "for a loaded one, or a run of footprint_lab.otel.from_spans)")
    elif run is not None:
        raise LabConfigError("Lab", "run", "a run beside a runner",
                             "is for a Lab with no agent to run (an imported or loaded run): pass the runner, or run=")
    elif not callable(getattr(runner, "run", None)):
        raise LabConfigError("Lab", "runner", describe_shape(runner),
                             "must be something that runs: an Agent, an LLMCall or a composition (Sequence, ...); "
                             "or, to explain a run made elsewhere, Lab(run=run, replay=provider)")
    if replay is not None and not callable(getattr(replay, "complete", None)):
        raise LabConfigError("Lab", "replay", describe_shape(replay),
                             "must be a provider to re-send the run's recorded calls through, e.g. "
                             "footprint_lab.providers.openai(...), or be left out")
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
