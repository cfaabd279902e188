"""The matching a redaction policy does: named patterns, folded keys, a time limit on the caller's patterns.

Rule kept here: no input can stall a run in the matcher, and no spelling of a key slips past it, nor a
learned value written escaped. Built-in patterns run in linear time. A caller's pattern runs under
:data:`PATTERN_TIME_LIMIT`; past it, the text is masked whole. Keys are compared by :func:`normalize_key`.
A learned value is hunted in each form :func:`written_forms` gives (raw, JSON-escaped, ``repr``-escaped); one too
short to hunt alone, beside its key in each form :func:`written_pairs` gives.

Role: redact layer; the standard library and ``regex`` only.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import re
import unicodedata
import urllib.parse
from collections.abc import Callable
from typing import Any

from footprint_lab.base.refusal import SettingRefusal

#: The library's named patterns, usable as ``Redaction(builtins=[...])``. Each must run in linear time on
#: any text, so: open with a literal (or one character class) for the matcher's fast scan, then check the
#: word boundary before it with a fixed-width look-behind; make a repetition possessive (``++``, ``{n,}+``)
#: where giving characters back cannot help; where a run could be rescanned from each position inside it
#: (an email's local part, a token's first segment), start a match only where the run starts, or end the
#: run where the next candidate begins. A private-key block with no ``END`` line is masked to where its
#: body ends, so a cut-off key stays hidden.
_EMAIL_LOCAL = r"[A-Za-z0-9._%+-]"
_EMAIL_DOMAIN = r"@(?:[A-Za-z0-9-]*+\.)+[A-Za-z]{2,}+\b"
BUILTIN_PATTERNS: dict[str, str] = {
    "openai_key": r"sk-(?<!\wsk-)(?:proj-)?[A-Za-z0-9_-]{20,}+",
    "anthropic_key": r"sk-ant-(?<!\wsk-ant-)[A-Za-z0-9_-]{20,}+",
    "aws_access_key_id": r"(?:AKIA|ASIA)(?<!\w[A-Z]{4})[0-9A-Z]{16}\b",
    "github_token": r"gh[pousr]_(?<!\wgh[pousr]_)[A-Za-z0-9]{36,}+\b",
    "bearer_token": r"(?i:bearer(?<!\wbearer)\s++[A-Za-z0-9._~+/-]{16,}+=*+)",
    "jwt": r"eyJ(?<![A-Za-z0-9_]eyJ)(?:[A-Za-z0-9_]++|-(?!eyJ))++\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+",
    "private_key_block": (
        r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:[^-]++|-(?!----))*+(?:-----END [A-Z ]{0,40}PRIVATE KEY-----)?"
    ),
    # runs on through addresses glued to it, so a second address is never left half-masked
    "email": (
        rf"{_EMAIL_LOCAL}(?<!{_EMAIL_LOCAL}{_EMAIL_LOCAL}){_EMAIL_LOCAL}*+{_EMAIL_DOMAIN}"
        rf"(?:{_EMAIL_LOCAL}++{_EMAIL_DOMAIN})*+"
    ),
}

#: Forms the token gate uses to spot a built-in match still arriving. The pattern's ``END`` line is
#: optional, so a half-arrived one would let it match early; while streaming, the gate waits for it.
_STREAM_FORMS = {
    "private_key_block": (
        r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:[^-]++|-(?!----))*+-----END [A-Z ]{0,40}PRIVATE KEY-----"
    ),
}

#: Built-ins whose matches can hold whitespace. The token gate cuts only at whitespace, so it skips the rest.
_SPANNING = frozenset({"bearer_token", "private_key_block"})

#: Keys whose values :meth:`Redaction.standard` masks.
STANDARD_KEYS = (
    "password", "passwd", "secret", "client_secret", "api_key", "token", "access_token",
    "refresh_token", "authorization", "private_key", "cookie",
)

#: What a mask looks like wherever a policy wrote one: ``[redacted:<key or pattern name>]``.
PLACEHOLDER = re.compile(r"\[redacted:[^\[\]\n]{1,80}\]")

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
_BREAK = re.compile(r"\s+")
_LEARN_MIN = 4  # shorter masked strings are not hunted for elsewhere: they would mask ordinary words


def _in_json(text: str, *, ascii_only: bool = False) -> str:
    """``text`` as a JSON string holds it, without the quotes."""
    return json.dumps(text, ensure_ascii=ascii_only)[1:-1]


def _in_repr(text: str) -> str:
    """``text`` as its ``repr`` holds it, without the quotes."""
    return repr(text)[1:-1]


def _in_json_twice(text: str, *, ascii_only: bool = False) -> str:
    """``text`` as a JSON string holds it, held in a JSON string once more."""
    return _in_json(_in_json(text, ascii_only=ascii_only))


def _in_json_repr(text: str) -> str:
    """``text`` as its ``repr`` holds it, held in a JSON string."""
    return _in_json(_in_repr(text))


#: How the library may write a text into another: as it is, inside a JSON string (``json.dumps``, with and
#: without ``ensure_ascii``: a call's arguments in the model's turn, a tool's JSON text), inside a string's
#: ``repr`` (a value recorded by its ``repr``, a ``KeyError``'s message), and a JSON or ``repr`` form inside JSON
#: once more (a tool's JSON text, an error's message, in an event's payload, as a recall reads it).
#: ``_ASCII_WRITERS`` are the ones ASCII text needs: ``ensure_ascii`` changes only what is not ASCII.
_ASCII_WRITERS: tuple[Callable[[str], str], ...] = (str, _in_json, _in_repr, _in_json_twice, _in_json_repr)
_WRITERS: tuple[Callable[[str], str], ...] = (
    *_ASCII_WRITERS, functools.partial(_in_json, ascii_only=True), functools.partial(_in_json_twice, ascii_only=True))


def _plain(text: str) -> bool:
    """Whether every writer leaves ``text`` as it is."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def written_forms(value: str, mask: str, *, web: bool = True) -> dict[str, str]:
    r"""Each form ``value`` may be written in (:data:`_WRITERS`), the raw one first, with ``mask`` written alike:
    ``back\slash`` is also hunted as ``back\\slash`` and ``back\\\\slash``, ``Crème`` as ``Cr\u00e8me``. A
    plain ASCII value has no other form of those. Then, with ``web``, as a web page or a URL writes it
    (:data:`_WEB_WRITERS`: a tool's HTML, a query string in an error), masked plainly: ``p@ss&word`` is also hunted
    as ``p@ss&amp;word`` and ``p%40ss%26word``."""
    if _plain(value) and _plain(mask):  # the common case
        forms = {value: mask}
    else:
        forms = {}
        for write in _ASCII_WRITERS if value.isascii() and mask.isascii() else _WRITERS:
            forms.setdefault(write(value), write(mask))
    for write in _WEB_WRITERS if web else ():
        forms.setdefault(write(value), mask)
    return forms


def _in_markup(text: str, quote: str, apostrophe: str) -> str:
    """``text`` HTML-escaped with a double quote and an apostrophe written as given (``&#34;`` and ``&#39;`` as Jinja
    writes them, ``&quot;`` and ``&#039;`` as PHP does, ``&apos;`` as XML may)."""
    return html.escape(text).replace("&quot;", quote).replace("&#x27;", apostrophe)


#: how a web page and a URL write a text: HTML-escaped (quotes too and not, and each way Jinja, PHP and XML write
#: quotes), percent-encoded (``/`` kept and not, and as JavaScript's ``encodeURIComponent`` does), and as a form's
#: field (a space as ``+``)
_WEB_WRITERS: tuple[Callable[[str], str], ...] = (
    html.escape, functools.partial(html.escape, quote=False),
    *(functools.partial(_in_markup, quote=quote, apostrophe=apostrophe) for quote, apostrophe in (
        ("&#34;", "&#39;"), ("&quot;", "&#039;"), ("&quot;", "&apos;"), ("&quot;", "'"))),
    *(functools.partial(write, safe=safe, errors="surrogatepass") for write, safe in (
        (urllib.parse.quote, "/"), (urllib.parse.quote, ""), (urllib.parse.quote, "!~*'()"),
        (urllib.parse.quote_plus, ""))))


def written_pairs(key: str, value: Any, mask: str, *, compact: bool = False) -> dict[str, str]:
    """Each form ``key`` and ``value`` are written in side by side, as a mapping's text holds them, with ``mask`` in
    the value's place and the key kept: ``"cvv": "737"`` is masked as ``"cvv": "[redacted:cvv]"``, ``'pin': 42`` as
    ``'pin': '[redacted:pin]'``. What hunts a value too short to hunt alone (``_LEARN_MIN``): only beside its key,
    so the same digits elsewhere stay. Each is hunted in its own :func:`written_forms` (JSON inside JSON) too.

    The forms are the library's: ``json.dumps`` with its default separators, with and without ``ensure_ascii`` (a
    call's arguments in the model's turn, ``core.turn.turn_text``; a tool's structured result,
    ``core.turn.result_text``), and a mapping's ``repr`` (an error's message that prints the arguments). ``compact``
    adds compact JSON's (``"cvv":"737"``, ``separators=(",", ":")``, as JavaScript writes it), for a value read from
    JSON text written so."""
    pairs: dict[str, str] = {}
    for ascii_only in (False, True):
        shown_key, shown_value, shown_mask = (json.dumps(part, ensure_ascii=ascii_only, default=str)
                                              for part in (key, value, mask))
        for separator in (": ", ":") if compact else (": ",):
            pairs[f"{shown_key}{separator}{shown_value}"] = f"{shown_key}{separator}{shown_mask}"
        if shown_key.isascii() and shown_value.isascii():
            break  # ``ensure_ascii`` would write them alike
    pairs.setdefault(f"{key!r}: {value!r}", f"{key!r}: {mask!r}")
    return pairs


class RedactionConfigError(SettingRefusal):
    """Raised when a ``Redaction`` is built with something it cannot use.

    Carries ``setting`` (``keys``, ``patterns`` or ``builtins``) and ``received``: the shape of the bad
    entry, never its text (a pattern can itself describe a secret)."""

    code = "ERR_REDACTION_CONFIG"

    def __init__(self, setting: str, received: str, fix: str) -> None:
        super().__init__("Redaction", setting, received, fix)


class PolicyDataError(Exception):
    """A carried policy could not be rebuilt; ``reason`` is ``unreadable`` or ``unknown-pattern``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def fingerprint(source: str, flags: int = 0) -> str:
    """A stable fingerprint of a pattern's source and flags: the same name must mean the same pattern."""
    return hashlib.sha256(f"{flags}:{source}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


#: an ASCII key drops whitespace and control characters, ``-``, ``_`` and ``.``
_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz",
                            "".join(map(chr, range(33))) + "\x7f-_.")
#: a key drops these categories: separators, control and format characters (zero-width spaces, joiners,
#: bidi marks, the soft hyphen), dashes and connectors (``_`` and its kin)
_DROPPED = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Pd", "Pc"})
#: and these invisible or dot-like characters: the minus sign, middle dots, the combining grapheme joiner,
#: Hangul and Khmer fillers, the braille blank, Mongolian and Unicode variation selectors
_DROPPED_CHARS = frozenset(
    "\u2212\u00b7\u2027\u30fb\u2219\u22c5\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f"
    "\u2800\u3164\uffa0" + "".join(map(chr, range(0xFE00, 0xFE10))) + "".join(map(chr, range(0xE0100, 0xE01F0))))


def normalize_key(key: str) -> str:
    """A key as the key rule compares it: every spelling of one name folds to one string.

    Case and full-width forms fold (NFKC); spaces, dashes, underscores, dots and invisible characters
    are dropped. ``"PASS_WORD"``, ``"pass\u200bword"`` and ``"ｐａｓｓｗｏｒｄ"`` all fold to ``"password"``.
    """
    if key.isascii():  # kept fast: every recorded mapping key passes here
        folded = key.lower().replace("_", "").replace("-", "")
        return folded if folded.isalnum() else folded.translate(_ASCII_FOLD)
    return _fold_unicode(key)


@functools.lru_cache(maxsize=4096)
def _fold_unicode(key: str) -> str:
    # NFKC again after casefold: casefolding can leave a sequence that composes further
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", key).casefold())
    return "".join(c for c in text if c not in _DROPPED_CHARS and unicodedata.category(c) not in _DROPPED
                   and c != ".")


#: Seconds a caller's pattern may spend on one text before the text is masked whole.
PATTERN_TIME_LIMIT = 0.1

_REGEX_FLAGS = ("IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII", "UNICODE")


class _Pattern:
    """A named pattern. A built-in runs on :mod:`re`. A caller's runs on :mod:`regex` under
    :data:`PATTERN_TIME_LIMIT`, as a regular expression can take exponential time. A text that outlasts
    the limit is masked whole (which part matched is unknown) and counts as one match."""

    __slots__ = ("_bounded", "_looks_back", "_partial", "fingerprint", "mask", "name", "regex", "spans_breaks")

    def __init__(self, name: str, regex: re.Pattern[str], *, builtin: bool = False) -> None:
        self.name = name
        self.regex = regex
        self.fingerprint = fingerprint(regex.pattern, regex.flags)
        self.mask = f"[redacted:{name}]"
        self._bounded: Any = None if builtin else _time_bounded(regex)
        self._partial: Any = self._bounded  # a built-in's is compiled when a stream first needs it
        #: whether a match may hold whitespace, and so straddle a stream's cut; a caller's may
        self.spans_breaks = not builtin or name in _SPANNING
        #: a caller's look-behind reads text before its match: a stream is not cut while one may be arriving
        self._looks_back = not builtin and ("(?<=" in regex.pattern or "(?<!" in regex.pattern)

    @property
    def bounded(self) -> bool:
        """``True`` for a caller's pattern (it runs under the time limit)."""
        return self._bounded is not None

    def sub(self, text: str) -> tuple[str, int]:
        """``text`` with every match masked, and how many there were: ``-1`` when the time limit ran out (the text
        masked whole)."""
        if self._bounded is None:
            return self.regex.subn(self.mask, text)
        try:
            result: tuple[str, int] = self._bounded.subn(self.mask, text, timeout=PATTERN_TIME_LIMIT)
        except TimeoutError:
            return self.mask, -1
        return result

    def matches(self, text: str) -> list[tuple[int, int]]:
        """Where whole matches in ``text`` lie; all of ``text`` when the time limit ran out (fail closed)."""
        try:
            if self._bounded is None:
                return [m.span() for m in self.regex.finditer(text)]
            return [m.span() for m in self._bounded.finditer(text, timeout=PATTERN_TIME_LIMIT)]
        except TimeoutError:
            return [(0, len(text))]

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where matches in ``text`` lie, and where one may still be arriving at its end (``Project Blu`` while
        ``Project Blue Falcon`` may follow): that counts as running to the end, so a stream is never cut inside
        it. All of ``text`` when the time limit ran out (fail closed)."""
        if self._partial is None:
            source = _STREAM_FORMS.get(self.name, self.regex.pattern)
            self._partial = _time_bounded(re.compile(source, self.regex.flags))
        try:
            found = self.matches(text)
            for m in self._partial.finditer(text, partial=True, timeout=PATTERN_TIME_LIMIT):
                if m.partial and m.start() < len(text):
                    found.append((0 if self._looks_back else m.start(), len(text)))
        except TimeoutError:
            return [(0, len(text))]
        return found


def _time_bounded(compiled: re.Pattern[str]) -> Any:
    """``compiled`` on the :mod:`regex` engine, which can stop a search after a time limit."""
    import regex

    flags = 0
    for flag in _REGEX_FLAGS:
        if compiled.flags & getattr(re, flag):
            flags |= getattr(regex, flag)
    try:
        return regex.compile(compiled.pattern, flags)
    except regex.error:
        raise RedactionConfigError(
            "patterns", "a regular expression the time-bounded matcher cannot read",
            "must use the syntax Python's re and the regex package share (no re-only constructs)",
        ) from None
