"""The settings door of an ``Agent`` (and an ``LLMCall``): every keyword judged before the agent exists.

Rule kept here: an agent that could not run is never built. Each keyword is checked by shape
(a provider instance, a model name, a sound system prompt, a whole number of iterations, a
``Redaction``, an input guard of one argument, flags that are booleans) and refused by name with
:class:`AgentConfigError`, which says what arrived by its shape only and how to fix it; two tools
of one name are refused with :class:`DuplicateToolError`.

Role: core layer, called by ``Agent.__init__``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from footprint_lab.base.refusal import Refusal, SettingRefusal, call_problem, describe_shape
from footprint_lab.base.unicode import is_sound
from footprint_lab.redact.policy import Redaction


class AgentConfigError(SettingRefusal):
    """Raised when an ``Agent`` or ``LLMCall`` is built with a setting no run could use.

    Carries ``setting`` (the keyword at fault) and ``received`` (its shape, never its value).
    """

    code = "ERR_AGENT_CONFIG"


class DuplicateToolError(Refusal, ValueError):
    """Raised when two tools of one agent share a name: the model could not tell them apart."""

    code = "ERR_DUPLICATE_TOOL"
    fields = ("tool_name",)

    def __init__(self, tool_name: str) -> None:
        super().__init__(
            f"Agent: two tools are named '{tool_name}'. A model calls tools by name, so each name "
            "must be unique within an agent. Rename one (define_tool(name=...) or @tool(name=...))."
        )
        self.tool_name = tool_name


def checked_settings(runner: str, *, provider: Any, model: str | None, system: Any, max_iterations: Any, id: Any,
                     name: Any, redact: Any, input_guard: Callable[[str], Any] | None, seal: Any,
                     lint_tools: Any) -> str:
    """The model name to use (the provider's own when none is given), every other keyword checked; refused by name."""
    if isinstance(provider, type) or not callable(getattr(provider, "complete", None)):
        raise AgentConfigError(
            runner, "provider", "a class" if isinstance(provider, type) else describe_shape(provider),
            "must be a provider instance, e.g. footprint_lab.providers.mock(reply='...') or "
            "providers.openai(...): call the function that builds one",
        )
    if model is None:  # the model is named once, on the provider, when the provider names one
        model = getattr(provider, "model", None) or "mock-model"
    if not isinstance(model, str) or not model:
        raise AgentConfigError(runner, "model", describe_shape(model), "must be a model name string")
    if not isinstance(system, str):
        raise AgentConfigError(runner, "system", describe_shape(system), "must be a string system prompt")
    if not is_sound(system):
        raise AgentConfigError(runner, "system", "a string holding a lone surrogate",
                               "must be text that can be saved as UTF-8 (decode bytes with their real "
                               "encoding, or errors='replace')")
    if not isinstance(max_iterations, int) or isinstance(max_iterations, bool) or not 1 <= max_iterations <= 10_000:
        raise AgentConfigError(
            runner, "max_iterations", describe_shape(max_iterations), "must be a whole number from 1 to 10000"
        )
    for name_ in ("id", "name"):
        value = id if name_ == "id" else name
        if value is not None and not isinstance(value, str):
            raise AgentConfigError(runner, name_, describe_shape(value), "must be a string or None")
    if redact is not None and not isinstance(redact, Redaction):
        raise AgentConfigError(runner, "redact", describe_shape(redact),
                               "must be a Redaction(keys=[...], patterns=[...]) or None")
    unusable = call_problem(input_guard, 1) if input_guard is not None else None
    if unusable is not None:
        raise AgentConfigError(runner, "input_guard", unusable,
                               "must be a function of the message returning None (admit) or a reply (refuse)")
    for flag, given in (("seal", seal), ("lint_tools", lint_tools)):
        if not isinstance(given, bool):
            raise AgentConfigError(runner, flag, describe_shape(given), "must be True or False")
    return model
