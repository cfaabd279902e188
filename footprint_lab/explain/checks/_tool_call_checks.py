"""The integrity checks on the tool calls a model asked for: offered ungrounded, invented, repeated.

- ``ungrounded_tool``: a tool offered after what grounded it (a skill's instructions, the
  result that loaded it) left the window;
- ``invented_identifier``: a tool called with an identifier that appears nowhere in what the
  asking call was sent (searched as whole words, the last messages first);
- ``duplicate_tool_call``: the same tool run twice with the same arguments within one turn.

Each check is followed by what only it uses. Role: explain layer; registered in
:mod:`footprint_lab.explain.checks.integrity`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from footprint_lab.explain.checks._integrity_report import CheckResult, Finding
from footprint_lab.explain.checks._integrity_turns import Turn
from footprint_lab.explain.render import shorten

_ID_KEY = re.compile(r"(^|_)(id|ids|number|num|no|ref|reference|ticket|code|sku|key)$|[a-z]Id$")
_ID_VALUE = re.compile(r"^(?=(?:.*\d){3})(?=.*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_\-#/.:]{2,63}$")


def ungrounded_tool(turns: list[Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    grouped: dict[tuple[str, str, str], list[str]] = {}
    looked = 0
    for turn in turns:
        if not turn.grounded_offers:
            continue
        recording = turn.recording
        pieces = recording.context_pieces
        bodies = turn.bodies
        results = turn.result_of
        for exchange in recording.exchanges:
            for number in exchange.tool_pieces:
                piece = pieces[number]
                grounding = piece.detail.get("activated_by")
                if not isinstance(grounding, str):
                    continue
                looked += 1
                tool = str(piece.detail.get("tool", piece.source_id))
                body = bodies.get((piece.iteration, piece.source_id)) if piece.source_kind == "skill" else None
                if body is not None and body.verdict != "admitted":
                    cause = (f"the instructions of {piece.source_kind} '{piece.source_id}' that go with it were "
                             f"{body.verdict} ({shorten(body.reason, 60)})")
                    grouped.setdefault((tool, cause, grounding), []).append(exchange.step_id)
                result = results.get(grounding)
                position = turn.transcript_position.get(result) if result is not None else None
                if result is not None and (position is None or position >= exchange.message_count):
                    cause = f"the result of {grounding} that loaded it is no longer among the messages sent"
                    grouped.setdefault((tool, cause, grounding), []).append(exchange.step_id)
    if not looked:
        return [], "not_applicable", "no call was offered a tool whose offer depends on an earlier result"
    findings = [
        Finding("ungrounded_tool", (grounding, *calls),
                f"tool '{tool}' was offered to {', '.join(calls)} while {cause}",
                "the model can call a tool without the instructions or result that say when and how to use it")
        for (tool, cause, grounding), calls in grouped.items()
    ]
    return findings, "passed", f"{looked} offer(s) of result-dependent tools checked"


def invented_identifier(turns: list[Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    findings: list[Finding] = []
    looked = 0
    for turn in turns:
        recording = turn.recording
        transcript: _Transcript | None = None
        for exchange, call in turn.calls():
            wanted = _identifiers(call.args)
            if not wanted:
                continue
            looked += len(wanted)
            if transcript is None:
                transcript = _Transcript(recording.messages)
            for key, value in wanted:
                folded = value.casefold()
                if transcript.holds(folded, exchange.message_count):
                    continue
                sent = [exchange.system, *map(_message_text, exchange.injected_messages)]
                if any(_occurs(text, folded, len(text)) for text in (t.casefold() for t in sent)):
                    continue
                findings.append(Finding(
                    "invented_identifier", turn.steps_of(exchange, call),
                    f"{exchange.step_id} called tool '{call.name}' with {key or 'an argument'}="
                    f"'{shorten(value, 40)}', which appears nowhere in what that call was sent",
                    "an identifier the model made up points the tool at the wrong record, or at none",
                ))
    return _concluded(findings, looked, "no tool call carried an identifier-like argument",
                      f"{looked} identifier argument(s) traced to what their call was sent")


def _identifiers(args: Any, key: str = "", found: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """``(argument name, value)`` for each identifier-like value in a call's arguments, at any depth."""
    found = [] if found is None else found
    items = args.items() if isinstance(args, dict) else ((key, value) for value in args)
    for name, value in items:
        kind = type(value)
        if kind is str:
            if 0 < len(value) <= 64 and (_names_identifier(name) or _ID_VALUE.match(value)) and not value.isspace():
                found.append((name, value))
        elif kind is int:
            if _names_identifier(name):
                found.append((name, str(value)))
        elif kind is dict or kind is list:
            _identifiers(value, str(name), found)
    return found


@functools.lru_cache(maxsize=1024)
def _names_identifier(key: str) -> bool:
    return _ID_KEY.search(key) is not None


def _message_text(message: dict[str, Any]) -> str:
    calls = message.get("tool_calls")
    if not calls:
        return str(message.get("content") or "")
    return "\n".join([str(message.get("content") or ""), *(str(call.get("args")) for call in calls)])


class _Transcript:
    """A recording's transcript as one case-folded text, with where each message ends, built on first use.

    A call was sent a prefix of the transcript, so "does this value appear in what the call
    was sent" is one bounded search of that text: the last messages first (an identifier
    usually comes from the result just before), then the whole prefix, at the speed of ``str.find``.
    """

    __slots__ = ("ends", "text", "texts")

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.texts = [_message_text(m).casefold() for m in messages]
        self.text = "\n".join(self.texts)
        ends, position = [], 0
        for text in self.texts:
            position += len(text)
            ends.append(position)
            position += 1
        self.ends = ends

    def holds(self, value: str, count: int) -> bool:
        """Whether ``value`` (case-folded) stands as a whole word in the first ``count`` messages."""
        texts = self.texts
        for position in range(count - 1, max(count - 4, -1), -1):
            if _occurs(texts[position], value, len(texts[position])):
                return True
        return count > 0 and _occurs(self.text, value, self.ends[min(count, len(self.ends)) - 1])


def _occurs(text: str, value: str, end: int) -> bool:
    """Whether ``value`` occurs in ``text[:end]`` with no letter or digit glued to either side."""
    at = text.find(value, 0, end)
    while at >= 0:
        after = at + len(value)
        if (at == 0 or not text[at - 1].isalnum()) and (after >= len(text) or not text[after].isalnum()):
            return True
        at = text.find(value, at + 1, end)
    return False


def duplicate_tool_call(turns: list[Turn], _claims: Mapping[str, Any], _answer: str | None) -> CheckResult:
    findings: list[Finding] = []
    looked = 0
    for turn in turns:
        first: dict[str, int] = {}
        repeats: dict[int, list[int]] = {}
        for number, (_, call) in enumerate(turn.calls()):
            looked += 1
            key = f"{call.name}\x00{_args_key(call.args)}"
            earlier = first.setdefault(key, number)
            if earlier != number:
                repeats.setdefault(earlier, [earlier]).append(number)
        if not repeats:
            continue
        calls = list(turn.calls())
        for numbers in repeats.values():
            ran = [calls[n] for n in numbers if turn.ran_in.get(calls[n][1].id) is not None]
            if len(ran) < 2:
                continue
            steps = tuple(step for exchange, call in ran for step in turn.steps_of(exchange, call))
            findings.append(Finding(
                "duplicate_tool_call", steps,
                f"tool '{ran[0][1].name}' ran {len(ran)} times with the same arguments in one turn "
                f"({', '.join(str(turn.ran_in.get(call.id)) for _, call in ran)})",
                "the repeat bought nothing new, and a tool that acts on the world (sends, books, pays) acted twice",
            ))
    return _concluded(findings, looked, "the run called no tool", f"{looked} tool call(s) compared within their turn")


def _concluded(findings: list[Finding], looked: int, nothing: str, note: str) -> CheckResult:
    """What a check hands back: not applicable when it looked at nothing (``nothing`` says why), else its findings."""
    if not looked:
        return [], "not_applicable", nothing
    return findings, "passed", note


def _args_key(args: dict[str, Any]) -> str:
    """A text equal for equal arguments (flat ones without JSON encoding, the common case)."""
    if all(type(value) in (str, int, float, bool) or value is None for value in args.values()):
        return repr(sorted(args.items()))
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)

