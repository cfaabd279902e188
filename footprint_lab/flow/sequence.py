"""``Sequence``: members run one after another, each on the previous member's answer.

The first member gets the run's message; the answer is the last member's answer. Each
member's step reads the output of the step before it, so a wrong answer walks back through
every member that shaped it.
"""

from __future__ import annotations

from typing import ClassVar

from footprint_lab.core.runner import Runner
from footprint_lab.flow._composition import INPUT, Composition, _Exec
from footprint_lab.flow._members import Members, named_members
from footprint_lab.record.schema import Path, output

EXAMPLE = 'Sequence({"classify": classifier, "review": reviewer})'


class Sequence(Composition):
    """``Sequence({"classify": a, "review": b})`` or ``Sequence([("classify", a), ("review", b)])``."""

    kind: ClassVar[str] = "sequence"

    def __init__(self, members: Members, /, *, id: str | None = None, name: str | None = None) -> None:
        super().__init__(id=id, name=name)
        self.members = named_members("Sequence", members, EXAMPLE)
        self._cover()

    def _rebuilt(self, runners: list[Runner]) -> Sequence:
        return Sequence([(key, runner) for (key, _), runner in zip(self.members, runners, strict=True)],
                        id=self.id, name=self.name)

    async def _flow(self, exe: _Exec) -> Path:
        rec = exe.rec
        source = INPUT
        for key, member in self.members:
            step_id = rec.begin("sequence-step")
            message = rec.read(source)
            answer = await exe.mount(key, member, message, step_id, door=f"Sequence step '{key}'")
            exe.close(key, answer)
            source = output(key)
        return source
