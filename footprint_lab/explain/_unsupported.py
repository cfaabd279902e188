"""Unsupported values: the numbers, amounts, dates and names in an answer that no evidence it was sent holds.

Rule kept here: an answer may only state what its call was given. Every number, amount, date,
time, identifier and proper name in the final answer is looked for in what the answering LLM
call was sent (its system text piece by piece, the user's messages, tool results, earlier
replies); one found nowhere is reported with the nearest value of its kind that the evidence
does hold, and where that came from ("135 EUR in the answer; the result of tool 'lookup' said
120 EUR"). Values are compared by meaning, not by spelling: ``1,200``, ``1200`` and ``1 200``
are one number, ``$1,200.00`` is 1200 dollars, ``2026-03-14``, ``14 March 2026`` and
``March 14, 2026`` are one date (a slashed date is read both day-first and month-first), and a
name matches without case. Masks a redaction policy wrote (``[redacted:card]``) are no values.

What is not read as a name: the first word of a sentence (it is capitalised because it opens
it: "Maria Lopez approved" is read as "Lopez"), a title ("Dr"), month and weekday names,
currency words. A value the model worked out (a sum of two amounts the tool gave) is reported
too: it is in no evidence, and the finding says so.

Role: explain layer; registered as the ``unsupported_value`` check of
:mod:`footprint_lab.explain._integrity_checks`, a pure function of a ``Recording``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from footprint_lab.engine.schema import KIND_ASSISTANT, KIND_BASE, KIND_TOOL_RESULT, KIND_USER
from footprint_lab.explain._sources import describe_source

if TYPE_CHECKING:
    from footprint_lab.engine._recording import ContextPiece, LLMExchange, Recording

_MONTHS = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")), start=1) for name in names}
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
_CURRENCIES = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "eur": "EUR", "euro": "EUR", "euros": "EUR",
               "usd": "USD", "dollar": "USD", "dollars": "USD", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
               "jpy": "JPY", "yen": "JPY", "chf": "CHF", "cad": "CAD", "aud": "AUD", "inr": "INR", "sek": "SEK"}
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_NUMBER = r"\d{1,3}(?:[,  ]\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+,\d+|\d+(?:[.,]\d+)?"
_CODE = r"(?:" + "|".join(re.escape(c) for c in sorted(_CURRENCIES, key=len, reverse=True) if c.isalpha()) + r")"
_SYMBOL = r"[$€£¥]"
_MASK = re.compile(r"\[redacted:[^\]]*\]")
_DATES = (
    ("ymd", re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")),
    ("slashed", re.compile(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4}|\d{2})\b")),
    ("dmy", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})(?:,?\s+(\d{{4}}))?\b", re.I)),
    ("mdy", re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I)),
)
_AMOUNTS = (
    re.compile(rf"({_SYMBOL})\s?({_NUMBER})"),
    re.compile(rf"(?<![\w.])({_NUMBER})\s?({_SYMBOL}|{_CODE}\b)", re.I),
    re.compile(rf"\b({_CODE})\s?({_NUMBER})", re.I),
)
_TIME = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
_IDENTIFIER = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_#/][A-Za-z0-9]+)+(?![\w-])"
                         r"|(?<![\w-])(?=\w*\d)[A-Za-z]+\d+\w*(?![\w-])")
_LIST_MARKER = re.compile(r"^\s*\d+[.)]\s", re.M)
_PLAIN_NUMBER = re.compile(rf"(?<![\w.,:/-])(?:{_NUMBER})(?![\w]|[.,]\d)")
_WORD = r"[A-Z][a-z]+(?:['’-][A-Z]?[a-z]+)*"
_NAME = re.compile(rf"\b{_WORD}(?:\s+(?:(?:de|da|del|van|von|der|of|la|le)\s+)?{_WORD}){{0,3}}\b")
_OPENS_SENTENCE = re.compile(r"(?:^|[.!?:;]\s+|\n\s*(?:[-*•]\s*)?|[\"“(]\s*)$")


@dataclass(frozen=True, slots=True)
class Value:
    """One value read from a text: its ``kind``, how it was written, and what it means (``keys``, one or more)."""

    kind: str  # number, amount, date, time, identifier, name
    shown: str
    keys: tuple[Any, ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A value of the answer that no evidence holds, with the nearest one the evidence does hold."""

    value: Value
    nearest: Value | None
    source: str | None
    step: str | None

    def what(self, call: str) -> str:
        said = f"; {self.source} said {self.nearest.shown}" if self.nearest is not None else ""
        return f"{self.value.shown} ({self.value.kind}) in the answer appears in nothing {call} was sent{said}"


def unsupported_values(recording: Recording) -> tuple[list[Unsupported], str | None, int, str]:
    """``(unsupported values, the answering call's step, values read, note)`` for one recording."""
    answer = recording.answer
    if answer is None:
        return [], None, 0, "the run has no answer to read"
    found = _answering_call(recording, answer)
    if found is None:
        return [], None, 0, "no LLM call wrote the answer (nothing was sent to compare it with)"
    home, exchange = found
    stated = values_in(answer, names_at_sentence_start=False)
    if not stated:
        return [], exchange.step_id, 0, "the answer states no number, amount, date, identifier or name"
    pieces = [piece for piece in home.call_pieces(exchange) if piece.content]
    words = "\n".join(_MASK.sub(" ", piece.content) for piece in pieces).casefold()
    # written the same way in the evidence: supported, and nothing there needs reading (the common case)
    doubtful = [value for value in stated if not _all_words_in(value.shown, words, whole=value.kind != "name")]
    if not doubtful:
        return [], exchange.step_id, len(stated), f"{len(stated)} value(s) of the answer found in its evidence"
    evidence = [(piece, values_in(piece.content, names_at_sentence_start=True)) for piece in pieces]
    held = {key for _, values in evidence for value in values for key in _holds(value)}
    missing = []
    for value in doubtful:
        if any(key in held for key in _wants(value)) or (value.kind == "name" and _all_words_in(value.shown, words)):
            continue
        nearest = _nearest(value, evidence, home)
        missing.append(Unsupported(value, *nearest) if nearest else Unsupported(value, None, None, None))
    return missing, exchange.step_id, len(stated), f"{len(stated)} value(s) of the answer looked for in its evidence"


def _holds(value: Value) -> list[tuple[str, Any]]:
    """What an evidence value vouches for: itself, an amount's bare size, a dated day without its year."""
    if value.kind == "amount":
        return [*(("amount", key) for key in value.keys), *(("size", key[1]) for key in value.keys)]
    if value.kind == "date":
        return [*(("date", key) for key in value.keys), *(("day", key[1:]) for key in value.keys)]
    return [(value.kind, key) for key in value.keys]


def _wants(value: Value) -> list[tuple[str, Any]]:
    """What would support a stated value: a number by any number or amount of its size; an amount by the same
    amount or the bare number; a day without a year by that day of any year; a dated day by itself or yearless."""
    if value.kind == "number":
        return [*(("number", key) for key in value.keys), *(("size", key) for key in value.keys)]
    if value.kind == "amount":
        return [*(("amount", key) for key in value.keys), *(("number", key[1]) for key in value.keys)]
    if value.kind == "date":
        return [*(("date", key) for key in value.keys), *(("date", (None, *key[1:])) for key in value.keys),
                *(("day", key[1:]) for key in value.keys if key[0] is None)]
    return [(value.kind, key) for key in value.keys]


def values_in(text: str, *, names_at_sentence_start: bool) -> list[Value]:
    """Every value in ``text``, in order; a span read as a date or an amount is not read again as numbers."""
    text = _MASK.sub(lambda mask: " " * len(mask.group()), text)
    taken: list[tuple[int, int]] = []
    values: list[Value] = []

    def add(kind: str, match: re.Match[str], keys: tuple[Any, ...], shown: str | None = None) -> None:
        start, end = match.span()
        if keys and not any(start < e and s < end for s, e in taken):
            taken.append((start, end))
            values.append(Value(kind, shown or match.group().strip(), keys, start, end))

    for form, pattern in _DATES:
        for match in pattern.finditer(text):
            add("date", match, _date_keys(form, match.groups()))
    for pattern in _AMOUNTS:
        for match in pattern.finditer(text):
            first, second = match.groups()
            number, unit = (second, first) if not first[0].isdigit() else (first, second)
            currency = _CURRENCIES.get(unit.lower(), unit.upper())
            add("amount", match, tuple((currency, n) for n in _numbers(number)))
    for match in _TIME.finditer(text):
        add("time", match, ((int(match.group(1)), int(match.group(2))),))
    for match in _IDENTIFIER.finditer(text):
        add("identifier", match, (match.group().casefold(),))
    markers = {m.end() - 2 for m in _LIST_MARKER.finditer(text)}
    for match in _PLAIN_NUMBER.finditer(text):
        if match.start() not in markers and match.end() not in markers:
            add("number", match, tuple(_numbers(match.group())))
    for match in _NAME.finditer(text):
        name = _name(text, match, names_at_sentence_start)
        if name is not None:
            add("name", match, (name.casefold(),), name)
    values.sort(key=lambda value: value.start)
    return values


def _name(text: str, match: re.Match[str], at_start: bool) -> str | None:
    """The name a run of capitalised words is, or ``None`` (a sentence's first word, a month, a currency)."""
    words = match.group().split()
    opens = match.start() == 0 or bool(_OPENS_SENTENCE.search(text[max(0, match.start() - 4):match.start()]))
    if all(w.casefold().strip(".") in _NOT_NAMES for w in words):
        return None
    if opens and not at_start:  # capitalised because it opens the sentence: it tells nothing
        words = words[1:]
    while words and words[0].casefold().rstrip(".") in _TITLES:
        words = words[1:]
    return " ".join(words) or None


#: words in front of a name that are no part of it
_TITLES = {"mr", "ms", "mrs", "dr", "prof", "dear"}
_NOT_NAMES = {*_MONTHS, *_WEEKDAYS, *_CURRENCIES}


def _numbers(written: str) -> list[float]:
    """What a written number may mean: ``1,200`` and ``1 200`` are 1200; ``1.200,50`` is 1200.5; ``3,5`` is 3.5."""
    text = written.replace("\u00a0", " ").replace("\u202f", " ")
    readings: list[str] = []
    if re.fullmatch(r"\d{1,3}(?:[, ]\d{3})+(?:\.\d+)?", text):
        readings.append(text.replace(",", "").replace(" ", ""))
    elif re.fullmatch(r"\d{1,3}(?:\.\d{3})+,\d+", text):
        readings.append(text.replace(".", "").replace(",", "."))
    elif re.fullmatch(r"\d+,\d+", text):
        readings += [text.replace(",", "."), text.replace(",", "")]
    else:
        readings.append(text)
        if re.fullmatch(r"\d{1,3}\.\d{3}", text):  # 1.200: a thousand and two hundred, in much of Europe
            readings.append(text.replace(".", ""))
    found = []
    for reading in readings:
        try:
            found.append(float(reading))
        except ValueError:
            continue
    return found


def _date_keys(form: str, parts: tuple[str | None, ...]) -> tuple[Any, ...]:
    if form == "ymd":
        candidates = [(parts[0], parts[1], parts[2])]
    elif form == "slashed":
        first, second, year = parts
        candidates = [(year, second, first), (year, first, second)]  # day-first, then month-first
    elif form == "dmy":
        candidates = [(parts[2], str(_MONTHS[str(parts[1]).casefold().rstrip(".")]), parts[0])]
    else:
        candidates = [(parts[2], str(_MONTHS[str(parts[0]).casefold().rstrip(".")]), parts[1])]
    keys: list[Any] = []
    for year, month, day in candidates:
        full = None if year is None else int(year) + (2000 if len(year) == 2 else 0)
        try:
            date(full or 2000, int(str(month)), int(str(day)))
        except ValueError:
            continue
        keys.append((full, int(str(month)), int(str(day))))
    return tuple(keys)


def _all_words_in(shown: str, words: str, *, whole: bool = False) -> bool:
    """Whether each word of ``shown`` (or, ``whole``, all of it as written) stands in ``words`` on its own."""
    parts = [shown.casefold()] if whole else shown.casefold().split()
    return all(re.search(rf"(?<![\w.,]){re.escape(part)}(?![\w]|[.,]\d)", words) for part in parts)


def _answering_call(recording: Recording, answer: str) -> tuple[Recording, LLMExchange] | None:
    """The call whose reply is the answer (in a composition, the member's that wrote it), else the last call."""
    found: list[tuple[Recording, LLMExchange]] = []
    pending = [recording]
    while pending:
        current = pending.pop()
        found += [(current, x) for x in current.exchanges if (x.response.content or "").strip() == answer.strip()]
        pending += current.children
    if found:
        return found[-1] if recording.exchanges == [] else next(
            (pair for pair in reversed(found) if pair[0] is recording), found[-1])
    return (recording, recording.exchanges[-1]) if recording.exchanges else None


def _nearest(value: Value, evidence: list[tuple[ContextPiece, list[Value]]],
             recording: Recording) -> tuple[Value, str, str | None] | None:
    """The evidence value of a comparable kind closest to ``value``, where it came from, and the step that landed it."""
    best: tuple[float, Value, ContextPiece] | None = None
    for piece, values in evidence:
        for other in values:
            distance = _distance(value, other)
            if distance is not None and (best is None or distance < best[0]):
                best = (distance, other, piece)
    if best is None:
        return None
    _, other, piece = best
    return other, _said_by(piece, recording), piece.landed_by


_COMPARABLE = {"number": ("number", "amount"), "amount": ("amount", "number"), "date": ("date",), "time": ("time",),
               "identifier": ("identifier",), "name": ("name",)}


def _distance(value: Value, other: Value) -> float | None:
    """How far apart two values are (smaller is nearer); ``None`` when they are not of comparable kinds."""
    if other.kind not in _COMPARABLE[value.kind]:
        return None
    if value.kind in ("number", "amount"):
        gap = min(abs(a - b) / max(abs(a), abs(b), 1e-9) for a in _magnitudes(value) for b in _magnitudes(other))
        if value.kind == "amount":  # another amount in the same currency is the nearest kind of evidence
            gap += 0.25 if other.kind == "number" else 0.5 * (not set(_currencies(value)) & set(_currencies(other)))
        return gap
    if value.kind == "date":
        return min(_day_gap(a, b) for a in value.keys for b in other.keys)
    if value.kind == "time":
        (h, m), (oh, om) = value.keys[0], other.keys[0]
        return float(abs((h * 60 + m) - (oh * 60 + om)))
    ratio = SequenceMatcher(None, value.shown.casefold(), other.shown.casefold()).ratio()
    return None if ratio < 0.6 else 1.0 - ratio


def _magnitudes(value: Value) -> list[float]:
    return [k[1] if isinstance(k, tuple) else k for k in value.keys if isinstance(k, float | tuple)]


def _currencies(value: Value) -> list[str]:
    return [k[0] for k in value.keys if isinstance(k, tuple)]


def _day_gap(a: Any, b: Any) -> float:
    (ay, am, ad), (by, bm, bd) = a, b
    if ay is None or by is None:
        ay = by = ay or by or 2000
    return abs((date(ay, am, ad) - date(by, bm, bd)).days)


def _said_by(piece: ContextPiece, recording: Recording) -> str:
    """Where an evidence value came from, in a few words (a turn carried from an earlier run says so)."""
    kind = piece.source_kind
    earlier = " (an earlier turn)" if piece.detail.get("from_run") else ""
    if kind == KIND_TOOL_RESULT:
        tool = piece.detail.get("tool")
        if tool is None and piece.slot == "messages" and 0 <= piece.position < len(recording.messages):
            tool = recording.messages[piece.position].get("name")  # a carried result names its tool in the turn
        return f"the result of tool '{tool or '?'}'{earlier}"
    if kind == KIND_USER:
        return f"the user's message{earlier}"
    if kind == KIND_ASSISTANT:
        return "an earlier reply"
    if kind == KIND_BASE:
        return "the system prompt"
    return describe_source(piece)
