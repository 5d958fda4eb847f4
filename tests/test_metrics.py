"""Per-query measures against naive loops, permutation enumeration and Monte Carlo estimates."""

import itertools
import math

import numpy as np
import pytest

from lgb_risk import metrics
from tests import naive
from tests.conftest import random_problem, split_queries

SEEDS = range(6)
KS = [1, 3, 10, None]
TIES = ["stable", "pessimistic", "optimistic"]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("ties", TIES)
def test_ndcg_dcg_match_naive(seed, k, ties):
    rng = np.random.default_rng(seed)
    labels, scores, group = random_problem(rng, tie_levels=3 if seed % 2 else None)
    got_ndcg = metrics.ndcg(labels, scores, group, k, ties=ties)
    got_dcg = metrics.dcg(labels, scores, group, k, ties=ties)
    for q, (y, s) in enumerate(split_queries(labels, scores, group)):
        assert got_dcg[q] == pytest.approx(naive.dcg(naive.ranked_labels(y, s, ties), k), abs=1e-12)
        assert got_ndcg[q] == pytest.approx(naive.ndcg(y, s, k, ties), abs=1e-12)


@pytest.mark.parametrize("empty", ["zero", "one", "skip"])
@pytest.mark.parametrize("short", ["available", "zero"])
def test_ndcg_conventions_match_naive(empty, short):
    rng = np.random.default_rng(11)
    labels, scores, group = random_problem(rng, max_docs=15)
    label_gain = [0.0, 1.0, 3.0, 7.0, 20.0]
    got = metrics.ndcg(labels, scores, group, 10, empty=empty, short=short, label_gain=label_gain)
    for q, (y, s) in enumerate(split_queries(labels, scores, group)):
        want = naive.ndcg(y, s, 10, empty=empty, short=short, label_gain=label_gain)
        if math.isnan(want):
            assert math.isnan(got[q])
        else:
            assert got[q] == pytest.approx(want, abs=1e-12)
    if empty == "skip":
        assert np.isnan(got).any()  # the problem has all-zero queries


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("ties", TIES)
def test_err_ap_sp_match_naive(seed, k, ties):
    rng = np.random.default_rng(100 + seed)
    labels, scores, group = random_problem(rng, tie_levels=3 if seed % 2 else None)
    got_err = metrics.err(labels, scores, group, k, ties=ties, max_label=4)
    got_ap = metrics.average_precision(labels, scores, group, k, ties=ties)
    got_sp = metrics.sum_precision(labels, scores, group, k, ties=ties)
    for q, (y, s) in enumerate(split_queries(labels, scores, group)):
        assert got_err[q] == pytest.approx(naive.err(y, s, k, 4, ties), abs=1e-12)
        assert got_ap[q] == pytest.approx(naive.average_precision(y, s, k, ties), abs=1e-12)
        assert got_sp[q] == pytest.approx(naive.sum_precision(y, s, k, ties), abs=1e-12)


def test_ap_empty_convention_and_given_relevant_count():
    labels = np.array([0, 0, 1, 0, 0])
    scores = np.array([3.0, 2.0, 1.0, 5.0, 4.0])
    group = [3, 2]
    got = metrics.average_precision(labels, scores, group, None, empty="one")
    assert got.tolist() == [1 / 3, 1.0]
    # Two more relevant documents exist in the qrels than in the ranking: AP divides by 3.
    got = metrics.average_precision(labels, scores, group, None, n_relevant=[3, 0])
    assert got.tolist() == [pytest.approx(1 / 9), 0.0]


def _tie_consistent_orders(labels, scores):
    """Every order of the documents that sorts them by score descending (ties in any order)."""
    for perm in itertools.permutations(range(len(labels))):
        if all(scores[perm[i]] >= scores[perm[i + 1]] for i in range(len(perm) - 1)):
            yield [int(labels[i]) for i in perm]


@pytest.mark.parametrize("k", [1, 2, 4, None])
def test_average_ties_is_expectation_over_tie_orders(k):
    rng = np.random.default_rng(7)
    labels, scores, group = random_problem(rng, n_queries=40, max_docs=6, tie_levels=2)
    got_dcg = metrics.dcg(labels, scores, group, k, ties="average")
    got_ndcg = metrics.ndcg(labels, scores, group, k, ties="average")
    for q, (y, s) in enumerate(split_queries(labels, scores, group)):
        values = [naive.dcg(order, k) for order in _tie_consistent_orders(y, s)]
        assert got_dcg[q] == pytest.approx(np.mean(values), abs=1e-12)
        ideal = naive.dcg(sorted(y.tolist(), reverse=True), k)
        assert got_ndcg[q] == pytest.approx(np.mean(values) / ideal if ideal else 0.0, abs=1e-12)


def test_single_document_and_k1_edge_cases():
    labels = np.array([2, 0, 3, 1])
    scores = np.array([0.5, 1.0, 0.2, 0.1])
    group = [1, 1, 2]
    assert metrics.ndcg(labels, scores, group, 1).tolist() == [1.0, 0.0, 1.0]
    assert metrics.dcg(labels, scores, group, 1).tolist() == [3.0, 0.0, 7.0]
    assert metrics.err(labels, scores, group, 1, max_label=3).tolist() == [3 / 8, 0.0, 7 / 8]


def _monte_carlo(fn, labels, rng, draws=40000):
    values = np.array([fn(rng.permutation(labels)) for _ in range(draws)])
    return values.mean(), values.std(ddof=1) / np.sqrt(draws)


@pytest.mark.parametrize("k", [1, 5, 20])
def test_expected_dcg_against_monte_carlo(k):
    rng = np.random.default_rng(3)
    labels = np.array([0, 0, 1, 0, 2, 0, 0, 4, 1, 0, 0, 3])
    got = metrics.expected_dcg(labels, [labels.size], k)[0]
    mean, se = _monte_carlo(lambda ranked: naive.dcg(ranked.tolist(), k), labels, rng)
    assert abs(got - mean) < 4 * se


@pytest.mark.parametrize("k", [1, 4, 20])
def test_expected_sum_precision_against_monte_carlo_and_enumeration(k):
    rng = np.random.default_rng(4)
    labels = np.array([0, 1, 0, 0, 1, 0, 2, 0, 0, 0, 1])
    got = metrics.expected_sum_precision(labels, [labels.size], k)[0]
    sp = lambda ranked: naive.sum_precision(ranked, -np.arange(ranked.size), k)  # noqa: E731
    mean, se = _monte_carlo(sp, labels, rng)
    assert abs(got - mean) < 4 * se
    small = np.array([1, 0, 2, 0, 0])
    exhaustive = np.mean([sp(np.array(p)) for p in itertools.permutations(small)])
    assert metrics.expected_sum_precision(small, [5], k)[0] == pytest.approx(exhaustive, abs=1e-12)


def test_expected_values_vectorised_over_queries():
    rng = np.random.default_rng(5)
    labels, _, group = random_problem(rng)
    dcg_all = metrics.expected_dcg(labels, group, 10)
    sp_all = metrics.expected_sum_precision(labels, group, 10)
    sp_approx = metrics.expected_sum_precision(labels, group, 10, exact=False)
    for q, (y, _) in enumerate(split_queries(labels, labels, group)):
        assert dcg_all[q] == pytest.approx(metrics.expected_dcg(y, [y.size], 10)[0], abs=1e-12)
        assert sp_all[q] == pytest.approx(metrics.expected_sum_precision(y, [y.size], 10)[0])
        r, n = np.sum(y > 0), y.size
        assert sp_approx[q] == pytest.approx(min(10, n) * (r / n) ** 2)


def test_ue_normalisation_formulas():
    a = np.array([0.5, 0.2, 0.0, 0.3])
    iub = np.array([1.0, 0.8, 0.0, 0.3])
    reb = np.array([0.25, 0.4, 0.0, 0.3])
    v1 = metrics.ue_normalise(a, iub, reb, "v1")
    v2 = metrics.ue_normalise(a, iub, reb, "v2")
    assert v1.tolist() == pytest.approx([0.5 * 0.5 / 0.75, 0.25 * 0.2 / 0.6, 0.0, 1.0 * 0.5])
    assert v2.tolist() == pytest.approx([0.25 / 0.75, -0.2 / 0.4, 0.0, 0.0])


@pytest.mark.parametrize("call, message", [
    (lambda: metrics.ndcg([1, 0, 1], [0.1, 0.2], [3]), "scores has 2 values"),
    (lambda: metrics.ndcg([1, 0, 1], [0.1, 0.2, 0.3], [2]), "group sizes add up to 2"),
    (lambda: metrics.ndcg([1, -1, 1], [0.1, 0.2, 0.3], [3]), "position 1 holds -1"),
    (lambda: metrics.ndcg([1, 0.5, 1], [0.1, 0.2, 0.3], [3]), "whole numbers; position 1"),
    (lambda: metrics.ndcg([1, 0, 1], [0.1, np.nan, 0.3], [3]), "finite; position 1"),
    (lambda: metrics.err([1, 0, 1], [0.1, np.inf, 0.3], [3]), "finite; position 1"),
    (lambda: metrics.ndcg([1, 0, 1], [0.1, 0.2, 0.3], [3], k=0), "k must be >= 1"),
    (lambda: metrics.ndcg([1, 0, 1], [0.1, 0.2, 0.3], [3, 0]), "query index 1"),
    (lambda: metrics.ndcg([1, 0, 1], [0.1, 0.2, 0.3], [3], ties="random"), "ties must be"),
    (lambda: metrics.err([5, 0], [0.1, 0.2], [2], max_label=4), "exceeds max_label=4"),
    (lambda: metrics.ndcg([3, 0], [0.1, 0.2], [2], label_gain=[0, 1]), "no entry in label_gain"),
    (lambda: metrics.ndcg([0, 1, 2, 0], [0.1, 0.2, 0.3, 0.4], [4], label_gain=[0, 1]),
     "label 2 at position 2 has no entry"),
])
def test_bad_input_is_a_specific_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("label_gain", ["linear", "a table"])
def test_labels_beyond_the_gain_table_limit_keep_their_gains(label_gain):
    """Labels past the top-k kernels' gain table (one entry per label value, up to 65,536) are
    scored with each document's own gain: NDCG and DCG as the naive loop has them."""
    labels = np.array([70_000, 0, 3, 1, 5, 2, 0, 100_000])
    scores = np.array([0.1, 0.9, 0.5, 0.3, 0.2, 0.8, 0.4, 0.7])
    group = [5, 3]
    table = np.sqrt(np.arange(100_001.0))
    if label_gain == "linear":
        table = np.arange(100_001.0)
    else:
        label_gain = table
    got = metrics.ndcg(labels, scores, group, 3, label_gain=label_gain)
    got_dcg = metrics.dcg(labels, scores, group, 3, label_gain=label_gain)
    for q, (y, s) in enumerate(split_queries(labels, scores, group)):
        assert got[q] == pytest.approx(naive.ndcg(y, s, 3, label_gain=table), rel=1e-12)
        want_dcg = naive.dcg(naive.ranked_labels(y, s, "stable"), 3, table)
        assert got_dcg[q] == pytest.approx(want_dcg, rel=1e-12)


@pytest.mark.parametrize("k", [1, 4, 30])
def test_top_k_selection_is_the_head_of_a_stable_sort(k):
    """The per-query top-k selection (used for small cut-offs) against numpy's stable argsort,
    with many ties and queries shorter than k."""
    from lgb_risk._measuring.ranking import top_k_by_label, top_k_by_score
    from lgb_risk._measuring.segments import offsets_from_group

    rng = np.random.default_rng(k)
    group = rng.integers(1, 60, 300)
    labels = rng.integers(0, 4, group.sum())
    scores = rng.integers(0, 5, group.sum()).astype(float)
    offsets = offsets_from_group(group)
    by_score, by_label = top_k_by_score(scores, offsets, k), top_k_by_label(labels, offsets, k)
    for q, (a, b) in enumerate(zip(offsets[:-1], offsets[1:])):
        head = a + np.argsort(-scores[a:b], kind="stable")[:k]
        assert by_score[q, :head.size].tolist() == head.tolist()
        assert np.all(by_score[q, head.size:] == -1)
        ideal = np.sort(labels[a:b])[::-1][:k]
        assert labels[by_label[q, :ideal.size]].tolist() == ideal.tolist()


@pytest.mark.parametrize("discount, shift", [("log2", 2.0), ("letor", 1.0)])
def test_discount_table_grown_on_demand_is_the_formula(monkeypatch, discount, shift):
    """The cached discount table, started small and grown as longer lists come, holds
    1 / log2(p + shift) (1 where that exceeds 1) for every 0-based position p, computed with
    the C library's log2 as LightGBM computes it."""
    monkeypatch.setitem(metrics._DISCOUNTS, discount, np.empty(0))
    for length in (3, 1024, 1025, 2049, 5000):
        table = metrics.discounts(length, discount)
        expected = [1.0 / math.log2(max(p + shift, 2.0)) for p in range(length)]
        assert table.size == length and table.tolist() == expected


def test_discounts_refuse_an_unknown_discount_and_a_negative_length():
    with pytest.raises(ValueError, match=r"discount must be one of \['letor', 'log2'\], got 'ln'"):
        metrics.discounts(3, "ln")
    with pytest.raises(ValueError, match="length must be at least 0, got -1"):
        metrics.discounts(-1)
