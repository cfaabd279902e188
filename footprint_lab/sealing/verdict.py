"""What a seal check found (:class:`Verdict`): the seal holds, it broke (and where), or there is none.

Role: sealing layer; public as ``footprint_lab.Verdict``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` found. A verdict is true when the seal holds.

    ``status`` is ``holds``, ``broken`` or ``unsealed``. ``footprint_lab.notebook.verify_file`` may
    also give ``unsupported``: the recording was written by a newer footprint_lab (a higher schema
    version) and was not checked; ``field`` and ``problem`` say why.

    A broken verdict names the first link that fails: ``run`` (``""`` for the top run, ``children.0``
    for a member), ``kind`` (``header``, ``steps``, ``commits``... or ``seal``), the record's ``index``
    and ``step_id``, and the ``field``. An edited notebook display has kind ``display``, and the MIME
    type as its field. ``scrubbed`` lists the policy names a scrub re-sealed under. ``display`` (set by
    ``verify_file``) says whether what a notebook output displays was checked too.
    """

    status: str
    run: str = ""
    kind: str | None = None
    index: int | None = None
    step_id: str | None = None
    field: str | None = None
    problem: str = ""
    scrubbed: tuple[str, ...] = ()
    display: bool = False

    @property
    def holds(self) -> bool:
        return self.status == "holds"

    def __bool__(self) -> bool:
        return self.holds

    def __str__(self) -> str:
        if self.status == "unsealed":
            return "not sealed: this recording carries no seal (nothing to check)"
        if self.status == "unsupported":
            return f"not checked: the {self.kind or 'recording'}'s '{self.field}' {self.problem}"
        if self.status == "holds":
            note = f" (re-sealed after a scrub by: {', '.join(self.scrubbed)})" if self.scrubbed else ""
            shown = ", and so is what this output displays" if self.display else ""
            return "seal holds: the recording is as it was sealed" + shown + note
        place = ".".join(part for part in (self.run, self.kind or "", "" if self.index is None else str(self.index),
                                           self.field or "") if part)
        step = f" (step {self.step_id})" if self.step_id else ""
        return f"seal broken at {place}{step}: {self.problem}"
