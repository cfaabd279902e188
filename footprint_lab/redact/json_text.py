"""JSON text as the scrubber reads it for covered keys: which texts are JSON, their documents, and where each key and
its value are spelled.

Rule kept here: a text is read as JSON when, its surrounding whitespace aside, it is a JSON object or array, lines
(``\\n`` or ``\\r\\n`` apart) each of which is JSON or holds JSON objects, or a JSON string literal whose content is
one (JSON encoded twice); a longer text is read for the JSON objects written inside it (``Result: {"password": ...}
(cached)``). The reading is lenient where a writer is: a lone surrogate escape (a string cut inside an emoji) does not
make a text unreadable. :func:`keyed_spans` then says where each key and its value are spelled, so a covered value is
hunted as the text spells it (``\\/``, ``\\u0026``, an escaped key, each of a key's duplicates), not only as
``json.dumps`` would write it.

Role: redact layer, used by ``redact.scrubber.RunScrubber`` alone; the standard library only.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any, NamedTuple

_OPEN, _CLOSE = ("{", "["), ("}", "]")
#: a JSON string as spelled (escapes and all); and a string with, when it is a key, its colon (whitespace around it)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"', re.DOTALL)
_KEY = re.compile(r'("(?:[^"\\]|\\.)*+")(?:[ \t\r\n]*+(:)[ \t\r\n]*+)?', re.DOTALL)
#: JSON as writers write it: a control character left raw inside a string is read as itself, and a whole number
#: longer than Python reads (4,300 digits) as its digits
_DECODER = json.JSONDecoder(strict=False, parse_int=lambda digits: int(digits) if len(digits) < 4_300 else digits)


def may_hold_json(text: str) -> bool:
    """Whether ``text`` is JSON to read or may hold a JSON object inside it (a quick test, in C)."""
    return json_like(text) or ("{" in text and (_OBJECT_START.search(text) is not None or '\\"' in text))


def json_like(text: str) -> bool:
    """Whether ``text`` may be JSON to read (a quick test before it is parsed): an object or an array, or a string
    literal that may hold one, surrounding whitespace aside."""
    head, tail = text[:1], text[-1:]
    if head in _OPEN and tail in _CLOSE:  # the common JSON text
        return True
    if head.isspace() or tail.isspace():
        text = text.strip()
        head, tail = text[:1], text[-1:]
        if head in _OPEN:
            return tail in _CLOSE
    return head == '"' == tail and len(text) > 2 and (text[1] in _OPEN or text[1] in " \\")


def json_documents(text: str) -> list[tuple[str, Any]]:
    """The JSON documents ``text`` holds, each with the text that spells it: the one it is, each line's when it is
    lines (a line that is not JSON read for the objects inside it), or the objects written inside a longer text; a
    string literal is read for the JSON it holds. ``[]`` when it holds none; a document ``None`` when it nests deeper
    than the parser reaches (its text is still read for keys as spelled)."""
    text = text.strip()
    if not json_like(text):
        return _inside(text)
    try:
        found = _DECODER.decode(text)
    except RecursionError:  # deeper than the parser reaches: its keys are found as spelled (``keyed_spans``)
        return [(text, None)]
    except ValueError:
        if "\n" not in text:
            return _inside(text)
        return [document for line in text.split("\n") for document in json_documents(line)]
    if isinstance(found, str):
        return json_documents(found) if may_hold_json(found) else []
    return [(text, found)]


#: where a JSON object may start inside a longer text: a brace before a quoted key
_OBJECT_START = re.compile(r'\{[ \t\r\n]*"')
#: a quote in a longer text that no backslash escapes (an escaped backslash before it does not)
_QUOTE = re.compile(r'\\.|"', re.DOTALL)
#: how many objects a longer text is read for (they do not overlap: reading them costs the text's length), the
#: longest each may be, and how many characters the starts that are no object may read before it stops trying them,
#: per character of the text (each fails where its text stops being JSON: a stray brace costs a few)
_INSIDE_MOST, _INSIDE_LONGEST, _TRIED_PER_CHARACTER = 4_096, 16_384, 4


def _inside(text: str) -> list[tuple[str, Any]]:
    """The JSON objects written inside a longer text, each with its text, at most :data:`_INSIDE_MOST`, each at most
    :data:`_INSIDE_LONGEST` characters (a longer one is not read); then those its JSON strings hold."""
    found: list[tuple[str, Any]] = []
    tried, at = 0, 0
    while len(found) < _INSIDE_MOST and tried <= _TRIED_PER_CHARACTER * len(text):
        start = _OBJECT_START.search(text, at)
        if start is None:
            break
        try:
            document, end = _DECODER.raw_decode(text, start.start())
        except RecursionError:  # deeper than the parser reaches: the rest of the text, its keys found as spelled
            found.append((text[start.start():], None))
            break
        except json.JSONDecodeError as error:
            tried, at = tried + error.pos - start.start() + 1, start.start() + 1
            continue
        if end - start.start() <= _INSIDE_LONGEST:
            found.append((text[start.start():end], document))
        at = end
    return found + _quoted(text)


def _quoted(text: str) -> list[tuple[str, Any]]:
    """The JSON that strings quoted in a longer text hold, escaped (``body="{\\"password\\": ...}"``, pretty-printed,
    after a prefix, quoted twice): each stretch between two quotes that holds an escaped quote after a brace is read
    as a JSON string, and its content as JSON text. A stray quote cannot put the stretches out of step: each pair of
    neighbouring quotes is a stretch, so reading them all costs the text's length."""
    quotes = [found.start() for found in _QUOTE.finditer(text) if found.group() == '"']
    found: list[tuple[str, Any]] = []
    read = 0
    for start, end in itertools.pairwise(quotes):
        if read >= _INSIDE_MOST or text.find("{", start, end) == -1 or _ESCAPED_KEY.search(text, start, end) is None:
            continue
        read += 1
        inner = decoded(text[start:end + 1])
        if isinstance(inner, str):
            found += json_documents(inner)
    return found


#: an escaped quote after a brace (whitespace between): where an escaped JSON object's first key starts
_ESCAPED_KEY = re.compile(r'\{[ \t\r\n]*+(?:\\[nrt][ \t\r\n]*+)*\\"')


class KeyedSpan(NamedTuple):
    """Where a key and its value are spelled in JSON text."""

    #: the key as the text spells it, quotes included (``"pass\\u0077ord"``)
    key: str
    #: where the key starts, where its value starts (after the colon and its whitespace), where the value ends
    start: int
    value: int
    end: int
    #: each string the value holds, as spelled, quotes included (the value itself when it is a string); ``None``
    #: when the value nests deeper than the parser reaches (its end is then the text's)
    strings: list[str] | None


def keyed_spans(source: str, wanted: Callable[[str], bool]) -> list[KeyedSpan]:
    """Each key of JSON ``source`` that ``wanted`` takes (given the key as spelled, quotes included), with where it
    and its value are spelled, in the order written: a key written twice is there twice. Each string is read whole,
    left to right, so a look never starts inside one (a quote inside is escaped) and the reading is linear: a string
    followed by a colon is a key."""
    spans: list[KeyedSpan] = []
    for key in _KEY.finditer(source):
        if key.group(2) is None or not wanted(key.group(1)):
            continue
        try:
            end = _DECODER.raw_decode(source, key.end())[1]
        except RecursionError:
            spans.append(KeyedSpan(key.group(1), key.start(), key.end(), len(source), None))
            continue
        except ValueError:
            continue
        spans.append(KeyedSpan(key.group(1), key.start(), key.end(), end, _STRING.findall(source, key.end(), end)))
    return spans


def decoded(literal: str) -> Any:
    """A JSON literal's value, or ``None`` when it is not one."""
    try:
        return _DECODER.decode(literal)
    except (ValueError, RecursionError):
        return None
