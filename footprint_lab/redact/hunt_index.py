"""What a run's scrubber hunts, indexed so that a text costs a few searches however much was learned.

Rule kept here: a learned value is found in a text wherever its run (``redact._patterns.kept_run``) shows,
and nowhere else; the index only makes the looking cheaper. It never shrinks, and it never answers "clean"
for a text that holds a run learned before the text was last looked at.

Role: redact layer, used by ``redact.scrubber.RunScrubber`` alone; the standard library only.
"""

from __future__ import annotations

import bisect
import itertools
import re


class HuntIndex:
    """What a scrubber hunts, kept for quick looks as it grows (it never shrinks, and each part is taken in the order
    it was learned). The runs (``kept_run``: each learned form holds its run) are screened a chunk at a time: one
    alternation of a chunk's runs that finds none in a text skips them all, so a text costs a search per chunk, not a
    look per run; each :data:`_CHUNK` runs make a chunk, and the ones waiting for the next, like one too long to
    compile cheaply, are looked at one by one. A short text found to hold none of the runs is remembered with how
    many there were, and looked at again only for the runs learned since (a tool's name, a step's id: the same few
    texts are scrubbed over and over). The forms that hold whitespace, which a streamed text may be cut inside, are
    kept sorted, to find the one a text ends with the start of."""

    __slots__ = ("chunks", "clean", "forms", "learned", "long", "longest", "order", "runs", "screened", "spaced",
                 "waiting")

    def __init__(self, runs: dict[str, list[str]], learned: dict[str, str]) -> None:
        self.runs, self.learned = runs, learned
        self.forms = self.longest = 0
        self.order: list[str] = []
        self.chunks: list[tuple[re.Pattern[str], list[str]]] = []
        self.waiting: list[str] = []
        self.long: list[str] = []
        self.spaced: list[str] = []
        self.clean: dict[str, int] = {}
        #: for a run many forms hold (every pair of one key holds the key), its forms a chunk at a time: one search
        #: that finds none of a chunk's forms skips them all
        self.screened: dict[str, list[tuple[re.Pattern[str], list[str]]]] = {}

    def present(self, text: str) -> list[str]:
        """The learned forms ``text`` holds, each looked for only where its run shows; a run many forms hold is
        screened :data:`_FORMS` of its forms to a search (each full chunk compiled once)."""
        found: list[str] = []
        for run in self.held(text):
            forms = self.runs[run]
            chunks = self.screened.setdefault(run, []) if len(forms) >= _FORMS else []
            while (len(chunks) + 1) * _FORMS <= len(forms):
                chunk = forms[len(chunks) * _FORMS:(len(chunks) + 1) * _FORMS]
                chunks.append((re.compile("|".join(map(re.escape, chunk))), chunk))
            for screen, chunk in chunks:
                if screen.search(text):
                    found += [form for form in chunk if form in text]
            found += [form for form in forms[len(chunks) * _FORMS:] if form == run or form in text]
        return found

    def held(self, text: str) -> list[str]:
        """The runs ``text`` holds."""
        if len(self.runs) > len(self.order):
            self._take()
        if len(text) > _CLEAN_LONGEST:
            return self._held(text)
        clean = self.clean.get(text)
        if clean is None:
            held = self._held(text)
        elif clean == len(self.order):
            return []
        else:
            held = [run for run in self.order[clean:] if run in text]
        if not held:
            if len(self.clean) >= _CLEAN_KEPT:
                self.clean.clear()
            self.clean[text] = len(self.order)
        return held

    def _held(self, text: str) -> list[str]:
        held = [run for run in self.waiting if run in text]
        if self.long:
            held += [run for run in self.long if run in text]
        for screen, chunk in self.chunks:
            if screen.search(text):
                held += [run for run in chunk if run in text]
        return held

    def arriving(self, text: str) -> int:
        """How long an end of ``text`` is that starts a learned form holding whitespace, but is not all of it (the
        rest may be on its way); 0 when none does."""
        if len(self.learned) > self.forms:
            for form in itertools.islice(self.learned, self.forms, None):
                if any(char.isspace() for char in form):
                    bisect.insort(self.spaced, form)
                    self.longest = max(self.longest, len(form))
            self.forms = len(self.learned)
        spaced = self.spaced
        for start in range(max(len(text) - self.longest + 1, 0), len(text)):
            end = text[start:]
            at = bisect.bisect_right(spaced, end)  # past a form that is this end whole: the longer ones follow
            if at < len(spaced) and spaced[at].startswith(end):
                return len(end)
        return 0

    def _take(self) -> None:
        for run in itertools.islice(self.runs, len(self.order), None):
            self.order.append(run)
            (self.waiting if len(run) <= _LONGEST_SCREENED else self.long).append(run)
        while len(self.waiting) >= _CHUNK:
            chunk = self.waiting[:_CHUNK]
            del self.waiting[:_CHUNK]
            self.chunks.append((re.compile("|".join(map(re.escape, chunk))), chunk))


#: how many forms of one run one alternation screens
_FORMS = 64
#: how many runs one alternation screens, and the longest run it takes
_CHUNK, _LONGEST_SCREENED = 64, 200
#: how many texts found clean are remembered, each up to how long
_CLEAN_KEPT, _CLEAN_LONGEST = 4096, 200
