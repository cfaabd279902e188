"""Every piece of HTML the package writes is built with the escaping element builder
(``footprint_lab.markup.elements``: ``el``, ``start``, ``join``, ``raw`` for markup this library wrote), never
typed into a string: a view cannot leave a value unescaped by forgetting to, and a reader finds every element
where the builder is called. The builder's own module is the one place that writes tags."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import footprint_lab

PACKAGE = Path(footprint_lab.__file__).parent
BUILDER = PACKAGE / "markup" / "elements.py"
#: an element's tag as a page reads it: ``<div``, ``</span>``, ``<code>``; a regular expression that matches
#: tags in general (``</?([A-Za-z]...``) names no element, so it is not one
TAG = re.compile(r"</?(?:html|head|body|meta|title|style|script|noscript|div|span|p|pre|code|b|i|strong|em|a|img|"
                 r"table|thead|tbody|tr|td|th|details|summary|ul|ol|li|h[1-6]|button|svg|small|br|hr)(?=[\s>/])")


def _written_text(tree: ast.AST) -> list[tuple[int, str]]:
    """Each string the module writes (an f-string's literal parts included), docstrings and comments left out."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_module_but_the_builder_types_an_element_into_a_string() -> None:
    typed = [f"{path.relative_to(PACKAGE)}:{line}: {text[:60]!r}"
             for path in sorted(PACKAGE.rglob("*.py")) if path != BUILDER
             for line, text in _written_text(ast.parse(path.read_text(encoding="utf-8")))
             if TAG.search(text)]
    assert typed == []


def test_the_check_sees_an_element_typed_into_an_f_string() -> None:
    """The scan reads an f-string's literal parts, where such markup would be typed."""
    source = 'def view(x):\n    """<b>docs may show a tag</b>"""\n    return f"<span class=\'x\'>{x}</span>"\n'
    found = [text for _, text in _written_text(ast.parse(source)) if TAG.search(text)]
    assert found == ["<span class='x'>", "</span>"]
