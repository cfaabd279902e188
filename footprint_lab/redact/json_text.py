"""JSON text as the scrubber reads it for covered keys: which texts are JSON, their documents, and a key's pairs as
the text spells them.

Rule kept here: a text is read as JSON when, its surrounding whitespace aside, it is a JSON object or array, lines
of them (NDJSON, ``\\n`` or ``\\r\\n`` apart), or a JSON string literal whose content is one (JSON encoded twice);
a longer text is read for the JSON objects written inside it (``Result: {"password": ...} (cached)``).
A covered key's value is then hunted as the text spells it beside its key (``{"cvv" : "737"}``, a tab after the
colon, ``1e3``, ``\\u0037``, each of a key's duplicates), not only as ``json.dumps`` would write it.

Role: redact layer, used by ``redact.scrubber.RunScrubber`` alone; the standard library only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from footprint_lab.record.saved_json import NestingTooDeep, parse_json

_OPEN, _CLOSE = ("{", "["), ("}", "]")
#: the longest value a key's spelled pair is learned with: a longer one is hunted by its own texts
_SPELLED_LONGEST = 200
#: a JSON scalar as spelled: a string (escapes and all), a number, or a literal name
_SCALAR = re.compile(r'"(?:[^"\\]|\\.)*+"|-?\d++(?:\.\d++)?+(?:[eE][+-]?\d++)?+|true|false|null', re.DOTALL)
_COLON = re.compile(r"[ \t\r\n]*+:[ \t\r\n]*+")


def may_hold_json(text: str) -> bool:
    """Whether ``text`` is JSON to read or may hold a JSON object inside it (a quick test, in C)."""
    return json_like(text) or ("{" in text and _OBJECT_START.search(text) is not None)


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
    """The JSON documents ``text`` holds, each with the text that spells it: the one it is, or each line's when it
    is lines of JSON; a string literal is read for the JSON it holds. ``[]`` when it is not JSON or nests deeper
    than ``parse_json`` reads."""
    text = text.strip()
    if not json_like(text):
        return _inside(text)
    try:
        found = parse_json(text)
    except NestingTooDeep:
        return []
    except ValueError:
        if "\n" not in text:
            return _inside(text)
        lines = [line.strip() for line in text.split("\n")]
        return [document for line in lines if json_like(line) for document in json_documents(line)]
    if isinstance(found, str):
        return json_documents(found) if json_like(found) else []
    return [(text, found)]


#: where a JSON object may start inside a longer text: a brace before a quoted key
_OBJECT_START = re.compile(r'\{[ \t\r\n]*"')
#: how many objects a longer text is read for, and the longest each may be (a text of stray braces costs little)
_INSIDE_MOST, _INSIDE_LONGEST = 32, 16_384


def _inside(text: str) -> list[tuple[str, Any]]:
    """The JSON objects written inside a longer text, each with its text: at most :data:`_INSIDE_MOST`, each at most
    :data:`_INSIDE_LONGEST` characters (a longer one is not read)."""
    found: list[tuple[str, Any]] = []
    at = 0
    for _ in range(_INSIDE_MOST):
        start = _OBJECT_START.search(text, at)
        if start is None:
            break
        end = _closed(text, start.start(), _INSIDE_LONGEST)
        if end is None:
            at = start.start() + 1
            continue
        source = text[start.start():end]
        try:
            document = parse_json(source)
        except (ValueError, NestingTooDeep):
            at = start.start() + 1
            continue
        found.append((source, document))
        at = end
    return found


def spelled_pairs(text: str, key: str, mask: str) -> dict[str, str]:
    """Each pair ``key`` makes with a value in JSON ``text`` as the text spells it (its whitespace around the colon,
    the value's literal as written), with ``mask`` in the value's place and the key as spelled: what ``text`` holds
    beside its key that ``json.dumps`` would write otherwise. A value longer than :data:`_SPELLED_LONGEST` is left
    out (its own texts are hunted)."""
    pairs: dict[str, str] = {}
    shown_mask = json.dumps(mask)
    for quoted in {json.dumps(key), json.dumps(key, ensure_ascii=False)}:
        at = text.find(quoted)
        while at != -1:
            colon = _COLON.match(text, at + len(quoted))
            if colon is not None:
                end = _value_end(text, colon.end())
                if end is not None and end - colon.end() <= _SPELLED_LONGEST:
                    pairs[text[at:end]] = text[at:colon.end()] + shown_mask
            at = text.find(quoted, at + len(quoted))
    return pairs


def _value_end(text: str, start: int) -> int | None:
    """Where the JSON value spelled at ``start`` ends (an array or object to its closing bracket, strings minded);
    ``None`` when none starts there or it runs past :data:`_SPELLED_LONGEST`."""
    if text[start:start + 1] not in _OPEN:
        found = _SCALAR.match(text, start)
        return None if found is None else found.end()
    return _closed(text, start, _SPELLED_LONGEST)


def _closed(text: str, start: int, longest: int) -> int | None:
    """Where the array or object that opens at ``start`` closes (strings minded), or ``None`` when it does not within
    ``longest`` characters."""
    depth, inside, escaped = 0, False, False
    for at in range(start, min(len(text), start + longest + 1)):
        char = text[at]
        if escaped:
            escaped = False
        elif inside:
            escaped, inside = char == "\\", char != '"'
        elif char == '"':
            inside = True
        elif char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if not depth:
                return at + 1
    return None
