"""The token gate: streamed text released only where no redaction match can cross the cut.

Rule kept here: a secret split across two streamed tokens must not pass. The :class:`TokenGate`
holds text and releases it only up to a point no match (a pattern's, or a value the run's
scrubber learned) crosses or may still be arriving past; what it holds is looked at again only
as it doubles, so a stream that never breaks costs linear time (bench/bench_redaction.py).

Role: redact layer, used by the recorder for streamed replies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from footprint_lab.redact._patterns import _BREAK

if TYPE_CHECKING:
    from footprint_lab.redact.scrubber import RunScrubber


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
