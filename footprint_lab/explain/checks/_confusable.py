"""Which of many texts read alike, found without comparing every pair: the tool lint's ``confusable`` check.

Defect closed: the lint compared every pair of tools and reported every pair above the
threshold, so time and output grew with the square of the catalog (2,000 similar tools took
half a minute and gave two million findings). Rule kept here: a pair is scored exactly (the
cosine of the two texts' word counts, or of their embeddings), but only a pair that can reach
the threshold is scored, and the pairs that do are joined into groups, one per set of texts
they connect, each with its closest pair.

- Candidates (word counts): prefix filtering over an inverted index (AllPairs). Each text's
  words are taken rarest first; its prefix is the rarest words it needs for the rest to weigh
  less than the threshold (as a unit vector). Two texts whose cosine reaches the threshold
  share a word of each one's prefix, so a text is scored only against the texts holding a
  word of its prefix, and a word every tool uses ("the", "returns") makes no pair a candidate.
- Scores: a block of texts at a time, against its candidates, as one dense product over the
  block's own words, so memory stays bounded however large the catalog. Embeddings are dense:
  every pair is a candidate there, scored block by block the same way.
- Groups: union-find over the pairs, vectorised (hooking each root under the smaller, then
  pointer jumping); a group's closest pair is its highest-scoring pair, the first in catalog
  order on a tie.

Role: explain layer; pure numpy, used by :mod:`footprint_lab.explain.checks.tool_lint`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

#: the most texts scored in one block, the most word entries a block's dense product spans, and
#: the most candidates scored against a block at once: together they bound a block's memory
BLOCK_ROWS = 512
BLOCK_WORDS = 2048
BLOCK_CANDIDATES = 4096


@dataclass(frozen=True)
class Group:
    """Texts joined by pairs at or above the threshold: their indices in order, and the closest pair."""

    members: tuple[int, ...]
    closest: tuple[int, int]
    score: float


class Lexical:
    """The texts' word counts as unit vectors, stored sparse, with an inverted index over the words."""

    def __init__(self, bags: list[list[str]]) -> None:
        vocabulary: dict[str, int] = {}
        docs: list[int] = []
        tokens: list[int] = []
        counts: list[int] = []
        for number, bag in enumerate(bags):
            for word, count in Counter(bag).items():
                docs.append(number)
                tokens.append(vocabulary.setdefault(word, len(vocabulary)))
                counts.append(count)
        self.size = len(bags)
        self.doc = np.asarray(docs, dtype=np.int64)
        self.token = np.asarray(tokens, dtype=np.int64)
        weight = np.asarray(counts, dtype=float)
        norms = np.sqrt(np.bincount(self.doc, weights=weight * weight, minlength=self.size))
        self.weight = weight / norms[self.doc] if len(weight) else weight
        #: the entries of text n are ``indptr[n]:indptr[n + 1]`` (they were added text by text)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(self.doc, minlength=self.size))]).astype(np.int64)
        words = len(vocabulary)
        self.by_word = np.argsort(self.token, kind="stable")
        self.word_ptr = np.concatenate([[0], np.cumsum(np.bincount(self.token, minlength=words))]).astype(np.int64)
        self.words = words

    def _prefix(self, threshold: float) -> Any:
        """For each entry, whether it is in its text's prefix (see the module docstring)."""
        frequency = np.diff(self.word_ptr)[self.token]
        order = np.lexsort((self.token, frequency, self.doc))  # text by text, rarest word first
        squares = self.weight[order] ** 2
        after = np.append(np.cumsum(squares[::-1])[::-1], 0.0)  # weight from each entry to the very end
        rest = after[:-1] - after[self.indptr[self.doc[order] + 1]]  # ... to the end of its own text
        inside = np.empty(len(order), dtype=bool)
        inside[order] = rest >= threshold * threshold - 1e-9
        return inside

    def blocks(self, threshold: float) -> Iterator[tuple[Any, Any, Any]]:
        """Block by block: the block's texts, its candidates (later texts only) and their exact scores."""
        prefix = self._prefix(threshold)
        start = 0
        while start < self.size:
            stop = int(np.searchsorted(self.indptr, self.indptr[start] + BLOCK_WORDS, side="right")) - 1
            stop = min(max(stop, start + 1), start + BLOCK_ROWS, self.size)
            entries = np.arange(self.indptr[start], self.indptr[stop])
            words = np.unique(self.token[entries[prefix[entries]]])
            holders = self.by_word[_ranges(self.word_ptr[words], self.word_ptr[words + 1])]
            candidates = np.unique(self.doc[holders])
            candidates = candidates[candidates > start]
            if len(candidates):
                columns = np.full(self.words, -1, dtype=np.int64)
                used = np.unique(self.token[entries])
                columns[used] = np.arange(len(used))
                block = np.zeros((stop - start, len(used)))
                block[self.doc[entries] - start, columns[self.token[entries]]] = self.weight[entries]
                for at in range(0, len(candidates), BLOCK_CANDIDATES):
                    chunk = candidates[at:at + BLOCK_CANDIDATES]
                    yield np.arange(start, stop), chunk, block @ self._rows(chunk, columns).T
            start = stop

    def _rows(self, texts: Any, columns: Any) -> Any:
        """The texts' vectors as dense rows over the columns given (words outside them dropped)."""
        lengths = self.indptr[texts + 1] - self.indptr[texts]
        entries = _ranges(self.indptr[texts], self.indptr[texts + 1])
        row = np.repeat(np.arange(len(texts)), lengths)
        column = columns[self.token[entries]]
        kept = column >= 0
        rows = np.zeros((len(texts), int(columns.max()) + 1))
        rows[row[kept], column[kept]] = self.weight[entries[kept]]
        return rows


class Dense:
    """Vectors given whole (embeddings), as unit rows; every later row is a candidate."""

    def __init__(self, vectors: Any) -> None:
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        self.unit = vectors / norms[:, None]
        self.size = len(vectors)

    def blocks(self, threshold: float) -> Iterator[tuple[Any, Any, Any]]:
        for start in range(0, self.size, BLOCK_ROWS):
            stop = min(start + BLOCK_ROWS, self.size)
            for at in range(start + 1, self.size, BLOCK_CANDIDATES):
                chunk = np.arange(at, min(at + BLOCK_CANDIDATES, self.size))
                yield np.arange(start, stop), chunk, self.unit[start:stop] @ self.unit[chunk].T


def _ranges(starts: Any, stops: Any) -> Any:
    """``starts[k]:stops[k]`` for every k, as one array of indices."""
    lengths = stops - starts
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    return np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total)


def _reaching(space: Lexical | Dense, threshold: float) -> Iterator[tuple[Any, Any, Any, Any]]:
    """Block by block: its texts, their candidates, the scores, and which pairs (earlier, later) reach the threshold."""
    for rows, candidates, raw in space.blocks(threshold):
        # to 12 places: pairs that score alike tie (the first in catalog order wins), not by rounding noise
        scores = np.round(raw, 12)
        yield rows, candidates, scores, (scores >= threshold) & (candidates[None, :] > rows[:, None])


def pairs(space: Lexical | Dense, threshold: float) -> list[tuple[int, int, float]]:
    """Every pair (earlier, later) whose score reaches ``threshold``, with it, in catalog order: for a small set."""
    found: list[tuple[int, int, float]] = []
    for rows, candidates, scores, reach in _reaching(space, threshold):
        i, j = np.nonzero(reach)
        found += zip(rows[i].tolist(), candidates[j].tolist(), scores[i, j].tolist(), strict=True)
    return sorted(found)


def groups(space: Lexical | Dense, threshold: float) -> list[Group]:
    """The groups the reaching pairs join, in order of their first member (see the module docstring)."""
    parent = np.arange(space.size)
    best = np.full(space.size, -np.inf)
    partner = np.full(space.size, -1)
    for rows, candidates, scores, reach in _reaching(space, threshold):
        i, j = np.nonzero(reach)
        if not len(i):
            continue
        parent = _join(parent, rows[i], candidates[j])
        shown = np.where(reach, scores, -np.inf)
        nearest = shown.argmax(axis=1)  # the first on a tie: candidates are in catalog order
        top = shown[np.arange(len(rows)), nearest]
        closer = top > best[rows]  # strictly: an earlier chunk's partner wins a tie
        best[rows[closer]] = top[closer]
        partner[rows[closer]] = candidates[nearest[closer]]
    linked = np.nonzero(partner >= 0)[0]
    if not len(linked):
        return []
    roots = parent[linked]
    order = np.lexsort((linked, -best[linked], roots))
    heads = order[np.r_[True, roots[order][1:] != roots[order][:-1]]]
    closest = {int(roots[k]): (int(linked[k]), int(partner[linked[k]]), float(best[linked[k]])) for k in heads}
    members: dict[int, list[int]] = {}
    for index in np.nonzero(np.isin(parent, list(closest)))[0].tolist():
        members.setdefault(int(parent[index]), []).append(index)
    return [Group(tuple(members[root]), closest[root][:2], closest[root][2]) for root in sorted(closest)]


def _compress(parent: Any) -> Any:
    """Every element pointing straight at its root."""
    while True:
        above = parent[parent]
        if np.array_equal(above, parent):
            return parent
        parent = above


def _join(parent: Any, left: Any, right: Any) -> Any:
    """``parent`` with each pair's groups joined, compressed; every root is its group's smallest index."""
    while len(left):
        parent = _compress(parent)
        a, b = parent[left], parent[right]
        apart = a != b
        left, right, a, b = left[apart], right[apart], a[apart], b[apart]
        np.minimum.at(parent, np.maximum(a, b), np.minimum(a, b))
    return parent
