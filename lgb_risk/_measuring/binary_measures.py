"""Measures of binary relevance, vectorised over all queries: a document is relevant when its
label reaches the convention's relevance level (label > 0 by default).

Precision, recall, reciprocal rank, rank-biased precision, success, bpref, R-precision, average
precision, sum of precisions ([UE] Eq. 4) and its expectation under a random order ([UE] §6.4).
The inputs and the conventions are those of :mod:`lgb_risk.metrics`, which documents them and
from which these functions are imported.

References: [UE], [RBP]; :mod:`lgb_risk.references`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from lgb_risk._inputs.validation import check_group, check_k, check_labels
from lgb_risk._measuring import measure_input as inputs
from lgb_risk._measuring.segments import offsets_from_group, positions_in_query, query_of_document
from lgb_risk.conventions import resolve

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import ArrayLike, ConventionLike

__all__ = ["sum_precision", "precision", "recall", "reciprocal_rank", "rank_biased_precision",
           "rbp_weights", "success", "bpref", "r_precision", "average_precision",
           "expected_sum_precision"]


class _BinaryRanking(NamedTuple):
    """Every ranked document at rank <= k, relevance binary (label >= the relevance level)."""

    relevant: np.ndarray  # 1.0 or 0.0
    precision: np.ndarray  # P@r at the document's rank r
    query: np.ndarray  # query index
    position: np.ndarray  # 0-based rank
    n_queries: int
    relevant_in_list: np.ndarray  # per query, over the whole list
    group: np.ndarray


def _refuse_average_ties(conv) -> None:
    """A tie block's mean discount is DCG's rule; no binary measure defines it."""
    if conv.ties == "average":
        raise ValueError("ties='average' (the sklearn convention's) is defined for DCG and NDCG "
                         "only: choose 'stable', 'pessimistic' or 'optimistic', as ties= in "
                         "Python or written in the measure's name, e.g. p(ties=stable)@10 "
                         "(on the command line too)")


def _precision_terms(labels, scores, group, k, conv) -> _BinaryRanking:
    """Relevant indicator, P@r, query and position of every ranked document at rank <= k."""
    _refuse_average_ties(conv)
    y, s, g, _, k, order = inputs.prepared(labels, scores, group, k, conv)
    relevant = y[order] >= conv.relevance_level
    qid = query_of_document(g)
    n_relevant = np.bincount(qid, weights=relevant, minlength=g.size)
    pos = positions_in_query(g)
    cutoff = inputs.cutoff(k, g)
    keep = pos < cutoff  # each query's first min(k, n_q) positions
    rel, pos, qid = relevant[keep].astype(np.float64), pos[keep], qid[keep]
    kept_group = np.minimum(g, cutoff)
    hits = np.cumsum(rel)
    query_start = offsets_from_group(kept_group)[:-1]
    hits_before_query = np.repeat(np.concatenate(([0.0], hits))[query_start], kept_group)
    precision = (hits - hits_before_query) / (pos + 1)
    return _BinaryRanking(rel, precision, qid, pos, g.size, n_relevant, g)


def _relevant_totals(in_list, n_relevant, name: str = "n_relevant",
                     what: str = "relevant"):
    """R_q (or, for bpref, N_q): the relevant (non-relevant) documents counted in the ranking,
    or given per query as ``name`` (from qrels that judge documents the ranking lacks)."""
    if n_relevant is None:
        return in_list
    try:
        given = np.asarray(n_relevant, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be whole-number counts, one per query, got "
                         f"{n_relevant!r}") from None
    if given.shape != in_list.shape:
        raise ValueError(f"{name} must give one count per query ({in_list.size}), got shape "
                         f"{given.shape}")
    bad = np.flatnonzero(~np.isfinite(given) | (given != np.round(given)) | (given < in_list))
    if bad.size:
        q = int(bad[0])
        raise ValueError(f"{name}[{q}] is {given[q]:g}: a whole-number count at least the "
                         f"{int(in_list[q])} {what} document(s) the ranking holds for that "
                         "query")
    return given


def sum_precision(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike, k: int | None = 10,
                  *, convention: ConventionLike | None = None,
                  ties: str | None = None) -> np.ndarray:
    """SP@k = ``sum_{r <= k} P@r * rel_r`` with binary relevance (label > 0) ([UE] Eq. 4).

    >>> sum_precision([1, 0, 2], [0.3, 0.2, 0.1], [3], k=3).tolist()
    [1.6666666666666665]
    """
    t = _precision_terms(labels, scores, group, k, resolve(convention, ties=ties))
    return np.bincount(t.query, weights=t.relevant * t.precision, minlength=t.n_queries)


def precision(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike, k: int | None = 10, *,
              convention: ConventionLike | None = None, ties: str | None = None) -> np.ndarray:
    """P@k = (relevant documents among the top k) / k, relevance binary (label > 0).

    As trec_eval's ``P_k``, the denominator is k even for a list shorter than k; with
    ``k=None``, the list's length.

    >>> precision([1, 0, 2, 0], [0.9, 0.8, 0.7, 0.6], [4], k=2).tolist()
    [0.5]
    """
    t = _precision_terms(labels, scores, group, k, resolve(convention, ties=ties))
    hits = np.bincount(t.query, weights=t.relevant, minlength=t.n_queries)
    return hits / (t.group if k is None else k)


def recall(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike, k: int | None = 10, *,
           convention: ConventionLike | None = None, ties: str | None = None,
           empty: str | None = None, n_relevant: ArrayLike | None = None) -> np.ndarray:
    """Recall@k = (relevant documents among the top k) / R_q, relevance binary (label > 0).

    R_q counts the query's relevant documents in ``labels``, or is given per query as
    ``n_relevant`` (trec_eval's ``recall_k`` takes it from the qrels); ``empty`` gives the value
    where R_q = 0.

    >>> recall([1, 0, 2, 0], [0.9, 0.8, 0.7, 0.6], [4], k=2).tolist()
    [0.5]
    """
    conv = resolve(convention, ties=ties, empty=empty)
    t = _precision_terms(labels, scores, group, k, conv)
    return inputs.per_query_ratio(np.bincount(t.query, weights=t.relevant, minlength=t.n_queries),
                            _relevant_totals(t.relevant_in_list, n_relevant), conv.empty)


def reciprocal_rank(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike,
                    k: int | None = None, *, convention: ConventionLike | None = None,
                    ties: str | None = None) -> np.ndarray:
    """RR@k = 1 / rank of the first relevant document (label > 0) within the top k, else 0.

    trec_eval's ``recip_rank`` is ``k=None`` (the whole list).

    >>> reciprocal_rank([0, 0, 1, 2], [0.9, 0.8, 0.7, 0.6], [4]).tolist()
    [0.3333333333333333]
    """
    t = _precision_terms(labels, scores, group, k, resolve(convention, ties=ties))
    out = np.zeros(t.n_queries)
    np.maximum.at(out, t.query, t.relevant / (t.position + 1.0))
    return out


def rank_biased_precision(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike,
                          k: int | None = None, *, persistence: float = 0.8,
                          convention: ConventionLike | None = None,
                          ties: str | None = None) -> np.ndarray:
    """RBP@k = (1 − p) Σ_{i ≤ k} p^(i−1) r_i, r_i = 1 if the document at rank i is relevant
    (label >= the relevance level), else 0 (Moffat & Zobel 2008, Eq. 5; [RBP]).

    p is the user's ``persistence``, the probability of going on to the next document; the
    residual beyond rank k (or the list's end) is not added, as in Moffat & Zobel's base value.
    The weights are :func:`rbp_weights`.

    >>> rank_biased_precision([1, 0, 1], [0.9, 0.8, 0.7], [3], persistence=0.5).tolist()
    [0.625]
    """
    t = _precision_terms(labels, scores, group, k, resolve(convention, ties=ties))
    weights = rbp_weights(int(t.position.max()) + 1 if t.position.size else 0, persistence)
    return np.bincount(t.query, weights=t.relevant * weights[t.position],
                       minlength=t.n_queries)


def rbp_weights(width: int, persistence: float) -> np.ndarray:
    """RBP's weight (1 − p) p^i of each 0-based position i below ``width``, the powers built by
    repeated multiplication (the same bits on any CPU).

    >>> rbp_weights(3, 0.5).tolist()
    [0.5, 0.25, 0.125]
    """
    if isinstance(persistence, (bool, np.bool_)) or not isinstance(
            persistence, (int, float, np.integer, np.floating)) or not 0.0 < persistence < 1.0:
        raise ValueError(f"persistence must be a probability in (0, 1), got {persistence!r}")
    powers = np.cumprod(np.concatenate(([1.0], np.full(max(width - 1, 0), persistence))))
    return (1.0 - persistence) * powers[:width]


def success(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike, k: int | None = 10,
            *, convention: ConventionLike | None = None, ties: str | None = None) -> np.ndarray:
    """Success@k: 1 if a relevant document (label >= the relevance level) is among the top k,
    else 0 (trec_eval's ``success_k``).

    >>> success([0, 0, 1], [0.9, 0.8, 0.7], [3], k=2).tolist()
    [0.0]
    >>> success([0, 0, 1], [0.9, 0.8, 0.7], [3], k=3).tolist()
    [1.0]
    """
    t = _precision_terms(labels, scores, group, k, resolve(convention, ties=ties))
    return (np.bincount(t.query, weights=t.relevant, minlength=t.n_queries) > 0).astype(
        np.float64)


def bpref(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike, *,
          judged: ArrayLike | None = None, n_relevant: ArrayLike | None = None,
          n_nonrelevant: ArrayLike | None = None, convention: ConventionLike | None = None,
          ties: str | None = None) -> np.ndarray:
    """bpref = (1/R) Σ_{relevant r} (1 − min(n_r, R) / min(R, N)) (Buckley & Voorhees 2004;
    trec_eval's ``bpref``): n_r the judged non-relevant documents ranked above r, R and N the
    query's judged relevant and non-relevant documents; a relevant document with none above it
    counts 1. Unjudged documents are left out of the ranking (``judged``: one flag per listed
    document; None: every document is judged). ``n_relevant``/``n_nonrelevant`` give R and N
    per query from the judgments (a TREC qrels file judges documents the ranking lacks); by
    default they are counted in the lists. A query with R = 0 scores 0.

    >>> bpref([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.6], [4]).tolist()  # (1 + (1 − 1/2)) / 2
    [0.75]
    """
    conv = resolve(convention, ties=ties)
    _refuse_average_ties(conv)
    y, s, g, _, _, order = inputs.prepared(labels, scores, group, None, conv)
    is_judged = np.ones(y.size, dtype=bool) if judged is None else np.asarray(judged, dtype=bool)
    if is_judged.shape != y.shape:
        raise ValueError(f"judged must hold one flag per document ({y.size}), got shape "
                         f"{is_judged.shape}")
    qid = query_of_document(g)
    ranked_judged = is_judged[order]
    relevant = ranked_judged & (y[order] >= conv.relevance_level)
    nonrelevant = ranked_judged & ~relevant
    R = _relevant_totals(np.bincount(qid, weights=relevant, minlength=g.size), n_relevant)
    N = _relevant_totals(np.bincount(qid, weights=nonrelevant, minlength=g.size),
                         n_nonrelevant, "n_nonrelevant", "judged non-relevant")
    starts = offsets_from_group(g)[:-1]
    seen = np.cumsum(nonrelevant)  # judged non-relevant documents up to and including each
    above = seen - np.repeat(np.concatenate(([0], seen))[starts], g) - nonrelevant
    cap = np.minimum(R, N)[qid]
    penalty = np.where(above > 0, np.minimum(above, R[qid]) / np.where(cap > 0, cap, 1.0), 0.0)
    total = np.bincount(qid, weights=np.where(relevant, 1.0 - penalty, 0.0), minlength=g.size)
    return inputs.per_query_ratio(total, R, "zero")


def r_precision(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike, *,
                convention: ConventionLike | None = None, ties: str | None = None,
                empty: str | None = None, n_relevant: ArrayLike | None = None) -> np.ndarray:
    """R-precision = (relevant documents among the top R_q) / R_q, relevance binary (label > 0).

    R_q as in :func:`recall` (trec_eval's ``Rprec`` takes it from the qrels); ``empty`` gives the
    value where R_q = 0.

    >>> r_precision([1, 0, 2, 0], [0.9, 0.8, 0.7, 0.6], [4]).tolist()
    [0.5]
    """
    conv = resolve(convention, ties=ties, empty=empty)
    t = _precision_terms(labels, scores, group, None, conv)
    totals = _relevant_totals(t.relevant_in_list, n_relevant)
    hits = np.bincount(t.query, weights=t.relevant * (t.position < totals[t.query]),
                       minlength=t.n_queries)
    return inputs.per_query_ratio(hits, totals, conv.empty)


def average_precision(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike,
                      k: int | None = 10, *, convention: ConventionLike | None = None,
                      ties: str | None = None, empty: str | None = None,
                      ap_denominator: str | None = None,
                      n_relevant: ArrayLike | None = None) -> np.ndarray:
    """AP@k = ``sum_{relevant r <= k} P@r / D_q``, relevance binary (label > 0).

    ``D_q`` is R_q, the query's relevant documents, not capped at k (trec_eval's form;
    ``ap_denominator="relevant"``, default), or ``min(R_q, k)`` (``"capped"``, LightGBM's
    ``map@k``). R_q is counted in ``labels``, or given per query as ``n_relevant`` (e.g. from
    qrels that judge documents the ranking lacks). ``empty`` gives the value where R_q = 0.

    >>> average_precision([1, 0, 2], [0.3, 0.2, 0.1], [3], k=1).tolist()
    [0.5]
    >>> average_precision([1, 0, 2], [0.3, 0.2, 0.1], [3], k=1, convention="lightgbm").tolist()
    [1.0]
    """
    conv = resolve(convention, ties=ties, empty=empty, ap_denominator=ap_denominator)
    t = _precision_terms(labels, scores, group, k, conv)
    totals = _relevant_totals(t.relevant_in_list, n_relevant)
    if conv.ap_denominator == "capped" and k is not None:
        totals = np.minimum(totals, k)
    return inputs.per_query_ratio(np.bincount(t.query, weights=t.relevant * t.precision,
                                        minlength=t.n_queries), totals, conv.empty)


def expected_sum_precision(labels: ArrayLike, group: ArrayLike, k: int | None = 10, *,
                           exact: bool = True) -> np.ndarray:
    """E[SP@k] under a uniformly random permutation of each query ([UE] §6.4).

    Exact: ``sum_{r <= min(k, n)} (R/n) (1 + (r - 1)(R - 1)/(n - 1)) / r`` for R relevant
    (label > 0) of n documents. ``exact=False`` gives [UE]'s approximation ``k (R/n)**2``, which
    assumes P@r and rel_r independent ([UE] §6.4.1, stated for n > k; here with ``min(k, n)``
    in place of k, since positions beyond the list contribute nothing).

    >>> expected_sum_precision([1, 0, 1, 0], [4], k=2).round(4).tolist()
    [0.8333]
    >>> expected_sum_precision([1, 0, 1, 0], [4], k=2, exact=False).tolist()
    [0.5]
    """
    y = check_labels(labels)
    g = check_group(group, y.size)
    k = check_k(k)
    qid = query_of_document(g)
    n_rel = np.bincount(qid, weights=(y > 0).astype(np.float64), minlength=g.size)
    n = g.astype(np.float64)
    m = g if k is None else np.minimum(g, k)
    if not exact:
        return m * (n_rel / n) ** 2
    harmonic = np.cumsum(1.0 / np.arange(1, int(g.max()) + 1))[m - 1]
    # sum_{r<=m} (r-1)/r = m - H_m ; its factor (R-1)/(n-1) is irrelevant when n = 1 (then m = 1).
    pair_term = np.divide((n_rel - 1) * (m - harmonic), n - 1, out=np.zeros(g.size), where=n > 1)
    return n_rel / n * (harmonic + pair_term)
