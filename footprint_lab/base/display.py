"""The display registry: how an object below the lab shows itself without importing the lab.

Rule kept here: the layers point one way (engine < ... < core < flow < lab), yet a ``Run``,
a ``Recording``, a ``Refusal`` or an explanation must render its rich notebook views even
when nobody ran ``%load_ext``. So objects below the lab ask this registry for their MIME
bundle by *kind* (``"run"``, ``"backtrack"``, ...); the lab registers one renderer per kind;
and the package root (``footprint_lab/__init__.py``) adds a loader that imports the lab's
views the first time a bundle is asked for. Nothing below the lab names the lab.

Pattern: a registry with lazy loaders. A kind no loader registers falls back to the object's
own plain bundle (its one line of text). A loader that raises is not hidden: IPython reports
the error under the cell and shows the object's plain ``repr`` instead.

Every bundle then passes the finishers registered from above (:func:`add_finisher`): the package
root registers the one that makes a sealed recording's copy hold what the bundle displays
(``sealing.output_seal.bind_display``), so a saved notebook can be checked for an edited display.

Role: base layer; imports nothing but the standard library.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

Bundle = dict[str, Any]
Renderer = Callable[[Any], Bundle]

_renderers: dict[str, Renderer] = {}
_loaders: list[Callable[[], None]] = []
_finishers: list[Callable[[Bundle], Bundle]] = []


def register(kind: str, renderer: Renderer) -> None:
    """Make ``renderer(obj)`` the MIME bundle of every object displayed as ``kind``."""
    _renderers[kind] = renderer


def add_loader(loader: Callable[[], None]) -> None:
    """Call ``loader()`` once, the first time a kind without a renderer is displayed."""
    _loaders.append(loader)


def add_finisher(finish: Callable[[Bundle], Bundle]) -> None:
    """Pass every bundle through ``finish`` (after ``include`` / ``exclude``) before it is shown."""
    _finishers.append(finish)


def renderer_for(kind: str) -> Renderer | None:
    """The renderer registered for ``kind``, running the pending loaders first when there is none."""
    while kind not in _renderers and _loaders:
        _loaders.pop(0)()
    return _renderers.get(kind)


def bundle(kind: str, obj: Any, fallback: Callable[[], Bundle], include: Iterable[str] | None = None,
           exclude: Iterable[str] | None = None) -> Bundle:
    """The MIME bundle of ``obj`` shown as ``kind``, restricted as IPython's ``include`` / ``exclude`` ask."""
    renderer = renderer_for(kind)
    data = renderer(obj) if renderer is not None else fallback()
    if include is not None:
        wanted = set(include)
        data = {mime: value for mime, value in data.items() if mime in wanted}
    if exclude is not None:
        unwanted = set(exclude)
        data = {mime: value for mime, value in data.items() if mime not in unwanted}
    for finish in _finishers:
        data = finish(data)
    return data


def in_kernel() -> bool:
    """Whether this code runs inside a notebook kernel (which can show a widget)."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
