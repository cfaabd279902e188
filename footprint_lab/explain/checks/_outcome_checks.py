"""The integrity checks on what a run came to: its answer against the evidence, and what failed.

- ``answer_contradicts_tool``: a declared field the answer states differently from a tool result;
- ``unsupported_value``: a value in the answer found in nothing the answering call was sent
  (:mod:`footprint_lab.explain.checks._unsupported`);
- ``tool_failed``: a tool call whose tool raised (``failed_tool`` says it in one line);
- ``run_failed``: the run, or a member, ended failed (reported once, at the member).

Each check is followed by what only it uses. Role: explain layer; registered in
:mod:`footprint_lab.explain.checks.integrity`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.checks._integrity_report import CheckResult, Finding
from footprint_lab.explain.checks._integrity_turns import Turn
from footprint_lab.explain.checks._unsupported import unsupported_values
from footprint_lab.explain.provenance.index import RecordingIndex
from footprint_lab.explain.render import shorten
from footprint_lab.record.schema import KIND_TOOL_RESULT

if TYPE_CHECKING:
    from footprint_lab.record.recording import ContextPiece

_TRUE = {"true", "yes", "y"}
_FALSE = {"false", "no", "n", "not"}


def answer_contradicts_tool(turns: list[Turn], claims: Mapping[str, Any], answer: str | None) -> CheckResult:
    if not claims:
        return [], "not_applicable", "no field declared: pass claims={'field': r'pattern'} to compare the answer"
    if answer is None:
        return [], "could_not_run", "the run has no answer to compare"
    recorded: dict[str, list[tuple[Any, str]]] = {}
    for turn in turns:
        for piece in turn.recording.context_pieces:
            if piece.source_kind != KIND_TOOL_RESULT or piece.verdict != "admitted":
                continue
            try:
                data = json.loads(piece.content)
            except ValueError:
                continue
            for key, value in _fields(data, claims):
                entry = (value, piece.landed_by or piece.source_id)
                if entry not in recorded.setdefault(key, []):
                    recorded[key].append(entry)
    if not recorded:
        return [], "not_applicable", "no tool result holds a declared field"
    answer_step = RecordingIndex(turns[0].recording).answer_step()
    findings: list[Finding] = []
    compared = 0
    for key, values in recorded.items():
        stated = _stated(claims[key], answer)
        if stated is None:
            continue
        compared += 1
        if any(_normal(stated) == _normal(value) for value, _ in values):
            continue
        shown = ", ".join(f"{shorten(str(v), 30)} ({step})" for v, step in values)
        steps = tuple(dict.fromkeys([*(step for _, step in values), *([answer_step] if answer_step else [])]))
        findings.append(Finding(
            "answer_contradicts_tool", steps,
            f"the answer states {key} = {shorten(str(stated), 30)}, but the tool result said {shown}",
            "the answer reads well and contradicts the evidence the run itself fetched",
        ))
    if not compared:
        return [], "passed", "the answer states none of the declared fields"
    return findings, "passed", f"{compared} declared field(s) compared with the tool results"


def _fields(value: Any, wanted: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in wanted and not isinstance(inner, dict | list):
                yield key, inner
            yield from _fields(inner, wanted)
    elif isinstance(value, list):
        for inner in value:
            yield from _fields(inner, wanted)


def _normal(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip().casefold()
    try:
        return float(text.replace(",", ""))
    except ValueError:
        pass
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return text


def _stated(reader: Any, answer: str) -> Any:
    if callable(reader):
        return reader(answer)
    match = reader.search(answer)
    if match is None:
        return None
    return match.group(1) if match.groups() else match.group(0)


def unsupported_value(turns: list[Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    missing, call, looked, note = unsupported_values(turns[0].recording)
    if call is None or not looked:
        return [], "not_applicable" if call is None else "passed", note
    findings = [Finding("unsupported_value", tuple(dict.fromkeys(s for s in (call, one.step) if s)), one.what(call),
                        "the answer states it as fact, and nothing the model was given says so")
                for one in missing]
    return findings, "passed", note


def tool_failed(turns: list[Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    ran = sum(len(turn.result_of) for turn in turns)
    if not ran:
        return [], "not_applicable", "the run ran no tool"
    findings = [Finding("tool_failed", tuple(s for s in (piece.detail.get("requested_by"), piece.landed_by) if s),
                        failed_tool(piece),
                        "the model read an error where the tool's result should have been: what it said next was "
                        "made without that result")
                for turn in turns for piece in turn.raised]
    return findings, "passed", f"{ran} tool call(s) looked at"


def failed_tool(piece: ContextPiece) -> str:
    """A failed tool call in one line: the tool, the exception and its message, and where in the tool it was raised."""
    detail = piece.detail
    frame = detail.get("error_frame")
    at = f" at {frame}" if frame else ""
    return (f"tool '{detail.get('tool', piece.source_id)}' raised {detail.get('error_type')}{at}: "
            f"{shorten(str(detail.get('error_message', '')), 120)}")


def run_failed(turns: list[Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    failed = {turn.recording.path for turn in turns if turn.recording.status == "failed"}
    findings = []
    for turn in turns:
        recording = turn.recording
        error = recording.error or {}
        step = error.get("step_id")
        if recording.status != "failed" or step in failed:  # a member's failure is reported at the member
            continue
        frame = f" at {error['frame']}" if error.get("frame") else ""
        message = f": {shorten(str(error['message']), 120)}" if error.get("message") else ""
        findings.append(Finding(
            "run_failed", (step,) if isinstance(step, str) else (),
            f"{'the run' if not recording.path else 'member ' + recording.path} failed at {step or 'an unknown step'}"
            f" with {error.get('type', 'an error')}{frame}{message}",
            "the run stopped there: it has no answer, and what it did before is all there is to read"))
    members = len(turns) - 1
    return findings, "passed", f"the status of the run{f' and its {members} member run(s)' if members else ''} read"

