"""``%load_ext footprint_lab``: refusals show as cards, and the cell still fails.

Loading the extension installs a custom exception handler for ``Refusal``: it displays the
refusal's card and then returns a one-line traceback, so the cell is still marked as failed
(a notebook run with ``nbclient`` or "Run all" stops there, as it should). Refusal objects
shown with ``display()`` render as cards too. ``%unload_ext footprint_lab`` removes both.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.engine.refusal import Refusal
from footprint_lab.lab.cards import refusal_card_html


def _show_refusal(shell: Any, etype: type[BaseException], value: BaseException, tb: Any,
                  tb_offset: int | None = None) -> list[str]:
    from IPython.display import HTML, display

    if isinstance(value, Refusal):
        display(HTML(refusal_card_html(value)))
    stb: list[str] = shell.InteractiveTB.get_exception_only(etype, value)
    # IPython discards a custom handler's return value; sending the error output ourselves is
    # what marks the cell as failed in the kernel's reply (ipykernel overrides this method).
    shell._showtraceback(etype, value, stb)
    return stb


def load(ipython: Any) -> None:
    """Install the refusal cards on an IPython shell."""
    ipython.set_custom_exc((Refusal,), _show_refusal)
    ipython.display_formatter.formatters["text/html"].for_type(Refusal, refusal_card_html)
    from footprint_lab.lab.ask_magic import fp_ask

    ipython.register_magic_function(fp_ask, "line_cell", "fp_ask")


def unload(ipython: Any) -> None:
    """Remove what :func:`load` installed."""
    ipython.set_custom_exc((), None)
    ipython.display_formatter.formatters["text/html"].pop(Refusal, None)
    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("fp_ask", None)
