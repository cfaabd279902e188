"""Retrieval for ``define_rag``: chunking, a lexical BM25 scorer, and a pluggable embedding scorer.

Rule kept here: retrieval is explainable and local by default. The default scorer is BM25
over lowercase words (:func:`~footprint_lab.context.similarity.words`): no network, no model
download, the same scores on every machine.
An embedding scorer is a plug-in (``EmbeddingScorer(embed)``, where ``embed`` is any function
from a list of texts to a list of vectors); it ranks by cosine similarity.

A scorer is anything with ``index(texts) -> index`` whose index has ``scores(query) -> list of
float`` (one score per text, higher is closer). :func:`retrieve` keeps the ``top_k`` texts
with a positive score, best first (ties keep corpus order), so ranks are stable.

Role: context layer; pure computation, nothing here records.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, TypeAlias

from footprint_lab.base.refusal import call_problem
from footprint_lab.context.refusals import ContextDeclarationError
from footprint_lab.context.similarity import cosine, words


class Chunk(NamedTuple):
    """One retrievable piece of a document: ``chunk_id`` is ``<document id>#<n>`` (n from 1)."""

    chunk_id: str
    document_id: str
    text: str


class RetrievalIndex(Protocol):
    """A corpus indexed by a scorer."""

    def scores(self, query: str) -> Sequence[float]:
        """One score per indexed text, higher is closer to ``query``."""
        ...


class Scorer(Protocol):
    """What ``define_rag(scorer=...)`` needs: ``index(texts)``, the corpus's texts indexed to score a query against."""

    def index(self, texts: Sequence[str]) -> RetrievalIndex:
        """The texts indexed: ``scores(query)`` gives one score per text."""
        ...


#: what ``define_rag(corpus=...)`` takes: texts, ``{document id: text}``, or ``{"id": ..., "text": ...}`` entries
Corpus: TypeAlias = Mapping[str, str] | Sequence[str | Mapping[str, str]]


class BM25Index:
    """Okapi BM25 over an inverted index: scoring costs only the postings of the query's words.

    Everything in a word's score for a text but the query is known once the corpus is indexed,
    so each posting holds the word's whole contribution to that text's score, and scoring a
    query adds up its words' postings.
    """

    __slots__ = ("b", "k1", "lengths", "mean_length", "postings", "size", "weights")

    def __init__(self, texts: Sequence[str], *, k1: float, b: float) -> None:
        self.k1 = k1
        self.b = b
        self.size = len(texts)
        counted: dict[str, list[tuple[int, int]]] = {}
        self.lengths: list[int] = []
        for position, text in enumerate(texts):
            tokens = words(text)
            self.lengths.append(len(tokens))
            counts: dict[str, int] = {}
            for token in tokens:
                counts[token] = counts.get(token, 0) + 1
            for token, count in counts.items():
                counted.setdefault(token, []).append((position, count))
        self.mean_length = (sum(self.lengths) / self.size) if self.size else 0.0
        # The "+1" form of BM25's idf: never negative, so a common word still counts a little.
        self.weights = {
            token: math.log(1 + (self.size - len(posting) + 0.5) / (len(posting) + 0.5))
            for token, posting in counted.items()
        }
        mean = self.mean_length or 1.0
        #: word -> (text position, the word's contribution to that text's score)
        self.postings: dict[str, list[tuple[int, float]]] = {
            token: [(position, self.weights[token] * count * (k1 + 1)
                     / (count + k1 * (1 - b + b * self.lengths[position] / mean)))
                    for position, count in posting]
            for token, posting in counted.items()
        }

    def scores(self, query: str) -> list[float]:
        out = [0.0] * self.size
        for token in set(words(query)):
            for position, contribution in self.postings.get(token, ()):
                out[position] += contribution
        return out


class BM25Scorer:
    """The default, lexical scorer (``k1`` and ``b`` are BM25's usual knobs)."""

    name = "bm25"

    def __init__(self, *, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b

    def index(self, texts: Sequence[str]) -> BM25Index:
        return BM25Index(texts, k1=self.k1, b=self.b)


class EmbeddingIndex:
    """The corpus's vectors; a query is scored by cosine similarity."""

    __slots__ = ("embed", "vectors")

    def __init__(self, embed: Callable[[list[str]], Sequence[Sequence[float]]], vectors: list[list[float]]) -> None:
        self.embed = embed
        self.vectors = vectors

    def scores(self, query: str) -> list[float]:
        vectors = list(self.embed([query]))
        query_vector = [float(x) for x in vectors[0]] if len(vectors) == 1 else []
        if len(query_vector) != len(self.vectors[0]):
            raise ValueError("the embed function returned a query vector of another size than the corpus vectors")
        return [cosine(query_vector, vector) for vector in self.vectors]


class EmbeddingScorer:
    """Rank by embeddings: ``embed`` maps a list of texts to one vector each (any model, any service)."""

    def __init__(self, embed: Callable[[list[str]], Sequence[Sequence[float]]], *, name: str = "embedding") -> None:
        problem = call_problem(embed, 1)
        if problem is not None:
            raise ContextDeclarationError(
                "EmbeddingScorer", "embed", embed,
                "must be a function from a list of texts to a list of vectors (one list of floats per text)",
                received=problem,
            )
        self.embed = embed
        self.name = name

    def index(self, texts: Sequence[str]) -> EmbeddingIndex:
        vectors = [[float(x) for x in v] for v in self.embed(list(texts))]
        if len(vectors) != len(texts) or not vectors or len({len(v) for v in vectors}) != 1 or not vectors[0]:
            raise ContextDeclarationError(
                "EmbeddingScorer", "embed", vectors,
                "must return one non-empty vector per text, all of one size",
                received=f"{len(vectors)} vector(s) for {len(texts)} text(s)",
            )
        return EmbeddingIndex(self.embed, vectors)


def retrieve(index: RetrievalIndex, query: str, top_k: int) -> list[tuple[int, float]]:
    """``(chunk position, score)`` of the ``top_k`` best chunks with a positive score, best first."""
    best = heapq.nsmallest(top_k, ((-score, position) for position, score in enumerate(index.scores(query))
                                   if score > 0))
    return [(position, -score) for score, position in best]


def _documents(corpus: Any) -> list[tuple[str, str]] | None:
    if isinstance(corpus, Mapping):
        documents = [(str(key), text) for key, text in corpus.items()]
    elif isinstance(corpus, Sequence) and not isinstance(corpus, str):
        documents = []
        for number, item in enumerate(corpus, 1):
            if isinstance(item, Mapping):
                documents.append((str(item.get("id", f"doc-{number}")), item.get("text")))
            else:
                documents.append((f"doc-{number}", item))
    else:
        return None
    if not documents or any(not isinstance(text, str) or not text.strip() for _, text in documents):
        return None
    return documents


def _pack(units: list[str], separator: str, size: int) -> list[str]:
    """Join consecutive units with ``separator`` while the result stays within ``size`` characters."""
    out: list[str] = []
    current = ""
    for unit in units:
        if current and len(current) + len(separator) + len(unit) > size:
            out.append(current)
            current = unit
        else:
            current = f"{current}{separator}{unit}" if current else unit
    if current:
        out.append(current)
    return out


def _pieces(text: str, size: int) -> list[str]:
    """Paragraphs merged up to ``size`` characters; a longer paragraph is cut between words (a longer word, in it)."""
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        paragraph = paragraph.strip()
        if len(paragraph) <= size:
            units.extend([paragraph] if paragraph else [])
            continue
        words = [word[i:i + size] for word in paragraph.split() for i in range(0, len(word), size)]
        units.extend(_pack(words, " ", size))
    return _pack(units, "\n\n", size)


def chunk_corpus(corpus: Any, size: int) -> tuple[Chunk, ...] | None:
    """The corpus as chunks of at most ``size`` characters, or ``None`` when it is not a corpus."""
    documents = _documents(corpus)
    if documents is None:
        return None
    return tuple(
        Chunk(f"{document_id}#{number}", document_id, piece)
        for document_id, text in documents
        for number, piece in enumerate(_pieces(text, size), 1)
    )
