"""``%load_ext footprint_lab``: refusals and run failures show as cards, and the cell still fails.

Loading the extension installs a custom exception handler for ``Refusal`` and
``RunFailure``: it displays the error's card and then returns a one-line traceback, so the
cell is still marked as failed (a notebook run with ``nbclient`` or "Run all" stops there, as
it should). Such errors shown with ``display()`` render as cards too. ``%unload_ext
footprint_lab`` removes both.
"""

from __future__ import annotations

from typing import Any

from footprint_lab.engine.refusal import CodedError, Refusal, RunFailure
from footprint_lab.lab.cards import error_card_html


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
    """Install the error cards on an IPython shell."""
    ipython.set_custom_exc((Refusal, RunFailure), _show_card)
    ipython.display_formatter.formatters["text/html"].for_type(CodedError, error_card_html)


def unload(ipython: Any) -> None:
    """Remove what :func:`load` installed."""
    ipython.set_custom_exc((), None)
    ipython.display_formatter.formatters["text/html"].pop(CodedError, None)
