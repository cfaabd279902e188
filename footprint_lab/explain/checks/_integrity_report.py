"""The integrity report: one ``Finding`` per contradiction, one ``Disposition`` per check, and the whole.

Rule kept here: "no findings" and "no check ran" are different results, so the report keeps a
disposition for every check beside the findings (``ok`` holds when none failed and none broke).
What one check hands back (``CheckResult``) is its findings, the status it reached when it found
nothing, and a note.

Role: explain layer; built by :func:`footprint_lab.explain.checks.integrity.integrity`, whose module
is where a user imports these names from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.render import display_bundle

if TYPE_CHECKING:
    import pandas as pd

DISPOSITIONS = ("passed", "failed", "not_applicable", "could_not_run")


@dataclass(frozen=True, slots=True)
class Finding:
    """One contradiction: its ``kind`` (the check's name), the ``steps`` involved and why it matters."""

    kind: str
    steps: tuple[str, ...]
    what: str
    why: str

    def line(self) -> str:
        return f"[{self.kind}] {self.what} (steps: {', '.join(self.steps)}). Why it matters: {self.why}"


@dataclass(frozen=True, slots=True)
class Disposition:
    """What one check concluded: ``passed``, ``failed``, ``not_applicable`` or ``could_not_run``, and why."""

    check: str
    status: str
    note: str

    def line(self) -> str:
        return f"{self.check:<24} {self.status.upper().replace('_', ' '):<15} {self.note}"


@dataclass(slots=True)
class IntegrityReport:
    """The findings of every registered check, and each check's disposition."""

    run_id: str
    findings: list[Finding]
    dispositions: list[Disposition]

    @property
    def ok(self) -> bool:
        """``True`` when every check that ran passed (none failed, none broke)."""
        return all(d.status in ("passed", "not_applicable") for d in self.dispositions)

    def disposition(self, check: str) -> str:
        """The status of one check by name."""
        return next(d.status for d in self.dispositions if d.check == check)

    def of_kind(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]

    def by_step(self) -> dict[str, list[str]]:
        """For each step a finding involves, the kinds of the findings on it (what a view shows as badges)."""
        badges: dict[str, list[str]] = {}
        for finding in self.findings:
            for step in finding.steps:
                kinds = badges.setdefault(step, [])
                if finding.kind not in kinds:
                    kinds.append(finding.kind)
        return badges

    def summary(self) -> str:
        counts = {s: sum(1 for d in self.dispositions if d.status == s) for s in DISPOSITIONS}
        ran = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)
        return f"Integrity of run {self.run_id}: {len(self.findings)} finding(s); checks: {ran}."

    def __str__(self) -> str:
        lines = [self.summary(), *(f.line() for f in self.findings), "Checks:",
                 *(f"  {d.line()}" for d in self.dispositions)]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per finding: kind, steps, what, why."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        rows = [{"kind": f.kind, "steps": list(f.steps), "what": f.what, "why": f.why} for f in self.findings]
        return ShownFrame(rows, columns=["kind", "steps", "what", "why"])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display_bundle("integrity", self, self.summary(), str(self), include, exclude)

    def _repr_html_(self) -> str:
        return str(self._repr_mimebundle_(include=["text/html"])["text/html"])


#: what one check hands back: its findings, the status it reached when it found none, and a note
CheckResult = tuple[list[Finding], str, str]
