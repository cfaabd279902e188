"""A run's events: the envelope's vocabulary, the stream a run's recorders share, and a routine event's payload.

Rule kept here: every event goes out in one envelope (``seq``, ``run_id``, ``type``, ``step_id``,
``payload``) to the run's listeners. Every recorder of a run shares one :class:`EventStream`, so one
counter numbers the whole run tree, and its events sorted by ``seq`` are in delivery order. A
routine event (a step's start or end, a read, a write, a commit) keeps no payload: it names the
record it reports, and its payload is made from that record when needed (:func:`routine_payloads`).

Role: record layer, for the recorder and for runners that mount member runs on one stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

Path = tuple[str, ...]
Listener = Callable[[Any], None]

#: Event types, in the vocabulary every view and subscriber shares.
EVENT_TYPES = (
    "run_start", "run_end", "step_start", "step_end", "read", "write", "commit", "decision",
    "llm_start", "llm_end", "token", "tool_start", "tool_end", "error", "recall",
)


class _Dotted(dict[Path, str]):
    """Each path's dotted text, made once per distinct path (the first 4096 kept), so a lookup is a C call
    after the first."""

    def __missing__(self, path: Path) -> str:
        text = ".".join(path)
        if len(self) < 4096:
            self[path] = text
        return text


#: ``dotted(("slots", "system")) == "slots.system"``
dotted: Callable[[Path], str] = _Dotted().__getitem__


def commit_paths(written: Iterable[str]) -> str:
    """A commit event's ``paths``: its entries' dotted paths, in order, joined by commas."""
    return ", ".join(written)


class EventStream(tuple[Callable[[Any], None], ...]):
    """The listeners of one run (a tuple of them), with the event counter its recorders share.

    A composition hands its stream to every member it mounts.
    """

    next_seq: int
    #: ``(seq, type, step_id, payload)`` of each delivered event that may hold a value (routine ones
    #: hold none), as delivered or last recalled: where a value learned later is looked for
    delivered: list[tuple[int, str, str, dict[str, Any]]]
    #: for each scrubber on the stream (by id), how many learned values its delivered events were checked for
    checked: dict[int, int]

    def __new__(cls, listeners: Iterable[Listener] = ()) -> EventStream:
        stream = super().__new__(cls, listeners)
        stream.next_seq = 0
        stream.delivered = []
        stream.checked = {}
        return stream


def event_stream(listeners: Iterable[Listener]) -> EventStream:
    """``listeners`` as a run's stream: an existing stream is shared, anything else starts one."""
    return listeners if isinstance(listeners, EventStream) else EventStream(listeners)


def routine_payloads(types: Sequence[str], captured: Sequence[dict[str, Any] | None], refs: Sequence[int],
                     steps: Sequence[Any], reads: Sequence[Any], paths: Sequence[Path], verbs: Sequence[str],
                     commits: Sequence[tuple[str, int, int]]) -> list[Any]:
    """Events' payloads in one pass: each as captured, or for a routine event (captured as ``None``) made
    from the record at its ref in the recorder's columns.

    A routine payload is JSON-native with sorted keys, as a recording keeps every mapping, so it goes
    into a recording as it is.
    """
    made: list[Any] = []
    add = made.append
    for type_, payload, ref in zip(types, captured, refs, strict=False):
        if payload is not None:
            add(payload)
        elif type_ == "write":  # the commonest first
            add({"path": dotted(paths[ref]), "verb": verbs[ref]})
        elif type_ == "step_start":
            step = steps[ref]
            add({"iteration": step[2], "stage": step[1]})
        elif type_ == "step_end":
            add({"status": steps[ref][5]})
        elif type_ == "read":
            read = reads[ref]
            add({"path": dotted(read[1]), "writer": read[2]})
        else:
            _, first, end = commits[ref]
            add({"paths": commit_paths(map(dotted, paths[first:end]))})
    return made
