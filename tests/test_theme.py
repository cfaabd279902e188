"""One theme: every colour the package writes comes from engine.theme, and no colour says a thing alone."""

from __future__ import annotations

import re
from pathlib import Path

from footprint_lab.engine import theme

PACKAGE = Path(__file__).parent.parent / "footprint_lab"
HEX = re.compile(r"(?<!&)(?:#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b)")  # not an entity such as &#115;


def test_no_module_but_the_theme_names_a_colour():
    named = {path.relative_to(PACKAGE).as_posix(): HEX.findall(path.read_text(encoding="utf-8"))
             for path in PACKAGE.rglob("*.py") if path.name != "theme.py"}
    assert {path: found for path, found in named.items() if found} == {}


def test_the_widgets_sheet_uses_the_palette_only():
    sheet = (PACKAGE / "lab" / "static" / "lab.css").read_text(encoding="utf-8")
    colours = set(HEX.findall(sheet))
    assert colours and colours <= theme.PALETTE, colours - theme.PALETTE


def _written() -> list[str]:
    """The HTML and style sheets the package writes: views, a card, the panels' and the exported page's sheets."""
    from footprint_lab import Chat
    from footprint_lab.errors import InvalidRunInputError
    from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
    from footprint_lab.lab.cards import error_card_html
    from footprint_lab.lab.panels import STYLE
    from footprint_lab.notebook._html import _PAGE_STYLE

    run = planted_fact_agent().run_sync(REFUND_REQUEST)
    chat = Chat(planted_fact_agent())
    chat.send_sync(REFUND_REQUEST)
    return [run._repr_mimebundle_()["text/html"], chat._repr_mimebundle_()["text/html"],
            run.backtrack()._repr_mimebundle_()["text/html"],
            run.tree()._repr_mimebundle_()["text/html"], run.integrity()._repr_mimebundle_()["text/html"],
            error_card_html(InvalidRunInputError("Agent.run", "a list", "pass a message")), STYLE, _PAGE_STYLE,
            (PACKAGE / "lab" / "static" / "lab.css").read_text(encoding="utf-8")]


def test_every_view_writes_palette_colours_only():
    colours = {colour.lower() for html in _written() for colour in HEX.findall(html)}
    assert colours and colours <= theme.PALETTE, colours - theme.PALETTE


def test_secondary_text_has_one_grey():
    def grey(colour: str) -> bool:
        channels = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
        return max(channels) - min(channels) < 32 and colour not in (theme.INK, theme.PAPER)

    text_colours = {found.lower() for html in _written()
                    for found in re.findall(r"(?<![-\w])color\s*:\s*(#[0-9a-fA-F]{6})", html)}
    assert {colour for colour in text_colours if grey(colour)} == {theme.GREY}


def test_every_status_is_a_symbol_and_a_word_beside_its_colour():
    for status, (colour, symbol) in theme.STATUS.items():
        assert colour in theme.PALETTE and symbol.strip()
        assert theme.status_mark(status) == f"{symbol} {status}"
    assert theme.status_mark("something new") == "• something new"
