"""What ``RunSet.table()`` draws: the runs kept by a filter, in the order asked, with their cost and culprit.

Rule kept here: a table reads no more recordings than it needs. Its rows come from the set's
summaries (a saved set's index); a run's cost needs its LLM calls' usage, which is read from its
recording once and kept on its entry, and only for the rows drawn (at most ``limit``), unless
the rows are sorted by cost. The total cost is said only when every kept run's cost is known
without reading another recording, and only when every model it used has a price; otherwise the
heading says why there is none and how to get it. A culprit is what the set's last
``localize`` confirmed for that run.

Role: batch layer; builds the plain rows the lab's view draws (:mod:`footprint_lab.lab.views.runset`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from footprint_lab.base.refusal import describe_shape, did_you_mean
from footprint_lab.batch._entries import Entry
from footprint_lab.batch.refusals import BatchConfigError, RunSetFolderError
from footprint_lab.lab.views.runset import SORT_HEADINGS, RunRow, RunTable, status_rank
from footprint_lab.markup.words import verdict_word
from footprint_lab.providers.prices import cost_of, estimated, unpriced

if TYPE_CHECKING:
    import pandas as pd

#: the rows a table draws unless ``limit=`` says otherwise
DEFAULT_LIMIT = 50
#: the columns ``sort=`` may name; the numeric ones come largest first unless ``descending=False``
SORTS = tuple(SORT_HEADINGS)
_LARGEST_FIRST = ("tokens", "duration", "cost")
#: the statuses a run can end with
STATUSES = ("finished", "failed", "paused", "cancelled")
_SET_PRICE = "add one with footprint_lab.providers.prices.set_price(model, input=..., output=...)"


def check_sort(function: str, sort: Any, descending: Any) -> tuple[str, bool]:
    """The column to sort by and which way, refused by name before anything is read."""
    if not isinstance(sort, str) or sort not in SORTS:
        near = did_you_mean([sort], SORTS) if isinstance(sort, str) else ""
        raise BatchConfigError(function, "sort", describe_shape(sort) if not isinstance(sort, str)
                               else "a name that is no column of the table",
                               f"must be one of {', '.join(SORTS)}{f' ({near})' if near else ''}")
    if descending is None:
        return sort, sort in _LARGEST_FIRST
    if not isinstance(descending, bool):
        raise BatchConfigError(function, "descending", describe_shape(descending), "is True, False or None "
                               "(None: largest first for tokens, duration and cost, else ascending)")
    return sort, descending


def check_statuses(function: str, status: Any) -> tuple[str, ...] | None:
    """The statuses a table keeps (``None``: every one), refused by name when one is no run status."""
    if status is None:
        return None
    wanted = (status,) if isinstance(status, str) else tuple(status) if isinstance(status, list | tuple | set) else None
    if wanted is None or not wanted or not all(isinstance(name, str) for name in wanted):
        raise BatchConfigError(function, "status", describe_shape(status),
                               f"must be a run status or a list of them: {', '.join(STATUSES)}")
    unknown = [name for name in wanted if name not in STATUSES]
    if unknown:
        near = did_you_mean(unknown, STATUSES)
        raise BatchConfigError(function, "status", "a name that is no run status",
                               f"must be one of {', '.join(STATUSES)}{f' ({near})' if near else ''}")
    return wanted


def run_cost(entry: Entry, *, read: bool) -> tuple[float | None, str, bool]:
    """A run's cost in USD, what to say beside it, and whether it is known; ``read=False`` reads no recording."""
    try:
        usage = entry.usage(read=read)
    except RunSetFolderError:
        return None, "its recording could not be read, so its LLM calls' models are not known", False
    if usage is None:
        return None, "", False
    missing = unpriced(usage)
    if missing:
        return None, f"no known price for {', '.join(missing)}: {_SET_PRICE}", False
    cost = cost_of(usage)
    note = "estimated: the provider reported no token counts" if estimated(usage) and cost else ""
    return cost, note, True


def culprits_by_run(frame: pd.DataFrame) -> dict[str, str]:
    """What a ``RunSet.localize`` frame confirmed in each run: the sources confirmed to flip its answer, or
    ``UNDECIDED: ...`` when none was but some showed a sign, or ``none confirmed``."""
    found: dict[str, str] = {}
    for run_id, rows in frame.groupby("run_id", sort=False):
        members = rows["member"].fillna("") if "member" in rows else [""] * len(rows)
        names = [f"{member}/{source}" if member else str(source)
                 for member, source in zip(members, rows["source_id"], strict=True)]
        confirmed = [name for name, verdict in zip(names, rows["verdict"], strict=True) if verdict == "confirmed"]
        undecided = [name for name, verdict in zip(names, rows["verdict"], strict=True) if verdict == "undecided"]
        said = (", ".join(dict.fromkeys(confirmed)) if confirmed
                else f"{verdict_word('undecided')}: {', '.join(dict.fromkeys(undecided))}" if undecided
                else "none confirmed")
        found[str(run_id)] = said
    return found


def build(entries: Sequence[Entry], kept: list[int], *, sort: str, descending: bool, limit: int,
          culprits: dict[str, str], filtered: str, partial: bool) -> RunTable:
    """The table of the runs at positions ``kept`` of ``entries``, sorted, its first ``limit`` rows drawn."""
    costs: dict[int, tuple[float | None, str, bool]] = {}

    def said(position: int) -> tuple[float | None, str, bool]:
        if position not in costs:
            costs[position] = run_cost(entries[position], read=True)
        return costs[position]

    keys: dict[str, Callable[[int], Any]] = {
        "position": lambda i: i, "tokens": lambda i: entries[i].summary.tokens,
        "duration": lambda i: entries[i].summary.duration_ms, "cost": lambda i: said(i)[0],
        "input": lambda i: entries[i].summary.input, "answer": lambda i: entries[i].summary.answer,
        "culprit": lambda i: culprits.get(entries[i].run_id),
        "status": lambda i: status_rank(entries[i].summary.status),
    }
    ordered = _ordered(kept, keys[sort], descending)
    rows = [_row(entries[i], i, culprits, *said(i)[:2]) for i in ordered[:limit]]
    summaries = [entries[i].summary for i in kept]
    statuses: dict[str, int] = {}
    for summary in summaries:
        statuses[summary.status] = statuses.get(summary.status, 0) + 1
    total, note = _total(entries, kept, costs)
    return RunTable(rows=rows, total=len(entries), selected=len(kept), statuses=statuses,
                    tokens=sum(s.tokens for s in summaries), cost=total, cost_note=note, order=_order(sort, descending),
                    sort=sort, descending=descending, filtered=filtered, localized=bool(culprits), partial=partial)


def _ordered(kept: list[int], key: Callable[[int], Any], descending: bool) -> list[int]:
    """``kept`` by ``key``, ties in the set's order, the runs without a value last whichever way."""
    present = [i for i in kept if _has(key(i))]
    absent = [i for i in kept if not _has(key(i))]
    return sorted(present, key=key, reverse=descending) + absent


def _has(value: Any) -> bool:
    return value is not None and value == value  # NaN has no place in an order


def _row(entry: Entry, position: int, culprits: dict[str, str], cost: float | None, note: str) -> RunRow:
    s = entry.summary
    return RunRow(position=position, run_id=s.run_id, status=s.status, input=s.input, answer=s.answer, error=s.error,
                  tokens=int(s.tokens), duration_ms=float(s.duration_ms), cost=cost, cost_note=note,
                  culprit=culprits.get(s.run_id))


def _total(entries: Sequence[Entry], kept: list[int], costs: dict[int, tuple[float | None, str, bool]]
           ) -> tuple[float | None, str]:
    """The kept runs' cost together, or ``None`` and why (a run not read yet, a model with no price)."""
    total = 0.0
    unread = unknown = 0
    for i in kept:
        cost, note, known = costs[i] if i in costs else run_cost(entries[i], read=False)
        if known and cost is not None:
            total += cost
        elif note:
            unknown += 1
        else:
            unread += 1
    if unknown:
        return None, (f"Cost unknown for {unknown:,} run{'s' if unknown != 1 else ''}: a model without a price "
                      f"(hover its cell; {_SET_PRICE}).")
    if unread:
        return None, (f"Total cost not said: {unread:,} saved run{'s' if unread != 1 else ''} not read yet "
                      "(runs.frame(cost=True) reads them all).")
    return total, ""


def _order(sort: str, descending: bool) -> str:
    if sort == "status":
        return ("Failed runs first, then unfinished, then finished; in the set's order within each"
                if not descending else "Finished runs first, then unfinished, then failed")
    way = "largest first" if descending else "smallest first"
    if sort in ("input", "answer", "culprit"):
        way = "Z to A" if descending else "A to Z"
    return f"Sorted by {sort}, {way}; runs without one last"
