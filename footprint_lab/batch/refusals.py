"""The refusals of :mod:`footprint_lab.batch`: a run set asked for something it cannot do, refused before any work.

Rule kept: every argument of a run-set door is judged here, by shape, before a run starts, a
recording is read or a task reaches a cluster; what arrived is described by its shape, never
quoted (an input, a folder's path or a factory can be the caller's data).
"""

from __future__ import annotations

from typing import ClassVar

from footprint_lab.base.progress import Stopped
from footprint_lab.base.refusal import CallSettingRefusal, Refusal

__all__ = ["BatchConfigError", "RunSetFolderError", "Stopped"]


class BatchConfigError(CallSettingRefusal):
    """Raised when a run-set method is given a setting it cannot use.

    Carries ``function`` (the method called), ``setting`` (the argument at fault) and
    ``received`` (its shape, never its value). Nothing was run, read or sent to a cluster.
    """

    code = "ERR_BATCH_CONFIG"


class RunSetFolderError(Refusal, ValueError):
    """Raised when a folder cannot be read as a saved run set, or a set cannot be saved into it.

    Carries ``function`` (``RunSet.load``, ``RunSet.save`` or the method that touched a run),
    ``reason`` (``missing``, ``not_a_run_set``, ``unreadable_index``, ``not_empty``, ``source``,
    ``busy``, ``unwritable``, ``missing_recording``, ``unsafe_recording`` or ``mismatch``) and ``detail`` (what is
    wrong, by shape). The path is not quoted.
    """

    code = "ERR_RUN_SET_FOLDER"
    fields = ("function", "reason", "detail")

    _FIXES: ClassVar[dict[str, str]] = {
        "missing": "Pass the folder RunSet.save(folder) wrote",
        "not_a_run_set": "Pass the folder RunSet.save(folder) wrote: it holds runset.json and recordings/",
        "unreadable_index": "The index was changed by hand or cut short; save the set again from its runs",
        "not_empty": ("Save into a new or empty folder; an older saved run set there is replaced only with "
                      "overwrite=True, and a folder holding other files is never written into"),
        "source": "Save into another folder: this set reads its recordings from that one",
        "unwritable": "Save into a folder you can write to, on a disk with room for the set",
        "busy": "Another save is writing into this folder now; wait for it to end, or save into another folder",
        "missing_recording": "The folder lost a recording after it was saved; save the set again from its runs",
        "unsafe_recording": ("Only regular files inside the folder's recordings/ are read (never through a link, "
                             "never a FIFO or a device); put the recording file itself there, or save the set "
                             "again from its runs"),
        "mismatch": ("The index and the recordings were changed apart (by hand, or by two saves at once), so "
                     "neither can be trusted; save the set again from its runs"),
    }

    def __init__(self, function: str, reason: str, detail: str) -> None:
        super().__init__(f"{function}: the folder {detail}. {self._FIXES[reason]}.")
        self.function = function
        self.reason = reason
        self.detail = detail
