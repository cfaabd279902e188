"""The refusals a composition raises when it is built in a way no run could use.

Every one fires in the constructor, before any run exists: a composition that cannot run
correctly is never built. Step names are the developer's own labels and may be named in a
message; members, predicates and mappers are described by their shape only.
"""

from __future__ import annotations

from collections.abc import Sequence

from footprint_lab.base.refusal import Refusal


class CompositionConfigError(Refusal, ValueError):
    """Raised when a composition setting is missing or of the wrong kind.

    Carries ``composition`` (``"Sequence"``, ``"Parallel"``, ...), ``setting`` (the argument
    or step at fault) and ``received`` (its shape, never its value).
    """

    code = "ERR_COMPOSITION_CONFIG"
    fields = ("composition", "setting", "received")

    def __init__(self, composition: str, setting: str, received: str, fix: str) -> None:
        super().__init__(f"{composition}: '{setting}' {fix} (received {received}).")
        self.composition = composition
        self.setting = setting
        self.received = received


class EmptyCompositionError(Refusal, ValueError):
    """Raised when a composition is given no members: a run of it would have nothing to do."""

    code = "ERR_EMPTY_COMPOSITION"
    fields = ("composition",)

    def __init__(self, composition: str, example: str) -> None:
        super().__init__(
            f"{composition}: it was given no members, so a run would have nothing to run. Give it at "
            f"least one named runner, e.g. {example}."
        )
        self.composition = composition


class DuplicateStepError(Refusal, ValueError):
    """Raised when two members of one composition share a name.

    Carries ``composition`` and ``step_name``. Outputs, step records and resumes address
    members by name, so a repeated name would make two members indistinguishable.
    """

    code = "ERR_DUPLICATE_STEP"
    fields = ("composition", "step_name")

    def __init__(self, composition: str, step_name: str) -> None:
        super().__init__(
            f"{composition}: two members are named '{step_name}'. Outputs, the recording and resume "
            "address members by name, so each name must be unique within a composition: rename one "
            "(the same runner may be mounted twice under two names)."
        )
        self.composition = composition
        self.step_name = step_name


class LoopBudgetError(Refusal, ValueError):
    """Raised when a ``Loop`` has no budget, or one outside 1..``cap``.

    Carries ``received`` (the shape or size of what arrived) and ``cap``.
    """

    code = "ERR_LOOP_BUDGET"
    fields = ("received", "cap")

    def __init__(self, received: str, cap: int) -> None:
        super().__init__(
            f"Loop: 'times' must be a whole number from 1 to {cap} (received {received}). A loop runs "
            "its body at most that many passes, stopping earlier when until(answer) is true, so a "
            "predicate that never holds can never spin for ever: Loop(body, until=done, times=5)."
        )
        self.received = received
        self.cap = cap


class GraphCycleError(Refusal, ValueError):
    """Raised when a ``Graph``'s dependencies form a cycle; ``cycle`` lists it, first node repeated last."""

    code = "ERR_GRAPH_CYCLE"
    fields = ("cycle",)

    def __init__(self, cycle: Sequence[str]) -> None:
        super().__init__(
            f"Graph: its nodes wait on each other in a cycle ({' -> '.join(cycle)}), so none of them "
            "could ever start. A graph runs each node once its inputs are ready; remove one of these "
            "'needs' (for repeated passes, put a Loop inside a node)."
        )
        self.cycle = list(cycle)


class ResumeDivergedError(Refusal):
    """Raised when a resumed composition no longer reaches the member that asked the question.

    A resume replays the answers the paused run already had and re-evaluates predicates over
    them; a predicate (or ``until``) that now decides otherwise would run another branch and
    drop the person's answer. Carries ``composition`` and ``member`` (the paused member's
    name, the developer's own label).
    """

    code = "ERR_RESUME_DIVERGED"
    fields = ("composition", "member")

    def __init__(self, composition: str, member: str) -> None:
        super().__init__(
            f"{composition}: resumed, it no longer reaches '{member}', the member whose question is being "
            "answered: a predicate or until() decided differently on the same inputs than in the paused run, "
            "so the answer would be dropped. Keep predicates, until() and map functions pure functions of "
            "their inputs (no clock, randomness or outside state), then resume the checkpoint again."
        )
        self.composition = composition
        self.member = member
