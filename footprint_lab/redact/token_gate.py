"""The token gate: streamed text is released only where no redaction match can cross the cut.

Rule kept here: a secret split across two streamed tokens must not pass, and a stream that never
breaks still costs linear time.

Role: redact layer, used by the recorder for streamed replies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from footprint_lab.redact._patterns import _BREAK

if TYPE_CHECKING:
    from footprint_lab.redact.scrubber import RunScrubber


class TokenGate:
    """Passes token text to ``emit`` only in stretches no covered match can straddle.

    Text is held until a whole word follows it. The gate never cuts inside a match (a pattern's or a
    learned value's), nor inside one still arriving (``Project Blue`` while ``Project Blue Falcon`` may
    follow), so a match is seen whole however the stream is split. :meth:`flush` releases the rest.
    """

    __slots__ = ("_emit", "_held", "_look_at", "_scrub", "_size")

    def __init__(self, scrub: RunScrubber, emit: Any) -> None:
        self._scrub = scrub
        self._emit = emit
        self._held: list[str] = []
        self._size = 0
        #: how much to hold before the next look: after a look that released nothing, twice as much, so
        #: a stream held whole (a key that never ends) is looked at a logarithmic number of times
        self._look_at = 0

    def feed(self, text: str) -> None:
        self._held.append(text)
        self._size += len(text)
        # only a new break makes a new place to cut, so a long stretch without one costs one scan, not one per token
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
