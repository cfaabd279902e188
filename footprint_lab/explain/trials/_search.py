"""Where the screening removes next: an adaptive group test that weighs every screening rerun.

Rule kept here: the search only chooses what the confirmation tests, so it may use any screening
rerun and any model of the reruns it likes; it never decides a verdict. It keeps a posterior over
what could explain the outcome:

- nothing (every flip so far was noise);
- one arm (removing it flips the outcome);
- a pair of arms that act only together (each keeps the outcome on its own, so only removing both
  flips it);
- two arms that are each a cause (removing either flips the outcome: the answer needs both),

each written as the causes it names (a cause being the arms whose removal together flips the
outcome: ``((3,),)`` one arm, ``((1, 4),)`` a pair acting together, ``((1,), (4,))`` two causes),

and over how noisy the reruns are: an unknown flip rate when nothing that matters was removed, and
an unknown (higher) one when the cause was, each from a coarse grid with equal prior weight. Every
screening rerun is evidence about every hypothesis, whatever it removed: a rerun that removed a set
and flipped raises each single arm of the set and each pair inside it, one that kept the outcome
lowers them. The next reruns are the removal sets whose outcomes, taken together, tell the most about
which hypothesis holds (the greatest expected information); a few are chosen at once so that they
run concurrently, and a set may be chosen again while its outcome is in doubt. The search stops
when one hypothesis is likely enough (``DECISIVE``), when no removal would tell much more, or when
the budget it may use is spent; the hypotheses it leaves most likely are the candidates.

Role: explain layer, pure arithmetic over arm indexes (numpy is imported on first use); the trial
(:mod:`~footprint_lab.explain.trials.trial`) runs the reruns it asks for.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

#: Flip rates the search weighs when nothing that matters was removed (the model's own noise) ...
NOISE_RATES = (0.02, 0.1, 0.2, 0.3, 0.4)
#: ... and when the cause was removed.
EFFECT_RATES = (0.6, 0.75, 0.9, 0.98)
#: The search stops once one hypothesis holds this much of the posterior.
DECISIVE = 0.9
#: Reruns chosen at once (they run concurrently).
BATCH = 4
#: Pairs are looked for among the first this many arms (the ranking's top); singles among all.
PAIR_ARMS = 40
#: Removal sets weighed when there are too many arms to weigh every subset.
SAMPLED_SETS = 1024
#: An expected gain below this (in bits) for a whole batch is not worth its reruns.
LEAST_GAIN = 0.02

#: The prior share of each kind of explanation: nothing, one arm, a pair acting together, two causes. Measured at
#: 25% noise: equal shares found a lone cause among 3 and 10 pieces in 96% and 93% of cases, these in 97.5% and
#: 97.5%, while pairs acting together among 6-10 arms went from 95 to 91 of 120.
KIND_PRIOR = (0.25, 0.4, 0.175, 0.175)

#: The prior share of three or four causes each needed, weighed only among the arms that flipped alone on a model
#: whose unchanged reruns never flipped (three notes each needed: the answer needs every one).
MORE_PRIOR = 0.02
#: The most arms three or four causes are weighed among.
MORE_ARMS = 6

#: the causes a hypothesis names: each the arms whose removal together flips the outcome (``()``: nothing)
Hypothesis = tuple[tuple[int, ...], ...]


class CauseSearch:
    """A posterior over "nothing", each single arm, each pair that acts only together, each two arms that are
    each a cause and (among ``several``) each three or four arms that are each a cause, fed by removals."""

    def __init__(self, arms: int, *, with_pairs: bool = True, several: Sequence[int] = ()) -> None:
        import numpy as np

        self.arms = arms
        pairs = list(itertools.combinations(range(min(arms, PAIR_ARMS)), 2)) if with_pairs else []
        # three or four causes, each needed, only among the arms named (those that flipped alone on a quiet model)
        more = [group for size in (3, 4) for group in itertools.combinations(sorted(several)[:MORE_ARMS], size)]
        self.hypotheses: list[Hypothesis] = [(), *(((k,),) for k in range(arms)), *((pair,) for pair in pairs),
                                             *(((i,), (j,)) for i, j in pairs),
                                             *(tuple((k,) for k in group) for group in more)]
        self._first = np.array([i for i, _ in pairs], dtype=int)
        self._second = np.array([j for _, j in pairs], dtype=int)
        self._more = [np.array([group for group in more if len(group) == size], dtype=int).reshape(-1, size)
                      for size in (3, 4)]
        # before any rerun (KIND_PRIOR): a single cause is the common case, and a pair must not outweigh it only
        # because more pairs hold an arm than there are arms; hypotheses of a kind are equally likely
        kinds = [[KIND_PRIOR[0]], [KIND_PRIOR[1] / arms] * arms,
                 *([share / len(pairs)] * len(pairs) for share in KIND_PRIOR[2:] if pairs),
                 *([MORE_PRIOR / len(more)] * len(more) for _ in (1,) if more)]
        prior = [share for kind in kinds for share in kind]
        grid = [(low, high) for low in NOISE_RATES for high in EFFECT_RATES]
        self._low = np.array([low for low, _ in grid])
        self._high = np.array([high for _, high in grid])
        self._log = np.log(np.array(prior) / sum(prior))[:, None] + np.zeros((1, len(grid)))
        self._sets = self._candidate_sets()
        self._effects = self.effects(self._sets)

    def effects(self, sets: Any) -> Any:
        """For each removal set (rows of a boolean arm matrix), whether each hypothesis says it flips the outcome."""
        import numpy as np

        sets = np.asarray(sets, dtype=bool).reshape(-1, self.arms)
        # a set flips it when it removes the whole of any cause named, in the order of ``hypotheses``: nothing,
        # each arm, each pair acting together (both removed), each two causes (either removed), each three or four
        # causes (any removed)
        first, second = sets[:, self._first], sets[:, self._second]
        more = [sets[:, groups].any(axis=2) for groups in self._more]
        return np.concatenate([np.zeros((len(sets), 1), dtype=bool), sets, first & second, first | second, *more],
                              axis=1)

    def _candidate_sets(self) -> Any:
        """Every non-empty subset of the arms, or (with many arms) a fixed random sample of them."""
        import numpy as np

        if self.arms <= 11:
            codes = np.arange(1, 2 ** self.arms)
            return (codes[:, None] >> np.arange(self.arms)) & 1 == 1
        chooser = random.Random(self.arms)  # a fixed seed: the same arms weigh the same sets
        rows = [[chooser.random() < share for _ in range(self.arms)]
                for share in (chooser.uniform(0.1, 0.9) for _ in range(SAMPLED_SETS))]
        rows += [[k == j for k in range(self.arms)] for j in range(self.arms)]
        rows += [[k != j for k in range(self.arms)] for j in range(self.arms)]
        rows.append([True] * self.arms)
        return np.array(rows, dtype=bool)

    def observe(self, removed: Sequence[int], flipped: bool) -> None:
        """Weigh one finished screening rerun that removed the arms ``removed``."""
        import numpy as np

        row = np.zeros((1, self.arms), dtype=bool)
        row[0, list(removed)] = True
        effect = self.effects(row)[0][:, None]
        chance = np.where(effect, self._high[None, :], self._low[None, :])
        self._log += np.log(chance if flipped else 1 - chance)

    def _joint(self) -> Any:
        import numpy as np

        joint = np.exp(self._log - self._log.max())
        return joint / joint.sum()

    def posterior(self) -> list[tuple[Hypothesis, float]]:
        """Each hypothesis with its posterior chance, most likely first (``()`` is "nothing")."""
        marginal = self._joint().sum(axis=1)
        order = sorted(range(len(self.hypotheses)), key=lambda k: -marginal[k])
        return [(self.hypotheses[k], float(marginal[k])) for k in order]

    def next_sets(self, count: int) -> tuple[list[tuple[int, ...]], float]:
        """Up to ``count`` removal sets chosen greedily for the most information together, and that gain in bits."""
        import numpy as np

        joint = self._joint()
        weight = joint.sum(axis=1)
        given = joint / np.maximum(weight[:, None], 1e-300)
        flip_if_effect, flip_if_not = given @ self._high, given @ self._low  # per hypothesis, noise averaged out
        chance = np.where(self._effects, flip_if_effect[None, :], flip_if_not[None, :])  # sets x hypotheses
        outcomes = np.ones((1, len(self.hypotheses)))  # P(outcomes of the sets chosen so far | hypothesis)
        chosen: list[int] = []
        gain = 0.0
        for _ in range(count):
            grown = np.concatenate([outcomes[None, :, :] * chance[:, None, :],
                                    outcomes[None, :, :] * (1 - chance[:, None, :])], axis=1)
            scores = _information(grown, weight)
            best = int(np.argmax(scores))
            if scores[best] - gain < LEAST_GAIN / count:
                break
            chosen.append(best)
            gain = float(scores[best])
            outcomes = grown[best]
        sets = [tuple(int(k) for k in np.flatnonzero(self._sets[index])) for index in chosen]
        return sets, gain


def _information(outcomes: Any, weight: Any) -> Any:
    """The mutual information (bits) between the hypothesis and the outcomes, for each stack of outcome tables.

    ``outcomes[s, y, h]`` is the chance of joint outcome ``y`` under hypothesis ``h`` for candidate ``s``.
    """
    import numpy as np

    def entropy(p: Any, axis: int) -> Any:
        safe = np.where(p > 0, p, 1.0)
        return -(p * np.log2(safe)).sum(axis=axis)

    predicted = outcomes @ weight  # s x y
    return entropy(predicted, 1) - (entropy(outcomes, 1) * weight[None, :]).sum(axis=1)

