"""What a reader sees of a text: ``unhidden`` masks a match found in the reading where it sits in the raw text.

Rule kept here: a text is read as a reader sees it, once ANSI escape codes, HTML comments and
characters drawn as nothing are dropped, HTML entities read, tags dropped where the text is
drawn as HTML or markdown (a line break for an element drawn on a line of its own), markdown's
marks dropped, and direction overrides applied; each position is mapped back to the raw text, so
a match found in the reading is masked in the raw text, tags kept. The reading runs in one pass
over a text, whatever it holds.

Role: lab layer (``footprint_lab.notebook``); read through by ``scan`` and ``scrub``
(:mod:`footprint_lab.notebook._scrub`), with the reading each part of a notebook is drawn in
named by :func:`footprint_lab.notebook._walk.walk`.
"""

from __future__ import annotations

import bisect
import functools
import html
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from footprint_lab.base.unicode import DIRECTION_CONTROLS, display_order, invisible_class

#: a text is read as plain text (``""``), as HTML (tags drawn as nothing) or as markdown (HTML, and
#: the backslash of an escape and the emphasis and code marks too); a markdown cell is read a second time with its
#: emphasis marks kept (``MARKS_KEPT``: ``hunter_2x`` inside a word, or a lone ``*``, is drawn as it is)
PLAIN, HTML, MARKDOWN, MARKS_KEPT = "", "html", "markdown", "markdown, marks kept"
#: elements a browser draws on a line of their own: read as a line break, so text on two sides is never joined
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt", "fieldset", "figcaption",
    "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p",
    "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"})
#: what is dropped or read in every text: ANSI codes, HTML comments as a browser ends them ("<!-->" and
#: "<!--->" are whole, empty ones, "--!>" ends one too, and an unclosed one runs to the end), entities
#: (any count of digits), and a run of characters drawn as nothing
_EVERYWHERE = (
    r"(?P<ansi>\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_])"
    r"|(?P<comment><!--(?:-?>|.*?(?:--!?>|\Z)))"
    r"|(?P<entity>&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]{1,31});?)"
    r"|(?P<invisible>[{invisible}]+)"
)
#: what needs a ">" to close it: "<!...>" and "<?...>" (comments of their own), and in markup a tag, whose
#: quoted attribute values may hold a ">" (``<span title="a>b">``); a tag whose quoted value holds the last ">"
#: runs to the end, as a browser reads it: possessive and never failing, so each tag is read once
_CLOSED = {PLAIN: r"|(?P<comment2><[!?][^>]*>)",
           HTML: r"|(?P<comment2><[!?][^>]*>)|(?P<tag></?([A-Za-z][A-Za-z0-9-]*)"
                 r"""(?:[^>"'=]++|=\s*+"[^"]*+"|=\s*+'[^']*+'|["'=])*+(?:>|\Z))"""}
_CLOSED[MARKDOWN] = _CLOSED[MARKS_KEPT] = _CLOSED[HTML]
#: markdown's marks a reader does not see: the backslash of an escape (the character it escapes is drawn),
#: emphasis, strike-through and code marks, and a link's brackets and destination (``[sk-ab](https://x)cd`` reads
#: ``sk-abcd``; each scan stops at a bracket, a parenthesis or a space, so the reading stays one pass)
_ESCAPED = r"|(?P<escaped>\\[!-/:-@\[-`{-~])"
_MARKS = _ESCAPED + r"|(?P<mark>[*_~`]+|!?\[|\]\([^()\s]*\)|\]\[[^\[\]\s]*\])"


@functools.cache
def _reader(reading: str, closed: bool) -> re.Pattern[str]:
    """The tokens a text is read through in ``reading``; ``closed``: with those a ">" must close (read only
    where one still follows, so a text full of unclosed "<!" or "<a" is read in one pass, never in a quadratic one)."""
    body = _EVERYWHERE.replace("{invisible}", invisible_class()) + (_CLOSED[reading] if closed else "")
    return re.compile(body + {MARKDOWN: _MARKS, MARKS_KEPT: _ESCAPED}.get(reading, ""), re.S)


def _entity(token: str) -> str:
    """What a browser shows for an HTML entity: a numeric one read past its leading zeros, and one too
    large for any character (more digits than int() takes, too) as U+FFFD."""
    numeric = _NUMERIC.fullmatch(token)
    if numeric is None:
        return html.unescape(token)
    base, digits = numeric.groups()
    return html.unescape(f"&#{base}{digits or '0'};") if len(digits) <= 8 else "\ufffd"


_NUMERIC = re.compile(r"&#([xX]?)0*([0-9a-fA-F]*);?")


def _tokens(text: str, reading: str) -> Iterator[re.Match[str]]:
    """The tokens of ``text``, in order: up to its last ">" with those a ">" closes, after it without them."""
    last = text.rfind(">") + 1
    if last and text.find("<", last) == -1:  # nothing could open after the last ">": one pass over all
        last = len(text)
    head = _reader(reading, closed=True).finditer(text, 0, last)
    for found in head:
        if found.lastgroup == "comment" and found.end() == last < len(text) and not _ended(found.group()):
            return  # an unclosed comment, cut at the last ">": it runs to the end, nothing after it is read
        yield found
    yield from _reader(reading, closed=False).finditer(text, last)


def _ended(comment: str) -> bool:
    return comment in ("<!-->", "<!--->") or comment.endswith(("-->", "--!>"))


class _Reading(NamedTuple):
    """What a reader sees of a text, and where each part of it came from there: per piece, its start in
    the reading and the span it stands for in the text (a literal piece maps character by character)."""

    text: str
    starts: list[int]
    sources: list[tuple[int, int, bool]]
    tags: list[tuple[int, int]]  # the tags of the text (kept when the text around them is masked)
    drawn: bool  # whether direction controls put the reading in another order than the text's

    def span(self, start: int, stop: int) -> tuple[int, int, bool]:
        """The span of the text that the reading's ``start:stop`` was drawn from (the smallest that holds it
        all), and whether it is drawn backwards there (its last character comes first in the text)."""
        first = bisect.bisect_right(self.starts, start) - 1
        last = bisect.bisect_right(self.starts, stop - 1) - 1
        begins, ends = [], []
        for piece in range(first, last + 1):
            at, (raw_begin, raw_end, literal) = self.starts[piece], self.sources[piece]
            if literal:
                begins.append(raw_begin + max(start, at) - at)
                ends.append(raw_begin + min(stop, at + raw_end - raw_begin) - at)
            else:
                begins.append(raw_begin)
                ends.append(raw_end)
        return min(begins), max(ends), begins[0] > begins[-1]


def _read(text: str, reading: str) -> _Reading | None:
    """``text`` as a reader sees it (``None`` when that is the text itself): ANSI codes, comments and
    characters drawn as nothing dropped, entities read, tags dropped in markup (a line break for an element
    drawn on a line of its own), markdown's marks dropped, and direction controls applied."""
    pieces: list[tuple[str, int, int, bool]] = []  # what is read, the span of the text it stands for, literal
    tags: list[tuple[int, int]] = []
    at = 0
    for found in _tokens(text, reading):
        begin, end = found.span()
        if begin > at:
            pieces.append((text[at:begin], at, begin, True))
        kind, token = found.lastgroup, found.group()
        if kind == "entity":
            shown = "".join(char for char in _entity(token)
                            if char in DIRECTION_CONTROLS or not _drawn_as_nothing(char))
            if shown:
                pieces.append((shown, begin, end, shown == token))
        elif kind == "invisible":  # each direction control kept to be applied; the rest is dropped
            pieces.extend((char, begin + k, begin + k + 1, True) for k, char in enumerate(token)
                          if char in DIRECTION_CONTROLS)
        elif kind == "escaped":  # the backslash is not drawn, the character after it is
            pieces.append((token[1], begin + 1, end, True))
        elif kind == "tag":
            tags.append((begin, end))
            if found.group(found.re.groupindex["tag"] + 1).lower() in _BLOCKS:
                pieces.append(("\n", begin, end, False))
        at = end
    if at == 0 and not pieces and not tags:
        return None
    if at < len(text):
        pieces.append((text[at:], at, len(text), True))
    shown = "".join(piece[0] for piece in pieces)
    drawn = any(char in DIRECTION_CONTROLS for char in shown)
    if drawn:  # one piece per character, in the order they are drawn (the controls themselves left out)
        chars = [(char, b + k, b + k + 1, True) if literal else (char, b, e, False)
                 for piece, b, e, literal in pieces for k, char in enumerate(piece)]
        pieces = [chars[k] for k in display_order(shown)]
    starts, length = [], 0
    for piece in pieces:
        starts.append(length)
        length += len(piece[0])
    return _Reading("".join(piece[0] for piece in pieces), starts, [p[1:] for p in pieces], tags, drawn)


def _drawn_as_nothing(char: str) -> bool:
    return _invisible().fullmatch(char) is not None


@functools.cache
def _invisible() -> re.Pattern[str]:
    return re.compile(f"[{invisible_class()}]")


def unhidden(text: str, hits: Callable[[str], list[tuple[int, int, str]]], reading: str = PLAIN) -> str:
    """``text`` with what ``hits`` finds in what a reader sees of it (:func:`_read`) masked where it sits in
    the text: a match spread over ``&#115;k-...``, ``sk-<!-- -->...``, ``sk-<b>...</b>``, ``sk-\\u200b...``,
    ``sk-\\x1b[0m...`` or typed backwards after U+202E is replaced whole, from its first character to its
    last in the text. Tags inside stay (the markup around and between is kept); what is masked inside a
    right-to-left override is written inside an isolate, so the mask reads the right way round."""
    read = _read(text, reading)
    if read is None:
        return text
    spans = sorted((*read.span(start, stop), mask) for start, stop, mask in hits(read.text) if stop > start)
    if not spans:
        return text
    out: list[str] = []
    cursor = 0
    for begin, finish, backwards, mask in spans:
        if finish <= cursor:  # inside the match before: masked already
            continue
        kept = "".join(text[b:e] for b, e in read.tags if max(begin, cursor) <= b and e <= finish)
        if begin < cursor:
            out.append(kept)
        else:
            out.append(text[cursor:begin])
            out.append((f"\u2066{mask}\u2069" if backwards else mask) + kept)
        cursor = finish
    out.append(text[cursor:])
    return "".join(out)
