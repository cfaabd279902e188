"""The chat view of one LLM call: what it was sent, message by message, and what it answered.

Rule kept here: every message drawn is one the recording holds for that call
(:class:`footprint_lab.core.call_messages.CallMessages`), through the one escaping builder, and
each names the context piece that carries it (its source id, shown and on ``data-fl-piece``), so
a message here is the same piece the answer view's custody opens. Roles are words (system, user,
assistant, tool) before their colours; a tool call says its tool, arguments and call id, a tool
result the call it answers. A long message shows its first :data:`CLIP` characters and the rest
one click away (``<details>``); the raw request and the raw response (JSON as sent and received on
the wire, or as the recording holds them when no HTTP exchange was kept: the view says which) are one
click away too. No JavaScript; with its styles stripped it is a numbered list of messages.

Role: lab layer; a pure function of a ``CallMessages``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from footprint_lab.core.call_messages import message_text
from footprint_lab.lab.views.page import Html, css, el, esc, join, new_scope, wrap
from footprint_lab.markup import theme, words

if TYPE_CHECKING:
    from footprint_lab.core.call_messages import CallMessages
    from footprint_lab.record.recording import ContextPiece, LLMExchange, Recording

#: the characters of a message its bubble shows before the rest is one click away
CLIP = 800
#: each role's colour (the word says the role; the colour repeats it)
ROLE_COLOURS = {"system": theme.PURPLE, "user": theme.BLUE, "assistant": theme.BROWN, "tool": theme.ORANGE}

CHAT_CSS = f"""
§ .fl-chat-list{{list-style:none;padding:0;margin:{theme.SPACE[1]} 0}}
§ .fl-msg{{border:1px solid {theme.LINE};border-radius:{theme.RADIUS};padding:.3rem {theme.SPACE[2]};
margin:{theme.SPACE[1]} 12% {theme.SPACE[1]} 0;overflow-wrap:anywhere}}
§ .fl-msg.fl-role-user{{margin:{theme.SPACE[1]} 0 {theme.SPACE[1]} 12%}}
§ .fl-msg.fl-reply{{border-style:dashed}}
§ .fl-msg pre{{margin:{theme.SPACE[0]} 0;max-height:16rem;background:none;padding:0 {theme.SPACE[0]}}}
§ .fl-msg-head{{display:flex;flex-wrap:wrap;gap:.2rem {theme.SPACE[1]};align-items:baseline;font-size:{theme.SMALL}}}
§ .fl-msg-head b{{font-size:{theme.SMALL};text-transform:uppercase;letter-spacing:.03em}}
§ .fl-tool-call{{font-size:{theme.SMALL};margin:{theme.SPACE[0]} 0}}
§ .fl-raw pre{{max-height:30rem}}
"""


def call_messages_html(messages: CallMessages) -> str:
    """One LLM call as a chat: a self-contained HTML fragment (no JavaScript)."""
    scope = new_scope()
    return wrap(scope, call_messages_body(messages), css_class="fl-view fl-chat", extra=CHAT_CSS)


def messages_html(home: Recording, exchange: LLMExchange, *, root: Recording | None = None) -> str:
    """The chat view of ``exchange``, a call of ``home`` (the run's recording or a member's, under ``root``)."""
    from footprint_lab.core.call_messages import CallMessages

    return call_messages_html(CallMessages(root if root is not None else home, home, exchange))


def call_messages_body(messages: CallMessages, *, raw: bool = True) -> Html:
    """The chat without its style sheet (for a view that embeds it in its own scope, with ``CHAT_CSS``);
    ``raw=False`` leaves out the raw request and reply, and says where they are."""
    exchange = messages.exchange
    pieces = messages.message_pieces()
    whole = f"run.messages({messages.call!r}).messages"
    bubbles = [_system(messages)] if exchange.system else []
    bubbles += [_message(message, piece, whole) for message, piece in zip(messages.messages, pieces, strict=True)]
    bubbles.append(_reply(messages))
    tail = _raw(messages) if raw else el("p", "The raw request and reply, as sent and received: ",
                                         el("code", f"run.messages({messages.call!r})"), ".", class_="fl-note")
    return join([_header(messages), _tools(messages), el("ol", *bubbles, class_="fl-chat-list"), tail])


def _header(messages: CallMessages) -> Html:
    exchange = messages.exchange
    usage = exchange.response.usage
    home, root = messages.home, messages.root
    where = None
    if home is not root:
        name = home.runner.name or home.runner.id or home.runner.kind
        where = el("span", "in member ", el("b", name), " ", el("code", home.path), class_="fl-muted")
    said = (f"{exchange.model} · {len(messages.messages)} message{'s' if len(messages.messages) != 1 else ''} sent · "
            f"{usage.input_tokens} tokens in, {usage.output_tokens} out · {exchange.duration_ms:.1f} ms")
    note = ("What this call was sent, in order, and what it answered. Each message names the context piece "
            "that carries it (hover for its kind): the same id the answer view's custody shows.")
    return join([el("div", el("b", "Messages of"), " ", el("code", messages.call), " ", where, " ",
                    el("span", said, class_="fl-muted"), class_="fl-head"), el("p", note, class_="fl-note")])


def _piece_id(piece: ContextPiece) -> Html:
    return el("code", piece.source_id, class_="fl-piece-id", title=f"context piece {piece.source_id} "
              f"({piece.source_kind})", style=css(color=theme.INK), data_fl_piece=piece.source_id,
              data_fl_slot=piece.slot)


def _tools(messages: CallMessages) -> Html | None:
    tools = messages.exchange.tools
    if not tools:
        return None
    ids = {piece.source_id: piece for piece in messages.tool_pieces()}
    items = []
    for tool in tools:
        name = str(tool.get("name") or "")
        piece = ids.get(name)
        description = _clip(str(tool.get("description") or ""), 300, "the recording", name="span")
        carried = el("span", "piece ", _piece_id(piece)) if piece is not None else None
        items.append(el("li", el("code", name), " ", description, " ", carried))
    said = f"Tools offered ({len(tools)})" + (" (withheld from this call)" if messages.exchange.tools_withheld else "")
    return el("details", el("summary", said), el("ul", *items, class_="fl-hops"), class_="fl-box")


#: the word a bubble shows for its role, where the wire's own word would mean something else here
ROLE_WORDS = {"tool": "tool result"}


def _bubble(role: str, head: list[Any], body: list[Any], *, piece: ContextPiece | None, extra_class: str = "",
            edge: str | None = None, word: str | None = None) -> Html:
    colour = ROLE_COLOURS.get(role, theme.GREY)
    border = edge or (theme.kind_colour(piece.source_kind) if piece is not None else colour)
    background = theme.BLUE_TINT if role == "user" else theme.PAPER if extra_class else theme.FILL
    # the items apart by real spaces too, so a page whose style sheet is gone still reads them apart
    said = words.term(word or ROLE_WORDS.get(role, role), "b", style=css(color=colour))
    head_line = el("div", join([said, *head], " "), class_="fl-msg-head")
    return el("li", head_line, *body, class_=f"fl-msg fl-role-{_safe(role)}{extra_class}",
              style=css(border_left=f"4px solid {border}", background_color=background, color=theme.INK),
              data_fl_piece=piece.source_id if piece is not None else None,
              data_fl_slot="messages" if piece is not None else None,
              title=f"context piece {piece.source_id} ({piece.source_kind})" if piece is not None else None)


def _system(messages: CallMessages) -> Html:
    ids = [_piece_id(piece) for piece in messages.system_pieces()]
    head = [el("span", "from pieces ", join(ids, ", "))] if ids else []
    return _bubble("system", head, [_clip(messages.exchange.system, CLIP,
                                          f"run.messages({messages.call!r}).exchange.system")], piece=None)


def _message(message: dict[str, Any], piece: ContextPiece | None, whole: str) -> Html:
    role = str(message.get("role") or "unknown")
    head: list[Any] = []
    if piece is not None:
        head += [el("span", "piece ", _piece_id(piece), " ", el("small", f"({piece.source_kind})"))]
    if role == "tool":
        head += [el("span", "result of ", el("code", str(message.get("name") or "a tool")), " for call ",
                    el("code", str(message.get("tool_call_id") or "-")))]
    content = message_text(message.get("content"))
    body: list[Any] = [_clip(content, CLIP, whole)] if content or not message.get("tool_calls") else []
    body += [_tool_call(call) for call in message.get("tool_calls") or [] if isinstance(call, dict)]
    return _bubble(role, head, body, piece=piece)


def _reply(messages: CallMessages) -> Html:
    response = messages.exchange.response
    head = [el("span", "the reply, as received"), el("code", messages.call),
            el("small", f"stop: {response.stop_reason or '-'}")]
    body: list[Any] = [_clip(response.content, CLIP, f"run.messages({messages.call!r}).response")] \
        if response.content else []
    body += [_tool_call(call.model_dump()) for call in response.tool_calls]
    if not body:
        body.append(el("p", "(no text and no tool call)", class_="fl-note"))
    return _bubble("assistant", head, body, piece=None, extra_class=" fl-reply", edge=theme.BROWN, word="reply")


def _tool_call(call: dict[str, Any]) -> Html:
    args = json.dumps(call.get("args", call.get("arguments")), ensure_ascii=False, sort_keys=True, default=str)
    shown_args = _clip(args, 300, "the recording", name="code")
    return el("div", "→ calls ", el("code", str(call.get("name") or "")), " with ", shown_args, " ",
              el("small", "call id ", el("code", str(call.get("id") or "-"))), class_="fl-tool-call")


def _raw(messages: CallMessages) -> Html:
    wire = messages.request_source == "wire"
    sent = "as sent on the wire" if wire else "as recorded: no HTTP exchange was kept for this call"
    got = "as received on the wire" if wire else "as recorded"
    call = messages.call
    request = el("pre", _json(messages.request, f"run.messages({call!r}).request"))
    response = el("pre", _json(messages.response, f"run.messages({call!r}).response"))
    return join([el("details", el("summary", f"Raw request ({sent})"), request, class_="fl-box fl-raw fl-raw-request"),
                 el("details", el("summary", f"Raw response ({got})"), response,
                    class_="fl-box fl-raw fl-raw-response")])


def _json(value: Any, whole: str) -> Html:
    return _escaped(json.dumps(value, ensure_ascii=False, indent=2, default=str), whole)


def _clip(text: str, limit: int, whole: str, *, name: str = "pre") -> Html:
    """``text`` in a ``name`` element, its first ``limit`` characters, and all of it one click away when longer."""
    if len(text) <= limit:
        return el(name, text)
    return join([el(name, text[:limit] + "…"),
                 el("details", el("summary", f"show all {len(text):,} characters"), el("pre", _escaped(text, whole)))])


def _escaped(text: str, whole: str) -> Html:
    """``text`` escaped and bounded, its note (past the bound) naming ``whole``, where all of it is."""
    return Html(esc(text, whole=whole))


def _safe(role: str) -> str:
    """A role as a class name: letters only (a role comes from a message, so anything else is dropped)."""
    return "".join(ch for ch in role if ch.isalpha())[:20] or "other"
