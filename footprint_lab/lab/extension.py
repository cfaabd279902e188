"""``%load_ext footprint_lab``: error cards while the cell still fails, and the ``%fp_*`` magics.

Loading the extension

- installs a custom exception handler for ``Refusal`` and ``RunFailure``: it displays the
  error's card (with its one line of text for a terminal) and nothing else, no traceback
  repeating it; the cell is still marked as failed (IPython counts an exception its custom
  handler took as the cell's error, so the kernel replies "error" and a notebook run with
  ``nbclient`` or "Run all" stops there, as it should), and ``%tb`` still prints the traceback;
- registers the magics of :mod:`footprint_lab.lab.magics`;
- adds one post-cell hook that notices the last ``Run`` a cell produced (weakly held).

It adds no display formatter: every object already shows itself through its own
``_repr_mimebundle_``, with or without the extension. ``%unload_ext footprint_lab`` puts
back exactly what loading replaced: the previous exception handler, any magics of the same
names, and the hook list.
"""

from __future__ import annotations

import sys
from typing import Any

from footprint_lab.base.refusal import CodedError, Refusal, RunFailure

#: what load() replaced on each shell, so unload() can put it back
_SAVED: dict[int, dict[str, Any]] = {}


def _show_card(shell: Any, etype: type[BaseException], value: BaseException, tb: Any,
               tb_offset: int | None = None) -> None:
    """One card for the error, and no traceback output beside it (see the module docstring)."""
    from IPython.display import display

    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb  # what %tb prints
    if isinstance(value, CodedError):  # always (see load): its own bundle as it is, the card and its one line
        display(value._repr_mimebundle_(), raw=True)  # (IPython's printer for exceptions would put the repr there)


def load(ipython: Any) -> None:
    """Install the error cards, the magics and the last-run hook on an IPython shell."""
    from footprint_lab.lab.magics import FootprintMagics, LastRun

    if id(ipython) in _SAVED:
        return
    last = LastRun(ipython)
    magics = FootprintMagics(ipython, last)
    table = ipython.magics_manager.magics
    _SAVED[id(ipython)] = {
        "custom_exceptions": ipython.custom_exceptions, "CustomTB": ipython.CustomTB,
        "magics": {kind: {name: table[kind][name] for name in magics.magics[kind] if name in table[kind]}
                   for kind in ("line", "cell")},
        "hook": last.after_cell,
    }
    ipython.set_custom_exc((Refusal, RunFailure), _show_card)
    ipython.register_magics(magics)
    ipython.events.register("post_run_cell", last.after_cell)


def unload(ipython: Any) -> None:
    """Put back everything :func:`load` replaced."""
    from footprint_lab.lab.magics import FootprintMagics

    saved = _SAVED.pop(id(ipython), None)
    if saved is None:
        return
    ipython.custom_exceptions = saved["custom_exceptions"]
    ipython.CustomTB = saved["CustomTB"]
    table = ipython.magics_manager.magics
    for kind in ("line", "cell"):
        for name in FootprintMagics.magics[kind]:
            table[kind].pop(name, None)
        table[kind].update(saved["magics"][kind])
    ipython.magics_manager.registry.pop(FootprintMagics.__name__, None)
    ipython.events.unregister("post_run_cell", saved["hook"])
