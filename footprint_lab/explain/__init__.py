"""Explain a wrong answer: walk it back, rank the suspects, prove the cause, find what was missing.

Every explanation is a function of a run's ``Recording`` (a ``Run`` or the recording itself)
and never changes it:

- :func:`backtrack` (``run.backtrack()``): every piece of context that reached the answer (or
  any step), each with its chain of custody ANSWER / READ / LANDED / ALLOWED / BORN, and the
  hops the recording cannot prove marked as such;
- :func:`suspects` (``run.suspects()``): those pieces ranked by how plausibly they shaped the
  output, a correlational ranking with pluggable strategies (:func:`list_influence_strategies`)
  and :func:`ranking_confidence` to say when the top is a clear winner;
- :func:`localize`: proof by ablation: suspects removed over seeded reruns, screened cheaply and
  then confirmed on fresh reruns by an exact test against the model's own noise, within a rerun
  budget, with a verdict of confirmed / undecided / not_confirmed (its flips, noise, p-value and
  reruns); comparators that read outcomes live in :mod:`footprint_lab.explain.compare`;
- :func:`bisect_culprits`: when no single removal flips the outcome, the smallest sets of
  suspects whose joint removal does, within a bounded number of reruns;
- :func:`rerun_without`: a rerun without named sources, and what changed (``samples=`` tests it);
- :func:`replay`: one recorded LLM call sent again through a provider, with pieces removed or their
  text replaced, no agent to rebuild (``localize(run, replay=provider)`` proves causes that way);
- :func:`compare_runs` and :func:`explain_difference`: two runs side by side, call by call and piece by
  piece, and which difference brings a good run's answer back into a bad one;
- :func:`find_dropped_context`: what was available but never reached the model, and why,
  confirmed by restoring it;
- :func:`ask`: a question in plain words, answered by an explainer agent that opens the
  recording only through read-only, bounded views and cites its ids;
- :func:`last_stopped`: what the newest stopped proof kept (a report marked partial, the verdicts it
  reached); a stop raises :class:`Stopped`, one line saying so;
- :func:`integrity`: the contradictions a recording holds (an ungrounded tool, an invented
  identifier, a duplicate tool call, an answer against a tool result), with a disposition
  for every check.

Reruns go through whatever runner is handed in (an agent, rebuilt with ``agent.without``,
or a factory), and ``ask`` builds its explainer through a factory (by default the ``agent``
that ``core`` registers in the runner registry, ``base.runners``), so this layer never imports
a runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from footprint_lab.base.exports import public

if TYPE_CHECKING:
    from footprint_lab.base.progress import Stopped as Stopped
    from footprint_lab.base.progress import last_stopped as last_stopped
    from footprint_lab.context.source_ids import ExplainConfigError as ExplainConfigError
    from footprint_lab.context.source_ids import UnknownSourceError as UnknownSourceError
    from footprint_lab.explain.asking.explainer import Explanation as Explanation
    from footprint_lab.explain.asking.explainer import ask as ask
    from footprint_lab.explain.checks.integrity import Disposition as Disposition
    from footprint_lab.explain.checks.integrity import Finding as Finding
    from footprint_lab.explain.checks.integrity import IntegrityReport as IntegrityReport
    from footprint_lab.explain.checks.integrity import integrity as integrity
    from footprint_lab.explain.provenance.custody import Backtrack as Backtrack
    from footprint_lab.explain.provenance.custody import Candidate as Candidate
    from footprint_lab.explain.provenance.custody import Hop as Hop
    from footprint_lab.explain.provenance.custody import UnknownStepError as UnknownStepError
    from footprint_lab.explain.provenance.custody import backtrack as backtrack
    from footprint_lab.explain.provenance.influence import CORRELATIONAL as CORRELATIONAL
    from footprint_lab.explain.provenance.influence import EmbeddingInfluence as EmbeddingInfluence
    from footprint_lab.explain.provenance.influence import InfluenceStrategyError as InfluenceStrategyError
    from footprint_lab.explain.provenance.influence import LexicalInfluence as LexicalInfluence
    from footprint_lab.explain.provenance.influence import RankingConfidence as RankingConfidence
    from footprint_lab.explain.provenance.influence import list_influence_strategies as list_influence_strategies
    from footprint_lab.explain.provenance.influence import ranking_confidence as ranking_confidence
    from footprint_lab.explain.provenance.influence import register_influence_strategy as register_influence_strategy
    from footprint_lab.explain.provenance.influence import suspects as suspects
    from footprint_lab.explain.trials.ablation import Localization as Localization
    from footprint_lab.explain.trials.ablation import LocalizedSuspect as LocalizedSuspect
    from footprint_lab.explain.trials.ablation import NothingToLocalizeError as NothingToLocalizeError
    from footprint_lab.explain.trials.ablation import RerunReport as RerunReport
    from footprint_lab.explain.trials.ablation import localize as localize
    from footprint_lab.explain.trials.ablation import rerun_without as rerun_without
    from footprint_lab.explain.trials.comparison import Difference as Difference
    from footprint_lab.explain.trials.comparison import compare_runs as compare_runs
    from footprint_lab.explain.trials.culprits import Culprits as Culprits
    from footprint_lab.explain.trials.culprits import CulpritSet as CulpritSet
    from footprint_lab.explain.trials.culprits import bisect_culprits as bisect_culprits
    from footprint_lab.explain.trials.difference import DifferenceExplanation as DifferenceExplanation
    from footprint_lab.explain.trials.difference import SameAnswerError as SameAnswerError
    from footprint_lab.explain.trials.difference import explain_difference as explain_difference
    from footprint_lab.explain.trials.dropped import DroppedContext as DroppedContext
    from footprint_lab.explain.trials.dropped import DroppedPiece as DroppedPiece
    from footprint_lab.explain.trials.dropped import find_dropped_context as find_dropped_context
    from footprint_lab.explain.trials.replay import Replay as Replay
    from footprint_lab.explain.trials.replay import ReplayPieceError as ReplayPieceError
    from footprint_lab.explain.trials.replay import replay as replay
    from footprint_lab.explain.trials.rerun import TextDifference as TextDifference
    from footprint_lab.explain.trials.settings import Trials as Trials
    from footprint_lab.explain.trials.settings import TrialSettings as TrialSettings

__all__ = [
    "CORRELATIONAL",
    "Backtrack",
    "Candidate",
    "CulpritSet",
    "Culprits",
    "Difference",
    "DifferenceExplanation",
    "Disposition",
    "DroppedContext",
    "DroppedPiece",
    "EmbeddingInfluence",
    "ExplainConfigError",
    "Explanation",
    "Finding",
    "Hop",
    "InfluenceStrategyError",
    "IntegrityReport",
    "LexicalInfluence",
    "Localization",
    "LocalizedSuspect",
    "NothingToLocalizeError",
    "RankingConfidence",
    "Replay",
    "ReplayPieceError",
    "RerunReport",
    "SameAnswerError",
    "Stopped",
    "TextDifference",
    "TrialSettings",
    "Trials",
    "UnknownSourceError",
    "UnknownStepError",
    "ask",
    "backtrack",
    "bisect_culprits",
    "compare_runs",
    "explain_difference",
    "find_dropped_context",
    "integrity",
    "last_stopped",
    "list_influence_strategies",
    "localize",
    "ranking_confidence",
    "register_influence_strategy",
    "replay",
    "rerun_without",
    "suspects",
]
__getattr__, __dir__ = public(__name__)

