"""``CallMessages``: what one LLM call was sent and what it answered, message by message, as recorded.

Rule kept here: every message is the one the recording holds for that call (the transcript's
prefix the call was sent, then the messages injected for it, ``Recording.request_messages``), each
beside the context piece that carries it, so a message in the chat view names the same piece id
the custody view does. The raw request is the body as sent on the wire when the provider recorded
one (a real provider: method, URL, headers without credentials, body); otherwise (the mock, an
imported trace, a replay) it is the request as the recording holds it (model, system, messages, tools),
and :attr:`CallMessages.request_source` says which. The raw response likewise.

Role: core layer (a ``Run``'s view of one call); drawn by the lab through the display registry
(kind ``"call_messages"``), pandas imported when a frame is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from footprint_lab.core._displayed import Displayed

if TYPE_CHECKING:
    import pandas as pd

    from footprint_lab.record.recording import ContextPiece, LLMExchange, Recording

#: the columns of ``CallMessages.to_frame()``, in order
MESSAGE_COLUMNS = ["position", "role", "content", "name", "tool_call_id", "tool_calls", "piece", "source_kind"]


class CallMessages(Displayed):
    """One LLM call's messages as a chat: ``messages`` (as sent), ``response`` (as received), ``to_frame()``.

    ``home`` is the recording that made the call (the run's own, or a member's in a composition);
    displayed, the call is a chat of role-labelled bubbles with the raw request and response one
    click away (drawn by the lab, ``lab.views.messages``).
    """

    kind = "call_messages"
    __slots__ = ("exchange", "home", "root")

    def __init__(self, root: Recording, home: Recording, exchange: LLMExchange) -> None:
        self.root = root
        self.home = home
        self.exchange = exchange

    @property
    def call(self) -> str:
        """The call's step id."""
        return self.exchange.step_id

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages the call was sent, in order (the system text is ``exchange.system``)."""
        return self.home.request_messages(self.exchange)

    def message_pieces(self) -> list[ContextPiece | None]:
        """For each message, the context piece that carries it (``None`` where the recording names none)."""
        pieces = self.home.context_pieces
        indices = self.home.exchange_pieces(self.exchange)["messages"]
        found: list[ContextPiece | None] = [pieces[i] if 0 <= i < len(pieces) else None for i in indices]
        return (found + [None] * len(self.messages))[: len(self.messages)]

    def system_pieces(self) -> list[ContextPiece]:
        """The pieces the system text was assembled from, in order."""
        pieces = self.home.context_pieces
        return [pieces[i] for i in self.exchange.system_pieces if 0 <= i < len(pieces)]

    def tool_pieces(self) -> list[ContextPiece]:
        """The pieces the tools offered came from, in order."""
        pieces = self.home.context_pieces
        return [pieces[i] for i in self.exchange.tool_pieces if 0 <= i < len(pieces)]

    @property
    def request_source(self) -> str:
        """``"wire"`` when the provider recorded the request as sent over HTTP, else ``"recorded"`` (the request
        as the recording holds it: the mock, an imported trace, a replay)."""
        return "wire" if isinstance(self._wire_part("request"), dict) else "recorded"

    @property
    def request(self) -> dict[str, Any]:
        """The raw request: as sent on the wire when recorded, else as recorded (model, system, messages, tools)."""
        sent = self._wire_part("request")
        if isinstance(sent, dict):
            return sent
        exchange = self.exchange
        return {"model": exchange.model, "system": exchange.system, "messages": self.messages, "tools": exchange.tools}

    @property
    def response(self) -> dict[str, Any]:
        """The raw response: as received on the wire when recorded, else the response as the run recorded it."""
        received = self._wire_part("response") if self.request_source == "wire" else None
        if isinstance(received, dict):
            return received
        return self.exchange.response.model_dump(mode="json")

    def _wire_part(self, part: str) -> Any:
        wire = self.exchange.wire or {}
        found = wire.get(part)
        # an HTTP provider records the request with its body; an imported trace records only its settings
        return found if isinstance(found, dict) and ("body" in found or part == "response") else None

    def to_frame(self) -> pd.DataFrame:
        """One row per message sent: ``position``, ``role``, ``content``, ``name``, ``tool_call_id``, ``tool_calls``
        (``name(id)`` of each call an assistant message made), ``piece`` (its source id) and ``source_kind``."""
        from footprint_lab.explain.frame import ShownFrame  # imports pandas

        rows = []
        for position, (message, piece) in enumerate(zip(self.messages, self.message_pieces(), strict=True)):
            calls = message.get("tool_calls") or []
            rows.append([position, str(message.get("role") or ""), message_text(message.get("content")),
                         str(message.get("name") or ""), str(message.get("tool_call_id") or ""),
                         ", ".join(f"{c.get('name')}({c.get('id')})" for c in calls if isinstance(c, dict)),
                         piece.source_id if piece is not None else "", piece.source_kind if piece is not None else ""])
        return ShownFrame(rows, columns=MESSAGE_COLUMNS).astype({"position": "int64"})

    def __str__(self) -> str:
        lines = [f"{self.call} ({self.exchange.model}): system, {len(self.messages)} message(s), reply:"]
        lines += [f"  [{m.get('role')}] {message_text(m.get('content'))[:80]}" for m in self.messages[-6:]]
        lines.append(f"  -> {(self.exchange.response.content or '')[:80]}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"CallMessages(call={self.call!r}, messages={len(self.messages)})"



def message_text(content: Any) -> str:
    """A message's content as text (a list of parts, as some providers send, joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", part)) if isinstance(part, dict) else str(part) for part in content)
    return str(content)
