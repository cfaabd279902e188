"""The refusal every context door shares: a declaration, trigger, store or scorer that cannot be used.

Rule kept here: the declaration doors (``define_fact``...), the triggers (``on_tool_return``,
``rule``), the retrieval scorers and the memory stores all refuse a setting the same way, by
naming the declaration and the keyword and giving the value's shape only, so the one class
lives below all of them and none imports another for it.

Role: context layer; imports only the engine's refusal base.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.base.refusal import Refusal, describe_shape


class ContextDeclarationError(Refusal, ValueError):
    """Raised when a context declaration (or a trigger, store or scorer for one) cannot be used.

    Carries ``declaration`` (``define_fact``, ``on_tool_return``, ``SQLiteStore``...),
    ``injection_id`` (the declared id, when it is a valid one), ``setting`` (the keyword at
    fault) and ``received`` (its shape, never its value).
    """

    code = "ERR_CONTEXT_DECLARATION"
    fields = ("declaration", "injection_id", "setting", "received")

    def __init__(self, declaration: str, setting: str, value: Any, fix: str, *, injection_id: str | None = None,
                 received: str | None = None) -> None:
        shape = received if received is not None else describe_shape(value)
        where = f"{declaration} '{injection_id}'" if injection_id else declaration
        super().__init__(f"{where}: '{setting}' {fix} (received {shape}).")
        self.declaration = declaration
        self.injection_id = injection_id
        self.setting = setting
        self.received = shape
