"""Integrity: the contradictions a recording holds, found by deterministic checks, with no question asked.

Rule kept here: "no findings" and "no check ran" are different results. ``integrity(run)``
runs every registered check over the run's recording (its member runs included) and returns
the findings together with one disposition per check: ``passed`` (it ran and found nothing),
``failed`` (it found something), ``not_applicable`` (the run holds nothing it could look at,
and the note says what it would need) or ``could_not_run`` (the recording lacks what it needs,
or the check broke, named by exception type). The checks:

- ``ungrounded_tool``: a tool offered to the model after what grounded it left the window:
  a loaded skill's tool whose instructions were dropped (budget) or skipped, or whose
  loading result is no longer among the messages sent;
- ``invented_identifier``: a tool called with an identifier (an argument named like ``id``,
  ``order_id``, ``ticket``, ``ref``, or a value shaped like one, ``A-1001``) that appears
  nowhere in what the asking call was sent;
- ``duplicate_tool_call``: the same tool called twice with the same arguments within one
  turn (one recording): the second execution repeats the first, and a tool that acts on
  the world acts twice;
- ``answer_contradicts_tool``: the final answer states a value for a field the analyst
  declared (``claims={"age_days": r"(\\d+) days"}``) that differs from what a tool returned
  for that field;
- ``unsupported_value``: a number, amount, date, time, identifier or proper name in the answer
  that appears in nothing the answering call was sent, with the nearest value the evidence
  holds (:mod:`footprint_lab.explain.checks._unsupported`);
- ``tool_failed``: a tool call whose tool raised: the model read the error in place of a
  result (the tool step keeps the exception's type, its masked message and the tool's own
  frame). A tool that returns an error text without raising is a result, not a failure;
- ``run_failed``: the run (or a member) ended failed, a provider's error included: where, by
  which exception, and its masked message. A composition that failed because a member did is
  reported once, at the member.

``claims`` is the declaration of (d): a mapping from a field name, as it appears in the tool
results (JSON objects, searched at any depth), to how to read the value the answer states:
a regular expression (its first group, or the whole match) or a function of the answer text
returning the stated value (``None``: not stated). Numbers compare as numbers, ``yes/no/
true/false`` as booleans, other text without case.

Pattern: one pass per recording builds what every check needs (tool calls with the step
that ran each, the transcript position of each piece), so a 10,000-step run is checked in
milliseconds (:mod:`footprint_lab.explain.checks._integrity_turns`). This module is the door and
the registry; the checks on the tool calls are :mod:`footprint_lab.explain.checks._tool_call_checks`'s,
those on the answer and on failures :mod:`footprint_lab.explain.checks._outcome_checks`', and the
report's parts :mod:`footprint_lab.explain.checks._integrity_report`'s (imported from here).

Role: explain layer; a pure function of a ``Recording``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from footprint_lab.base.refusal import describe_shape
from footprint_lab.explain.arguments import ExplainConfigError, RunLike, recording_of
from footprint_lab.explain.checks._integrity_report import DISPOSITIONS as DISPOSITIONS
from footprint_lab.explain.checks._integrity_report import CheckResult
from footprint_lab.explain.checks._integrity_report import Disposition as Disposition
from footprint_lab.explain.checks._integrity_report import Finding as Finding
from footprint_lab.explain.checks._integrity_report import IntegrityReport as IntegrityReport
from footprint_lab.explain.checks._integrity_turns import Turn, read_turns
from footprint_lab.explain.checks._outcome_checks import (
    answer_contradicts_tool,
    run_failed,
    tool_failed,
    unsupported_value,
)
from footprint_lab.explain.checks._outcome_checks import failed_tool as failed_tool
from footprint_lab.explain.checks._tool_call_checks import duplicate_tool_call, invented_identifier, ungrounded_tool


# -- the door: every check over one recording ------------------------------------------
def integrity(run: RunLike, *, claims: Mapping[str, Any] | None = None) -> IntegrityReport:
    """Run every registered check over a run's recording; see the module docstring for each check."""
    readers = _check_claims(claims)
    recording = recording_of(run, "integrity")
    turns = read_turns(recording)
    findings: list[Finding] = []
    dispositions: list[Disposition] = []
    for name, check in CHECKS.items():
        try:
            found, status, note = check(turns, readers, recording.answer)
        except Exception as exc:  # a check that breaks says so; the others still run
            dispositions.append(Disposition(name, "could_not_run", f"the check raised {type(exc).__name__}"))
            continue
        findings += found
        dispositions.append(Disposition(name, "failed" if found else status,
                                        f"{len(found)} finding(s); {note}" if found else note))
    return IntegrityReport(recording.run_id, findings, dispositions)


def _check_claims(claims: Any) -> dict[str, Any]:
    if claims is None:
        return {}
    fix = ("must map field names, as in the tool results, to a regular expression reading the value the answer "
           "states (its first group) or a function of the answer text, e.g. claims={'age_days': r'(\\d+) days'}")
    if not isinstance(claims, Mapping) or not all(isinstance(k, str) for k in claims):
        raise ExplainConfigError("integrity", "claims", describe_shape(claims), fix)
    readers: dict[str, Any] = {}
    for key, reader in claims.items():
        if callable(reader):
            readers[key] = reader
            continue
        if not isinstance(reader, str):
            raise ExplainConfigError("integrity", "claims", f"a {type(reader).__name__} for one field", fix)
        try:
            readers[key] = re.compile(reader, re.IGNORECASE)
        except re.error:
            raise ExplainConfigError("integrity", "claims", "a pattern that is not a valid regular expression",
                                     fix) from None
    return readers


# -- the registry: every check, in the order they run and are listed ----------------------
Check = Callable[[list[Turn], Mapping[str, Any], str | None], CheckResult]

#: Every registered check, in the order they run and are listed.
CHECKS: dict[str, Check] = {
    "ungrounded_tool": ungrounded_tool,
    "invented_identifier": invented_identifier,
    "duplicate_tool_call": duplicate_tool_call,
    "answer_contradicts_tool": answer_contradicts_tool,
    "unsupported_value": unsupported_value,
    "tool_failed": tool_failed,
    "run_failed": run_failed,
}
