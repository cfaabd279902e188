"""``%load_ext footprint_lab``: error cards while the cell still fails, and the ``%fp_*`` magics.

Loading the extension

- installs a custom exception handler for ``Refusal`` and ``RunFailure``: it displays the
  error's card and then returns a one-line traceback, so the cell is still marked as failed
  (a notebook run with ``nbclient`` or "Run all" stops there, as it should);
- registers the magics of :mod:`footprint_lab.lab.magics`;
- adds one post-cell hook that notices the last ``Run`` a cell produced (weakly held).

It adds no display formatter: every object already shows itself through its own
``_repr_mimebundle_``, with or without the extension. ``%unload_ext footprint_lab`` puts
back exactly what loading replaced: the previous exception handler, any magics of the same
names, and the hook list.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.engine._refusal import CodedError, Refusal, RunFailure
from footprint_lab.lab.cards import error_card_html

#: what load() replaced on each shell, so unload() can put it back
_SAVED: dict[int, dict[str, Any]] = {}


def _show_card(shell: Any, etype: type[BaseException], value: BaseException, tb: Any,
                  tb_offset: int | None = None) -> list[str]:
    from IPython.display import HTML, display

    if isinstance(value, CodedError):
        display(HTML(error_card_html(value)))
    stb: list[str] = shell.InteractiveTB.get_exception_only(etype, value)
    # IPython discards a custom handler's return value; sending the error output ourselves is
    # what marks the cell as failed in the kernel's reply (ipykernel overrides this method).
    shell._showtraceback(etype, value, stb)
    return stb


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
