"""Which spans make one run: grouped by their nearest ``invoke_agent`` ancestor, or by trace without one.

Rule kept here: a run is the spans under one ``invoke_agent`` span (OpenInference's AGENT spans
mark steps of one trace, not runs, so a trace without one is one run); of LLM spans nested in one
another (a framework's call wrapping its client's), the innermost is kept, the one nearest the
wire. Runs come in the order they started, each with the span that frames it and the first agent
name among its spans.

Role: the first half of :func:`footprint_lab.otel._importer.from_spans`; no ``opentelemetry`` import.
"""

from __future__ import annotations

from footprint_lab.otel._semconv import OPENINFERENCE, agent_name, convention, recorded, role
from footprint_lab.otel._spans import SpanData

#: A span's identity (trace id, span id); ``(trace id, None)`` stands for a trace's spans outside any agent run.
_Key = tuple[str, str | None]
_Group = tuple[SpanData | None, SpanData | None, list[SpanData], str | None]


def group_runs(spans: list[SpanData]) -> list[_Group]:
    """Each run: its ``invoke_agent`` span (``None`` for a trace's run), the span framing it (that one, or the trace's
    root), its call, tool and retriever spans in start order, and the first agent name among its spans.

    :func:`~footprint_lab.otel._spans.read_spans` guarantees a parent is a span of the same trace
    and that no parent chain loops, so each walk up ends; each span's owner is worked out once.
    """
    by_key: dict[_Key, SpanData] = {(span.trace_id, span.span_id): span for span in spans}
    roles = {key: role(span.attributes, span.name) for key, span in by_key.items()}
    owners: dict[_Key, _Key] = {}

    def up(key: _Key) -> _Key | None:
        parent = by_key[key].parent_id
        return (key[0], parent) if parent is not None else None

    def owner(key: _Key) -> _Key:
        """The key of the nearest enclosing ``invoke_agent`` span, or ``(trace_id, None)``."""
        walked: list[_Key] = []
        found: _Key = (key[0], None)
        current: _Key | None = key
        while current is not None:
            if current in owners:
                found = owners[current]
                break
            walked.append(current)
            if roles[current] == "agent":
                found = current
                break
            current = up(current)
        for key in walked:
            owners[key] = found
        return found

    calls = [key for key, kind in roles.items() if kind == "call" and recorded(by_key[key].attributes)]
    # An OpenInference LLM span holding another is the same call seen twice (LangChain's around the OpenAI
    # client's, LlamaIndex's around its own): the innermost is kept, the one nearest the wire.
    outer: set[_Key] = set()
    climbed: set[_Key] = set()  # spans whose ancestors are already looked at: each walk up stops there
    for key in calls:
        current = up(key)
        while current is not None and current not in climbed:
            climbed.add(current)
            if roles[current] == "call" and convention(by_key[current].attributes) == OPENINFERENCE:
                outer.add(current)
            current = up(current)
    wanted = set(calls) - outer
    groups: dict[_Key, list[SpanData]] = {}
    frames: dict[_Key, SpanData] = {}
    names: dict[_Key, str] = {}
    for key in sorted(by_key, key=lambda k: by_key[k].start_ns):
        kind, span = roles[key], by_key[key]
        mine = owner(key)
        if kind == "agent":
            groups.setdefault(key, [])  # an agent run without a call still becomes a run
            frames[key] = span
        elif key in wanted or kind in ("tool", "retrieval"):
            groups.setdefault(mine, []).append(span)
        if span.parent_id is None and mine[1] is None:
            frames.setdefault(mine, span)
        name = agent_name(span.attributes)
        if name is not None:
            names.setdefault(mine, name)
    out = [(by_key[key] if key[1] is not None else None, frames.get(key), members, names.get(key))
           for key, members in groups.items() if members or key[1] is not None]
    return sorted(out, key=lambda g: g[1].start_ns if g[1] is not None else min(s.start_ns for s in g[2]))
