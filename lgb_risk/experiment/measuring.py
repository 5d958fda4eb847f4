"""The measures of a run: those the report gives, the objectives' target and the measure that
selects each booster's model, each written out for the run's data.

ERR's grades are (2^l − 1)/2^l_max; where a measure leaves ``max_label`` unset, the run sets it to
the dataset's highest label (written in the measure's label, ``ERR(max_label=2)@20``), so that
every fold, baseline and objective computes one ERR whatever labels its queries happen to hold.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from lgb_risk import measures as registry

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import ArrayLike
    from lgb_risk.experiment.config import ExperimentConfig

__all__ = ["RunMeasures"]


class RunMeasures:
    """The run's measures for data whose highest label is ``max_label``.

    ``reported``: the report's measures in order; ``target``: the objectives' target (``[objective]
    measure``, else the first reported); ``selection``: the measure whose validation value picks
    a booster's iteration (the target for ``selection = "target"`` and, for the learned
    baselines and the learners without a risk measure, for ``"risk"``; None for ``"last"``).

    >>> from lgb_risk.experiment.config import validate
    >>> run = RunMeasures(validate({"evaluation": {"measures": ["ndcg@10", "err@20"]}}), 2)
    >>> [m.label for m in run.reported], run.target.label
    (['NDCG@10', 'ERR(max_label=2)@20'], 'NDCG@10')
    """

    def __init__(self, config: ExperimentConfig, max_label: int):
        self.max_label = max(1, int(max_label))
        written = config.evaluation.reported()
        self.reported = [self.written_out(text) for text in written]
        self.target = self.written_out(config.objective.get("measure") or written[0])
        selection = config.training.selection
        self.selection = (None if selection == "last" else self.target
                          if selection in ("target", "risk") else self.written_out(selection))

    def written_out(self, text: str) -> registry.MeasureSpec:
        """The measure ``text`` with ``max_label`` written in where it takes one and is unset."""
        return registry.parse(text).with_unset("max_label", self.max_label)

    def compute(self, spec: registry.MeasureSpec, labels: ArrayLike, scores: ArrayLike,
                group: ArrayLike) -> np.ndarray:
        """Per-query values of ``spec`` for the lists ranked by ``scores`` (ties in input
        order)."""
        return spec.compute(registry.Judged(np.asarray(labels), np.asarray(scores),
                                            np.asarray(group), max_label=self.max_label))

    @staticmethod
    def slug(spec: registry.MeasureSpec) -> str:
        """The measure as a file-name part: ``ndcg_10``, ``err_max_label_2_20``."""
        return re.sub(r"[^0-9a-z.]+", "_", spec.label.lower()).strip("_")
