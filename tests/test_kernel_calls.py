"""Queries shared out among threads: every query computed once, by one thread, the results those
of one thread."""

import threading

import numba
import numpy as np
import pytest

from lgb_risk._measuring.ranking import document_order, rerank_by_score
from lgb_risk._measuring.segments import offsets_from_group
from lgb_risk._runtime import kernel_calls


@pytest.mark.parametrize("seed", range(5))
def test_ranges_cover_every_query_once_and_share_the_documents(seed):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 50, rng.integers(1, 300))
    offsets = offsets_from_group(group)
    n_ranges = int(rng.integers(1, 20))
    ranges = kernel_calls.query_ranges(offsets, n_ranges)
    assert 1 <= len(ranges) <= n_ranges
    assert [r[0] for r in ranges][0] == 0 and ranges[-1][1] == group.size
    assert all(a < b for a, b in ranges)
    assert all(ranges[i][1] == ranges[i + 1][0] for i in range(len(ranges) - 1))
    share = offsets[-1] / n_ranges
    for a, b in ranges:  # each about its share: at most one query's documents over it
        assert offsets[b] - offsets[a] <= share + group.max() + 1


def test_every_query_is_computed_once_on_several_threads(monkeypatch):
    monkeypatch.setattr(kernel_calls, "PARALLEL_FROM_DOCUMENTS", 0)
    monkeypatch.setattr(numba, "get_num_threads", lambda: 3)
    offsets = offsets_from_group(np.full(100, 7))
    visits = np.zeros(100, dtype=np.int64)
    lock = threading.Lock()

    def kernel(out, first, last):
        with lock:
            out[first:last] += 1

    kernel_calls.over_queries(kernel, offsets, visits)
    assert visits.tolist() == [1] * 100


def test_a_failure_in_any_thread_is_raised_once_every_thread_has_ended(monkeypatch):
    monkeypatch.setattr(kernel_calls, "PARALLEL_FROM_DOCUMENTS", 0)
    monkeypatch.setattr(numba, "get_num_threads", lambda: 2)
    offsets = offsets_from_group(np.full(40, 5))
    running_before = threading.active_count()

    def kernel(first, last):
        if first > 0:
            raise ArithmeticError(f"queries {first}-{last}")

    with pytest.raises(ArithmeticError, match="queries [1-9]"):
        kernel_calls.over_queries(kernel, offsets)
    assert threading.active_count() == running_before


def test_the_threaded_re_sort_is_the_stable_sort_of_each_query():
    """Above the size where threads start, against numpy's stable sort per query (ties by
    index), from the documents' own order and from a shuffled one."""
    rng = np.random.default_rng(7)
    group = rng.integers(1, 400, 400)
    offsets = offsets_from_group(group)
    assert offsets[-1] >= kernel_calls.PARALLEL_FROM_DOCUMENTS
    scores = np.round(rng.normal(size=offsets[-1]), 1)  # many ties
    want = np.concatenate([a + np.argsort(-scores[a:b], kind="stable")
                           for a, b in zip(offsets[:-1], offsets[1:])])
    order = document_order(offsets)
    rerank_by_score(scores, order, offsets)
    np.testing.assert_array_equal(order, want)
    shuffled = np.concatenate([a + rng.permutation(b - a)
                               for a, b in zip(offsets[:-1], offsets[1:])]).astype(order.dtype)
    rerank_by_score(scores, shuffled, offsets)
    np.testing.assert_array_equal(shuffled, want)
