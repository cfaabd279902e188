"""What a door that takes several runs reads: one run or recording, or a collection of them in order.

Rule kept here: ``export`` (a shareable notebook), ``to_spans`` / ``export_otlp`` (OpenTelemetry) and
``RunSet.from_runs`` take the same thing, so they read it the same way: a ``Run`` or a ``Recording`` alone
is a list of one; a list, a tuple, a ``RunSet``, a generator or any other iterable gives its items in order;
text, bytes, a range, a mapping and a set (no order) are no collection of runs. Each door then checks every
item and refuses by its own name.

Role: core layer, beside the ``Run``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from typing import Any, TypeAlias

from footprint_lab.core.run import Run
from footprint_lab.record.recording import Recording

#: one run or recording, or an iterable of them (mixed or not)
Runs: TypeAlias = Run | Recording | Iterable[Run | Recording]
_NOT_A_COLLECTION = (str, bytes, bytearray, memoryview, range, Mapping, Set)


def runs_given(runs: object) -> list[Any] | None:
    """The items ``runs`` holds, in order (``[runs]`` for one run or recording); ``None`` when it is no collection
    of runs. The items are not checked: each door names what it refuses."""
    if isinstance(runs, Run | Recording):  # a recording is iterable too (its fields): never read as a collection
        return [runs]
    if isinstance(runs, Iterable) and not isinstance(runs, _NOT_A_COLLECTION):
        return list(runs)
    return None
