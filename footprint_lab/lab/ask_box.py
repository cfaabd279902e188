"""The Lab's Ask box: an explainer's answer drawn with the ids it cites made clickable.

The view itself is :mod:`footprint_lab.lab.views.ask` (an ``Explanation`` displayed in a cell
draws the same one); this module is the name the widget reaches it by.

Role: lab layer, used by :mod:`footprint_lab.lab.widget`.
"""

from __future__ import annotations

from footprint_lab.lab.views.ask import HINT, NO_RUN, answer_html, note_html, target

__all__ = ["HINT", "NO_RUN", "answer_html", "note_html", "target"]
