"""The same run gives the same recording and the same explanations, whatever the interpreter's hash seed.

Python salts the hash of every string per process (``PYTHONHASHSEED``), so iterating a set of
strings, or a dict built from one, can change order from one process to the next. A recording
that depended on it would differ between the analyst's kernel and a reviewer's. Each scenario
runs in two fresh interpreters with different seeds; the recordings are compared with what is
meant to differ (run ids, clock readings) taken out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = r"""
import json, sys
from footprint_lab.examples.pipelines import refund_pipeline
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent
runner = planted_fact_agent() if sys.argv[1] == "agent" else refund_pipeline(planted_in="triage")
run = runner.run_sync(REFUND_REQUEST)
suspects = run.suspects()
print(json.dumps({
    "recording": json.loads(run.recording.model_dump_json()),
    "suspects": suspects[["source_id", "score"]].values.tolist(),
    "backtrack": [candidate.source_id for candidate in run.backtrack()],
    "integrity": [[d.check, d.status] for d in run.integrity().dispositions],
}))
"""
#: what two runs of one scenario are meant to differ in: ids drawn at random, and clock readings
_CLOCK = frozenset({"started_at", "duration_ms", "started_ms", "sealed_at", "at"})


def _run(scenario: str, seed: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": os.pathsep.join(filter(None, (
        str(ROOT), os.environ.get("PYTHONPATH"))))}
    done = subprocess.run([sys.executable, "-c", SCENARIO, scenario], capture_output=True, text=True, env=env,
                          check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _run_ids(value: Any, found: set[str]) -> set[str]:
    if isinstance(value, dict):
        if isinstance(value.get("run_id"), str):
            found.add(value["run_id"])
        for inner in value.values():
            _run_ids(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _run_ids(inner, found)
    return found


def _without_ids_and_times(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {key: _without_ids_and_times(inner, ids) for key, inner in value.items() if key not in _CLOCK}
    if isinstance(value, list):
        return [_without_ids_and_times(inner, ids) for inner in value]
    if isinstance(value, str):
        for run_id, placeholder in ids.items():
            value = value.replace(run_id, placeholder)
    return value


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    ids = {run_id: f"<run {n}>" for n, run_id in enumerate(sorted(_run_ids(result["recording"], set()),
                                                                      key=json.dumps(result).index))}
    result["recording"].pop("seal", None)
    return _without_ids_and_times(result, ids)


@pytest.mark.parametrize("scenario", ["agent", "pipeline"])
def test_a_run_and_its_explanations_do_not_depend_on_the_hash_seed(scenario: str) -> None:
    first, second = _run(scenario, 0), _run(scenario, 4242)
    assert first["recording"]["run_id"] != second["recording"]["run_id"]  # two runs, not one read twice
    assert _comparable(first) == _comparable(second)
    assert first["suspects"] and first["backtrack"]
