"""The bug-report registry: how ``run.bug_report(path)`` writes a bundle drawn by the notebook layer.

Rule kept here: a bug report holds the run's recording masked and scanned, and its answer view as
an offline page; both are the notebook layer's work (``scrub``, ``scan``, ``to_html``), which sits
above ``core``. So ``Run`` and ``Chat`` hand their runs to the writer registered here, and the
package root adds a loader that imports the notebook layer's writer the first time a report is
asked for: the inversion the display registry (:mod:`footprint_lab.base.display`) uses for views.

Role: base layer; imports nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_writer: list[Callable[..., Any]] = []
_loaders: list[Callable[[], None]] = []


def register(writer: Callable[..., Any]) -> None:
    """Make ``writer(runs, path, *, redact, runner, title)`` the way a bug report is written."""
    _writer[:] = [writer]


def add_loader(loader: Callable[[], None]) -> None:
    """Call ``loader()`` once, the first time a bug report is asked for and no writer is registered."""
    _loaders.append(loader)


def write_bug_report(runs: list[Any], path: Any, *, redact: Any, runner: Any, title: str) -> Any:
    """Write the bug report of ``runs`` at ``path`` with the registered writer (its loaders run first)."""
    while not _writer and _loaders:
        _loaders.pop(0)()
    if not _writer:
        raise LookupError("no bug-report writer is registered; import footprint_lab first")
    return _writer[0](runs, path, redact=redact, runner=runner, title=title)
