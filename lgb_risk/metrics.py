"""Per-query effectiveness measures, vectorised over all queries.

Every measure takes flat ``labels`` and ``scores`` (one entry per document) and ``group``
(LightGBM's query sizes, in order) and returns one value per query as a float64 array.
``scores=None`` means the documents are already in rank order within each query (a TREC run
sorted by its tool's rule): nothing is sorted, and the numba kernels are not loaded.
Conventions are explicit keywords, never implicit. ``convention="NAME"`` sets all of them the way
one tool does (``trec_eval``, ``gdeval``, ``lightgbm``, ``sklearn``, ``ranklib``, ``letor3``,
``letor4``, ``ms``, ``yahoo``: see :mod:`lgb_risk.conventions`); a keyword given explicitly
overrides that one choice. Without a convention the defaults below apply.

``ties``
    Order among documents with equal scores: ``"stable"`` (input order, LightGBM's; default),
    ``"pessimistic"`` (lower labels first), ``"optimistic"`` (higher labels first) and, for DCG
    and NDCG only, ``"average"`` (each tied document gets the mean discount of the positions its
    tie block occupies: the expectation over random orders of the tie).
``empty``
    Value of a normalised measure when the query has nothing to normalise by (IDCG@k = 0 for NDCG,
    no relevant document for AP): ``"zero"`` (trec_eval, ranx; default), ``"one"`` (LightGBM,
    Yahoo LTR) or ``"skip"`` (NaN; exclude the query downstream, e.g. ``nan_policy="omit"`` in
    :mod:`lgb_risk.risk`).
``short``
    NDCG of a query with fewer than k documents: ``"available"`` (IDCG over the documents there
    are; default) or ``"zero"`` (the LETOR 4.0 evaluation tool scores such queries 0).
``label_gain``
    Gain of each label value: ``"exponential"`` (``2**l - 1``, default), ``"linear"`` (``l``) or
    a table indexed by label (LightGBM's parameter).
``discount``
    ``"log2"`` (default): ``1 / log2(r + 1)`` at 1-based rank r; ``"letor"``: 1 at ranks 1 and 2,
    then ``1 / log2(r)`` (the LETOR 4.0 and MSLR scripts).
``max_label``
    l_max of ERR's stopping probability ``(2**l - 1) / 2**l_max``: 4 for MSLR and TREC Web
    (gdeval), 2 for LETOR 4.0.

``k=None`` means the whole list.

References: [AE] (ERR as its Eq. 2), [UE] (Eqs. 4-7); :mod:`lgb_risk.references`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from lgb_risk._inputs.validation import check_choice, check_group, check_k, check_labels
from lgb_risk._measuring import binary_measures
from lgb_risk._measuring import measure_input as inputs
from lgb_risk._measuring.binary_measures import *  # noqa: F403 (its __all__ is this module's too)
from lgb_risk._measuring.segments import offsets_from_group, positions_in_query, query_of_document
from lgb_risk.conventions import resolve

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import ArrayLike, ConventionLike

__all__ = [
    "dcg", "ideal_dcg", "ndcg", "err", "expected_dcg", "ue_normalise", "gains", "discounts",
    "dcg_of_ranking", "stopping_probabilities",
]
__all__ += binary_measures.__all__  # the measures of binary relevance, listed there


def gains(labels: np.ndarray, label_gain: str | ArrayLike | None = None) -> np.ndarray:
    """Gain of every label: ``2**l - 1`` (None or ``"exponential"``), ``l`` (``"linear"``), or
    ``label_gain[l]`` for a table (LightGBM's parameter).

    Raises ValueError for a label with no entry in ``label_gain``.

    >>> gains(np.array([0, 1, 2])).tolist(), gains(np.array([0, 1, 2]), "linear").tolist()
    ([0.0, 1.0, 3.0], [0.0, 1.0, 2.0])
    """
    if label_gain is None or (isinstance(label_gain, str) and label_gain == "exponential"):
        return np.exp2(labels.astype(np.float64)) - 1.0
    if isinstance(label_gain, str):
        check_choice(label_gain, "label_gain", ("exponential", "linear"))
        return labels.astype(np.float64)
    table = np.asarray(label_gain, dtype=np.float64)
    if table.ndim != 1 or table.size == 0 or not np.all(np.isfinite(table)):
        raise ValueError("label_gain must be 'exponential', 'linear' or a non-empty 1-D array of "
                         "finite gains")
    over = np.flatnonzero(labels >= table.size)
    if over.size:
        raise ValueError(
            f"label {int(labels[over[0]])} at position {int(over[0])} has no entry in label_gain "
            f"(which covers labels 0..{table.size - 1})"
        )
    return table[labels]


#: Labels up to this get a gain table (one gain per label value) in the top-k kernels.
_GAIN_TABLE_LIMIT = 1 << 16


def _gain_lookup(labels: np.ndarray,
                 label_gain: str | ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    """(index, table) with document d's :func:`gains` value at ``table[index[d]]``: a table
    of the labels 0 .. max(labels) indexed by label, or past :data:`_GAIN_TABLE_LIMIT` each
    document's own gain. Raises as :func:`gains` does, naming the first document whose label
    has no gain."""
    highest = int(labels.max()) if labels.size else 0
    if highest > _GAIN_TABLE_LIMIT:
        return np.arange(labels.size), gains(labels, label_gain)
    try:
        return labels, gains(np.arange(highest + 1), label_gain)
    except ValueError:
        gains(labels, label_gain)  # the same error, naming the document
        raise


_DISCOUNTS = {"log2": np.empty(0), "letor": np.empty(0)}


def discounts(length: int, discount: str = "log2") -> np.ndarray:
    """Discount D(p) of the 0-based positions p = 0 .. length-1: ``1 / log2(p + 2)``
    (``"log2"``), or 1 at p = 0 and ``1 / log2(p + 1)`` after (``"letor"``: 1 at ranks 1 and
    2, then 1/log2(r)); DCG@k is Σ_{p<k} g(l_p) D(p).

    Computed with the C library's log2 (``math.log2``), as LightGBM computes its discount table,
    so that objectives reproduce LightGBM's doubles bit for bit; cached and grown on demand.

    >>> discounts(3).round(4).tolist(), discounts(3, "letor").round(4).tolist()
    ([1.0, 0.6309, 0.5], [1.0, 1.0, 0.6309])
    """
    check_choice(discount, "discount", tuple(_DISCOUNTS))
    if length < 0:
        raise ValueError(f"length must be at least 0, got {length}")
    table = _DISCOUNTS[discount]
    if table.size < length:
        size = max(length, 2 * table.size, 1024)
        shift = 2.0 if discount == "log2" else 1.0
        table = np.array([1.0 / math.log2(max(p + shift, 2.0)) for p in range(size)])
        _DISCOUNTS[discount] = table
    return table[:length]


def dcg_of_ranking(ranked_gains: np.ndarray, positions: np.ndarray, query_index: np.ndarray,
                   n_queries: int, k: int | None, discount: str = "log2") -> np.ndarray:
    """DCG@k per query from gains already in ranked order (the shared DCG kernel).

    ``ranked_gains[i]`` is the gain of the document at 0-based ``positions[i]`` of query
    ``query_index[i]``; ``k`` is a cut-off (int) or None. Summation runs in rank order within each
    query, as LightGBM sums its max DCG.
    """
    longest = int(positions.max()) + 1
    keep = positions < (longest if k is None else k)
    w = ranked_gains[keep] * discounts(longest, discount)[positions[keep]]
    return np.bincount(query_index[keep], weights=w, minlength=n_queries)
















def _average_discount(s_sorted, pos, group, k, discount):
    """Discount at cut-off k of each document in ranked order, shared within tie blocks.

    Every block of equal scores gets the mean of its positions' discounts (0 beyond k).
    """
    disc = np.where(pos < inputs.cutoff(k, group), discounts(int(group.max()), discount)[pos], 0.0)
    new_block = np.ones(pos.size, dtype=bool)
    new_block[1:] = (s_sorted[1:] != s_sorted[:-1]) | (pos[1:] == 0)
    block = np.cumsum(new_block) - 1
    mean = np.bincount(block, weights=disc) / np.bincount(block)
    return mean[block]




def _dcg(y, s, g, off, k, conv):
    """DCG@k of validated inputs under a resolved convention."""
    if inputs.selects_top_k(s, k, conv.ties):
        kernels = inputs.kernels()
        return kernels.dcg_of_top(kernels.top_k_by_score(s, off, k),
                                  *_gain_lookup(y, conv.label_gain), discounts(k, conv.discount))
    gain_of_document = gains(y, conv.label_gain)
    order = inputs.ranked_order(y, s, off, conv.ties)
    pos = positions_in_query(g)
    qid = query_of_document(g)
    if conv.ties != "average" or s is None:
        return dcg_of_ranking(gain_of_document[order], pos, qid, g.size, k, conv.discount)
    disc = _average_discount(s[order], pos, g, k, conv.discount)
    return np.bincount(qid, weights=gain_of_document[order] * disc, minlength=g.size)


def _ideal_dcg(y, g, off, k, conv):
    """IDCG@k of validated labels under a resolved convention."""
    kernels = inputs.kernels()
    if k is not None and k <= inputs.TOP_K_LIMIT:
        return kernels.dcg_of_top(kernels.top_k_by_label(y, off, k),
                                  *_gain_lookup(y, conv.label_gain), discounts(k, conv.discount))
    gain_of_document = gains(y, conv.label_gain)
    order = kernels.rank_by_label(y, off)
    qid = query_of_document(g)
    return dcg_of_ranking(gain_of_document[order], positions_in_query(g), qid, g.size, k,
                          conv.discount)


def dcg(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike, k: int | None = 10, *,
        convention: ConventionLike | None = None, ties: str | None = None,
        label_gain: str | ArrayLike | None = None, discount: str | None = None) -> np.ndarray:
    """Discounted cumulative gain at k of every query.

    ``DCG@k = sum_{r <= min(k, n_q)} gain(l_(r)) * discount(r)``, documents ordered by score
    descending; by default gain ``2**l - 1`` and discount ``1 / log2(r + 1)`` (Järvelin &
    Kekäläinen 2002; gain as Burges et al. 2005).

    Parameters
    ----------
    labels, scores : array-like, shape (n_documents,)
        Integer relevance labels (>= 0) and model scores, queries contiguous; ``scores=None``
        when the documents are already in rank order.
    group : array-like of int, shape (n_queries,)
        Query sizes, LightGBM's convention.
    k : int or None
        Cut-off; None for the whole list.
    convention : str, optional
        A tool's conventions by name (:mod:`lgb_risk.conventions`).
    ties, label_gain, discount
        See the module docstring; each overrides the convention's choice.

    Returns
    -------
    ndarray, shape (n_queries,)

    >>> dcg([1, 0, 2], [0.3, 0.2, 0.1], [3], k=3).tolist()
    [2.5]
    """
    conv = resolve(convention, ties=ties, label_gain=label_gain, discount=discount)
    return _dcg(*inputs.validated(labels, scores, group, k, conv), conv)


def ideal_dcg(labels: ArrayLike, group: ArrayLike, k: int | None = 10, *,
              convention: ConventionLike | None = None, label_gain: str | ArrayLike | None = None,
              discount: str | None = None) -> np.ndarray:
    """DCG@k of the ideal ranking (labels sorted descending) of every query: IDCG@k.

    >>> ideal_dcg([0, 1, 2], [3], k=3).round(4).tolist()  # 3 / log2(2) + 1 / log2(3)
    [3.6309]
    """
    conv = resolve(convention, label_gain=label_gain, discount=discount)
    y = check_labels(labels)
    g = check_group(group, y.size)
    return _ideal_dcg(y, g, offsets_from_group(g), check_k(k), conv)


def ndcg(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike, k: int | None = 10, *,
         convention: ConventionLike | None = None, ties: str | None = None,
         empty: str | None = None, short: str | None = None,
         label_gain: str | ArrayLike | None = None, discount: str | None = None,
         ideal: ArrayLike | None = None) -> np.ndarray:
    """Normalised DCG at k of every query: ``DCG@k / IDCG@k``.

    Parameters
    ----------
    labels, scores, group, k, convention, ties, label_gain, discount
        As :func:`dcg`.
    empty : {"zero", "one", "skip"}
        Value where IDCG@k = 0 (no relevant document); ``"skip"`` gives NaN. Default "zero".
    short : {"available", "zero"}
        ``"zero"`` scores queries with fewer than k documents 0 (LETOR 4.0 tool). Default
        "available".
    ideal : array-like, shape (n_queries,), optional
        IDCG@k per query computed elsewhere, e.g. from a TREC qrels file that judges documents
        the ranking does not contain. Default: :func:`ideal_dcg` of ``labels``.

    Returns
    -------
    ndarray, shape (n_queries,)

    >>> ndcg([0, 1, 2], [0.3, 0.2, 0.1], [3], k=2, convention="lightgbm").round(4).tolist()
    [0.1738]
    """
    conv = resolve(convention, ties=ties, empty=empty, short=short, label_gain=label_gain,
                   discount=discount)
    y, s, g, off, k = inputs.validated(labels, scores, group, k, conv)
    if ideal is None and k is not None and inputs.selects_top_k(s, k, conv.ties):  # in one pass
        num, den = inputs.kernels().dcg_and_ideal_at_k(
            s, y, off, k, *_gain_lookup(y, conv.label_gain), discounts(k, conv.discount))
    elif ideal is None:
        num, den = _dcg(y, s, g, off, k, conv), _ideal_dcg(y, g, off, k, conv)
    else:
        num = _dcg(y, s, g, off, k, conv)
        den = np.asarray(ideal, dtype=np.float64)
        if den.shape != num.shape or np.any(~np.isfinite(den)) or np.any(den < 0):
            raise ValueError(
                f"ideal must hold one finite, non-negative IDCG per query ({num.size}), "
                f"got shape {den.shape}"
            )
    out = inputs.per_query_ratio(num, den, conv.empty)
    if conv.short == "zero" and k is not None:
        out[g < k] = 0.0
    return out


def stopping_probabilities(n_grades: int, max_label: int) -> np.ndarray:
    """ERR's stopping probability R(l) = (2**l - 1) / 2**max_label of grades l = 0 .. n_grades-1
    (exact: powers of two).

    >>> stopping_probabilities(3, 2).tolist()
    [0.0, 0.25, 0.75]
    """
    return (np.ldexp(1.0, np.arange(n_grades)) - 1.0) / np.ldexp(1.0, max_label)


def err(labels: ArrayLike, scores: ArrayLike | None, group: ArrayLike, k: int | None = 10, *,
        convention: ConventionLike | None = None, ties: str | None = None,
        max_label: int | None = 4) -> np.ndarray:
    """Expected reciprocal rank at k of every query (Chapelle et al. 2009; [AE] Eq. 2).

    ``ERR@k = sum_{r <= k} (1/r) R_r prod_{i < r} (1 - R_i)`` with
    ``R(l) = (2**l - 1) / 2**max_label``. Labels above ``max_label`` are an error.
    ``ties="average"`` is not defined for ERR.

    >>> err([2, 0], [0.9, 0.1], [2], k=2, max_label=2).tolist()
    [0.75]
    """
    conv = resolve(convention, ties=ties)
    if conv.ties == "average":
        raise ValueError("ties='average' is defined for DCG and NDCG only; use 'stable', "
                         "'pessimistic' or 'optimistic' for ERR")
    y, s, g, off, k = inputs.validated(labels, scores, group, k, conv)
    if not isinstance(max_label, (int, np.integer)) or max_label < 1:
        raise ValueError(f"max_label must be a whole number >= 1, got {max_label!r}")
    over = np.flatnonzero(y > max_label)
    if over.size:
        raise ValueError(f"label {int(y[over[0]])} at position {int(over[0])} exceeds "
                         f"max_label={max_label}; pass the collection's highest grade")
    width = inputs.cutoff(k, g)
    # Dense (n_queries, width) matrix of stopping probabilities; absent positions stop with 0.
    stop_of_document = stopping_probabilities(max_label + 1, max_label)[y]
    if inputs.selects_top_k(s, k, conv.ties):
        top = inputs.kernels().top_k_by_score(s, off, k)[:, :width]
        stop = np.where(top >= 0, stop_of_document[top], 0.0)
    else:
        order = inputs.ranked_order(y, s, off, conv.ties)
        pos = positions_in_query(g)
        keep = pos < width
        stop = np.zeros((g.size, width))
        stop[query_of_document(g)[keep], pos[keep]] = stop_of_document[order][keep]
    reach = np.ones_like(stop)
    np.cumprod(1.0 - stop[:, :-1], axis=1, out=reach[:, 1:])
    return (stop * reach / np.arange(1, width + 1)).sum(axis=1)






























def expected_dcg(labels: ArrayLike, group: ArrayLike, k: int | None = 10, *,
                 convention: ConventionLike | None = None,
                 label_gain: str | ArrayLike | None = None,
                 discount: str | None = None) -> np.ndarray:
    """E[DCG@k] under a uniformly random permutation of each query ([UE] Eq. 7).

    ``E[DCG@k] = mean(gain) * sum_{r <= min(k, n_q)} discount(r)``.

    >>> expected_dcg([1, 0, 2], [3], k=3).round(4).tolist()
    [2.8412]
    """
    conv = resolve(convention, label_gain=label_gain, discount=discount)
    y = check_labels(labels)
    g = check_group(group, y.size)
    k = check_k(k)
    qid = query_of_document(g)
    mean_gain = np.bincount(qid, weights=gains(y, conv.label_gain), minlength=g.size) / g
    cum_disc = np.cumsum(discounts(int(g.max()), conv.discount))
    depth = g if k is None else np.minimum(g, k)
    return mean_gain * cum_disc[depth - 1]




def ue_normalise(value: ArrayLike, ideal: ArrayLike, expected: ArrayLike,
                 version: str = "v2") -> np.ndarray:
    """Upper/expected (UE) normalisation of a metric ([UE] Eqs. 5-6).

    With A the metric, IUB its ideal value and REB its expectation under a random permutation:
    ``V1 = (A / IUB) * A / (A + REB)``;
    ``V2 = (A - REB) / (IUB - REB)`` if ``A >= REB`` else ``(A - REB) / REB``.
    Wherever a denominator is 0 the result is 0.

    >>> ue_normalise([0.6], [1.0], [0.4]).round(4).tolist()  # V2: (0.6 - 0.4) / (1 - 0.4)
    [0.3333]
    >>> ue_normalise([0.6], [1.0], [0.4], "v1").round(4).tolist()  # (0.6 / 1) * 0.6 / (0.6 + 0.4)
    [0.36]
    """
    check_choice(version, "version", ("v1", "v2"))
    a, iub, reb = (np.asarray(v, dtype=np.float64) for v in (value, ideal, expected))
    if not (a.shape == iub.shape == reb.shape):
        raise ValueError(f"value, ideal and expected must have one shape, got "
                         f"{a.shape}, {iub.shape}, {reb.shape}")
    for name, v in (("value", a), ("ideal", iub), ("expected", reb)):
        bad = np.flatnonzero(~np.isfinite(v))
        if bad.size:
            raise ValueError(f"{name} holds a non-finite entry at index {int(bad[0])}")

    def ratio(num, den):
        return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)

    if version == "v1":
        return ratio(a, iub) * ratio(a, a + reb)
    return np.where(a >= reb, ratio(a - reb, iub - reb), ratio(a - reb, reb))
