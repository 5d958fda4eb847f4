"""What every per-query measure of :mod:`lgb_risk.metrics` does before its formula: validate
the flat inputs once, put each query in rank order (or select its top k), and say how many
positions matter and what a query with nothing to normalise by scores."""

from __future__ import annotations

import numpy as np

from lgb_risk._inputs.validation import check_group, check_k, check_labels, check_scores
from lgb_risk._measuring.segments import offsets_from_group


def validated(labels, scores, group, k, conv) -> tuple[np.ndarray, np.ndarray | None,
                                                        np.ndarray, np.ndarray, int | None]:
    """Validate the common inputs; return labels, scores, group, offsets, k.

    Scores are rounded to float32 where the convention keeps them in single precision;
    ``scores=None`` (lists already in rank order) is passed through.
    """
    y = check_labels(labels)
    g = check_group(group, y.size)
    s = None if scores is None else check_scores(scores, y.size)
    if s is not None and conv.score_dtype == "float32":
        s = s.astype(np.float32).astype(np.float64)
    k = check_k(k)
    return y, s, g, offsets_from_group(g), k


def kernels():
    """The numba sorting kernels (:mod:`lgb_risk._measuring.ranking`), loaded on first need."""
    from lgb_risk._measuring import ranking as _ranking

    return _ranking


def ranked_order(y, s, off, ties):
    """Flat permutation putting every query in rank order (identity for ranked lists)."""
    if s is None:
        return np.arange(y.size)
    return kernels().rank_by_score(s, y, off, ties)


def prepared(labels, scores, group, k, conv):
    """Validate the common inputs; return labels, scores, group, offsets, k, position order."""
    y, s, g, off, k = validated(labels, scores, group, k, conv)
    return y, s, g, off, k, ranked_order(y, s, off, conv.ties)


#: Cut-offs up to this use the per-query top-k selection instead of a full sort.
TOP_K_LIMIT = 128


def selects_top_k(s, k, ties) -> bool:
    """Whether the per-query top-k selection serves (scores to rank, stable ties, a small
    cut-off): no full sort."""
    return s is not None and ties == "stable" and k is not None and k <= TOP_K_LIMIT


def cutoff(k, group):
    """Number of ranked positions that matter: k, or the longest query when k is None."""
    longest = int(group.max())
    return longest if k is None else min(k, longest)


def empty_value(empty):
    """A normalised measure's value where it has nothing to normalise by (``empty``)."""
    return {"zero": 0.0, "one": 1.0, "skip": np.nan}[empty]


def per_query_ratio(numerator, denominator, empty):
    """numerator / denominator per query, and :func:`empty_value` where the denominator is 0."""
    out = np.full(numerator.size, empty_value(empty))
    some = denominator > 0
    out[some] = numerator[some] / denominator[some]
    return out
