"""Finished spans, whatever form they arrive in, read once into one plain shape that holds together.

Rule kept: the import door accepts the SDK's finished ``ReadableSpan`` objects and the OTLP JSON a
collector's file exporter writes, and refuses anything else by name before a recording is built, by
shape only: not spans at all (``OtelSpansError``), a field of a shape no span has, named by its path
(``OtelSpanFieldError``), parents that run in a loop (``OtelSpanLoopError``). Past this module, which
is the last to look at a span's origin, every span has

- text ids, and a ``(trace_id, span_id)`` no other span has (a copy delivered twice is kept once);
- a ``parent_id`` that is ``None`` or names another span of the same trace, with no loop;
- whole-nanosecond times (an end before the start, which a wall clock stepped back can write, reads as
  a zero duration);
- text that can be saved (a lone surrogate made U+FFFD, as :mod:`footprint_lab.base.unicode` does)
  and plain attribute values nested at most :data:`MAX_DEPTH` deep;
- the attributes the importer reads in the type it reads them, the JSON-valued ones decoded, and
  :data:`CUT` set where the SDK's attribute length limit cut one short.

Pattern: duck typing on the SDK's public span properties, so reading spans needs no OpenTelemetry
import; every walk over the parent links is iterative and visits each span once (linear time).

Role: the door of :mod:`footprint_lab.otel`; free of ``opentelemetry``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple

from footprint_lab.base.refusal import describe_shape
from footprint_lab.base.unicode import sound, sound_text
from footprint_lab.otel.refusals import OtelSpanFieldError, OtelSpanLoopError, OtelSpansError

if TYPE_CHECKING:
    from footprint_lab.otel.inputs import Spans

#: How deep an attribute value (or JSON-valued attribute) may nest: the conventions need a handful, views far fewer.
MAX_DEPTH = 64

#: Attributes the importer reads as text, as a count, or decodes as JSON; each is checked here.
TEXT_KEYS = frozenset({"gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.agent.id", "gen_ai.request.model",
                       "gen_ai.response.model", "gen_ai.tool.name", "gen_ai.tool.call.id", "footprint_lab.run_id",
                       "openinference.span.kind", "llm.model_name", "llm.request.model_name",
                       "llm.response.model_name", "tool.name", "tool_call.id", "agent.name"})
COUNT_KEYS = frozenset({"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
                        "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens",
                        "gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens",
                        "llm.token_count.prompt", "llm.token_count.completion"})
JSON_KEYS = frozenset({"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                       "gen_ai.tool.definitions", "gen_ai.tool.call.arguments", "footprint_lab.source_ids"})
_READ_KEYS = TEXT_KEYS | COUNT_KEYS | JSON_KEYS
_TEXT_WHEN_NOT_JSON = frozenset({"gen_ai.tool.call.arguments"})  # kept as the text it is when it is not JSON
#: set on a span's attributes when one was cut short (JSON that no longer reads, or a text as long as the limit)
CUT = "footprint_lab.cut_short"
#: the indexed attribute families (OpenInference's, OpenLLMetry's), each nested into one list under its base name
INDEXED = ("llm.input_messages", "llm.output_messages", "llm.tools", "retrieval.documents",
           "reranker.output_documents", "gen_ai.prompt", "gen_ai.completion", "llm.request.functions")
_PREFIXES = tuple(f"{base}." for base in INDEXED)
#: an OpenInference span's whole input and output, read where its message family does not stand for them
_PAYLOADS = {"input.value": "input_messages", "output.value": "output_messages"}
#: the most digits an index of an indexed attribute may have (a billion positions)
MAX_INDEX_DIGITS = 9

_DIGITS = re.compile(r"[0-9]{1,20}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SIGNED = re.compile(r"-?[0-9]{1,19}")
_DOUBLE_WORDS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_NANOS = 2**64  # OTLP times are unsigned 64-bit nanoseconds
_VALUE_KEYS = ("stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue")
_PLAIN = "text, a number, a boolean, or a list of them"


class SpanData(NamedTuple):
    """One finished span as the importer reads it (see the module's rule for what holds)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    failed: bool


def read_spans(spans: Spans, *, rooted: bool = True) -> list[SpanData]:
    """``spans`` (the SDK's finished spans, OTLP JSON, OTLP protobuf, or a list mixing them) as :class:`SpanData`,
    or a refusal; with ``rooted=False`` each keeps the parent id it names, whether or not that span is among them."""
    if isinstance(spans, os.PathLike):
        spans = _file(spans)
    if isinstance(spans, bytes | bytearray | memoryview) and bytes(spans[:64]).lstrip()[:1] not in (b"", b"{", b"["):
        from footprint_lab.otel._otlp import decode  # OTLP protobuf: needs opentelemetry-proto

        spans = decode(bytes(spans))
    elif isinstance(spans, str | bytes | bytearray | memoryview):
        spans = _json_document(spans if isinstance(spans, str) else bytes(spans))
    elif hasattr(spans, "resource_spans") and callable(getattr(spans, "SerializeToString", None)):
        from footprint_lab.otel._otlp import as_json  # an ExportTraceServiceRequest message

        spans = as_json(spans)
    located: list[tuple[SpanData, str]] = []
    if isinstance(spans, Mapping):
        if "resourceSpans" not in spans:
            raise OtelSpansError("a dict without 'resourceSpans'")
        located.extend(_otlp_json(spans, ""))
    elif isinstance(spans, Iterable):
        for n, span in enumerate(spans):
            if isinstance(span, Mapping) and "resourceSpans" in span:
                located.extend(_otlp_json(span, f"spans[{n}]."))
            elif isinstance(span, SpanData):  # read before (the receiver holds a trace's spans as they come)
                located.append((span, f"spans[{n}]"))
            elif hasattr(span, "context") and hasattr(span, "attributes") and hasattr(span, "start_time"):
                located.append((_sdk_span(span, f"spans[{n}]"), f"spans[{n}].context"))
            else:
                raise OtelSpansError(f"a collection whose item {n} is {describe_shape(span)}")
    else:
        raise OtelSpansError(describe_shape(spans))
    return _rooted(_unique(located)) if rooted else _unique(located)


def _file(path: os.PathLike[Any]) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        raise OtelSpansError("a path to a file that cannot be read") from None


def _json_document(text: str | bytes) -> Any:
    """OTLP JSON text: one document, or JSON lines (a collector's file exporter writes one request per line)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise OtelSpansError("JSON text nested too deeply to be spans") from None
    except ValueError:
        pass
    lines = [line for line in (text.splitlines() if text else []) if line.strip()]
    if len(lines) > 1:
        try:
            return [json.loads(line) for line in lines]
        except RecursionError:
            raise OtelSpansError("JSON lines nested too deeply to be spans") from None
        except ValueError:
            pass
    if isinstance(text, str):  # a file's name passed as text reads as text: say how to pass it
        raise OtelSpansError("text that is not JSON (to read a file, pass its path as a pathlib.Path)")
    raise OtelSpansError("bytes that are not JSON")


# -- the SDK's spans -----------------------------------------------------------------------------------------


def _sdk_span(span: Any, at: str) -> SpanData:
    context = span.context
    if not (hasattr(context, "trace_id") and hasattr(context, "span_id")):
        raise OtelSpanFieldError(f"{at}.context", f"is {describe_shape(context)}, not a span context")
    parent = getattr(span, "parent", None)
    if parent is not None and not hasattr(parent, "span_id"):
        raise OtelSpanFieldError(f"{at}.parent", f"is {describe_shape(parent)}, not a span context or None")
    name = getattr(span, "name", None)
    if name is not None and not isinstance(name, str):
        raise OtelSpanFieldError(f"{at}.name", f"is {describe_shape(name)}, not text")
    start = _sdk_nanos(span.start_time, f"{at}.start_time", 0)
    end = max(_sdk_nanos(getattr(span, "end_time", None), f"{at}.end_time", start), start)
    raw = span.attributes
    if raw is not None and not isinstance(raw, Mapping):
        raise OtelSpanFieldError(f"{at}.attributes", f"is {describe_shape(raw)}, not a mapping of names to values")
    attributes: dict[str, Any] = {}
    for k, (key, value) in enumerate((raw or {}).items()):
        if not isinstance(key, str):
            raise OtelSpanFieldError(f"{at}.attributes[{k}]", f"has a key that is {describe_shape(key)}, not text")
        if type(value) is str and value.isascii() and key.isascii():  # nearly every attribute: nothing to check
            attributes[key] = value
        else:
            attributes[_sound(key)] = _sdk_value(value, f"{at}.attributes[{k}]", 0)
    status = getattr(getattr(span, "status", None), "status_code", None)
    attributes = _conventions(attributes, f"{at}.attributes")
    if _reached_limit(raw, getattr(getattr(span, "_attributes", None), "max_value_len", None)):
        attributes[CUT] = True
    return SpanData(
        trace_id=_sdk_id(context.trace_id, 128, f"{at}.context.trace_id"),
        span_id=_sdk_id(context.span_id, 64, f"{at}.context.span_id"),
        parent_id=_sdk_id(parent.span_id, 64, f"{at}.parent.span_id") if parent is not None else None,
        name=_sound(name or ""), start_ns=start, end_ns=end,
        attributes=attributes, failed=getattr(status, "name", None) == "ERROR",
    )


def _reached_limit(raw: Mapping[str, Any] | None, limit: Any) -> bool:
    """Whether a text the import reads is as long as the SDK's attribute length limit (so cut there): a message, a
    convention's JSON, and ``input.value`` / ``output.value`` where no message family stands for them."""
    raw = raw or {}
    given = {key.split(".")[1] for key in raw if key.startswith(("llm.input_messages.", "llm.output_messages."))}
    read = [value for key, value in raw.items() if key.startswith((*_PREFIXES, "gen_ai.")) or key in JSON_KEYS
            or (key in _PAYLOADS and _PAYLOADS[key] not in given)]
    texts = (text for value in read for text in (value if isinstance(value, tuple) else (value,)))
    return _whole(limit) and any(isinstance(text, str) and len(text) == limit for text in texts)


def _sound(text: str) -> str:
    """``text`` made sound (see :func:`~footprint_lab.base.unicode.sound_text`); ASCII, the usual case, as it is."""
    return text if text.isascii() else sound_text(text)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _sdk_id(value: Any, bits: int, at: str) -> str:
    if not _whole(value) or not 0 <= value < 2**bits:
        raise OtelSpanFieldError(at, f"is {describe_shape(value)}, not a {bits}-bit id (a whole number from 0)")
    return format(value, f"0{bits // 4}x")


def _sdk_nanos(value: Any, at: str, default: int) -> int:
    if value is None:
        return default
    if not _whole(value) or not 0 <= value < _NANOS:
        raise OtelSpanFieldError(at, f"is {describe_shape(value)}, not whole nanoseconds since 1970 (from 0 to 2**64)")
    return int(value)


def _sdk_value(value: Any, at: str, depth: int) -> Any:
    """An SDK attribute value as plain data (bytes as text, sequences as tuples), or a refusal."""
    if isinstance(value, str):
        return _sound(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, list | tuple | Mapping):
        if depth >= MAX_DEPTH:
            raise OtelSpanFieldError(at, f"nests more than {MAX_DEPTH} lists or mappings")
        if isinstance(value, Mapping):
            if not all(isinstance(key, str) for key in value):
                raise OtelSpanFieldError(at, "is a mapping with a key that is not text")
            return {_sound(key): _sdk_value(item, at, depth + 1) for key, item in value.items()}
        return tuple(_sdk_value(item, at, depth + 1) for item in value)
    raise OtelSpanFieldError(at, f"is {describe_shape(value)}, not an attribute value ({_PLAIN})")


# -- OTLP JSON ----------------------------------------------------------------------------------------------


def _items(value: Any, at: str) -> list[Any]:
    """A repeated OTLP field: a list, or nothing (missing or ``null``)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise OtelSpanFieldError(at, f"is {describe_shape(value)}, not a list")
    return value


def _object(value: Any, at: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise OtelSpanFieldError(at, f"is {describe_shape(value)}, not {what}")
    return value


def _otlp_json(data: Mapping[str, Any], at: str) -> Iterator[tuple[SpanData, str]]:
    for r, item in enumerate(_items(data.get("resourceSpans"), f"{at}resourceSpans")):
        where = f"{at}resourceSpans[{r}]"
        resource = _object(item, where, "an object with 'scopeSpans'")
        if resource.get("resource") is not None:
            _object(resource["resource"], f"{where}.resource", "an object")
        for s, entry in enumerate(_items(resource.get("scopeSpans"), f"{where}.scopeSpans")):
            scope = _object(entry, f"{where}.scopeSpans[{s}]", "an object with 'spans'")
            if scope.get("scope") is not None:
                _object(scope["scope"], f"{where}.scopeSpans[{s}].scope", "an object")
            for k, span in enumerate(_items(scope.get("spans"), f"{where}.scopeSpans[{s}].spans")):
                path = f"{where}.scopeSpans[{s}].spans[{k}]"
                yield _otlp_span(span, path), f"{path}.spanId"


def _otlp_span(value: Any, at: str) -> SpanData:
    span = _object(value, at, "a span object")
    trace_id, span_id = (_span_id(span.get(key), f"{at}.{key}") for key in ("traceId", "spanId"))
    parent_id, name = span.get("parentSpanId"), span.get("name")
    if parent_id is not None and not isinstance(parent_id, str):
        raise OtelSpanFieldError(f"{at}.parentSpanId", f"is {describe_shape(parent_id)}, not text")
    if name is not None and not isinstance(name, str):
        raise OtelSpanFieldError(f"{at}.name", f"is {describe_shape(name)}, not text")
    start = _otlp_nanos(span.get("startTimeUnixNano"), f"{at}.startTimeUnixNano", 0)
    end = max(_otlp_nanos(span.get("endTimeUnixNano"), f"{at}.endTimeUnixNano", start), start)
    status = span.get("status")
    code = None if status is None else _object(status, f"{at}.status", "an object with a 'code'").get("code")
    if code is not None and (isinstance(code, bool) or not isinstance(code, int | str)):
        raise OtelSpanFieldError(f"{at}.status.code", f"is {describe_shape(code)}, not a status code")
    attributes = _key_values(span.get("attributes"), f"{at}.attributes", 0)
    return SpanData(trace_id=_sound(trace_id), span_id=_sound(span_id),
                    parent_id=_sound(parent_id) if isinstance(parent_id, str) and parent_id else None,
                    name=_sound(name or ""),
                    start_ns=start, end_ns=end, attributes=_conventions(attributes, f"{at}.attributes"),
                    failed=code in (2, "STATUS_CODE_ERROR"))


def _span_id(value: Any, at: str) -> str:
    if not isinstance(value, str) or not value:
        raise OtelSpanFieldError(at, "is missing or empty (every span has a trace id and a span id)"
                                 if value is None or value == "" else f"is {describe_shape(value)}, not text")
    return value


def _otlp_nanos(value: Any, at: str, default: int) -> int:
    """A ``fixed64`` time: decimal text (as protobuf writes it) or a whole JSON number."""
    if value is None:
        return default
    if (isinstance(value, str) and _DIGITS.fullmatch(value)) or (isinstance(value, float) and value.is_integer()):
        number = int(value)
    elif _whole(value):
        number = value
    else:
        raise OtelSpanFieldError(at, f"is {describe_shape(value)} that is not whole nanoseconds since 1970")
    if not 0 <= number < _NANOS:
        raise OtelSpanFieldError(at, "is outside the range of OTLP times (0 to 2**64 nanoseconds)")
    return number


def _key_values(value: Any, at: str, depth: int) -> dict[str, Any]:
    """A list of OTLP ``KeyValue`` objects as a dict (a repeated key keeps its last value)."""
    out: dict[str, Any] = {}
    for k, item in enumerate(_items(value, at)):
        pair = _object(item, f"{at}[{k}]", "an object with 'key' and 'value'")
        key = pair.get("key")
        if not isinstance(key, str):
            raise OtelSpanFieldError(f"{at}[{k}].key", "is missing" if key is None else
                                     f"is {describe_shape(key)}, not text")
        out[_sound(key)] = _any_value(pair.get("value"), f"{at}[{k}].value", depth)
    return out


def _any_value(value: Any, at: str, depth: int) -> Any:
    """One OTLP ``AnyValue`` as a Python value (``None`` when it holds none)."""
    if value is None:
        return None
    holder = _object(value, at, "an AnyValue object")
    held = [key for key in _VALUE_KEYS if holder.get(key) is not None]
    if not held:
        return None
    if len(held) > 1:
        raise OtelSpanFieldError(at, f"holds {len(held)} values (an AnyValue holds one)")
    key = held[0]
    item = holder[key]
    where = f"{at}.{key}"
    if key in ("stringValue", "bytesValue") and isinstance(item, str):
        return _sound(item)
    if key == "boolValue" and isinstance(item, bool):
        return item
    if key == "intValue" and (_whole(item) or (isinstance(item, str) and _SIGNED.fullmatch(item))):
        number = int(item)
        if -(2**63) <= number < 2**63:
            return number
    if key == "doubleValue":
        if isinstance(item, int | float) and not isinstance(item, bool):
            return float(item)
        if isinstance(item, str) and item in _DOUBLE_WORDS:
            return _DOUBLE_WORDS[item]
    if key in ("arrayValue", "kvlistValue"):
        if depth >= MAX_DEPTH:
            raise OtelSpanFieldError(where, f"nests more than {MAX_DEPTH} arrays or lists of key-values")
        values = _object(item, where, "an object with 'values'").get("values")
        if key == "kvlistValue":
            return _key_values(values, f"{where}.values", depth + 1)
        return tuple(_any_value(v, f"{where}.values[{n}]", depth + 1)
                     for n, v in enumerate(_items(values, f"{where}.values")))
    kinds = {"stringValue": "text", "bytesValue": "base64 text", "boolValue": "true or false",
             "intValue": "a 64-bit whole number", "doubleValue": "a number"}
    raise OtelSpanFieldError(where, f"is {describe_shape(item)}, not {kinds[key]}")


# -- the attributes the importer reads ---------------------------------------------------------------------


def _conventions(attributes: dict[str, Any], at: str) -> dict[str, Any]:
    """``attributes`` with the keys the importer reads checked, the JSON-valued ones decoded, and the indexed ones
    nested (:func:`nest`)."""
    if any(map(str.startswith, attributes, repeat(_PREFIXES))):
        nest(attributes, at)
    for key in attributes.keys() & _READ_KEYS:
        value = attributes[key]
        if value is None:
            continue
        where = f"{at}['{key}']"  # a convention's own name, never the caller's data
        if key in TEXT_KEYS and not isinstance(value, str):
            raise OtelSpanFieldError(where, f"is {describe_shape(value)}, not text")
        if key in COUNT_KEYS and not (_whole(value) and value >= 0):
            raise OtelSpanFieldError(where, f"is {describe_shape(value)}, not a count of tokens (a whole number "
                                     "from 0)")
        if key in JSON_KEYS and isinstance(value, str):
            decoded = attributes[key] = _json_text(value, where, key in _TEXT_WHEN_NOT_JSON)
            if decoded is None:  # read as missing, and said: an attribute length limit cuts JSON short
                attributes[CUT] = True
    return attributes


def nest(attributes: dict[str, Any], at: str) -> dict[str, Any]:
    """``attributes`` with each indexed family (``llm.input_messages.3.message.role``...) nested into one list of
    dicts under its base name, in index order (gaps closed up); other attributes as they are.

    An index that is not a whole number of at most :data:`MAX_INDEX_DIGITS` digits is refused by its family's name.
    """
    families: dict[str, dict[int, dict[str, Any]]] = {}
    for key in [key for key in attributes if key.startswith(_PREFIXES)]:
        base = next(b for b in INDEXED if key.startswith(b) and key[len(b)] == ".")
        index, _, rest = key[len(base) + 1:].partition(".")
        if not (index.isascii() and index.isdigit() and len(index) <= MAX_INDEX_DIGITS) or not rest:
            raise OtelSpanFieldError(f"{at}['{base}.*']", "holds a key whose index is not a position (a whole number "
                                     f"of at most {MAX_INDEX_DIGITS} digits followed by a field name)")
        families.setdefault(base, {}).setdefault(int(index), {})[rest] = attributes.pop(key)
    for base, items in families.items():
        attributes[base] = [items[n] for n in sorted(items)]  # a JSON-valued attribute of the same name gives way
    return attributes


def _json_text(text: str, at: str, keep_text: bool) -> Any:
    """A JSON-valued attribute decoded; text that is not JSON is kept (``keep_text``) or read as missing."""
    try:
        return json_value(text)
    except TooDeepError:
        raise OtelSpanFieldError(at, f"is JSON text nesting more than {MAX_DEPTH} lists or objects") from None
    except ValueError:
        return text if keep_text else None


class TooDeepError(ValueError):
    """JSON text nesting more than :data:`MAX_DEPTH` lists or objects."""


def json_value(text: str) -> Any:
    """``text`` decoded as JSON; ``ValueError`` when it is not JSON, :class:`TooDeepError` when it nests too deep."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeepError from None
    if text.count("[") + text.count("{") > MAX_DEPTH:  # fewer brackets than the limit cannot nest past it
        level = [value]
        for _ in range(MAX_DEPTH + 1):  # breadth first: one pass per level, each value seen once
            level = [item for held in level if isinstance(held, list | dict)
                     for item in (held.values() if isinstance(held, dict) else held)]
            if not level:
                break
        else:
            raise TooDeepError
    if _SURROGATE_ESCAPE.search(text) or _sound(text) is not text:  # a \u escape can decode to a lone surrogate
        return sound(value)
    return value


# -- the spans as one tree ---------------------------------------------------------------------------------


def _unique(located: list[tuple[SpanData, str]]) -> list[SpanData]:
    """The spans, each ``(trace_id, span_id)`` once: a copy delivered twice is kept once, a different one refused."""
    first: dict[tuple[str, str], int] = {}
    spans: list[SpanData] = []
    where: list[str] = []
    for span, at in located:
        key = (span.trace_id, span.span_id)
        seen = first.get(key)
        if seen is None:
            first[key] = len(spans)
            spans.append(span)
            where.append(at)
        elif spans[seen] != span:
            raise OtelSpanFieldError(at, f"repeats the trace and span id of {where[seen]}, on a different span "
                                     "(a span id names one span of its trace)")
    return spans


def _rooted(spans: list[SpanData]) -> list[SpanData]:
    """``spans`` with each parent that is not among them cleared (a root here), or refused if parents loop.

    Each span is walked up from once: a walk stops at a root or at a span already walked, and a
    walk that reaches a span of its own path has found a loop, whose length is counted.
    """
    at = {(span.trace_id, span.span_id): n for n, span in enumerate(spans)}
    parent = [at.get((span.trace_id, span.parent_id)) if span.parent_id is not None else None for span in spans]
    state = bytearray(len(spans))  # 0: not walked, 1: on the current walk, 2: walked
    loops: list[int] = []
    traces: set[str] = set()
    for start in range(len(spans)):
        path: list[int] = []
        node = start if not state[start] else None
        while node is not None and not state[node]:
            state[node] = 1
            path.append(node)
            node = parent[node]
        if node is not None and state[node] == 1:
            loops.append(len(path) - path.index(node))
            traces.add(spans[node].trace_id)
        for n in path:
            state[n] = 2
    if loops:
        raise OtelSpanLoopError(loops, len(traces))
    return [span._replace(parent_id=None) if span.parent_id is not None and parent[n] is None else span
            for n, span in enumerate(spans)]

