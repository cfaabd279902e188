"""The seal claims a notebook output makes, and whether anything in the output backs them.

An output can show a seal it cannot back. A badge (``data-fl-seal``, or the words "sealed · verified"
in any markup) may sit in an output whose recording was removed or never sealed; a recording may sit
in an output that no longer displays its data (turned into a ``stream``). :func:`unbacked` names such
an output, so a forged display is broken wherever it goes. What a sealed output displays is checked
by ``sealing.output_seal``.

Role: notebook layer; pure functions of an output's JSON-native data.
"""

from __future__ import annotations

import functools
import html
import re
from typing import Any

from footprint_lab.base.unicode import invisible_class
from footprint_lab.record.schema import RECORDING_MIME
from footprint_lab.sealing.verdict import Verdict

#: the output types whose ``data`` a notebook displays (a ``stream`` shows its ``text``, an ``error`` its traceback)
DISPLAYING = ("display_data", "execute_result")
_BADGE = re.compile(r"data-fl-seal\s*=", re.IGNORECASE)
_VERIFIED = re.compile(r"\bsealed\W{0,12}verified\b", re.IGNORECASE)
#: a tag; it never holds a "<", so a scan from each "<" stops at the next one (a text of "<" is read in one pass)
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)?[^<>]*>")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
#: elements drawn in line with the text around them: ``<b>sea</b>led`` is one word to a reader
_INLINE = frozenset({"a", "abbr", "b", "bdi", "bdo", "cite", "code", "del", "dfn", "em", "font", "i", "ins", "kbd",
                     "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "tt", "u", "var",
                     "wbr"})


@functools.cache
def _unseen() -> re.Pattern[str]:
    return re.compile(f"[{invisible_class()}]+")


def _inline_as_nothing(tag: re.Match[str]) -> str:
    return "" if (tag.group(1) or "").lower() in _INLINE else " "


def _shows_verified(text: str) -> bool:
    """Whether a reader sees "sealed · verified" in ``text``: comments and invisible characters dropped,
    entities read, tags read as a space, and again with inline tags read as nothing."""
    text = _COMMENT.sub("", text)
    return any(_VERIFIED.search(_unseen().sub("", html.unescape(_TAG.sub(gap, text))))
               for gap in (" ", _inline_as_nothing))


def seal_claim(output: dict[str, Any]) -> str | None:
    """Where an output shows a seal (a seal badge, or "sealed · verified" in any markup or spacing): the MIME
    type, or ``text`` for a stream output's text; ``None`` when it shows none. The recording is not looked at."""
    data = output.get("data")
    places: list[tuple[str, Any]] = ([(mime, value) for mime, value in data.items() if mime != RECORDING_MIME]
                                     if isinstance(data, dict) else [])
    places.append(("text", output.get("text")))
    for where, value in places:
        if isinstance(value, list):
            value = "".join(line for line in value if isinstance(line, str))
        if isinstance(value, str) and (_BADGE.search(value) or _shows_verified(value)):
            return where
    return None


def unbacked(output: dict[str, Any]) -> Verdict | None:
    """A broken verdict (kind ``display``) for an output that shows a seal nothing in it backs: a recording
    in an output that does not display its data, or a seal shown with no recording beside it. ``None``
    otherwise (a carried recording is then for its seal to judge)."""
    data = output.get("data")
    if isinstance(data, dict) and RECORDING_MIME in data:
        if output.get("output_type") in DISPLAYING:
            return None
        return Verdict("broken", kind="display", field="output_type",
                       problem="is no longer an output that displays its data (a reader sees other text than the "
                               "sealed run's): it was changed after the run was sealed")
    return _claimed(output, "shows a seal, but the output carries no recording to check it against (removed "
                            "after the run was sealed, or never kept): what it shows cannot be verified")


def unsealed_claim(output: dict[str, Any]) -> Verdict | None:
    """A broken verdict for an output that shows a seal while the recording it carries has none; else ``None``."""
    return _claimed(output, "shows a seal, but the recording it carries is not sealed: the seal was removed after "
                            "the run was shown")


def _claimed(output: dict[str, Any], problem: str) -> Verdict | None:
    claim = seal_claim(output)
    return None if claim is None else Verdict("broken", kind="display", field=claim, problem=problem)
