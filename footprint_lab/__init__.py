"""footprint_lab: record every piece of an LLM agent's context as evidence, in Jupyter.

Public names are loaded on first use, so ``import footprint_lab`` stays light; pydantic,
pandas, plotly and ipywidgets are imported only by the code that needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from footprint_lab.engine import _bug_reports as _bug_reports
from footprint_lab.engine import _display as _display
from footprint_lab.engine import _runners as _runners
from footprint_lab.engine._exports import public
from footprint_lab.engine.schema import RECORDING_MIME as _RECORDING_MIME

__version__ = "0.1.0"

# The one list of public names: the analyst's concepts (runners, compositions, a run and its recording, the Lab,
# the two kinds of error: Refusal and RunFailure; every specific one is in footprint_lab.errors), typed for the
# type checker, each imported when first used.
if TYPE_CHECKING:
    from footprint_lab import batch as batch
    from footprint_lab import context as context
    from footprint_lab import core as core
    from footprint_lab import engine as engine
    from footprint_lab import errors as errors
    from footprint_lab import examples as examples
    from footprint_lab import explain as explain
    from footprint_lab import flow as flow
    from footprint_lab import lab as lab
    from footprint_lab import notebook as notebook
    from footprint_lab import otel as otel
    from footprint_lab import providers as providers
    from footprint_lab.core._agent import Agent as Agent
    from footprint_lab.core._chat import Chat as Chat
    from footprint_lab.core._chat import TurnRerun as TurnRerun
    from footprint_lab.core._checkpoint import Checkpoint as Checkpoint
    from footprint_lab.core._identity import Identity as Identity
    from footprint_lab.core._llm_call import LLMCall as LLMCall
    from footprint_lab.core._pause import ask_human as ask_human
    from footprint_lab.core._run import Run as Run
    from footprint_lab.core._tools import Tool as Tool
    from footprint_lab.core._tools import ToolContext as ToolContext
    from footprint_lab.core._tools import define_tool as define_tool
    from footprint_lab.core._tools import tool as tool
    from footprint_lab.engine._recording import Event as Event
    from footprint_lab.engine._recording import Recording as Recording
    from footprint_lab.engine._recording_door import load_recording as load_recording
    from footprint_lab.engine._redaction import Redaction as Redaction
    from footprint_lab.engine._seal import Verdict as Verdict
    from footprint_lab.engine._seal import seal as seal
    from footprint_lab.engine._seal import verify as verify
    from footprint_lab.errors import Refusal as Refusal
    from footprint_lab.errors import RunFailure as RunFailure
    from footprint_lab.explain._tool_lint import lint_tools as lint_tools
    from footprint_lab.explain._tree import RunTree as RunTree
    from footprint_lab.explain._trials import Trials as Trials
    from footprint_lab.flow._checkpoint import FlowCheckpoint as FlowCheckpoint
    from footprint_lab.flow._conditional import Conditional as Conditional
    from footprint_lab.flow._loop import Loop as Loop
    from footprint_lab.flow._parallel import Parallel as Parallel
    from footprint_lab.flow._parallel import merge_with_llm as merge_with_llm
    from footprint_lab.flow._sequence import Sequence as Sequence
    from footprint_lab.flow._workflow import Graph as Graph
    from footprint_lab.flow._workflow import Workflow as Workflow
    from footprint_lab.flow._workflow import step as step
    from footprint_lab.lab.widget import Lab as Lab

__all__, __getattr__, __dir__ = public(__name__)


def _load_views() -> None:
    importlib.import_module("footprint_lab.lab.views")


def _load_chat_view() -> None:
    importlib.import_module("footprint_lab.lab.chat_view")


# The package root wires the lab's renderers to the display registry below the core: the
# first object displayed imports the views, so no core module ever imports the lab.
_display.add_loader(_load_views)
_display.add_loader(_load_chat_view)


def _load_bug_report() -> None:
    importlib.import_module("footprint_lab.notebook._bug_report")


# Likewise the bug-report writer (run.bug_report, chat.bug_report): the notebook layer's, loaded on first use.
_bug_reports.add_loader(_load_bug_report)


def _held_display(data: dict[str, Any]) -> dict[str, Any]:
    if _RECORDING_MIME not in data:
        return data
    from footprint_lab.engine._saved_seal import bind_display  # the seal's code loads when a recording is shown

    return bind_display(data)


# A notebook output that carries a sealed recording holds, in that copy's seal, what it displays.
_display.add_finisher(_held_display)


def _load_runners() -> None:
    # registers "llm_call", and through its imports "agent" and "tool"
    importlib.import_module("footprint_lab.core._llm_call")


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
