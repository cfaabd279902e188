"""The tables explanations return: pandas DataFrames that display as one line per row, an absent value as "-".

Rule kept here: a reader of a table never meets ``NaN`` or ``None`` where nothing is (a user's
message has no ``removal_id``, a lone tool has no ``other``): the HTML and the text a notebook
shows write ``-`` there. And a row stays one line however long its texts (a verdict's reason, a
hop's evidence): in the HTML a text cell longer than :data:`CELL` characters shows its start,
ending in ``…``, with the whole text (bounded, as every attribute: ``markup.elements``) on hover,
so a table neither grows rows a hundred pixels tall nor runs off the right edge; the text form
cuts long cells as pandas does (``display.max_colwidth``). The data is not changed:
``frame["removal_id"].isna()`` still finds the absent values, ``frame.reason`` holds every
word, and every pandas operation returns a frame of the same kind. The HTML is pandas' own
table, every cell escaped (a clipped one by the engine's drawing door).

Pattern: a pandas subclass (``_constructor``), as pandas documents for extending frames.

Role: explain layer; imports pandas, so the doors that build a table import this module when they run.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pandas as pd
from pandas.io.formats import format as _format

from footprint_lab.markup.elements import attr, css, el, raw

#: pandas' own formatter (its display code, which the stubs do not describe)
fmt: Any = _format

#: what a table shows where a value is absent
ABSENT = "-"
#: the most characters of one text cell the HTML draws on its row (the rest on hover)
CELL = 48
#: the most characters of one cell's hover
HOVER = 2_000
_CLIPPED = css(white_space="nowrap")


class ShownFrame(pd.DataFrame):
    """A DataFrame whose notebook displays (HTML and text) write an absent value as :data:`ABSENT`."""

    @property
    def _constructor(self) -> type[ShownFrame]:
        return ShownFrame

    def _long_info(self) -> bool:
        """Whether pandas would show ``info()`` rather than the table (``display.large_repr``)."""
        frame: Any = self
        return bool(frame._info_repr())

    def _repr_html_(self) -> str | None:
        frame: Any = super()
        if self._long_info() or not pd.get_option("display.notebook_repr_html"):
            return str(frame._repr_html_())
        marker = f"flcell{uuid.uuid4().hex[:16]}n"
        shown, clipped = _clipped(self, marker)
        formatter = fmt.DataFrameFormatter(
            shown, na_rep=ABSENT, float_format=pd.get_option("display.float_format"), index_names=True, header=True,
            index=True, bold_rows=True, escape=True, max_rows=pd.get_option("display.max_rows"),
            min_rows=pd.get_option("display.min_rows"), max_cols=pd.get_option("display.max_columns"),
            show_dimensions=pd.get_option("display.show_dimensions"), decimal=".")
        table = f"fl-frame-{marker[6:22]}"
        html = str(fmt.DataFrameRenderer(formatter).to_html(notebook=True, table_id=table))
        # one line per row: a cell is at most CELL characters, so a row never wraps (a sanitizer may drop the rule)
        rule = el("style", raw(f"#{table} td,#{table} th{{white-space:nowrap}}"))
        return rule + re.sub(f"{marker}(\\d+)x", lambda found: clipped[int(found.group(1))], html)

    def __repr__(self) -> str:
        if self._long_info():
            return super().__repr__()
        shown = pd.DataFrame(self.copy())
        for number, (_, column) in enumerate(self.items()):
            if pd.api.types.is_object_dtype(column.dtype) and any(value is None for value in column):
                # pandas writes a None as "None", never as the absent mark
                shown.isetitem(number, [float("nan") if value is None else value for value in column])
        return str(shown.to_string(na_rep=ABSENT, **fmt.get_dataframe_repr_params()))



def _clipped(frame: pd.DataFrame, marker: str) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` with each text cell longer than :data:`CELL` replaced by ``marker<n>x``, and the markup of cell ``n``:
    its start and ``…``, its whole text as the title. The marker is random per display, so no value can forge one."""
    cells: list[str] = []
    columns: dict[Any, Any] = {}
    for number, (_, column) in enumerate(frame.items()):
        if not (pd.api.types.is_object_dtype(column.dtype) or pd.api.types.is_string_dtype(column.dtype)):
            continue
        values = list(column)
        for at, value in enumerate(values):
            if value is None:
                values[at] = float("nan")  # pandas writes a None as "None", never as the absent mark
                continue
            text = _text(value)
            if text is not None and len(text) > CELL:
                values[at] = f"{marker}{len(cells)}x"
                cells.append(el("span", f"{text[:CELL - 1]}…", style=_CLIPPED,
                                title=raw(attr(text, drawn=True, limit=HOVER))))
        columns[number] = values
    if not columns:
        return frame, cells
    shown = pd.DataFrame(frame.copy())
    for number, values in columns.items():
        shown.isetitem(number, values)
    return shown, cells


def _text(value: Any) -> str | None:
    """A cell's value as the text a table shows (``None`` for a value that is not text, a list or a mapping)."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (list, tuple, dict)):
        return str(value)
    return None
