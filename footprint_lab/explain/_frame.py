"""The tables explanations return: pandas DataFrames whose displays write an absent value as "-".

Rule kept here: a reader of a table never meets ``NaN`` or ``None`` where nothing is (a user's
message has no ``removal_id``, a lone tool has no ``other``): the HTML and the text a notebook
shows write ``-`` there. The data is not changed: ``frame["removal_id"].isna()`` still finds
the absent values, and every pandas operation returns a frame of the same kind. The HTML is
pandas' own table, every cell escaped.

Pattern: a pandas subclass (``_constructor``), as pandas documents for extending frames.

Role: explain layer; imports pandas, so the doors that build a table import this module when they run.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pandas.io.formats import format as _format

#: pandas' own formatter (its display code, which the stubs do not describe)
fmt: Any = _format

#: what a table shows where a value is absent
ABSENT = "-"


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
        formatter = fmt.DataFrameFormatter(
            self, na_rep=ABSENT, float_format=pd.get_option("display.float_format"), index_names=True, header=True,
            index=True, bold_rows=True, escape=True, max_rows=pd.get_option("display.max_rows"),
            min_rows=pd.get_option("display.min_rows"), max_cols=pd.get_option("display.max_columns"),
            show_dimensions=pd.get_option("display.show_dimensions"), decimal=".")
        return fmt.DataFrameRenderer(formatter).to_html(notebook=True)

    def __repr__(self) -> str:
        if self._long_info():
            return super().__repr__()
        return str(self.to_string(na_rep=ABSENT, **fmt.get_dataframe_repr_params()))

