"""Reading a view's markup the way a browser would, to say whether anything in it came from its input.

``parse(html)`` runs the standard library's HTML parser over a view and keeps every element with
its attributes, the text between them and the scripts' text. ``assert_inert(html)`` then holds a
view to what the views write themselves: only their own elements, only their own attribute
names (so a value that broke out of its quotes shows up as a stray attribute), no event
handler, links only to in-page anchors, images only as inline data, ids made of safe
characters only, style values from the views' own sheet, and scripts only where a figure needs
one (plotly's, whose JSON escapes every ``<``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

#: every element the views, cards, panels, the widget's panels and the exported page write themselves
VIEW_TAGS = frozenset({
    "a", "b", "br", "button", "code", "details", "div", "h4", "h5", "i", "li", "mark", "noscript", "ol", "p", "pre",
    "script", "section", "small", "span", "strong", "style", "summary", "table", "td", "th", "tr", "ul",
    # a tree's picture, drawn as inline SVG
    "svg", "g", "rect", "path", "text", "title",
})
#: the exported page's own frame around the views
PAGE_TAGS = VIEW_TAGS | {"html", "head", "meta", "title", "body"}
#: every attribute name they write (besides ``data-fl-*``, the widget's hooks)
VIEW_ATTRIBUTES = frozenset({
    "class", "style", "id", "href", "title", "open", "type", "role", "data-slot", "data-target", "lang", "charset",
    "http-equiv", "content", "nonce", "alt", "src",
    # the tree's SVG: geometry and presentation attributes, never a style or a link
    "xmlns", "viewbox", "width", "height", "x", "y", "rx", "d", "fill", "stroke", "stroke-width", "font-size",
    "font-weight", "font-family", "text-anchor", "paint-order", "aria-label",
})
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]+$")
_STYLE_VALUE = re.compile(r"^[A-Za-z0-9#%.,:;()\s-]*$")
_SCRIPT_SCHEMES = ("javascript:", "vbscript:", "data:text", "file:")


@dataclass
class Parsed:
    """A view as the parser read it."""

    tags: list[tuple[str, list[tuple[str, str | None]]]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)

    def values(self, name: str) -> list[str]:
        """Every value of the attribute ``name``, in document order."""
        return [value or "" for _, attrs in self.tags for key, value in attrs if key == name]

    def words(self) -> str:
        """All the text, whitespace runs made one space (as a reader sees it: a badge inside a word splits no word)."""
        return " ".join("".join(self.text).split())


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parsed = Parsed()
        self._inside: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parsed.tags.append((tag, attrs))
        self._inside = tag if tag in ("script", "style") else None

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.parsed.tags.append((tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        self._inside = None

    def handle_data(self, data: str) -> None:
        if self._inside == "script":
            self.parsed.scripts.append(data)
        elif self._inside is None:
            self.parsed.text.append(data)


def parse(html: str) -> Parsed:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.parsed


def assert_inert(html: str, *, scripts_allowed: bool = False, tags: frozenset[str] = VIEW_TAGS) -> Parsed:
    """Fail on anything in ``html`` the views do not write themselves; return what was parsed."""
    parsed = parse(html)
    for tag, attrs in parsed.tags:
        assert tag in tags, f"an element <{tag}> the views never write"
        assert scripts_allowed or tag != "script", "a script in a view that carries none"
        for name, value in attrs:
            assert not name.startswith("on"), f"an event handler {name}= on <{tag}>"
            assert name in VIEW_ATTRIBUTES or name.startswith("data-fl-"), f"a stray attribute {name!r} on <{tag}>"
            text = value or ""
            if name == "href":
                assert text.startswith("#"), f"a link out of the page: {text[:80]!r}"
            if name == "src":
                assert text.startswith("data:image/"), f"a source that is no inline image: {text[:80]!r}"
            if name in ("href", "src", "action", "formaction"):
                assert not text.replace(" ", "").lower().startswith(_SCRIPT_SCHEMES), text[:80]
            if name == "id":
                assert _SAFE_ID.match(text), f"an id of unsafe characters: {text[:80]!r}"
            if name == "style":
                assert _STYLE_VALUE.match(text), f"a style value the views did not write: {text[:80]!r}"
    for script in parsed.scripts:  # a figure's, drawn by plotly from its JSON
        assert "newPlot" in script and "<" not in script, script[:200]
    return parsed
