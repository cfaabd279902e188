"""A request's body as sent, and a reply's as read off the connection: capped, split into lines, framed.

Rules kept here: a request body is compact UTF-8 JSON, the bytes recorded as sent. A reply is
read no further than ``max_reply_bytes`` (its ``Content-Length``, when it states one, is judged
before anything is read); a streamed one is split into lines ended by CRLF, CR or LF and framed
as server-sent events (comments, the keep-alives, and ids skipped) or as NDJSON, each event's
data decoded (a JSON object, or the text itself, such as ``[DONE]``) and kept, in order, as the
exchange records it. What does not fit raises :class:`~footprint_lab.providers._wire_format.Missing`.

Role: providers layer; read by :class:`footprint_lab.providers._http.Wire`.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx

from footprint_lab.providers._wire_format import Missing, StreamParser, read_json, too_large
from footprint_lab.providers.types import LLMResponse


def serialize(body: dict[str, Any]) -> bytes:
    """A request body as the bytes sent: compact JSON, UTF-8."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def load_body(raw: bytes) -> Any:
    """A whole body: its JSON, or (not JSON) the start of its text; :class:`Missing` when it nests too deep."""
    try:
        return read_json(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:2000]


async def capped_bytes(response: httpx.Response, limit: int) -> AsyncIterator[bytes]:
    """The body's bytes (decoded from its content encoding), :func:`too_large` once they pass ``limit``."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    read = 0
    async for chunk in response.aiter_bytes():
        read += len(chunk)
        if read > limit:
            raise too_large(limit)
        yield chunk


async def whole_body(response: httpx.Response, limit: int) -> bytes:
    return b"".join([chunk async for chunk in capped_bytes(response, limit)])


_LINE_END = re.compile(r"\r\n|\r|\n")


async def body_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The body's lines as UTF-8 text, ended by CRLF, CR or LF (as server-sent events define them)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    rest = ""
    async for chunk in chunks:
        text = rest + decoder.decode(chunk)
        held = "\r" if text.endswith("\r") else ""  # may be the first half of a CRLF
        *whole, rest = _LINE_END.split(text[:-1] if held else text)
        rest += held
        for line in whole:
            yield line
    *whole, last = _LINE_END.split(rest + decoder.decode(b"", final=True))
    for line in [*whole, last] if last else whole:
        yield line


async def _sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str | None, str]]:
    """Server-sent events as ``(event name, data)``; comments (keep-alives) and ids are skipped."""
    event: str | None = None
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:
        yield event, "\n".join(data)


async def _ndjson(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str | None, str]]:
    async for line in lines:
        if line.strip():
            yield None, line


async def read_stream(lines: AsyncIterator[str], framing: str, parser: StreamParser,
                      received: list[Any]) -> LLMResponse:
    """Feed a streamed body's events to ``parser``, keeping each decoded event in ``received``."""
    frames = _sse if framing == "sse" else _ndjson
    async for event, text in frames(lines):
        data = _decode_event(text)
        received.append({"event": event, "data": data} if event is not None else data)
        parser.feed(event, data)
    return parser.finish()


def _decode_event(text: str) -> Any:
    """A stream event's data: a JSON object, or the text itself (a sentinel such as ``[DONE]``)."""
    if text.startswith("{"):
        try:
            return read_json(text)
        except ValueError:
            raise Missing("valid JSON in a stream event", cut=True) from None  # an event cut off mid-way
    return text

