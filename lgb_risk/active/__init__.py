"""Active evaluation: a ranker's effectiveness (a measure of
:func:`lgb_risk.measures.active_measures`), or the difference of two, on a labelling budget
([AE]).

[AE]: Sawade et al., Machine Learning 2013 (:mod:`lgb_risk.references`).

- :mod:`.moments`: E[L], E[L²] and E[L1 L2] of DCG@k and ERR@k under a relevance model.
- :mod:`.relevance`: relevance models (grade probabilities per document).
- :mod:`.sampling`: costs, the optimal sampling distribution, the sampler and the estimator;
  :func:`evaluate` is the one call.
"""

from lgb_risk.active.moments import (
    TargetMeasure,
    cross_moment,
    metric_moments,
    target_measure,
)
from lgb_risk.active.relevance import calibrate_scores, relevance_probabilities, uniform_relevance
from lgb_risk.active.sampling import (
    METHODS,
    ActiveEstimate,
    estimate,
    evaluate,
    measure_values,
    predicted_mse_ratio,
    query_costs,
    sample_queries,
    sampling_distribution,
    simulate,
)

__all__ = [
    "target_measure", "TargetMeasure", "metric_moments", "cross_moment",
    "relevance_probabilities", "calibrate_scores", "uniform_relevance", "query_costs",
    "sampling_distribution", "predicted_mse_ratio",
    "sample_queries", "estimate", "evaluate", "ActiveEstimate", "measure_values", "simulate",
    "METHODS",
]
