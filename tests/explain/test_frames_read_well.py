"""Tables an analyst reads: whole numbers as whole numbers, an absent value as missing (never a float NaN)."""

from __future__ import annotations

from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent


def test_a_runs_steps_number_their_iterations_as_whole_numbers():
    steps = planted_fact_agent().run_sync(REFUND_REQUEST).steps
    assert str(steps.iteration.dtype) == "Int64"
    assert list(steps.iteration.dropna()) == [1, 1, 1, 2, 2]
    assert steps.iteration.isna().tolist() == [True, False, False, False, False, False, True]  # seed and final
    assert "NaN" not in steps.to_string() and "1.0" not in steps[["iteration"]].to_string()
