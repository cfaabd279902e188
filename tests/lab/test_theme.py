"""One theme: every colour the package writes comes from markup.theme, and no colour says a thing alone.

Reaches notebook._html for the HTML page's stylesheet (_PAGE_STYLE), which has no public name.
"""

from __future__ import annotations

import re

import pytest
from paths_kit import ROOT

from footprint_lab.markup import theme

PACKAGE = ROOT / "footprint_lab"
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
        return max(channels) - min(channels) < 32 and colour not in (theme.LIGHT["ink"], theme.LIGHT["paper"])

    # a text colour is written as a palette variable with its light value after the comma
    text_colours = {found.lower() for html in _written()
                    for found in re.findall(r"(?<![-\w])color\s*:\s*(?:var\(--fl-[\w-]+,)?(#[0-9a-fA-F]{6})", html)}
    assert {colour for colour in text_colours if grey(colour)} == {theme.LIGHT["grey"]}


def test_every_colour_is_a_palette_variable_with_its_light_value():
    for name, value in theme.LIGHT.items():
        written = getattr(theme, name.upper())
        assert written == f"var(--fl-{name.replace('_', '-')},{value})" and theme.plain(written) == value
    assert set(theme.DARK) == set(theme.LIGHT)
    # outside the dark rules, a colour is written as a variable with its light fallback; an inline style may
    # put the plain light value first, for a sanitizer that drops the variable (one pair: the same property twice)
    pair = re.compile(r"(?<![\w-])([a-z-]+):([^;\"'{}()]*);\1:([^;\"'{}]*var\(--fl-[\w-]+,#[0-9a-fA-F]{6}\)[^;\"'{}]*)")
    for html in _written():
        html = html.replace(theme.dark_rules(follow_system=True), "").replace(theme.dark_rules(), "")
        for _, first, second in pair.findall(html):
            assert first == re.sub(r"var\(--fl-[\w-]+,(#[0-9a-fA-F]{6})\)", r"\1", second)
        bare = re.sub(r"var\(--fl-[\w-]+,#[0-9a-fA-F]{6}\)", "", pair.sub("", html))
        assert not HEX.findall(bare), HEX.findall(bare)[:5]


def _luminance(colour: str) -> float:
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours."""
    high, low = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("palette", [theme.LIGHT, theme.DARK], ids=["light", "dark"])
def test_every_text_colour_reads_at_4_5_to_1_on_the_paper_the_fill_and_its_tint(palette):
    texts = ("ink", "grey", "blue", "green", "red", "amber", "orange", "purple", "pink", "teal", "violet", "brown")
    low = [(text, ground, round(contrast(palette[text], palette[ground]), 2)) for text in texts
           for ground in ("paper", "fill") if contrast(palette[text], palette[ground]) < 4.5]
    for colour in ("blue", "green", "red", "amber", "orange", "purple"):
        for text in (colour, "ink", "grey"):
            if contrast(palette[text], palette[f"{colour}_tint"]) < 4.5:
                low.append((text, f"{colour}_tint", round(contrast(palette[text], palette[f"{colour}_tint"]), 2)))
        # a badge: the paper's colour on the status colour
        if contrast(palette["paper"], palette[colour]) < 4.5:
            low.append(("paper", colour, round(contrast(palette["paper"], palette[colour]), 2)))
    assert low == []


def test_every_status_is_a_symbol_and_a_word_beside_its_colour():
    for status, (colour, symbol) in theme.STATUS.items():
        assert theme.plain(colour) in theme.PALETTE and symbol.strip()
        assert theme.status_mark(status) == f"{symbol} {status}"
    assert theme.status_mark("something new") == "• something new"
