"""Unsupported values: the numbers, amounts, dates and names in an answer that no evidence it was sent holds.

Rule kept here: an answer may only state what its call was given. Every number, amount, date,
time, identifier and proper name in the final answer is looked for in what the answering LLM
call was sent (its system text piece by piece, the user's messages, tool results, earlier
replies); one found nowhere is reported once, with how many times the answer states it, and
with a near value of its kind that the evidence does hold and where that came from ("135 EUR
in the answer; the result of tool 'lookup' said 120 EUR").

Texts are read as a reader sees them: what is drawn as nothing (a soft hyphen, a zero-width joiner:
Unicode category Cf, and variation selectors) is dropped, so ``12\\u00ad34`` is 1234, and combining accents are
composed (NFC). Values are compared by meaning, not by spelling: ``1,200``, ``1200``,
``1 200`` and ``1'200`` are one number, ``$1,200.00`` is 1200 dollars; digits compare exactly
(two 20-digit ids differ when one digit does), a sign counts (``-5`` is not ``5``) and a number
written with a leading zero (``007``) is a code, equal only to the same digits. ``2026-03-14``,
``14 March 2026`` and ``March 14, 2026`` are one date (a slashed date is read both day-first and
month-first). A name matches without case, in any script: ``Zoë``, ``Müller``; in a script with
no capitals (``東京``) a run of its letters is read as a name when the text around it is mostly
in a script with capitals (in a text mostly written without capitals no word tells a name by
its shape, so none is read there), and is found when the evidence holds each pair of its
letters. Masks a redaction policy wrote (``[redacted:card]``) are no values.

What is not read as a name: the first word of a sentence (it is capitalised because it opens
it: "Maria Lopez approved" is read as "Lopez"), a title ("Dr"), month and weekday names,
currency words, a label (the words before a colon: ``Decision:``), and the words of a heading
written in title case (``## Order Summary``, a line wholly in bold). Markdown is read as the
reader sees it: list numbers (``1.``), heading and quote marks, bold and code marks are no values,
and a line, a list item or a table cell opens like a sentence. What is not read as a number: a
list number. A value the model worked out (a sum of two amounts the tool gave) is reported too:
it is in no evidence, and the finding says so.

Cost: each side is read once, into sets of what it holds, and each value of the answer is looked
up there, so the check is linear in the text. The near value shown with a finding is looked for
among the evidence values that sort next to it (by size, by day, by time; a name or identifier
by its spelling forwards and backwards, which keeps a typo's either side), not among all of them; a
name or identifier longer than 200 characters is reported without one.

Role: explain layer; registered as the ``unsupported_value`` check of
:mod:`footprint_lab.explain.checks.integrity`, a pure function of a ``Recording``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, Any

from footprint_lab.explain.provenance.sources import describe_source
from footprint_lab.record.schema import KIND_ASSISTANT, KIND_BASE, KIND_TOOL_RESULT, KIND_USER
from footprint_lab.record.unicode import invisible_class

if TYPE_CHECKING:
    from footprint_lab.record.recording import ContextPiece, LLMExchange, Recording

_MONTHS = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")), start=1) for name in names}
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
_CURRENCIES = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "eur": "EUR", "euro": "EUR", "euros": "EUR",
               "usd": "USD", "dollar": "USD", "dollars": "USD", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
               "jpy": "JPY", "yen": "JPY", "chf": "CHF", "cad": "CAD", "aud": "AUD", "inr": "INR", "sek": "SEK"}
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
#: a number as written: thousands in groups of three (comma, space, no-break space, apostrophe), or plain
_NUMBER = r"\d{1,3}(?:[,\u0020\u00a0\u202f'’]\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+,\d+|\d+(?:[.,]\d+)?"
_CODE = r"(?:" + "|".join(re.escape(c) for c in sorted(_CURRENCIES, key=len, reverse=True) if c.isalpha()) + r")"
_SYMBOL = r"[$€£¥]"
_SIGN = r"(?P<sign>[-−+]?)"
#: not the second group of thousands of a number (``200`` in ``1 200``): trying each group again is quadratic
_NOT_A_GROUP = r"(?!(?<=\d[,\u0020\u00a0\u202f'’])\d{3}(?!\d))"
_MASK = re.compile(r"\[redacted:[^\]]*\]")
_DATES = (
    ("ymd", re.compile(r"(?=\d)\b(\d{4})-(\d{1,2})-(\d{1,2})\b")),
    ("slashed", re.compile(r"(?=\d)\b(\d{1,2})[/.](\d{1,2})[/.](\d{4}|\d{2})\b")),
    ("dmy", re.compile(rf"(?=\d)\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})(?:,?\s+(\d{{4}}))?\b", re.I)),
    ("mdy", re.compile(rf"(?=[adfjmnos])\b({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I)),
)
_AMOUNTS = (
    re.compile(rf"(?=[-−+$€£¥])(?:(?<![\w.])(?P<sign>[-−+]))?(?P<unit>{_SYMBOL})\s?(?P<number>{_NUMBER})"),
    re.compile(rf"(?=[-−+\d])(?<![\w.,]){_NOT_A_GROUP}{_SIGN}(?P<number>{_NUMBER})\s?(?P<unit>{_SYMBOL}|{_CODE}\b)",
               re.I),
    re.compile(rf"(?=[a-z])\b(?P<unit>{_CODE})\s?{_SIGN}(?P<number>{_NUMBER})", re.I),
)
_TIME = re.compile(r"(?=\d)\b([01]?\d|2[0-3]):([0-5]\d)\b")
_IDENTIFIER = re.compile(r"(?=[^\W_])(?<![\w-])(?:(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[^\W_]+(?:[-_#/][^\W_]+)+(?![\w-])"
                         r"|(?=\w*\d)[^\W\d_]+\d+\w*(?![\w-]))")
#: a number standing alone: signed when a minus opens it, or the end of a range (``10-20``)
_PLAIN_NUMBER = re.compile(rf"(?=[-−+\d])(?:(?<![\w.,:/+−-]){_SIGN}|(?<=\d-))(?P<number>{_NUMBER})(?![\w]|[.,]\d)")
#: in the evidence, a number anywhere a reader would see one: inside a date, a time or an identifier too
_ANY_NUMBER = re.compile(rf"(?=\d)(?<![\w.,])(?P<number>{_NUMBER})(?![\w]|[.,]\d)")
#: markdown a reader does not read as text: a line's quote, heading, bullet and list-number marks,
#: then bold and italic marks, code marks
_MARKUP = (re.compile(r"^[ \t]*(?:>[ \t]*)*(?:#{1,6}[ \t]+)?(?:[-*+•][ \t]+)?(?:\d{1,3}[.)][ \t]+)?", re.M),
           re.compile(r"(?=[*`_])(?:\*+|`+|(?<!\w)_+(?=\w)|(?<=\w)_+(?!\w)|(?<!\w)_+(?!\w))"))
_HEADING = re.compile(r"^[ \t]*(?:>[ \t]*)*(?:#{1,6}[ \t].*|(?:\*\*|__).*(?:\*\*|__)[ \t]*:?[ \t]*)$", re.M)
#: the scripts written without spaces between words (Thai, Lao, Myanmar, Khmer, Hangul, kana, CJK)
_SPACELESS = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3000-\u30ff\u3100-\u318f"
                        "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+")
_BLANKS = " \t\u00a0\u202f\u3000"
_ENDS_SENTENCE = ".!?…。！？"
_OPENS = ":;|([{\"“‘«„「『¿¡"
_CLOSES = "\"”’»)]'」』"
_PARTICLES = r"(?:de|da|del|della|di|do|dos|du|van|von|der|den|of|la|le|al|bin|ibn)"


@functools.cache
def _letters() -> dict[str, re.Pattern[str]]:
    """The patterns that need Unicode's letter classes, built once on first use (re has no \\p{Lu}). Letters
    past the first plane are not read: re matches a class holding them range by range, slowly."""
    classes: dict[str, list[int]] = {"upper": [], "lower": [], "caseless": []}
    for code in range(0x10000):
        category = unicodedata.category(chr(code))
        if category in ("Lu", "Lt"):
            classes["upper"].append(code)
        elif category in ("Ll", "Lm"):
            classes["lower"].append(code)
        if category in ("Lo", "Lm") and not 0x3040 <= code <= 0x309F:  # hiragana writes grammar, not names
            classes["caseless"].append(code)
    upper, lower, caseless = (_char_class(codes) for codes in classes.values())
    word = rf"[{upper}](?:[{lower}]+|['’][{upper}][{lower}]+)(?:['’-][{upper}]?[{lower}]+|[{upper}][{lower}]+)*"
    return {
        "unseen": re.compile(f"[{invisible_class()}]"),
        "name": re.compile(rf"(?<![\w'’-]){word}(?:[ \t]+(?:{_PARTICLES}[ \t]+)?{word}){{0,3}}(?![\w])"),
        "caseless": re.compile(rf"[{caseless}](?<![{upper}{lower}][{caseless}])[{caseless}]*(?![{upper}{lower}])"),
        "cased": re.compile(f"[{upper}{lower}]+"),
        "lower word": re.compile(rf"(?<![\w'’])[{lower}][^\W\d_]{{3,}}"),  # four letters or more, opened in lower case
    }


def _char_class(codes: Iterable[int]) -> str:
    """A regular-expression character class body holding exactly ``codes``, as ranges."""
    parts = []
    for _, run in itertools.groupby(enumerate(codes), key=lambda pair: pair[1] - pair[0]):
        first, *rest = (code for _, code in run)
        last = rest[-1] if rest else first
        parts.append(f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}")
    return "".join(parts)


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
    """A value of the answer that no evidence holds (stated ``count`` times), with a near one the evidence holds."""

    value: Value
    nearest: Value | None
    source: str | None
    step: str | None
    count: int = 1

    def what(self, call: str) -> str:
        said = f"; {self.source} said {self.nearest.shown}" if self.nearest is not None else ""
        times = f", stated {self.count:,} times" if self.count > 1 else ""
        return f"{self.value.shown} ({self.value.kind}{times}) in the answer appears in nothing {call} was sent{said}"


def unsupported_values(recording: Recording) -> tuple[list[Unsupported], str | None, int, str]:
    """``(unsupported values, the answering call's step, values read, note)`` for one recording.

    Each distinct value of the answer is one entry, however often the answer states it.
    """
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
    distinct: dict[tuple[str, tuple[Any, ...]], list[Any]] = {}
    for value in stated:
        distinct.setdefault((value.kind, value.keys), [value, 0])[1] += 1
    evidence = _Evidence(home, [piece for piece in home.call_pieces(exchange) if piece.content])
    missing = [Unsupported(value, *evidence.nearest(value), count=count)
               for value, count in distinct.values() if not evidence.holds(value)]
    done = "looked for in" if missing else "found in"
    return missing, exchange.step_id, len(stated), f"{len(stated)} value(s) of the answer {done} its evidence"


def as_seen(text: str) -> str:
    """``text`` as a reader sees it: composed (NFC), without invisible format characters, masks blanked."""
    text = _letters()["unseen"].sub("", unicodedata.normalize("NFC", text))
    return _MASK.sub(lambda mask: " " * len(mask.group()), text)


def values_in(text: str, *, names_at_sentence_start: bool) -> list[Value]:
    """Every value in ``text`` as a reader sees it, in order; a span read as a date or an amount is not read
    again as numbers."""
    return _read(as_seen(text), names_at_sentence_start)


def _read(seen: str, names_at_sentence_start: bool) -> list[Value]:
    names = _unmarked(_HEADING.sub(lambda line: _blank(line) if _title_case(line.group()) else line.group(), seen))
    text = _SPACELESS.sub(_blank, _unmarked(seen))  # a letter of a script without spaces parts values like one
    taken = bytearray(len(text))  # 1 where a value was read already
    values: list[Value] = []

    def add(kind: str, match: re.Match[str], keys: tuple[Any, ...], shown: str | None = None) -> None:
        start, end = match.span()
        if keys and taken.find(1, start, end) < 0:
            taken[start:end] = b"\x01" * (end - start)
            values.append(Value(kind, shown or match.group().strip(), keys, start, end))

    for form, pattern in _DATES:
        for match in pattern.finditer(text):
            add("date", match, _date_keys(form, match.groups()))
    for pattern in _AMOUNTS:
        for match in pattern.finditer(text):
            unit = match["unit"]
            currency = _CURRENCIES.get(unit.lower(), unit.upper())
            add("amount", match, tuple((currency, n) for n in _numbers(match["number"], match["sign"] or "")))
    for match in _TIME.finditer(text):
        add("time", match, ((int(match.group(1)), int(match.group(2))),))
    for match in _IDENTIFIER.finditer(text):
        add("identifier", match, (match.group().casefold(),))
    for match in _PLAIN_NUMBER.finditer(text):
        add("number", match, _numbers(match["number"], match["sign"] or ""))
    letters = _letters()
    for match in letters["name"].finditer(names):
        name = _name(names, match, names_at_sentence_start)
        if name is not None:
            add("name", match, (name.casefold(),), name)
    runs = list(letters["caseless"].finditer(names))
    if runs and sum(len(run.group()) for run in runs) <= len(names) - len(letters["cased"].sub("", names)):
        for match in runs:  # a run of a script without capitals, among text mostly written with them
            add("name", match, (match.group(),))
    values.sort(key=lambda value: value.start)
    return values


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def _unmarked(text: str) -> str:
    """``text`` with its markdown marks blanked (positions kept)."""
    for marks in _MARKUP:
        text = marks.sub(_blank, text)
    return text


def _title_case(line: str) -> bool:
    """Whether a heading line is written in title case: no word of four letters or more opens in lower case."""
    return _letters()["lower word"].search(_unmarked(line)) is None


def _name(text: str, match: re.Match[str], at_start: bool) -> str | None:
    """The name a run of capitalised words is, or ``None`` (a sentence's first word, a label, a month...)."""
    words = match.group().split()
    if all(w.casefold().strip(".") in _NOT_NAMES for w in words) or text.startswith(":", match.end()):
        return None
    if not at_start and _opens(text, match.start()):  # capitalised because it opens the sentence: it tells nothing
        words = words[1:]
    while words and (words[0].casefold().rstrip(".") in _TITLES or words[0].islower()):
        words = words[1:]
    return " ".join(words) or None


def _opens(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence, a line, a list item or a table cell."""
    before = start - 1
    while before >= 0 and text[before] in _BLANKS:
        before -= 1
    if before < 0 or text[before] == "\n" or text[before] in _OPENS:
        return True
    while before > 0 and text[before] in _CLOSES:
        before -= 1
    return text[before] in _ENDS_SENTENCE


#: words in front of a name that are no part of it
_TITLES = {"mr", "ms", "mrs", "dr", "prof", "dear"}
_NOT_NAMES = {*_MONTHS, *_WEEKDAYS, *_CURRENCIES}


def _numbers(written: str, sign: str) -> tuple[Decimal | str, ...]:
    """What a written number may mean, exactly: ``1,200``, ``1 200`` and ``1'200`` are 1200; ``1.200,50`` is
    1200.5; ``3,5`` is 3.5 or 35. Digits are kept exactly (a Decimal, never a float); a number with a leading
    zero is a code, its digits as written (``007``); a minus makes it negative."""
    text = _SPACES.sub(" ", written)
    if written.isdigit():
        readings = [written]
    elif _THOUSANDS.fullmatch(text):
        readings = [text.replace(",", "").replace(" ", "")]
    elif _DOTTED_THOUSANDS.fullmatch(text):
        readings = [text.replace(".", "").replace(",", ".")]
    elif _COMMA.fullmatch(text):
        readings = [text.replace(",", "."), text.replace(",", "")]
    else:
        readings = [text]
        if _DOT_THOUSAND.fullmatch(text):  # 1.200: a thousand and two hundred, in much of Europe
            readings.append(text.replace(".", ""))
    negative = sign in ("-", "−")
    return tuple(("-" if negative else "") + reading if len(reading) > 1 and reading[1].isdigit()
                 and int(reading[0]) == 0 else -Decimal(reading) if negative else Decimal(reading)
                 for reading in readings)


_SPACES = re.compile(r"[\u00a0\u202f'’]")
_THOUSANDS = re.compile(r"\d{1,3}(?:[, ]\d{3})+(?:\.\d+)?")
_DOTTED_THOUSANDS = re.compile(r"\d{1,3}(?:\.\d{3})+,\d+")
_COMMA = re.compile(r"\d+,\d+")
_DOT_THOUSAND = re.compile(r"\d{1,3}\.\d{3}")


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


_WORDS = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_POSSESSIVE = re.compile(r"['’]s$")


class _Evidence:
    """What the pieces a call was sent hold, read once: the keys of their values, the words they use, and their
    values sorted for finding a near one."""

    def __init__(self, recording: Recording, pieces: list[ContextPiece]) -> None:
        self.recording = recording
        self.keys: set[tuple[str, Any]] = set()
        self.words: set[str] = set()
        self.texts: list[str] = []
        places: dict[Any, dict[Any, tuple[int, tuple[Value, ContextPiece]]]] = {}
        seen = itertools.count()
        for piece in pieces:
            text = as_seen(piece.content)
            self.texts.append(text)
            words = _WORDS.findall(text.casefold())
            self.words.update(words, (_POSSESSIVE.sub("", word) for word in words))
            spaced = _SPACELESS.sub(_blank, text)
            self.keys.update(("number", key) for match in _ANY_NUMBER.finditer(spaced)
                             for key in _numbers(match["number"], _minus_before(spaced, match.start())))
            for value in _read(text, True):
                self.keys.update(_holds(value))
                if value.kind == "identifier":  # a part of a longer one: "A-1001" in "orders/A-1001/items"
                    self.keys.update(("identifier", part) for part in _segments(value.keys[0]))
                for index, position in _places(value):
                    places.setdefault(index, {}).setdefault(position, (next(seen), (value, piece)))
        self.order = {index: sorted(entries.items()) for index, entries in places.items()}
        self.pairs: set[str] | None = None

    def holds(self, value: Value) -> bool:
        if any(key in self.keys for key in _wants(value)):
            return True
        if value.kind != "name":
            return False
        if not _letters()["cased"].search(value.shown):  # a script without capitals: each pair of its letters
            return all(pair in self._pairs() for pair in _letter_pairs(value.shown))
        return all(word in self.words or _POSSESSIVE.sub("", word) in self.words
                   for word in _WORDS.findall(value.shown.casefold()))

    def _pairs(self) -> set[str]:
        if self.pairs is None:
            self.pairs = {pair for text in self.texts for run in _letters()["caseless"].findall(text)
                          for pair in _letter_pairs(run)}
        return self.pairs

    def nearest(self, value: Value) -> tuple[Value | None, str | None, str | None]:
        """A near evidence value of a comparable kind, where it came from, and the step that landed it."""
        near: dict[int, tuple[Value, ContextPiece]] = {}
        for index, position in _places(value, looking=True):
            order = self.order.get(index, [])
            at = bisect.bisect_left(order, position, key=_position)
            near.update(entry for _, entry in order[max(0, at - _NEIGHBOURS):at + _NEIGHBOURS])
        best: tuple[float, int, Value, ContextPiece] | None = None
        spelling = SequenceMatcher(None, b=value.shown.casefold())  # read once, compared with each near one
        for seen, (other, piece) in near.items():
            distance = _distance(value, other, spelling)
            if distance is not None and (best is None or (distance, seen) < best[:2]):
                best = (distance, seen, other, piece)
        if best is None:
            return None, None, None
        return best[2], _said_by(best[3], self.recording), best[3].landed_by


#: how many evidence values on either side of where a stated value sorts are compared with it
_NEIGHBOURS = 2


def _position(entry: tuple[Any, Any]) -> Any:
    return entry[0]


def _places(value: Value, *, looking: bool = False) -> list[tuple[Any, Any]]:
    """Where ``value`` sorts, as ``(list, position)`` pairs: by size among numbers and amounts of its currency,
    by day, by minute, by spelling forwards and backwards; ``looking``, the lists a stated value is compared
    with (an amount is compared with every currency's amounts and with bare numbers)."""
    if value.kind in ("number", "amount"):
        sizes = [(key[0] if isinstance(key, tuple) else None, _size(key)) for key in value.keys]
        if not looking:
            return [(("size", currency), size) for currency, size in sizes]
        return [(("size", currency), size) for _, size in sizes for currency in _SIZE_LISTS]
    if value.kind == "date":
        days = [(("date", "day of year"), date(2000, month, day).toordinal()) for _, month, day in value.keys]
        return days + [(("date", "day"), date(year, month, day).toordinal()) for year, month, day in value.keys
                       if year is not None]
    if value.kind == "time":
        return [(("time",), hours * 60 + minutes) for hours, minutes in value.keys]
    spelled = value.shown.casefold()
    return [((value.kind, "forwards"), spelled), ((value.kind, "backwards"), spelled[::-1])]


#: the lists of sizes: bare numbers' (no currency), then each currency's amounts
_SIZE_LISTS = (None, *sorted(set(_CURRENCIES.values())))


def _size(key: Any) -> Decimal:
    number = key[1] if isinstance(key, tuple) else key
    return number if isinstance(number, Decimal) else Decimal(number)


def _minus_before(text: str, start: int) -> str:
    """``"-"`` when a minus opens the number at ``start`` (a hyphen after a letter or digit joins, it is no sign)."""
    opens = start > 0 and text[start - 1] in "-−" and (start < 2 or not text[start - 2].isalnum())
    return "-" if opens else ""


def _segments(identifier: str) -> list[str]:
    """The runs of one to four segments in an identifier: ``a-1001`` and ``1001/items`` in ``orders/a-1001/items``."""
    parts = re.split(r"([-_#/])", identifier)
    count = len(parts) // 2 + 1
    return ["".join(parts[2 * first:2 * last - 1]) for first in range(count)
            for last in range(first + 1, min(first + 5, count + 1))]


def _letter_pairs(run: str) -> set[str]:
    """Each pair of neighbouring letters in ``run`` (the letter itself when it is one)."""
    return {run[at:at + 2] for at in range(max(1, len(run) - 1))}


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


_COMPARABLE = {"number": ("number", "amount"), "amount": ("amount", "number"), "date": ("date",), "time": ("time",),
               "identifier": ("identifier",), "name": ("name",)}


def _distance(value: Value, other: Value, spelling: SequenceMatcher[str]) -> float | None:
    """How far apart two values are (smaller is nearer); ``None`` when they are not of comparable kinds.
    ``spelling`` holds ``value`` as written, casefolded, as its second sequence."""
    if other.kind not in _COMPARABLE[value.kind]:
        return None
    if value.kind in ("number", "amount"):
        gap = float(min(abs(a - b) / max(abs(a), abs(b), _TINY) for a in _sizes(value) for b in _sizes(other)))
        if value.kind == "amount":  # another amount in the same currency is the nearest kind of evidence
            gap += 0.25 if other.kind == "number" else 0.5 * (not set(_currencies(value)) & set(_currencies(other)))
        return gap
    if value.kind == "date":
        return min(_day_gap(a, b) for a in value.keys for b in other.keys)
    if value.kind == "time":
        (h, m), (oh, om) = value.keys[0], other.keys[0]
        return float(abs((h * 60 + m) - (oh * 60 + om)))
    if max(len(value.shown), len(other.shown)) > _SPELLING_LIMIT:  # comparing spellings is quadratic in them
        return None
    spelling.set_seq1(other.shown.casefold())
    if spelling.real_quick_ratio() < 0.6 or spelling.quick_ratio() < 0.6:  # bounds of the ratio, cheaper to get
        return None
    ratio = spelling.ratio()
    return None if ratio < 0.6 else 1.0 - ratio


_TINY = Decimal("1e-9")
#: the longest name or identifier whose spelling is compared with others (a longer one is named with no near value)
_SPELLING_LIMIT = 200


def _sizes(value: Value) -> list[Decimal]:
    return [_size(key) for key in value.keys]


def _currencies(value: Value) -> list[str]:
    return [k[0] for k in value.keys if isinstance(k, tuple)]


def _day_gap(a: Any, b: Any) -> float:
    """Days between two dates; with a year missing on either side, between the two days of one (leap) year."""
    (ay, am, ad), (by, bm, bd) = a, b
    if ay is None or by is None:
        ay = by = 2000
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
