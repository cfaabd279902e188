"""footprint_lab: record every piece of an LLM agent's context as evidence, in Jupyter.

Public names are loaded on first use, so ``import footprint_lab`` stays light; pydantic,
pandas, plotly and ipywidgets are imported only by the code that needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from footprint_lab.base import bug_reports as _bug_reports
from footprint_lab.base import display as _display
from footprint_lab.base import runners as _runners
from footprint_lab.base.exports import public
from footprint_lab.record.schema import RECORDING_MIME as _RECORDING_MIME

__version__ = "0.1.0"

# The one list of public names: the analyst's concepts (runners, compositions, a run and its recording, the Lab,
# the two kinds of error: Refusal and RunFailure; every specific one is in footprint_lab.errors), typed for the
# type checker, each imported when first used.
if TYPE_CHECKING:
    from footprint_lab import batch as batch
    from footprint_lab import context as context
    from footprint_lab import core as core
    from footprint_lab import errors as errors
    from footprint_lab import examples as examples
    from footprint_lab import explain as explain
    from footprint_lab import flow as flow
    from footprint_lab import lab as lab
    from footprint_lab import notebook as notebook
    from footprint_lab import otel as otel
    from footprint_lab import providers as providers
    from footprint_lab import record as record
    from footprint_lab.core.agent import Agent as Agent
    from footprint_lab.core.chat import Chat as Chat
    from footprint_lab.core.chat_turn import TurnRerun as TurnRerun
    from footprint_lab.core.checkpoint import Checkpoint as Checkpoint
    from footprint_lab.core.identity import Identity as Identity
    from footprint_lab.core.llm_call import LLMCall as LLMCall
    from footprint_lab.core.pause import ask_human as ask_human
    from footprint_lab.core.run import Run as Run
    from footprint_lab.core.tools import Tool as Tool
    from footprint_lab.core.tools import ToolContext as ToolContext
    from footprint_lab.core.tools import define_tool as define_tool
    from footprint_lab.core.tools import tool as tool
    from footprint_lab.errors import Refusal as Refusal
    from footprint_lab.errors import RunFailure as RunFailure
    from footprint_lab.explain.checks.tool_lint import lint_tools as lint_tools
    from footprint_lab.explain.provenance.tree import RunTree as RunTree
    from footprint_lab.explain.trials.settings import Trials as Trials
    from footprint_lab.flow.checkpoint import FlowCheckpoint as FlowCheckpoint
    from footprint_lab.flow.conditional import Conditional as Conditional
    from footprint_lab.flow.loop import Loop as Loop
    from footprint_lab.flow.parallel import Parallel as Parallel
    from footprint_lab.flow.parallel import merge_with_llm as merge_with_llm
    from footprint_lab.flow.sequence import Sequence as Sequence
    from footprint_lab.flow.workflow import Graph as Graph
    from footprint_lab.flow.workflow import Workflow as Workflow
    from footprint_lab.flow.workflow import step as step
    from footprint_lab.lab.widget import Lab as Lab
    from footprint_lab.record.recording import Event as Event
    from footprint_lab.record.recording import Recording as Recording
    from footprint_lab.record.recording_door import load_recording as load_recording
    from footprint_lab.redact.policy import Redaction as Redaction
    from footprint_lab.sealing.seal import seal as seal
    from footprint_lab.sealing.seal import verify as verify
    from footprint_lab.sealing.verdict import Verdict as Verdict

__all__ = [
    "Agent", "Chat", "Checkpoint", "Conditional", "Event", "FlowCheckpoint", "Graph", "Identity", "LLMCall", "Lab",
    "Loop", "Parallel", "Recording", "Redaction", "Refusal", "Run", "RunFailure", "RunTree", "Sequence", "Tool",
    "ToolContext", "Trials", "TurnRerun", "Verdict", "Workflow", "ask_human", "define_tool", "lint_tools",
    "load_recording", "merge_with_llm", "seal", "step", "tool", "verify",
]
__getattr__, __dir__ = public(__name__)


def _load_views() -> None:
    importlib.import_module("footprint_lab.lab.views")


def _load_chat_view() -> None:
    importlib.import_module("footprint_lab.lab.chat_view")


# The package root wires the lab's renderers to the display registry below the core: the
# first object displayed imports the views, so no core module ever imports the lab.
_display.add_loader(_load_views)
_display.add_loader(_load_chat_view)


def _load_bug_report() -> None:
    importlib.import_module("footprint_lab.notebook.bug_bundle")


# Likewise the bug-report writer (run.bug_report, chat.bug_report): the notebook layer's, loaded on first use.
_bug_reports.add_loader(_load_bug_report)


def _held_display(data: dict[str, Any]) -> dict[str, Any]:
    if _RECORDING_MIME not in data:
        return data
    from footprint_lab.sealing.output_seal import bind_display  # the seal's code loads when a recording is shown

    return bind_display(data)


# A notebook output that carries a sealed recording holds, in that copy's seal, what it displays.
_display.add_finisher(_held_display)


def _load_runners() -> None:
    # registers "llm_call", and through its imports "agent" and "tool"
    importlib.import_module("footprint_lab.core.llm_call")


# Likewise the runners an explanation builds for itself (an LLM judge): registered by core, loaded on first use.
_runners.add_loader(_load_runners)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext footprint_lab``: install the notebook lab (cards, views, magics)."""
    from footprint_lab.lab.extension import load  # IPython's hook: the lab loads only when %load_ext asks

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext footprint_lab``."""
    from footprint_lab.lab.extension import unload  # IPython's hook, as above

    unload(ipython)
