"""Which sources caused most of a set's wrong answers: a ``RunSet.localize`` frame read across its runs.

Rule kept here: a source counts at most once per run in each column (a run that tested it twice, alone
and in a set, is one run), and its share is over the runs localized, not over the rows.

Role: batch layer; reads the frame ``RunSet.localize`` returns, never a recording.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.base.refusal import describe_shape
from footprint_lab.batch.refusals import BatchConfigError

if TYPE_CHECKING:
    import pandas as pd


def culprits(frame: pd.DataFrame) -> pd.DataFrame:
    """Which sources caused most of the wrong answers: one row per source of a ``RunSet.localize`` frame.

    ``runs_confirmed``: the runs in which removing it was confirmed to flip the answer;
    ``runs_undecided``: those where it showed a sign, not enough to conclude; ``runs_tested``: those
    in which it was tested; ``runs_not_tested``: those that left it untested (the report says why);
    ``share``: ``runs_confirmed`` over the runs localized. Most confirmed first.
    """
    import pandas as pd

    columns = ["source_id", "source_kind", "member", "runs_confirmed", "runs_undecided", "runs_tested",
               "runs_not_tested", "share"]
    needed = {"run_id", "source_id", "source_kind", "verdict"}
    if not isinstance(frame, pd.DataFrame) or not needed <= set(frame.columns):
        raise BatchConfigError("culprits", "frame", describe_shape(frame) if not isinstance(frame, pd.DataFrame)
                               else "a DataFrame without run_id, source_id, source_kind and verdict",
                               "must be the DataFrame RunSet.localize returns")
    runs = int(frame.attrs.get("runs") or frame["run_id"].nunique())
    if frame.empty:
        return pd.DataFrame(columns=columns)
    table = frame.assign(member=frame["member"].fillna("") if "member" in frame else "")
    keys = ["source_id", "member"]
    distinct = table.drop_duplicates([*keys, "run_id", "verdict"])
    result = pd.DataFrame({
        "source_kind": table.groupby(keys, sort=False)["source_kind"].first(),
        "runs_confirmed": distinct[distinct["verdict"] == "confirmed"].groupby(keys).size(),
        "runs_undecided": distinct[distinct["verdict"] == "undecided"].groupby(keys).size(),
        "runs_tested": distinct[distinct["verdict"] != "not_tested"].drop_duplicates([*keys, "run_id"])
        .groupby(keys).size(),
        "runs_not_tested": distinct[distinct["verdict"] == "not_tested"].groupby(keys).size(),
    }).reset_index()
    counts = ["runs_confirmed", "runs_undecided", "runs_tested", "runs_not_tested"]
    result[counts] = result[counts].fillna(0).astype("int64")
    result["share"] = result["runs_confirmed"] / max(runs, 1)
    result = result.sort_values(["runs_confirmed", "runs_undecided", "runs_tested", "source_id"],
                                ascending=[False, False, False, True], kind="stable")
    return result.reindex(columns=columns).reset_index(drop=True)
