"""``Displayed``: an object of the core that shows itself in a notebook through the display registry.

Rule kept here: the core never imports the lab; an object names its ``kind`` and the lab's renderer for
that kind (registered by the notebook views) draws it, with the object's ``repr`` as the plain
fallback (``base.display``).

Role: core layer; imports nothing but the display registry.
"""

from __future__ import annotations

from typing import Any, ClassVar

from footprint_lab.base.display import bundle


class Displayed:
    """A mixin: ``to_html()``, ``_repr_html_`` and ``_repr_mimebundle_`` from the renderer registered for ``kind``."""

    __slots__ = ()
    kind: ClassVar[str]

    def to_html(self) -> str:
        """The object's view: a self-contained HTML fragment (no JavaScript)."""
        return str(self._repr_mimebundle_(include=["text/html"]).get("text/html", ""))

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return bundle(self.kind, self, lambda: {"text/plain": repr(self)}, include, exclude)
