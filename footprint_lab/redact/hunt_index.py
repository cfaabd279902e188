"""What a run's scrubber hunts, indexed so that a text costs one pass however much was learned.

Rule kept here: a learned form is found in a text exactly where the text holds it; the index only makes the
looking cheap. It never shrinks, and it never answers "clean" for a text that holds a form learned before the
text is looked at.

Role: redact layer, used by ``redact.scrubber.RunScrubber`` alone; pyahocorasick's automaton (one pass over a text
finds every form it holds, however many were learned).
"""

from __future__ import annotations

import bisect
import itertools

import ahocorasick


class HuntIndex:
    """The forms a scrubber learned (``learned``, in the order learned), found in a text in one pass of an
    Aho-Corasick automaton per level. Forms learned since the last look make a new level; a level no larger than
    the one after it is merged into it (a binary counter), so a run that learns thousands of forms a few at a time
    builds each into about log2(n) automatons, and a text is read by about as many. The forms that hold whitespace,
    which a streamed text may be cut inside, are kept sorted, to find the one a text ends with the start of."""

    __slots__ = ("learned", "levels", "long", "longest", "spaced", "taken")

    def __init__(self, learned: dict[str, str]) -> None:
        self.learned = learned
        self.taken = self.longest = 0
        self.levels: list[tuple[ahocorasick.Automaton, list[str]]] = []
        #: the forms longer than :data:`_LONG`, each looked for on its own (a long word that repeats itself, a run of
        #: one character, costs an automaton a walk of its length at every character of a text that matches it)
        self.long: list[str] = []
        self.spaced: list[str] = []

    def present(self, text: str) -> list[str]:
        """The learned forms ``text`` holds, each once, in the order found."""
        return list(dict.fromkeys(form for _, _, form in self.spans(text)))

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Every place a learned form stands in ``text`` (overlapping ones too), as ``(start, end, form)``."""
        if len(self.learned) > self.taken:
            self._take()
        found = [(end + 1 - len(form), end + 1, form) for automaton, _ in self.levels
                 for end, form in automaton.iter(text)]
        for form in self.long:
            at = text.find(form)
            while at != -1:
                found.append((at, at + len(form), form))
                at = text.find(form, at + 1)
        return found

    def arriving(self, text: str) -> int:
        """How long an end of ``text`` is that starts a learned form holding whitespace, but is not all of it (the
        rest may be on its way); 0 when none does."""
        if len(self.learned) > self.taken:
            self._take()
        spaced = self.spaced
        for start in range(max(len(text) - self.longest + 1, 0), len(text)):
            end = text[start:]
            at = bisect.bisect_right(spaced, end)  # past a form that is this end whole: the longer ones follow
            if at < len(spaced) and spaced[at].startswith(end):
                return len(end)
        return 0

    def _take(self) -> None:
        fresh = list(itertools.islice(self.learned, self.taken, None))
        self.taken = len(self.learned)
        for form in fresh:
            if any(char.isspace() for char in form):
                bisect.insort(self.spaced, form)
                self.longest = max(self.longest, len(form))
        self.long += [form for form in fresh if len(form) > _LONG]
        fresh = [form for form in fresh if len(form) <= _LONG]
        levels = self.levels
        if not fresh:
            return
        levels.append((_automaton(fresh), fresh))
        while len(levels) > 1 and len(levels[-2][1]) <= len(levels[-1][1]):
            newer, older = levels.pop()[1], levels.pop()[1]
            levels.append((_automaton(older + newer), older + newer))


def _automaton(forms: list[str]) -> ahocorasick.Automaton:
    automaton = ahocorasick.Automaton()
    for form in forms:
        automaton.add_word(form, form)
    automaton.make_automaton()
    return automaton


#: the longest form an automaton holds
_LONG = 256
