"""The words a view shows: one meaning each, the same in the hover titles and in the glossary.

A reader hovering ``BORN``, ``fact`` or ``NOT CONFIRMED`` in any view reads the sentence that opens
that word's entry in docs/glossary.md; a verdict reads the same in a report's text, its view and
its table.

Reaches explain.provenance._hops for HOP_KINDS, the hops a recording can hold, which have no public name.
"""

from __future__ import annotations

import re
from html import unescape as html_text
from html.parser import HTMLParser
from typing import Any

import pytest
from paths_kit import ROOT

from footprint_lab.markup import words

GLOSSARY = ROOT / "docs" / "glossary.md"
_ENTRY = re.compile(r"^\*\*(?P<name>[^*]+)\*\*\n(?P<body>:   .*?)(?=\n\n|\n##|\Z)", re.MULTILINE | re.DOTALL)


def glossary() -> dict[str, str]:
    """Each glossary entry's name (and each alias in its name: ``custody (chain of custody)``) -> its text."""
    entries: dict[str, str] = {}
    for match in _ENTRY.finditer(GLOSSARY.read_text(encoding="utf-8")):
        text = " ".join(match.group("body").removeprefix(":").split())
        text = re.sub(r"\[([^]]+)\]\([^)]*\)", r"\1", text).replace("**", "").replace("`", "").replace("*", "")
        name = match.group("name")
        for alias in re.split(r", | \(|\)", name):
            if alias.strip():
                entries.setdefault(alias.strip(), text)
    return entries


@pytest.mark.parametrize("word", sorted(words.WORDS))
def test_every_word_a_view_explains_opens_its_glossary_entry_with_the_same_sentence(word):
    entries = glossary()
    assert word in entries, f"docs/glossary.md has no entry for {word!r}"
    assert entries[word].startswith(words.WORDS[word]), (word, entries[word], words.WORDS[word])


def test_the_words_cover_every_hop_source_kind_and_verdict_the_recording_can_hold():
    from footprint_lab.explain.provenance._hops import HOP_KINDS

    assert set(HOP_KINDS) <= set(words.HOPS)
    assert {"base", "user", "assistant", "tool_result", "registry", "fact", "steering", "instruction", "skill",
            "memory", "rag"} <= set(words.KINDS)
    assert {"confirmed", "not_confirmed", "undecided", "not_tested"} == set(words.VERDICTS)
    assert {"piece", "slot", "custody", "seal", "screening"} <= set(words.TERMS)


def test_a_word_is_found_however_a_view_prints_it():
    assert words.meaning("NOT CONFIRMED") == words.VERDICTS["not_confirmed"]
    assert words.meaning("tool_result") == words.KINDS["tool_result"]
    assert words.meaning("BORN") == words.HOPS["BORN"]
    assert words.meaning("not proven") == words.TERMS["not proven"]
    assert words.meaning("whatever") == ""


def test_a_term_carries_its_meaning_escaped_and_a_verdict_prints_as_its_word():
    assert str(words.term("BORN")) == f'<b title="{words.HOPS["BORN"].replace(chr(39), "&#x27;")}">BORN</b>'
    shown = str(words.verdict("not_confirmed", "td"))
    assert shown.startswith('<td title="No sign of an effect.">') and shown.endswith(">NOT CONFIRMED</td>")
    assert words.VERDICT_WORDS == {"confirmed": "CONFIRMED", "not_confirmed": "NOT CONFIRMED",
                                   "undecided": "UNDECIDED", "not_tested": "NOT TESTED"}
    assert '"' not in words.term("x<\"y", shown="a\"b").split(">", 1)[1].rsplit("<", 1)[0]


# -- every view writes each word with its meaning ------------------------------------------------------------------

_LABELS = {**{hop: hop for hop in words.HOPS}, **{kind: kind for kind in words.KINDS},
           **{word: key for key, word in words.VERDICT_WORDS.items()}}


class _Elements(HTMLParser):
    """Every element of a page whose whole text is a word of the vocabulary: (tag, its text, its title)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, dict[str, str | None], list[str], set[str]]] = []
        self.found: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("br", "img", "meta", "hr", "input", "link"):
            self.open.append((tag, dict(attrs), [], set()))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, attrs, texts, inner = self.open.pop()
            said = " ".join("".join(texts).split())
            if said in _LABELS and name not in ("style", "code", "pre", "option") and said not in inner:
                self.found.append((name, said, attrs.get("title")))  # the innermost element that holds the word
            if self.open:
                self.open[-1][2].extend(texts)
                self.open[-1][3].update(inner | ({said} if said in _LABELS else set()))
            if name == tag:
                return

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1][2].append(data)


def labelled(html: str) -> list[tuple[str, str, str | None]]:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser.found


def assert_every_word_titled(html: str, least: set[str]) -> None:
    found = labelled(html)
    untitled = [(tag, said) for tag, said, title in found if title != words.meaning(said)]
    assert not untitled, f"shown without their meaning: {untitled[:10]}"
    assert least <= {said for _, said, _ in found}, least - {said for _, said, _ in found}


@pytest.fixture(scope="module")
def desk() -> Any:
    """An express refund the support desk escalates because of its planted fraud-screen instruction, and a localize."""
    import asyncio

    from footprint_lab.examples.support_desk import build_desk, support_eval
    from footprint_lab.explain import localize

    evaluation = support_eval(40)
    express = next(text for text in evaluation.inputs if evaluation.planted[text] == "fraud-screen")
    run = build_desk().run_sync(express)
    report = asyncio.run(localize(run, rerun=build_desk, comparator=evaluation.comparator, progress=False))
    good = build_desk(without=["fraud-screen"]).run_sync(express)
    return run, report, good, evaluation.comparator


def test_the_answer_view_and_the_backtrack_title_every_hop_kind_and_verdict(desk):
    from footprint_lab.lab.views import answer_view
    from footprint_lab.lab.views.explain import backtrack_html

    run = desk[0]
    hops = {"ANSWER", "READ", "LANDED", "ALLOWED", "BORN", "ASKED"}
    assert_every_word_titled(answer_view(run.recording), hops | {"base", "instruction", "fact", "user", "registry",
                                                                 "tool_result", "assistant"})
    assert_every_word_titled(backtrack_html(run.backtrack()), hops | {"instruction", "fact"})


def test_a_localize_reports_view_titles_its_verdicts_and_kinds_and_prints_the_same_words(desk):
    from footprint_lab.lab.views.explain import localization_html

    report = desk[1]
    html = localization_html(report)
    assert_every_word_titled(html, {"CONFIRMED", "NOT CONFIRMED", "instruction", "fact", "tool", "base"})
    frame = report.to_frame()
    tested = frame[frame.verdict != "not_tested"]
    for key in tested.verdict:  # the table holds the key; the text and the view print its one word
        assert f"{words.verdict_word(key)}: removing" in str(report) and f">{words.verdict_word(key)}<" in html
    for name in frame[frame.verdict == "not_tested"].source_id:  # the pieces left untested, as the text names them
        assert f"  '{name}': " in str(report)
    assert 'title="Why the test concluded what it did, in words."' in html and ">reason<" in html
    assert {"source_id", "source_kind", "verdict", "p_value", "reason"} <= set(frame.columns)


def test_a_difference_explained_titles_its_verdicts(desk):
    import asyncio

    from footprint_lab.examples.support_desk import build_desk
    from footprint_lab.explain import compare_runs, explain_difference
    from footprint_lab.lab.views.difference import difference_explanation_html, difference_html

    run, _, good, comparator = desk
    found = asyncio.run(explain_difference(good, run, rerun=build_desk(), comparator=comparator, progress=False))
    html = difference_explanation_html(found)
    assert_every_word_titled(html, {"CONFIRMED"})
    assert 'title="A difference between the good run' in html
    assert_every_word_titled(difference_html(compare_runs(good, run)), set())


def test_the_labs_step_panel_titles_the_hops_it_names(desk):
    from footprint_lab.lab.panels import step_panel

    run = desk[0]
    piece = next(p for p in run.recording.context_pieces if p.source_id == "fraud-screen")
    panel = step_panel(run.recording, piece.landed_by, (piece.slot, piece.source_id))
    assert f'<span title="{words.HOPS["LANDED"]}">LANDED here' in panel


# -- a table reads one line per row ---------------------------------------------------------------------------------


def test_a_tables_long_text_shows_its_start_on_one_line_and_all_of_it_on_hover(desk):
    frame = desk[0].backtrack().to_frame()
    html = frame._repr_html_()
    longest = max(frame.evidence, key=len)
    assert len(longest) > 60
    cell = re.search(r'<span style="white-space:nowrap" title="([^"]*)">([^<]*)</span>', html)
    assert cell is not None and len(html_text(cell.group(2))) <= 48 and cell.group(2).endswith("…")
    assert html_text(cell.group(1)) == " ".join(longest.split()) or len(html_text(cell.group(1))) > 48
    assert html.count('style="white-space:nowrap"') == sum(len(" ".join(v.split())) > 48
                                                            for col in ("evidence", "source_id", "step_id")
                                                            for v in frame[col].dropna())
    assert frame.evidence.tolist() == desk[0].backtrack().to_frame().evidence.tolist()  # the data is whole
    table = re.search(r'<table border="1" class="dataframe" id="([^"]+)"', html)
    assert table is not None and f"#{table.group(1)} td,#{table.group(1)} th{{white-space:nowrap}}" in html


def test_a_clipped_cell_is_escaped_on_the_row_and_in_its_hover():
    from footprint_lab.explain.frame import ShownFrame

    hostile = '"><script>alert(1)</script>' * 4
    html = ShownFrame({"reason": [hostile, None]})._repr_html_()
    assert "<script>" not in html and 'title="&quot;&gt;&lt;script&gt;' in html and "<td>-</td>" in html


def test_every_table_an_analyst_displays_reads_one_line_a_row_with_no_nan(desk):
    """Each explanation's and run's to_frame() is the one-line table: "-" where nothing is, long texts cut."""
    import asyncio

    from footprint_lab.explain import compare_runs, find_dropped_context, integrity

    run, report, good, _ = desk
    frames = {
        "localize": report.to_frame(), "context": run.context(left_out=True), "timeline": run.timeline().to_frame(),
        "messages": run.messages().to_frame(), "integrity": integrity(run).to_frame(), "tree": run.tree().to_frame(),
        "compare": compare_runs(good, run).to_frame(),
        "dropped": asyncio.run(find_dropped_context(run)).to_frame(),
        "backtrack": run.backtrack().to_frame(),
    }
    for name, frame in frames.items():
        html = frame._repr_html_()
        assert "NaN" not in html and "None" not in html and ">nan<" not in html, name
        assert "white-space:nowrap" in html, name        # the one-line rule, whatever the texts
        text = repr(frame)
        assert "NaN" not in text and "None" not in text, name
        if len(frame):                                   # the text form: a header, then a line a row
            assert len(text.split("\n\n")[0].splitlines()) == len(frame) + 1, name
    assert sum(len(frame) > 0 for frame in frames.values()) >= 8
