"""Per-query orderings of flat arrays: the one place where documents are sorted within queries.

Queries are contiguous segments of the flat arrays, delimited by ``offsets``
(:mod:`lgb_risk._measuring.segments`). The sort runs per segment in a numba kernel, parallel over
queries (the objectives' re-sort on threads of its own, :mod:`lgb_risk._runtime.kernel_calls`; the
others in numba's parallel loop); it is much faster than ``np.lexsort`` over (query, score) on
MSLR-shaped data because each query's sort is small (BENCHMARKS.md). Importing this module loads
numba; :mod:`lgb_risk.metrics` imports it only when it has an order to compute, so that evaluating
lists already in rank order (TREC runs) starts without it.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from lgb_risk._runtime.kernel_calls import over_queries


def order_array(size: int) -> np.ndarray:
    """An empty flat order of ``size`` documents: int32 (4 bytes a document) below 2**31
    documents, int64 from there."""
    return np.empty(size, np.int32 if size < 2 ** 31 else np.int64)


def document_order(offsets: np.ndarray) -> np.ndarray:
    """Every query's documents in their input order (:func:`order_array`), the start from
    which :func:`rerank_by_score` ranks them."""
    size = int(offsets[-1])
    order = order_array(size)
    order[:] = np.arange(size, dtype=order.dtype)
    return order


def argsort_segments(primary, secondary, use_secondary, offsets) -> np.ndarray:
    """Stable ascending sort of each segment by ``primary``, then ``secondary`` if asked.

    Returns flat indices (:func:`order_array`): ``out[offsets[q] + p]`` is the document at
    position p of query q.
    """
    out = order_array(primary.size)
    _argsort_segments(primary, secondary, use_secondary, offsets, out)
    return out


#: Positions sorted by insertion before :func:`_stable_argsort` merges them.
_RUN = 16


@nb.njit(cache=True, inline="always")
def _after(x, y, primary, secondary, use_secondary):
    """Whether position x sorts strictly after position y by (primary, then secondary if
    asked), ascending."""
    if primary[x] != primary[y]:
        return primary[x] > primary[y]
    return use_secondary and secondary[x] > secondary[y]


@nb.njit(cache=True)
def _stable_argsort(primary, secondary, use_secondary):
    """The positions of ``primary`` in stable ascending order (equal keys in position order),
    ordered by ``secondary`` among equal ``primary`` if asked: ``np.argsort(primary,
    kind="stable")`` for finite keys, the only kind the callers pass.

    A bottom-up merge sort over runs of :data:`_RUN` positions sorted by insertion. Written here
    rather than calling numba's ``np.argsort``, which compiles slower with an empty cache.
    """
    n = primary.size
    order = np.empty(n, np.int64)
    for i in range(n):  # numpy's arange compiled here would lengthen the first compilation
        order[i] = i
    for start in range(0, n, _RUN):
        for i in range(start + 1, min(start + _RUN, n)):
            moving = order[i]
            j = i - 1
            while j >= start and _after(order[j], moving, primary, secondary, use_secondary):
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = moving
    merged = np.empty(n, np.int64)
    width = _RUN
    while width < n:
        for low in range(0, n, 2 * width):
            middle = min(low + width, n)
            high = min(low + 2 * width, n)
            i, j = low, middle
            for out in range(low, high):  # the left run's element first unless strictly after
                if j < high and (i >= middle or _after(order[i], order[j], primary, secondary,
                                                       use_secondary)):
                    merged[out] = order[j]
                    j += 1
                else:
                    merged[out] = order[i]
                    i += 1
        order, merged = merged, order
        width *= 2
    return order


@nb.njit(parallel=True, cache=True)
def _argsort_segments(primary, secondary, use_secondary, offsets, out):
    """:func:`argsort_segments` into ``out``."""
    for q in nb.prange(offsets.size - 1):
        a = offsets[q]
        b = offsets[q + 1]
        order = _stable_argsort(primary[a:b], secondary[a:b], use_secondary)
        for i in range(b - a):
            out[a + i] = a + order[i]


@nb.njit(cache=True, nogil=True)
def _rerank_segments(scores, order, offsets, first, last):
    """Put segments ``first`` to ``last - 1`` of ``order`` (each any permutation of the
    segment's indices, e.g. the last iteration's ranking) in place into the stable descending
    order by ``scores`` (ties by index), by insertion sort, which costs the number of documents
    out of place; a segment whose insertion sort would move more than 2 n log2 n documents is
    merge-sorted instead. The result is the one stable order, whatever ``order`` held. Without
    the GIL: threads re-sort disjoint ranges of segments at once."""
    for q in range(first, last):
        a = offsets[q]
        b = offsets[q + 1]
        n = b - a
        budget = 2 * n * max(1, int(math.log2(max(n, 2))))
        moves = 0
        for i in range(a + 1, b):
            d = order[i]
            score = scores[d]
            j = i - 1
            while j >= a and (scores[order[j]] < score
                              or (scores[order[j]] == score and order[j] > d)):
                order[j + 1] = order[j]
                j -= 1
                moves += 1
            order[j + 1] = d
            if moves > budget:
                break
        if moves > budget:
            descending = -scores[a:b]
            ranked = _stable_argsort(descending, descending, False)
            for i in range(n):
                order[a + i] = a + ranked[i]


def rerank_by_score(scores: np.ndarray, order: np.ndarray, offsets: np.ndarray) -> None:
    """:func:`rank_by_score` (stable ties) computed in place in ``order``, a per-query
    permutation such as the last call's ranking or :func:`document_order`: the same order,
    found faster where few documents moved (training's later iterations, or the first when
    every score is the initial one), with no new array. The objectives sort with this one
    function only, which spares loading (and with an empty cache compiling) a second."""
    over_queries(_rerank_segments, offsets, scores, order, offsets)


def rank_by_score(scores: np.ndarray, labels: np.ndarray, offsets: np.ndarray,
                  ties: str = "stable") -> np.ndarray:
    """Flat permutation that orders every query by score descending.

    ``ties``: ``"stable"`` keeps input order among equal scores (as LightGBM does);
    ``"pessimistic"`` puts lower labels first; ``"optimistic"`` higher labels first;
    ``"average"`` orders like ``"stable"`` (the caller averages over tie blocks).
    """
    neg = -scores
    if ties == "pessimistic":
        return argsort_segments(neg, labels.astype(np.float64), True, offsets)
    if ties == "optimistic":
        return argsort_segments(neg, -labels.astype(np.float64), True, offsets)
    return argsort_segments(neg, neg, False, offsets)


def rank_by_label(labels: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Flat permutation that orders every query by label descending (the ideal ranking)."""
    neg = -labels.astype(np.float64)
    return argsort_segments(neg, neg, False, offsets)



@nb.njit(cache=True, inline="always")
def _select_top_k(keys, a, b, top):
    """Fill ``top`` (k slots, -1 filled) with the flat indices of the k largest keys of the
    segment [a, b), largest first, equal keys in input order (as a stable sort by descending
    key); slots beyond a shorter segment stay -1. O(n k) worst case, about O(n) when few keys
    displace the current k."""
    size = min(top.size, b - a)
    count = 0
    for i in range(a, b):
        key = keys[i]
        if count < size:
            j = count
            count += 1
        elif key > keys[top[size - 1]]:
            j = size - 1
        else:
            continue
        while j > 0 and keys[top[j - 1]] < key:
            top[j] = top[j - 1]
            j -= 1
        top[j] = i


@nb.njit(parallel=True, cache=True)
def _top_k_segments(keys, offsets, out):
    """Per segment, :func:`_select_top_k` of its keys into its row of ``out`` (n_segments, k;
    -1 filled by the caller: numpy's ``full`` compiled here would lengthen the compilation)."""
    for q in nb.prange(offsets.size - 1):
        _select_top_k(keys, offsets[q], offsets[q + 1], out[q])


def top_k_by_score(scores: np.ndarray, offsets: np.ndarray, k: int) -> np.ndarray:
    """(n_queries, k) flat indices of each query's k best-scored documents, best first, equal
    scores in input order (the first k of ``rank_by_score(..., ties="stable")``); -1 pads."""
    out = np.full((offsets.size - 1, k), -1, np.int64)
    _top_k_segments(scores, offsets, out)
    return out


def top_k_by_label(labels: np.ndarray, offsets: np.ndarray, k: int) -> np.ndarray:
    """(n_queries, k) flat indices of each query's k highest labels (the ideal ranking's top)."""
    return top_k_by_score(labels, offsets, k)


@nb.njit(cache=True, inline="always")
def _dcg_of_selected(top, gain_index, gain_table, discounts):
    """DCG of selected documents in rank order (``top``, -1 padded), document d's gain being
    ``gain_table[gain_index[d]]`` (its label's gain, or its own where ``gain_index`` counts the
    documents); summed in rank order as :func:`lgb_risk.metrics.dcg_of_ranking` sums."""
    total = 0.0
    for p in range(top.size):
        d = top[p]
        if d < 0:
            break
        total += gain_table[gain_index[d]] * discounts[p]
    return total


@nb.njit(cache=True)
def _dcg_at_k_of_order(order, offsets, labels, gain_table, discounts, k, out):
    for q in range(offsets.size - 1):
        a = offsets[q]
        first = order[a:min(a + k, offsets[q + 1])]
        out[q] = _dcg_of_selected(first, labels, gain_table, discounts)


def dcg_at_k_of_order(order, offsets, labels, gain_table, discounts, k):
    """DCG@k of each query ranked by ``order`` (flat, as :func:`rank_by_score` returns); only
    each query's first k documents are read (serial: a query's k values are little work, and a
    parallel loop lengthens the compilation). The arrays this and :func:`dcg_of_top` return are
    made here, outside the compiled loops: numpy's ``zeros`` compiled there would lengthen the
    first compilation (BENCHMARKS.md)."""
    out = np.zeros(offsets.size - 1)
    _dcg_at_k_of_order(order, offsets, labels, gain_table, discounts, k, out)
    return out


@nb.njit(cache=True)
def _dcg_of_top(top, gain_index, gain_table, discounts, out):
    for q in range(top.shape[0]):
        out[q] = _dcg_of_selected(top[q], gain_index, gain_table, discounts)


def dcg_of_top(top, gain_index, gain_table, discounts):
    """DCG of each query's selected top documents (rows of ``top``, -1 padded); serial, as
    :func:`dcg_at_k_of_order`."""
    out = np.zeros(top.shape[0])
    _dcg_of_top(top, gain_index, gain_table, discounts, out)
    return out


@nb.njit(parallel=True, cache=True)
def dcg_and_ideal_at_k(scores, labels, offsets, k, gain_index, gain_table, discounts):
    """Per query, DCG@k of the ranking by score (stable ties) and IDCG@k, in one pass over the
    documents: the values of :func:`dcg_of_top` on :func:`top_k_by_score` and on
    :func:`top_k_by_label`, without their (n_queries, k) arrays."""
    n_queries = offsets.size - 1
    dcg = np.zeros(n_queries)
    ideal = np.zeros(n_queries)
    for q in nb.prange(n_queries):
        top = np.full(k, -1, np.int64)
        _select_top_k(scores, offsets[q], offsets[q + 1], top)
        dcg[q] = _dcg_of_selected(top, gain_index, gain_table, discounts)
        top[:] = -1
        _select_top_k(labels, offsets[q], offsets[q + 1], top)
        ideal[q] = _dcg_of_selected(top, gain_index, gain_table, discounts)
    return dcg, ideal
