"""Golden files for the views: a view's HTML read as a reader gets it, compared with a file under tests/golden/.

A view is compared as an *outline*, not as markup: the standard library's parser reads it, and
each element becomes one line (its tag, its classes, its ``data-fl-*`` hooks, whether it is
open), each run of text one quoted line, indented by depth. What changes from one run to the
next is made a placeholder: the output's scope id (``§``), durations (``N ms``), and whatever a
test names (a run id). Style sheets, inline styles and an SVG's geometry are left out: how a
view looks is the theme's, and the browser tests read it.

A golden file changes only on purpose: ``FOOTPRINT_GOLDEN=update`` writes the files anew;
otherwise a missing or different file fails the test, with the diff.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
_KEPT = ("class", "open", "role", "href", "id", "data-slot")
_VOID = frozenset({"br", "img", "meta", "hr", "input", "link"})
_SCOPE = re.compile(r"\bfl[0-9a-f]{6}\b")
_MS = re.compile(r"\b\d+(?:\.\d+)? ms\b")
_LINE = re.compile(r"(\.py):\d+")
#: a cell that is a bare time (the steps table's and the timeline's ``ms`` columns)
#: a time written bare (a timeline's start and length): three decimals under 10 ms, one under 1 s, whole above
#: (``lab.views.timeline._ms``): a machine slower on one run writes another form of the same field
_BARE = re.compile(r"^(\s*)'\d[\d,]*\.\d{1,3}'$", re.MULTILINE)
_WHOLE_MS = re.compile(r"^(\s*td\.fl-num\n\s*)'[\d,]+'$", re.MULTILINE)


def outline(html: str, names: dict[str, str] | None = None) -> str:
    """``html`` as its outline, with ``names`` (a value that changes from run to run: its placeholder) replaced."""
    for value, placeholder in (names or {}).items():
        html = html.replace(value, placeholder)
    lines: list[str] = []

    def walk(node: Node, depth: int) -> None:
        for child in node.children:
            if isinstance(child, str):
                words = " ".join(child.split())
                if words:
                    lines.append("  " * depth + repr(words))
            elif child.tag != "style":
                shown = [child.tag + "".join(f".{name}" for name in child.classes())]
                shown += [key if value is None else f"{key}={value}" for key, value in child.attrs.items()
                          if key.startswith("data-fl-") or (key in _KEPT and key != "class")]
                lines.append("  " * depth + " ".join(shown))
                walk(child, depth + 1)

    walk(dom(html), 0)
    text = "\n".join(lines) + "\n"
    text = _LINE.sub(r"\1:N", _MS.sub("N ms", _SCOPE.sub("§", text)))
    return _BARE.sub(r"\1'N.NN'", _WHOLE_MS.sub(r"\1'N.NN'", text))


def assert_golden(name: str, html: str, names: dict[str, str] | None = None) -> None:
    """Fail unless the outline of ``html`` is ``tests/golden/<name>.txt`` (``FOOTPRINT_GOLDEN=update`` writes it)."""
    path = GOLDEN / f"{name}.txt"
    got = outline(html, names)
    if os.environ.get("FOOTPRINT_GOLDEN") == "update":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path.name}: FOOTPRINT_GOLDEN=update writes it (read it before committing)"
    want = path.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "now", n=2))
        raise AssertionError(f"{path.name} differs from the view (FOOTPRINT_GOLDEN=update rewrites it):\n"
                             f"{diff[:6000]}")


# -- a parsed view, for assertions on its structure -------------------------------------


@dataclass
class Node:
    """One element of a parsed view: its tag, attributes, children (elements and text) in order."""

    tag: str
    attrs: dict[str, str | None]
    children: list[Node | str] = field(default_factory=list)

    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def text(self) -> str:
        """Every text inside, whitespace runs made one space (closed ``<details>`` included, style sheets not)."""
        if self.tag == "style":
            return ""
        return " ".join("".join(c if isinstance(c, str) else " " + c.text() + " " for c in self.children).split())

    def elements(self) -> list[Node]:
        return [c for c in self.children if isinstance(c, Node)]

    def find_all(self, tag: str | None = None, cls: str | None = None, has: str | None = None,
                 **attrs: str) -> list[Node]:
        """Every element below (depth first, document order) with this tag, class, attribute ``has``
        and attribute values (``data_fl_piece="x"`` is ``data-fl-piece="x"``)."""
        wanted = {key.replace("_", "-"): value for key, value in attrs.items()}
        found = []
        for child in self.elements():
            if ((tag is None or child.tag == tag) and (cls is None or cls in child.classes())
                    and (has is None or has in child.attrs)
                    and all(child.attrs.get(key) == value for key, value in wanted.items())):
                found.append(child)
            found += child.find_all(tag, cls, has, **attrs)
        return found

    def find(self, tag: str | None = None, cls: str | None = None, has: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, cls, has, **attrs)
        assert found, f"no <{tag or '*'}> of class {cls} with {attrs}"
        return found[0]


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("tr", "td", "th"):  # the closing tags a view leaves out
            ends = ("td", "th", "tr") if tag == "tr" else ("td", "th")
            while len(self.stack) > 1 and self.stack[-1].tag in ends:
                self.stack.pop()
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        if any(node.tag == tag for node in self.stack[1:]):
            while self.stack.pop().tag != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def dom(html: str) -> Node:
    """``html`` parsed into :class:`Node` elements."""
    reader = _Tree()
    reader.feed(html)
    reader.close()
    return reader.root
