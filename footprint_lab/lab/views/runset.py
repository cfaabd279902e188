"""A run set as a table: a row per run (status, input, answer, tokens, duration, cost, culprit), failures first.

Rule kept here: the table reads with no script and no style sheet. It is sorted and filtered in
Python, not in the page (``RunSet.table(sort=..., status=..., where=...)`` gives another table),
so a saved notebook shows exactly the rows its author chose, and a reader with scripts off sees
the same; its heading says how the rows are ordered and what was left out. A set of thousands of
runs draws at most ``limit`` rows (50), and says how many more there are and where they are.

Every value from a run (its input, its answer, a model's name, a source id) is written through
the one escaping builder (:func:`footprint_lab.markup.elements.el`): a cell shows one line of at
most :data:`CELL` characters, its ``title`` (the tooltip) the first :data:`TIP` characters of the
whole text. The answers and inputs are the set's summaries, as recorded, so a redaction policy
covers them. An absent value is an empty cell, never ``NaN`` or ``None``; a cost the price table
cannot give says so in words.

Public names: :class:`RunRow`, :class:`RunTable` (what ``RunSet.table()`` returns) and
:func:`runset_html`.

Role: lab layer; knows nothing of ``batch`` (the set hands it plain rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from footprint_lab.base import display
from footprint_lab.lab.views.page import Html, css, el, join, new_scope, shorten, tag, wrap
from footprint_lab.markup import theme
from footprint_lab.markup.elements import clipped

#: the most characters of an input, an answer or a culprit a cell shows, so a row stays one line
CELL = 48
#: the most characters of one value a cell's tooltip holds
TIP = 1_000

_CSS = f"""
§ .fl-scroll{{overflow-x:auto;max-width:100%}}
§ .fl-runs{{border-collapse:collapse;width:100%}}
§ .fl-runs td,§ .fl-runs th{{white-space:nowrap}}
§ .fl-runs th{{background:{theme.FILL}}}
§ .fl-runs td.fl-text{{max-width:0;width:50%;overflow:hidden;text-overflow:ellipsis}}
§ .fl-runs .fl-num{{text-align:right;font-variant-numeric:tabular-nums}}
§ .fl-runs .fl-muted{{font-size:{theme.TINY}}}
"""
#: each column's heading, and whether it holds a number
_COLUMNS = (("#", True), ("status", False), ("input", False), ("answer", False), ("tokens", True),
            ("duration", True), ("cost", True), ("culprit", False))
#: the columns ``sort=`` names, by the heading that shows it
SORT_HEADINGS = {"position": "#", "status": "status", "input": "input", "answer": "answer", "tokens": "tokens",
                 "duration": "duration", "cost": "cost", "culprit": "culprit"}


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run as the table shows it: plain values, each one as the set's summary recorded it."""

    position: int
    run_id: str
    status: str
    input: str | None
    answer: str | None
    error: str | None
    tokens: int
    duration_ms: float
    #: USD, ``None`` when a model of the run has no known price (``cost_note`` says which) or it was not read
    cost: float | None
    #: why there is no cost, or that it is an estimate; empty when the cost is plain
    cost_note: str = ""
    #: the sources confirmed to flip this run's answer (``localize``), ``None`` when it was not localized
    culprit: str | None = None


@dataclass(frozen=True, slots=True)
class RunTable:
    """A run set's table, sorted and filtered as asked: ``rows`` are the ones drawn (at most ``limit``)."""

    rows: list[RunRow]
    #: the runs of the set, and how many of them the filter kept
    total: int
    selected: int
    #: runs by status, over the runs kept
    statuses: dict[str, int]
    tokens: int
    #: USD over the runs kept; ``None`` when one has no known price (``cost_note`` says why)
    cost: float | None
    cost_note: str
    #: how the rows are ordered, and what filter kept them, in words
    order: str
    #: the column the rows are sorted by (``None``: failures first, then the set's order), and which way
    sort: str | None
    descending: bool = False
    filtered: str = ""
    localized: bool = False
    partial: bool = False

    @property
    def more(self) -> int:
        """How many kept runs the table does not draw."""
        return self.selected - len(self.rows)

    def __repr__(self) -> str:
        return f"RunTable({len(self.rows)} of {self.selected} runs shown)"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display.bundle("runset", self, lambda: {"text/plain": table_text(self)}, include, exclude)


def runset_bundle(table: RunTable) -> dict[str, Any]:
    """The table's display bundle: its text, and its HTML view."""
    return {"text/plain": table_text(table), "text/html": runset_html(table)}


def table_text(table: RunTable) -> str:
    """The table as a terminal reads it: its heading and one line per run drawn."""
    lines = [_heading(table), _order_note(table)]
    for row in table.rows:
        said = f"error: {row.error or 'unknown'}" if row.status == "failed" else (row.answer or "")
        cost = "no price" if row.cost is None and row.cost_note else "" if row.cost is None else money(row.cost)
        culprit = f"  culprit: {row.culprit}" if row.culprit else ""
        lines.append(f"{row.position:>5}  {theme.status_mark(row.status):<11} {row.tokens:>8,} {cost:>10}  "
                     f"{shorten(row.input or '', 40):<40}  {shorten(said, 50)}{culprit}")
    if table.more:
        lines.append(_more_note(table))
    return "\n".join(lines)


def runset_html(table: RunTable) -> str:
    """The table as one self-contained output: heading, how it is ordered, the rows, and what is not drawn."""
    scope = new_scope()
    parts: list[Any] = [el("div", el("b", _heading(table)), class_="fl-head"),
                        el("p", _order_note(table), class_="fl-note")]
    if table.rows:
        parts.append(_rows(table))
    if table.more:
        parts.append(el("p", _more_note(table), class_="fl-note"))
    return wrap(scope, join(parts), css_class="fl-view fl-runset", extra=_CSS)


def _heading(table: RunTable) -> str:
    counted = " · ".join(f"{count:,} {status}" for status, count in _by_weight(table.statuses))
    kept = (f"{table.selected:,} of {table.total:,} runs" if table.filtered else f"{table.total:,} runs")
    partial = " (partial: a stopped call kept them)" if table.partial else ""
    cost = f"cost {money(table.cost)}" if table.cost is not None else "cost unknown"
    return f"RunSet: {kept}{partial} · {counted or 'none'} · {table.tokens:,} tokens · {cost}"


def _order_note(table: RunTable) -> str:
    kept = f" Kept: {table.filtered}." if table.filtered else ""
    cost = f" {table.cost_note}" if table.cost_note else ""
    return (f"{table.order}.{kept}{cost} Sort and filter with runs.table(sort='cost', status='failed', "
            "where=lambda r: ...); every row with runs.frame(cost=True).")


def _more_note(table: RunTable) -> str:
    return (f"…and {table.more:,} more run{'s' if table.more != 1 else ''} not drawn: "
            f"runs.table(limit={min(table.selected, 10_000)}) draws them, runs.frame(cost=True) lists them all.")


def _by_weight(statuses: dict[str, int]) -> list[tuple[str, int]]:
    """Statuses the way the rows come: failures first."""
    return sorted(statuses.items(), key=lambda item: (status_rank(item[0]), item[0]))


def status_rank(status: str) -> int:
    """Where a status comes in the default order: failed first, then the unfinished, then the finished."""
    return 0 if status == "failed" else 2 if status == "finished" else 1


def _rows(table: RunTable) -> Html:
    sorted_by = SORT_HEADINGS.get(table.sort or "", "")
    way = "descending" if table.descending else "ascending"
    arrow = " ↓" if table.descending else " ↑"
    head = el("tr", *(el("th", name + arrow if name == sorted_by else name, scope="col",
                         aria_sort=way if name == sorted_by else None,
                         class_="fl-num" if number else None) for name, number in _COLUMNS
                      if name != "culprit" or table.localized))
    body = el("tbody", *(_row(row, table.localized) for row in table.rows))
    return el("div", el("table", el("thead", head), body, class_="fl-runs"), class_="fl-scroll")


def _row(row: RunRow, localized: bool) -> Html:
    cells = [el("td", str(row.position), class_="fl-num", title=row.run_id),
             el("td", tag(row.status, row.status)),
             _text_cell(row.input, f"runs[{row.position}].recording.input"),
             _answer_cell(row),
             el("td", f"{row.tokens:,}", class_="fl-num"),
             el("td", duration(row.duration_ms), class_="fl-num"),
             _cost_cell(row)]
    if localized:
        cells.append(_text_cell(row.culprit, "the localize frame", css_class=None))
    return el("tr", *cells, data_fl_run=row.run_id)


def _text_cell(text: str | None, whole: str, *, css_class: str | None = "fl-text") -> Html:
    """A cell of text on one line: at most :data:`CELL` characters (fewer where the page is narrow, cut with
    ``…``), the whole text (up to :data:`TIP` characters) on hover."""
    if not text:
        return el("td", "", class_=css_class)
    drawn = shorten(text, CELL)
    return el("td", drawn, class_=css_class, title=clipped(text, TIP, whole))


def _answer_cell(row: RunRow) -> Html:
    if row.status == "failed":
        said = f"✗ error: {row.error or 'unknown'}"
        return el("td", el("span", said, style=css(color=theme.RED)), class_="fl-text", title=said)
    return _text_cell(row.answer, f"runs[{row.position}].answer")


def _cost_cell(row: RunRow) -> Html:
    if row.cost is None:
        return el("td", el("span", "no price" if row.cost_note else "", class_="fl-muted",
                           style=css(color=theme.GREY)), class_="fl-num", title=row.cost_note or None)
    said = money(row.cost)
    return el("td", f"≈{said}" if row.cost_note else said, class_="fl-num", title=row.cost_note or None)


def money(usd: float) -> str:
    """US dollars as a reader wants them: cents above a dollar, six places below, ``<$0.000001`` for dust."""
    if usd == 0:
        return "$0"
    if usd >= 1:
        return f"${usd:,.2f}"
    written = f"{usd:.6f}".rstrip("0").rstrip(".")
    return f"${written}" if written != "0" else "<$0.000001"


def duration(ms: float) -> str:
    """A run's duration: milliseconds under a second, seconds under a minute, then minutes and seconds."""
    if ms != ms:
        return ""
    if ms < 1_000:
        return f"{ms:.0f} ms" if ms >= 1 else "<1 ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(ms / 1000, 60)
    return f"{minutes:.0f} min {seconds:02.0f} s"
