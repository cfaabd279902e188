"""The values a text holds, read as a reader sees it: numbers, amounts, dates, times, identifiers, names.

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
list number.

Each value keeps its kind, how it was written, and what it means (its keys, one or more: a
slashed date is two); a span read as a date or an amount is not read again as numbers.

Role: explain layer; read by the ``unsupported_value`` check
(:mod:`footprint_lab.explain.checks._unsupported`), for the answer and for its evidence alike.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from footprint_lab.base.unicode import invisible_class

_MONTHS = {name: number for number, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec")), start=1) for name in names}
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
CURRENCIES = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "eur": "EUR", "euro": "EUR", "euros": "EUR",
              "usd": "USD", "dollar": "USD", "dollars": "USD", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
              "jpy": "JPY", "yen": "JPY", "chf": "CHF", "cad": "CAD", "aud": "AUD", "inr": "INR", "sek": "SEK"}
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
#: a number as written: thousands in groups of three (comma, space, no-break space, apostrophe), or plain
_NUMBER = r"\d{1,3}(?:[,\u0020\u00a0\u202f'’]\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+,\d+|\d+(?:[.,]\d+)?"
_CODE = r"(?:" + "|".join(re.escape(c) for c in sorted(CURRENCIES, key=len, reverse=True) if c.isalpha()) + r")"
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
def letter_patterns() -> dict[str, re.Pattern[str]]:
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


def as_seen(text: str) -> str:
    """``text`` as a reader sees it: composed (NFC), without invisible format characters, masks blanked."""
    text = letter_patterns()["unseen"].sub("", unicodedata.normalize("NFC", text))
    return _MASK.sub(lambda mask: " " * len(mask.group()), text)


def values_in(text: str, *, names_at_sentence_start: bool) -> list[Value]:
    """Every value in ``text`` as a reader sees it, in order; a span read as a date or an amount is not read
    again as numbers."""
    return read_values(as_seen(text), names_at_sentence_start)


def read_values(seen: str, names_at_sentence_start: bool) -> list[Value]:
    """Every value in ``seen``, a text already as a reader sees it (``as_seen``), in order."""
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
            currency = CURRENCIES.get(unit.lower(), unit.upper())
            add("amount", match, tuple((currency, n) for n in _numbers(match["number"], match["sign"] or "")))
    for match in _TIME.finditer(text):
        add("time", match, ((int(match.group(1)), int(match.group(2))),))
    for match in _IDENTIFIER.finditer(text):
        add("identifier", match, (match.group().casefold(),))
    for match in _PLAIN_NUMBER.finditer(text):
        add("number", match, _numbers(match["number"], match["sign"] or ""))
    letters = letter_patterns()
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
    return letter_patterns()["lower word"].search(_unmarked(line)) is None


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
_NOT_NAMES = {*_MONTHS, *_WEEKDAYS, *CURRENCIES}


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


def numbers_anywhere(seen: str) -> Iterator[Decimal | str]:
    """What each number a reader sees in ``seen`` (a text as seen) may mean, a number inside a date, a time or
    an identifier included: how the evidence is searched for a number the answer states."""
    spaced = _SPACELESS.sub(_blank, seen)
    for match in _ANY_NUMBER.finditer(spaced):
        yield from _numbers(match["number"], _minus_before(spaced, match.start()))


def _minus_before(text: str, start: int) -> str:
    """``"-"`` when a minus opens the number at ``start`` (a hyphen after a letter or digit joins, it is no sign)."""
    opens = start > 0 and text[start - 1] in "-−" and (start < 2 or not text[start - 2].isalnum())
    return "-" if opens else ""

