"""Write the saved recordings the explanation tests read: ``python tests/recordings/regenerate.py``.

Each is a run of a scenario from ``footprint_lab.examples``, saved as ``load_recording`` reads it
(keys sorted, one level of indent, so a change shows in a diff).
"""

from __future__ import annotations

import json
from pathlib import Path

from footprint_lab import seal
from footprint_lab.examples.pipelines import refund_pipeline
from footprint_lab.examples.scenarios import REFUND_REQUEST, planted_fact_agent

HERE = Path(__file__).parent


def write(name: str, text: str) -> None:
    (HERE / f"{name}.json").write_text(json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n")


def main() -> None:
    planted = planted_fact_agent().run_sync(REFUND_REQUEST).recording
    write("planted_fact", seal(planted).model_dump_json())
    write("refund_pipeline", refund_pipeline(planted_in="triage").run_sync(REFUND_REQUEST).recording.model_dump_json())


if __name__ == "__main__":
    main()
