"""footprint_lab: record every piece of an LLM agent's context as evidence, in Jupyter.

Public names are loaded on first use, so ``import footprint_lab`` stays light; pydantic,
pandas, plotly and ipywidgets are imported only by the code that needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from footprint_lab.engine import display as _display
from footprint_lab.engine import runners as _runners

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Agent": "footprint_lab.core.agent",
    "LLMCall": "footprint_lab.core.llm_call",
    "Run": "footprint_lab.core.run",
    "define_tool": "footprint_lab.core.tools",
    "tool": "footprint_lab.core.tools",
    "Tool": "footprint_lab.core.tools",
    "ToolContext": "footprint_lab.core.tools",
    "normalize_run_input": "footprint_lab.core.door",
    "Identity": "footprint_lab.core.identity",
    "Checkpoint": "footprint_lab.core.checkpoint",
    "FlowCheckpoint": "footprint_lab.flow.checkpoint",
    "RunCheckpointError": "footprint_lab.core.checkpoint",
    "FlowCheckpointError": "footprint_lab.flow.checkpoint",
    "ask_human": "footprint_lab.core.pause",
    "Redaction": "footprint_lab.engine.redaction",
    "Recording": "footprint_lab.engine.recording",
    "Event": "footprint_lab.engine.recording",
    "load_recording": "footprint_lab.engine.recording_door",
    "seal": "footprint_lab.engine.seal",
    "verify": "footprint_lab.engine.seal",
    "Verdict": "footprint_lab.engine.seal",
    "lint_tools": "footprint_lab.explain.tool_lint",
    "Refusal": "footprint_lab.engine.refusal",
    "Sequence": "footprint_lab.flow",
    "Parallel": "footprint_lab.flow",
    "Conditional": "footprint_lab.flow",
    "Loop": "footprint_lab.flow",
    "Workflow": "footprint_lab.flow",
    "Graph": "footprint_lab.flow",
    "step": "footprint_lab.flow",
    "merge_with_llm": "footprint_lab.flow",
    "RunTree": "footprint_lab.explain.tree",
    "Lab": "footprint_lab.lab.widget",
}
_ERRORS = "footprint_lab.errors"
_SUBMODULES = ("providers", "context", "explain", "errors", "engine", "core", "flow", "lab", "notebook", "batch")

if TYPE_CHECKING:
    from footprint_lab.core.agent import Agent
    from footprint_lab.core.checkpoint import Checkpoint, RunCheckpointError
    from footprint_lab.core.door import normalize_run_input
    from footprint_lab.core.identity import Identity
    from footprint_lab.core.llm_call import LLMCall
    from footprint_lab.core.pause import ask_human
    from footprint_lab.core.run import Run
    from footprint_lab.core.tools import Tool, ToolContext, define_tool, tool
    from footprint_lab.engine.recording import Event, Recording
    from footprint_lab.engine.recording_door import load_recording
    from footprint_lab.engine.redaction import Redaction
    from footprint_lab.engine.refusal import Refusal
    from footprint_lab.engine.seal import Verdict, seal, verify
    from footprint_lab.explain.tool_lint import lint_tools
    from footprint_lab.explain.tree import RunTree
    from footprint_lab.flow import Conditional, Graph, Loop, Parallel, Sequence, Workflow, merge_with_llm, step
    from footprint_lab.flow.checkpoint import FlowCheckpoint, FlowCheckpointError
    from footprint_lab.lab.widget import Lab


def _load_views() -> None:
    importlib.import_module("footprint_lab.lab.views")


# The package root wires the lab's renderers to the display registry below the core: the
# first object displayed imports the views, so no core module ever imports the lab.
_display.add_loader(_load_views)


def _load_runners() -> None:
    importlib.import_module("footprint_lab.core.llm_call")  # registers "agent" (through its import) and "llm_call"


# Likewise the runners an explanation builds for itself (an LLM judge): registered by core, loaded on first use.
_runners.add_loader(_load_runners)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"footprint_lab.{name}")
    else:
        errors = importlib.import_module(_ERRORS)
        if name not in errors.__all__:
            raise AttributeError(f"module 'footprint_lab' has no attribute {name!r}")
        value = getattr(errors, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    errors = importlib.import_module(_ERRORS)
    return sorted({*globals(), *_EXPORTS, *_SUBMODULES, *errors.__all__})


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext footprint_lab``: install the notebook lab (cards, views, magics)."""
    from footprint_lab.lab.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext footprint_lab``."""
    from footprint_lab.lab.extension import unload

    unload(ipython)


__all__ = [
    "Agent",
    "Checkpoint",
    "Conditional",
    "Event",
    "FlowCheckpoint",
    "FlowCheckpointError",
    "Graph",
    "Identity",
    "LLMCall",
    "Lab",
    "Loop",
    "Parallel",
    "Recording",
    "Redaction",
    "Refusal",
    "Run",
    "RunCheckpointError",
    "RunTree",
    "Sequence",
    "Tool",
    "ToolContext",
    "Verdict",
    "Workflow",
    "ask_human",
    "define_tool",
    "lint_tools",
    "load_recording",
    "merge_with_llm",
    "normalize_run_input",
    "seal",
    "step",
    "tool",
    "verify",
]
