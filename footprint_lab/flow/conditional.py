"""``Conditional``: one branch runs, chosen by predicates over the message, with the evidence kept.

Every predicate is asked (in order) and the first that holds chooses its branch; when none
holds, ``otherwise`` runs. ``otherwise`` is mandatory, so no message ever falls through
unanswered. The step that mounts the chosen branch records the decision: each predicate's
input and result, and the branch chosen, so the recording says why this branch ran.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from footprint_lab.base.refusal import describe_shape
from footprint_lab.core.runner import Runner
from footprint_lab.flow._composition import INPUT, Composition, _Exec
from footprint_lab.flow._members import check_callable, named_members
from footprint_lab.flow.refusals import CompositionConfigError, EmptyCompositionError, ResumeDivergedError
from footprint_lab.record.schema import Path, output

EXAMPLE = 'Conditional([("urgent", lambda m: "urgent" in m, urgent_agent)], otherwise=("normal", agent))'

Predicate = Callable[[str], Any]


class Conditional(Composition):
    """``Conditional([(name, predicate, runner), ...], otherwise=(name, runner))``."""

    kind: ClassVar[str] = "conditional"

    def __init__(
        self,
        branches: Iterable[tuple[str, Predicate, Runner]],
        /,
        *,
        otherwise: tuple[str, Runner] | None = None,
        id: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(id=id, name=name)
        given = list(branches) if isinstance(branches, Iterable) and not isinstance(branches, str) else None
        if given is None:
            raise CompositionConfigError("Conditional", "branches", describe_shape(branches),
                                         f"must be a list of (name, predicate, runner), e.g. {EXAMPLE}")
        if not given:
            raise EmptyCompositionError("Conditional", EXAMPLE)
        if otherwise is None:
            raise CompositionConfigError(
                "Conditional", "otherwise", "None",
                "is mandatory: name the branch that runs when no predicate holds, "
                f"e.g. {EXAMPLE}",
            )
        if not (isinstance(otherwise, tuple) and len(otherwise) == 2):
            raise CompositionConfigError("Conditional", "otherwise", describe_shape(otherwise),
                                         f"must be a (name, runner) pair, e.g. {EXAMPLE}")
        for branch in given:
            if not (isinstance(branch, tuple) and len(branch) == 3):
                raise CompositionConfigError("Conditional", "branches", describe_shape(branch),
                                             f"must hold (name, predicate, runner) triples, e.g. {EXAMPLE}")
        self.members = named_members("Conditional", [*((n, r) for n, _, r in given), otherwise], EXAMPLE)
        for branch_name, predicate, _ in given:
            check_callable("Conditional", branch_name, predicate,
                           "needs a predicate: a function of the message returning True or False")
        self.predicates: list[tuple[str, Predicate]] = [(branch_name, pred) for branch_name, pred, _ in given]
        self.otherwise = self.members[-1]
        self._cover()

    def _rebuilt(self, runners: list[Runner]) -> Conditional:
        pairs = zip(self.predicates, runners, strict=False)
        branches = [(key, predicate, runner) for (key, predicate), runner in pairs]
        return Conditional(branches, otherwise=(self.otherwise[0], runners[-1]), id=self.id, name=self.name)

    async def _flow(self, exe: _Exec) -> Path:
        rec = exe.rec
        step_id = rec.begin("branch")
        message = rec.read(INPUT)
        evidence = [(key, {"message": message}, bool(predicate(message))) for key, predicate in self.predicates]
        chosen = next((key for key, _, held in evidence if held), self.otherwise[0])
        otherwise_row = (self.otherwise[0], {"no_predicate_held": chosen == self.otherwise[0]},
                         chosen == self.otherwise[0])
        rec.decide("route", [*evidence, otherwise_row], chosen)
        taken = exe.diverged_from(dict(self.members), chosen)
        if taken is not None:
            raise ResumeDivergedError("Conditional", exe.shown(taken))
        member = dict(self.members)[chosen]
        answer = await exe.mount(chosen, member, message, step_id, door=f"Conditional branch '{chosen}'")
        exe.close(chosen, answer)
        return output(chosen)
