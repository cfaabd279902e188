"""Shared test helpers."""

from __future__ import annotations

import pytest

from footprint_lab import define_tool


@pytest.fixture
def noop_tool():
    return define_tool(name="noop", description="Does nothing.", input_schema={"type": "object", "properties": {}},
                       fn=lambda: "ok")
