"""Redaction: values a policy covers never enter a record, an event or a view.

Rule kept here: a :class:`Redaction` names what to keep out (values under certain keys, and
text matching named patterns); the recorder applies it to every value *as it enters the
capture*, so no reader (a live listener, the ``Recording``, a DataFrame, an HTML view, an
exported notebook) ever sees what it covers. The live run keeps the real values: the model
and the tools still get what they need.

- ``keys`` mask the whole value under a matching mapping key. Keys are compared folded
  (:func:`normalize_key`): case, full-width forms, spaces, dashes, underscores, dots and
  invisible characters (zero-width, joiners, fillers) do not count, so ``api_key`` covers
  ``apiKey``, ``API-KEY``, ``api key``, ``ａｐｉ＿ｋｅｙ`` and ``api\u200bkey``, and a policy key
  that folds to nothing is refused. Every text and number inside a value
  masked that way is remembered for the rest of the run and masked wherever it shows up
  again, as text or as a number (a tool echoing a password, a PIN repeated in an answer).
- Shape never lets a value through: mapping keys are scrubbed like values (a secret can be
  a key; two keys masked alike stay two, ``#2``), structured data that is captured only as
  text (a fact's data, a tool's result) is read by the policy first (``Recorder.learn``),
  and records captured before a secret was learned are swept again when the ``Recording``
  is built (:meth:`RunScrubber.sweep`). Live events already delivered cannot be taken back: the
  listeners are sent a ``recall`` event naming each by ``seq`` with its payload masked as it
  should have been (never the value), which a live view applies.
- ``patterns`` are regular expressions with names: a list is named for its content
  (``custom-<hash>``), a mapping names them itself, and ``builtins`` picks from the
  library's vocabulary (:data:`BUILTIN_PATTERNS`). A match becomes ``[redacted:<name>]``.
  No input can stall a run in the matcher: the built-ins are written to run in linear time,
  and a pattern the caller wrote runs under a time limit, past which the text it was
  scanning is masked whole (fail closed: nothing it might have covered is shown).
- Every run gets its own :class:`RunScrubber`, which counts what matched; the count becomes
  the ``Recording``'s redaction report and a checkpoint's redaction marks. What it learned
  is carried into the leg that continues the conversation (``teach``) and shared by every
  member of a composition (``share_learning``).
- Streamed tokens pass the :class:`TokenGate`, which releases text only where no match (a
  pattern's, or a learned value's) crosses the cut or may still be arriving past it.
- Checkpoints are masked with the run's scrubber too (:mod:`footprint_lab.core.concealed`).

A policy travels in a checkpoint as plain data (:meth:`Redaction.to_data`): keys, and each
pattern by name and fingerprint. A pattern is never compiled from that data (a stored
checkpoint can come back from anywhere, and a regular expression built to hang the matcher
would run on every value): :func:`policy_from_data` only looks the names up among patterns
this side already holds, and says why when it cannot.

Role: engine layer. Knows nothing about agents; refusals about a carried policy are raised
by the conversation doors from :class:`PolicyDataError`.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from footprint_lab.engine.refusal import SettingRefusal, describe_shape

#: The marker a policy written into a checkpoint carries, so a reader knows it is ours.
POLICY_FORMAT = "footprint_lab.redaction/1"

#: The library's vocabulary of named patterns, usable as ``Redaction(builtins=[...])``.
#:
#: Each runs in time linear in the text it scans, whatever the text (bench/bench_redaction.py
#: measures 1 MB of adversarial text per pattern). The forms keep to three habits: a pattern
#: opens with a literal (or one character class) so the matcher's fast scan finds candidates,
#: and checks the word boundary before it afterwards with a fixed-width look-behind; every
#: repetition is possessive (``++``, ``{n,}+``) where giving characters back cannot help; and
#: where a run could be rescanned from every position inside it (the local part of an email,
#: the first segment of a token), a match may only start where that run starts, or the run
#: stops where the next candidate begins. A private-key block missing its ``END`` line is
#: masked to where its body ends, so a key cut short is still kept out.
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
    # from where a run of local-part characters starts (so no position inside it is tried again),
    # and on through addresses glued to it, so a second address is never left half inside the first
    "email": (
        rf"{_EMAIL_LOCAL}(?<!{_EMAIL_LOCAL}{_EMAIL_LOCAL}){_EMAIL_LOCAL}*+{_EMAIL_DOMAIN}"
        rf"(?:{_EMAIL_LOCAL}++{_EMAIL_DOMAIN})*+"
    ),
}

#: How the token gate looks for a built-in match still arriving, where the pattern itself would not say:
#: a private key's ``END`` line is optional (a key cut short is masked to where its body ends), so a
#: partial ``END`` line would let the pattern match without it; while streaming, the line is awaited.
_STREAM_FORMS = {
    "private_key_block": (
        r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:[^-]++|-(?!----))*+-----END [A-Z ]{0,40}PRIVATE KEY-----"
    ),
}

#: The built-ins whose matches can hold whitespace. The token gate cuts a stream only at whitespace,
#: so no match of any other built-in can straddle a cut, and the gate does not look for them.
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


class RedactionConfigError(SettingRefusal):
    """Raised when a ``Redaction`` is built with something it cannot use.

    Carries ``setting`` (``keys``, ``patterns`` or ``builtins``) and ``received`` (the shape of
    the entry at fault, never its text: a pattern can itself describe a secret).
    """

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


#: what an ASCII key loses when folded: whitespace and control characters, ``-``, ``_`` and ``.``
_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz",
                            "".join(map(chr, range(33))) + "\x7f-_.")
#: categories a folded key drops: spaces and separators, control and format characters (zero-width
#: spaces, joiners, bidi marks, the soft hyphen), dashes and connectors (``_`` and its kin)
_DROPPED = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Pd", "Pc"})
#: invisible or dot-like characters of other categories: the minus sign, middle dots, the combining
#: grapheme joiner, Hangul and Khmer fillers, the braille blank, Mongolian and Unicode variation selectors
_DROPPED_CHARS = frozenset(
    "\u2212\u00b7\u2027\u30fb\u2219\u22c5\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f"
    "\u2800\u3164\uffa0" + "".join(map(chr, range(0xFE00, 0xFE10))) + "".join(map(chr, range(0xE0100, 0xE01F0))))


def normalize_key(key: str) -> str:
    """A mapping key as the key rule compares it: every spelling of one name folds to one string.

    Case is folded and full-width forms become their plain letters (NFKC); spaces, dashes,
    underscores, dots and invisible characters are dropped. ``"Pass word"``, ``"password "``,
    ``"PASS_WORD"``, ``"pass.word"``, ``"pass\u200bword"`` and ``"ｐａｓｓｗｏｒｄ"`` all fold to ``"password"``.
    """
    if key.isascii():  # the common case, kept fast: every recorded mapping key passes here
        folded = key.lower().replace("_", "").replace("-", "")
        return folded if folded.isalnum() else folded.translate(_ASCII_FOLD)
    return _fold_unicode(key)


@functools.lru_cache(maxsize=4096)
def _fold_unicode(key: str) -> str:
    # NFKC again after casefold: folding can leave a sequence that composes (or decomposes) further
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", key).casefold())
    return "".join(c for c in text if c not in _DROPPED_CHARS and unicodedata.category(c) not in _DROPPED
                   and c != ".")


#: How long a pattern the caller wrote may spend on one text before the text is masked whole.
PATTERN_TIME_LIMIT = 0.1

_REGEX_FLAGS = ("IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII", "UNICODE")


class _Pattern:
    """A named pattern. Built-ins run on :mod:`re` (their forms are linear); a pattern the caller
    wrote runs on the :mod:`regex` engine under :data:`PATTERN_TIME_LIMIT`: a regular expression
    can take time exponential in its input, and a run must not stall on what a user typed. A
    text that outlasts the limit is masked whole (it cannot be shown which part matched, so no
    part is shown), and counted as a match of that pattern."""

    __slots__ = ("_bounded", "_looks_back", "_partial", "fingerprint", "mask", "name", "regex", "spans_breaks")

    def __init__(self, name: str, regex: re.Pattern[str], *, builtin: bool = False) -> None:
        self.name = name
        self.regex = regex
        self.fingerprint = fingerprint(regex.pattern, regex.flags)
        self.mask = f"[redacted:{name}]"
        self._bounded: Any = None if builtin else _time_bounded(regex)
        self._partial: Any = self._bounded  # a built-in's is compiled when a stream first needs it
        #: whether a match may hold whitespace (and so straddle where a stream is cut); a caller's may
        self.spans_breaks = not builtin or name in _SPANNING
        #: a caller's look-behind reads text before its match: a stream is not cut while one may be arriving
        self._looks_back = not builtin and ("(?<=" in regex.pattern or "(?<!" in regex.pattern)

    @property
    def bounded(self) -> bool:
        """``True`` for a caller's pattern (it runs under the time limit)."""
        return self._bounded is not None

    def sub(self, text: str) -> tuple[str, int]:
        """``text`` with every match masked, and how many there were."""
        if self._bounded is None:
            return self.regex.subn(self.mask, text)
        try:
            result: tuple[str, int] = self._bounded.subn(self.mask, text, timeout=PATTERN_TIME_LIMIT)
        except TimeoutError:
            return self.mask, 1
        return result

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where matches in ``text`` lie, and where one may still be arriving at its end.

        A match that could go on with the next token (``Project Blu`` of ``Project Blue Falcon``,
        or ``Project Blue`` itself) counts as running to the end, so a stream is never cut inside
        it. All of ``text`` when the time limit ran out (fail closed).
        """
        if self._partial is None:
            source = _STREAM_FORMS.get(self.name, self.regex.pattern)
            self._partial = _time_bounded(re.compile(source, self.regex.flags))
        try:
            found = [m.span() for m in self.regex.finditer(text)] if self._bounded is None else [
                m.span() for m in self._bounded.finditer(text, timeout=PATTERN_TIME_LIMIT)]
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


class Redaction:
    """What to keep out of every record: values under ``keys``, text matching ``patterns``.

    ``Redaction(keys=["password"], patterns=[r"sk-[A-Za-z0-9]{20,}"])``,
    ``Redaction(patterns={"ticket": r"TCK-\\d{6}"}, builtins=["email"])`` or
    ``Redaction.standard()`` (the common secret keys and every built-in pattern).
    """

    __slots__ = ("_by_name", "_keys", "keys", "patterns")

    def __init__(
        self,
        *,
        keys: Iterable[str] = (),
        patterns: Sequence[str | re.Pattern[str]] | Mapping[str, str | re.Pattern[str]] = (),
        builtins: Iterable[str] = (),
    ) -> None:
        if isinstance(keys, str) or not isinstance(keys, Iterable):
            raise RedactionConfigError("keys", describe_shape(keys), "must be a list of key names")
        key_list = list(keys)
        for key in key_list:
            if not isinstance(key, str) or not key.strip():
                raise RedactionConfigError("keys", describe_shape(key), "must hold non-empty strings")
            if not normalize_key(key):
                raise RedactionConfigError("keys", "a key of only spaces, dashes, underscores, dots or invisible "
                                           "characters", "must hold key names with a letter or digit in each")
        compiled = [_Pattern(name, regex) for name, regex in _named_patterns(patterns)]
        if isinstance(builtins, str) or not isinstance(builtins, Iterable):
            raise RedactionConfigError("builtins", describe_shape(builtins), "must be a list of built-in names")
        for name in builtins:
            if not isinstance(name, str) or name not in BUILTIN_PATTERNS:
                raise RedactionConfigError(
                    "builtins", describe_shape(name),
                    f"must name built-in patterns; the library has: {', '.join(sorted(BUILTIN_PATTERNS))}",
                )
            compiled.append(_Pattern(name, re.compile(BUILTIN_PATTERNS[name]), builtin=True))
        self._setup(key_list, compiled)
        if not self.keys and not self.patterns:
            raise RedactionConfigError(
                "keys", "no keys and no patterns",
                "and 'patterns' are both empty, so the policy would cover nothing; name at least one, "
                "or leave redact out",
            )

    def _setup(self, keys: list[str], patterns: list[_Pattern]) -> None:
        by_name: dict[str, _Pattern] = {}
        for pattern in patterns:
            known = by_name.get(pattern.name)
            if known is not None and known.fingerprint != pattern.fingerprint:
                raise RedactionConfigError(
                    "patterns", "two different patterns under one name",
                    "must give each name one pattern; rename one of them",
                )
            by_name[pattern.name] = pattern
        self.keys: tuple[str, ...] = tuple(dict.fromkeys(keys))
        self._keys = {normalize_key(k): k for k in self.keys}
        self.patterns: tuple[str, ...] = tuple(by_name)
        self._by_name = by_name

    @classmethod
    def standard(cls) -> Redaction:
        """The common secret-bearing keys and every built-in pattern."""
        return cls(keys=STANDARD_KEYS, builtins=BUILTIN_PATTERNS)

    @classmethod
    def _of(cls, keys: Iterable[str], patterns: Iterable[_Pattern]) -> Redaction:
        policy = cls.__new__(cls)
        policy._setup(list(keys), list(patterns))
        return policy

    def union(self, *others: Redaction | None) -> Redaction:
        """A policy covering everything this one and ``others`` cover."""
        keys = list(self.keys)
        patterns = list(self._by_name.values())
        for other in others:
            if other is not None:
                keys.extend(other.keys)
                patterns.extend(other._by_name.values())
        return Redaction._of(keys, patterns)

    def covers(self, other: Redaction) -> bool:
        """``True`` when this policy masks all ``other`` masks: its keys, and its patterns by name and source."""
        return set(other.keys) <= set(self.keys) and all(
            self.find(name, pattern.fingerprint) is not None for name, pattern in other._by_name.items()
        )

    def to_data(self) -> dict[str, Any]:
        """The policy as plain data: keys, and each pattern by name and fingerprint (never its source)."""
        return {
            "format": POLICY_FORMAT,
            "keys": list(self.keys),
            "patterns": [{"name": p.name, "fingerprint": p.fingerprint} for p in self._by_name.values()],
        }

    def find(self, name: str, print_: str) -> _Pattern | None:
        pattern = self._by_name.get(name)
        return pattern if pattern is not None and pattern.fingerprint == print_ else None

    def for_run(self, marks: Mapping[str, Any] | None = None) -> RunScrubber:
        """A scrubber for one run (it counts what matched; ``marks`` carries earlier legs' matches)."""
        return RunScrubber(self, marks)

    def __repr__(self) -> str:
        return f"Redaction(keys={list(self.keys)!r}, patterns={list(self.patterns)!r})"


def combine_policies(*policies: Redaction | None) -> Redaction | None:
    """One policy covering everything each given policy covers; ``None`` when none is given."""
    present = [p for p in policies if p is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else present[0].union(*present[1:])


def _named_patterns(
    patterns: Sequence[str | re.Pattern[str]] | Mapping[str, str | re.Pattern[str]],
) -> list[tuple[str, re.Pattern[str]]]:
    if isinstance(patterns, str) or not isinstance(patterns, Sequence | Mapping):
        raise RedactionConfigError(
            "patterns", describe_shape(patterns), "must be a list of regular expressions or a dict name -> regex"
        )
    items: list[tuple[str | None, Any]] = (
        list(patterns.items()) if isinstance(patterns, Mapping) else [(None, p) for p in patterns]
    )
    named: list[tuple[str, re.Pattern[str]]] = []
    for name, source in items:
        if name is not None and (not isinstance(name, str) or not _NAME.match(name)):
            raise RedactionConfigError(
                "patterns", describe_shape(name),
                "names must start with a letter and hold up to 64 letters, digits, '_', '.' or '-'",
            )
        if isinstance(source, re.Pattern):
            regex = source
        elif isinstance(source, str) and source:
            try:
                regex = re.compile(source)
            except re.error:
                raise RedactionConfigError(
                    "patterns", "a string that is not a valid regular expression", "must hold valid regular expressions"
                ) from None
        else:
            raise RedactionConfigError(
                "patterns", describe_shape(source), "must hold non-empty regular expression strings"
            )
        if not isinstance(regex.pattern, str):
            raise RedactionConfigError("patterns", "a bytes pattern", "must hold text (str) patterns")
        if regex.search("") is not None:
            raise RedactionConfigError(
                "patterns", "a pattern that matches the empty string", "must hold patterns that need some text to match"
            )
        named.append((name or f"custom-{fingerprint(regex.pattern, regex.flags)[:8]}", regex))
    return named


def policy_from_data(data: Any, *sources: Redaction | None) -> Redaction:
    """Rebuild a carried policy from its data, taking each pattern from ``sources`` by name.

    ``sources`` are the policies this side holds (the agent's, one passed to a resume); the
    library's vocabulary is always consulted last. Raises :class:`PolicyDataError` with
    ``unreadable`` (not data this module wrote) or ``unknown-pattern`` (a name nobody here holds).
    """
    if not isinstance(data, dict) or set(data) != {"format", "keys", "patterns"} or data["format"] != POLICY_FORMAT:
        raise PolicyDataError("unreadable")
    keys, refs = data["keys"], data["patterns"]
    if not isinstance(keys, list) or not all(isinstance(k, str) and k.strip() for k in keys):
        raise PolicyDataError("unreadable")
    if not isinstance(refs, list) or (not keys and not refs):
        raise PolicyDataError("unreadable")
    names: set[str] = set()
    for ref in refs:
        if (
            not isinstance(ref, dict) or set(ref) != {"name", "fingerprint"}
            or not isinstance(ref["name"], str) or not isinstance(ref["fingerprint"], str)
            or ref["name"] in names
        ):
            raise PolicyDataError("unreadable")
        names.add(ref["name"])
    library = _library()
    patterns: list[_Pattern] = []
    for ref in refs:
        found = None
        for source in (*sources, library):
            if source is not None and (found := source.find(ref["name"], ref["fingerprint"])) is not None:
                break
        if found is None:
            raise PolicyDataError("unknown-pattern")
        patterns.append(found)
    return Redaction._of(keys, patterns)


def policy_from_reports(reports: Iterable[Any]) -> Redaction | None:
    """What can be rebuilt of the policies recordings were made under, from their redaction reports:
    the keys, and the library's patterns by name (a caller's pattern is reported by name only, so it
    cannot be). ``None`` when the reports name neither."""
    keys: set[str] = set()
    names: set[str] = set()
    for report in reports:
        if isinstance(report, Mapping):
            keys.update(k for k in report.get("keys") or () if isinstance(k, str) and k.strip())
            names.update(n for n in report.get("patterns") or () if isinstance(n, str) and n in BUILTIN_PATTERNS)
    return Redaction(keys=sorted(keys), builtins=sorted(names)) if keys or names else None


_LIBRARY: list[Redaction] = []


def _library() -> Redaction:
    if not _LIBRARY:
        _LIBRARY.append(Redaction(builtins=BUILTIN_PATTERNS))
    return _LIBRARY[0]


#: Quicker supersets of built-in patterns whose own form makes a search crawl (each matches wherever
#: its pattern does): an email address holds ``@domain.tld``; a bearer token starts with the word.
_QUICKER = {
    BUILTIN_PATTERNS["email"]: r"@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
    BUILTIN_PATTERNS["bearer_token"]: r"(?i:bearer\s+[A-Za-z0-9._~+/-]{16,})",
}


def _screens(patterns: Sequence[_Pattern]) -> tuple[re.Pattern[str] | None, ...]:
    """One quick test per built-in pattern, true wherever the pattern matches, so text that holds
    nothing (most of it) is passed over without a substitution per pattern. A leading ``\\b`` is
    dropped (an assertion removed can only widen a match), which lets the engine scan for the
    literal after it. A caller's pattern gets none (``None``: always tried, under its time limit)."""
    screens: list[re.Pattern[str] | None] = []
    for pattern in patterns:
        if pattern.bounded:
            screens.append(None)
            continue
        source = _QUICKER.get(pattern.regex.pattern, pattern.regex.pattern)
        screens.append(re.compile(source[2:] if source.startswith("\\b") else source, pattern.regex.flags))
    return tuple(screens)


class RunScrubber:
    """One run's view of a policy: masks values and counts what matched (``Recorder(policy=...)``)."""

    __slots__ = ("_keys", "_learned", "_patterns", "_screens", "counts", "policy", "prior")

    def __init__(self, policy: Redaction, marks: Mapping[str, Any] | None = None) -> None:
        self.policy = policy
        self._keys = policy._keys
        self._patterns = tuple(policy._by_name.values())
        self._screens = _screens(self._patterns)
        self._learned: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self.prior: tuple[str, ...] = tuple((marks or {}).get("matched", ()))

    def scrub(self, value: Any) -> Any:
        """``value`` with every covered part masked; the original is never changed.

        Mapping keys are scrubbed like values (a secret can be a key), and a number is
        matched by its digits: once a value under a covered key is known, it is masked
        wherever it shows up again, as text or as a number.
        """
        if isinstance(value, str):
            return self._text(value)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int | float):
            return self._learned.get(str(value), value) if self._learned else value
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                declared = self._keys.get(normalize_key(key)) if isinstance(key, str) else None
                shown = self._key(key, out)
                if declared is None or item is None:
                    out[shown] = self.scrub(item)
                else:
                    out[shown] = self._mask_key(declared, item)
            return out
        if isinstance(value, list | tuple):
            return [self.scrub(item) for item in value]
        if hasattr(value, "model_dump"):
            return self.scrub(value.model_dump(mode="json"))
        # Anything else is recorded by its repr (as the Recording would), so scrub that text.
        return self._text(repr(value))

    def quietly(self, value: Any) -> Any:
        """:meth:`scrub`, counting nothing: for a second surface of records already counted (a checkpoint)."""
        counts = dict(self.counts)
        try:
            return self.scrub(value)
        finally:
            self.counts = counts

    def _key(self, key: Any, taken: dict[Any, Any]) -> Any:
        """A mapping key as it may be recorded (scrubbed like a value)."""
        shown = self.scrub(key) if isinstance(key, str | int | float) and not isinstance(key, bool) else key
        return _distinct(shown, taken)

    def _mask_key(self, declared: str, value: Any) -> str:
        name = f"key:{declared}"
        self.counts[name] = self.counts.get(name, 0) + 1
        mask = f"[redacted:{declared}]"
        self._learn(value, mask)
        return mask

    def _learn(self, value: Any, mask: str) -> None:
        """Remember every text and number inside a masked value, to mask it wherever it shows up again."""
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, str | int | float):
            text = str(value)
            if len(text) >= _LEARN_MIN:
                self._learned.setdefault(text, mask)
        elif isinstance(value, dict):
            for key, item in value.items():
                self._learn(key, mask)
                self._learn(item, mask)
        elif isinstance(value, list | tuple | set | frozenset):
            for item in value:
                self._learn(item, mask)
        elif hasattr(value, "model_dump"):
            self._learn(value.model_dump(mode="json"), mask)

    def teach(self, secrets: Mapping[str, str]) -> None:
        """Mask ``secrets`` (value -> mask) from the start: what an earlier leg of the conversation learned."""
        for secret, mask in secrets.items():
            if len(secret) >= _LEARN_MIN:
                self._learned.setdefault(secret, mask)

    @property
    def learned_count(self) -> int:
        """How many values this scrubber has learned to mask (it only ever learns more)."""
        return len(self._learned)

    def learned_since(self, count: int) -> list[str]:
        """The values learned after the first ``count``."""
        return list(self._learned)[count:]

    def share_learning(self, other: RunScrubber) -> None:
        """Learn into ``other``'s values from now on (and mask what it learned): one run, one set of them."""
        other._learned.update({k: v for k, v in self._learned.items() if k not in other._learned})
        self._learned = other._learned

    def known(self) -> dict[str, str]:
        """What this scrubber has learned so far (value -> mask), for the leg that continues its conversation."""
        return dict(self._learned)

    @property
    def learned(self) -> bool:
        """Whether any value under a covered key has been seen (and is hunted for elsewhere)."""
        return bool(self._learned)

    def sweep(self, value: Any) -> Any:
        """``value`` with every secret learned so far masked again, counting nothing.

        A record captured before a secret was learned (the user's message naming a password
        that a later tool call puts under a covered key) is swept when the ``Recording`` is
        built, so the saved evidence is consistent whatever the order things happened in.
        """
        if not self._learned:
            return value
        if isinstance(value, str):
            for secret, mask in self._learned.items():
                if secret in value:
                    value = value.replace(secret, mask)
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self._learned.get(str(value), value)
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                out[_distinct(self.sweep(key), out)] = self.sweep(item)
            return out
        if isinstance(value, list | tuple):
            return [self.sweep(item) for item in value]
        return value

    def _text(self, text: str) -> str:
        text = self.sweep(text)
        if not self.may_match(text):
            return text
        for pattern in self._patterns:
            text, hits = pattern.sub(text)
            if hits:
                name = f"pattern:{pattern.name}"
                self.counts[name] = self.counts.get(name, 0) + hits
        return text

    def may_match(self, text: str) -> bool:
        """``False`` only when no pattern of the policy can match ``text`` (a quick test)."""
        return any(screen is None or screen.search(text) for screen in self._screens)

    def knows_any(self, text: str) -> bool:
        """``True`` when ``text`` holds a value this scrubber has masked under a key."""
        return any(secret in text for secret in self._learned)

    def safe_cut(self, text: str) -> int:
        """The longest prefix of ``text`` ending at a whitespace break that a whole word follows
        and that no covered match crosses (0 when there is none)."""
        breaks = [m.start() for m in _BREAK.finditer(text)][:-1]
        if not breaks:
            return 0
        found = {p: p.spans(text) for p in self._patterns if p.spans_breaks}
        spans = [span for hits in found.values() for span in hits]
        # a caller's pattern that matches here may read around its match (see _cuts_alike); one that
        # matches nothing whole can, cut, only mask more
        reading = [p for p, hits in found.items() if p.bounded and hits]
        for secret in self._learned:
            if not any(char.isspace() for char in secret):
                continue  # a value without whitespace cannot straddle a cut at whitespace
            at = text.find(secret)
            while at != -1:
                spans.append((at, at + len(secret)))
                at = text.find(secret, at + 1)
            # the start of the value may be what the text ends with: the rest may be on its way
            arriving = next((k for k in range(min(len(secret) - 1, len(text)), 0, -1) if text.endswith(secret[:k])), 0)
            if arriving:
                spans.append((len(text) - arriving, len(text)))
        for cut in reversed(breaks):
            if cut and all(not start < cut < end for start, end in spans) and _cuts_alike(reading, text, cut):
                return cut
        return 0

    def matched(self) -> list[str]:
        """Every key and pattern that matched, in this leg or an earlier one of its conversation."""
        return sorted({*self.prior, *self.counts})

    def marks(self) -> dict[str, list[str]]:
        """What the policy covered: the keys and pattern names in force, and the names that matched."""
        return {"keys": list(self.policy.keys), "patterns": list(self.policy.patterns), "matched": self.matched()}

    def report(self) -> dict[str, Any]:
        """The redaction report a ``Recording`` carries: what was in force and what matched, with counts."""
        return {**self.marks(), "counts": dict(sorted(self.counts.items()))}


def _cuts_alike(patterns: list[_Pattern], text: str, cut: int) -> bool:
    r"""Whether a caller's patterns mask ``text`` cut at ``cut`` as they mask it whole: a look-behind or
    look-ahead may read across the cut (``(?<=pin: )\d+``, ``\d+(?= EUR)``) although no match crosses it.
    The built-ins' only look at one character beside a match, never whitespace, so they always do."""
    head, tail = text[:cut], text[cut:]
    return all(p.sub(head)[0] + p.sub(tail)[0] == p.sub(text)[0] for p in patterns)


def _distinct(key: Any, taken: dict[Any, Any]) -> Any:
    """``key``, or ``key#2``, ``key#3``...: two keys masked alike must stay two entries."""
    if key not in taken:
        return key
    n = 2
    while f"{key}#{n}" in taken:
        n += 1
    return f"{key}#{n}"


class TokenGate:
    """Streams token text to ``emit`` only in stretches no covered match can straddle.

    With a policy in force, a secret split across two tokens would slip past a per-token
    match. The gate holds text back until a whole word has followed it, and never cuts
    inside a match nor inside the start of one still arriving at the end of what it holds
    (a partial match: ``Project Blue`` while ``Project Blue Falcon`` may follow), so a pattern
    spanning words or tokens is matched whole, however the stream is split; :meth:`flush`
    releases what is left when the call ends.
    """

    __slots__ = ("_emit", "_held", "_look_at", "_scrub", "_size")

    def __init__(self, scrub: RunScrubber, emit: Any) -> None:
        self._scrub = scrub
        self._emit = emit
        self._held: list[str] = []
        self._size = 0
        #: how much must be held before the next look: after a look that could release nothing
        #: (a match still arriving from early on, a caller's pattern out of time), twice as much, so
        #: a stream held whole (a key that never ends) is looked at a logarithmic number of times,
        #: not at every break
        self._look_at = 0

    def feed(self, text: str) -> None:
        self._held.append(text)
        self._size += len(text)
        # Only a new break makes a new place to cut: text without one is held as it is, so a
        # long stretch without whitespace costs one scan when its break arrives, not one per token.
        if self._size < self._look_at or _BREAK.search(text) is None:
            return
        held = "".join(self._held)
        cut = self._scrub.safe_cut(held)
        if cut:
            self._emit(self._scrub.scrub(held[:cut]))
            held = held[cut:]
            self._look_at = 0
        else:
            self._look_at = 2 * len(held)
        self._held = [held]
        self._size = len(held)

    def flush(self) -> None:
        held = "".join(self._held)
        self._held = []
        self._size = self._look_at = 0
        if held:
            self._emit(self._scrub.scrub(held))
