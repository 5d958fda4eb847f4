"""Active evaluation ([AE]): moments against exact enumeration and Monte Carlo, the estimator's
bias and the predicted MSE ratio against simulation, and bad input."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from lgb_risk import metrics
from lgb_risk.active import (
    cross_moment,
    estimate,
    evaluate,
    measure_values,
    metric_moments,
    moments,
    predicted_mse_ratio,
    query_costs,
    relevance,
    sample_queries,
    sampling,
    sampling_distribution,
    simulate,
    uniform_relevance,
)
from tests import naive


def _measure(measure, labels, scores, k, max_label):
    """L of one query by the naive references, on the documents the ranking holds."""
    held = [i for i, s in enumerate(scores) if not math.isnan(s)]
    y = [labels[i] for i in held]
    s = [scores[i] for i in held]
    if measure == "dcg":
        return naive.dcg(naive.ranked_labels(y, s), k)
    return naive.err(y, s, k, max_label)


def _enumerate(P, scores1, scores2, measure, k, max_label):
    """E[L1], E[L1²], E[L1 L2] of one query by summing over every label vector."""
    n, n_grades = P.shape
    first = second = cross = 0.0
    for labels in itertools.product(range(n_grades), repeat=n):
        weight = math.prod(P[d, y] for d, y in enumerate(labels))
        a = _measure(measure, labels, scores1, k, max_label)
        b = _measure(measure, labels, scores2, k, max_label)
        first += weight * a
        second += weight * a * a
        cross += weight * a * b
    return first, second, cross


def _random_pool(rng, sizes, n_grades, ties=False):
    group = np.array(sizes)
    n = int(group.sum())
    P = rng.dirichlet(np.full(n_grades, 0.7), size=n)
    scores1 = rng.integers(0, 3, n).astype(float) if ties else rng.normal(size=n)
    scores2 = rng.normal(size=n)
    scores2[rng.random(n) < 0.3] = np.nan  # the second ranking lacks some documents
    return P, scores1, scores2, group


@pytest.mark.parametrize("measure", ["dcg", "err"])
@pytest.mark.parametrize("n_grades, sizes", [(3, [1, 4, 6, 7]), (5, [2, 5, 6])])
@pytest.mark.parametrize("k", [None, 3, 10])
def test_moments_equal_exact_enumeration(measure, n_grades, sizes, k):
    rng = np.random.default_rng(n_grades * 100 + (k or 0))
    P, scores1, scores2, group = _random_pool(rng, sizes, n_grades, ties=True)
    max_label = n_grades - 1 if measure == "err" else None
    options = {"measure": measure, "k": k, "max_label": max_label}
    first, second = metric_moments(P, scores1, group, **options)
    cross = cross_moment(P, scores1, scores2, group, **options)
    start = 0
    for q, size in enumerate(group):
        rows = slice(start, start + size)
        want = _enumerate(P[rows], scores1[rows].tolist(), scores2[rows].tolist(), measure, k,
                          n_grades - 1)
        start += size
        np.testing.assert_allclose([first[q], second[q], cross[q]], want, rtol=1e-12,
                                   atol=1e-14)


def _enumerated(P, scores1, scores2, group, value):
    """Per query, E[L1], E[L1²] and E[L1 L2] by summing over every label vector of the query,
    with ``value(labels, scores)`` the measure of one ranking written out by the test."""
    out, start = [], 0
    for size in group:
        rows = slice(start, start + size)
        start += size
        want = np.zeros(3)
        for labels in itertools.product(range(P.shape[1]), repeat=size):
            weight = math.prod(P[rows][d, y] for d, y in enumerate(labels))
            a = value(labels, scores1[rows].tolist())
            b = value(labels, scores2[rows].tolist())
            want += weight * np.array([a, a * a, a * b])
        out.append(want)
    return out


def _rbp_or_success_written_out(measure, labels, scores, k, p=0.7):
    """RBP@k = (1 − p) Σ_i p^(i−1) [y_i ≥ 1] or Success@k = [some y_i ≥ 1 in the top k] of one
    query by a loop: documents by score descending (ties in input order)."""
    order = sorted((i for i, s in enumerate(scores) if not math.isnan(s)),
                   key=lambda i: -scores[i])
    top = [labels[i] >= 1 for i in (order[:k] if k else order)]
    if measure == "success":
        return float(any(top))
    return sum((1 - p) * p ** i * relevant for i, relevant in enumerate(top))


@pytest.mark.parametrize("measure", ["rbp(p=0.7)", "success"])
@pytest.mark.parametrize("k", [None, 2])
def test_rbp_and_success_moments_equal_exact_enumeration(measure, k):
    """RBP (additive, weights (1 − p)p^(i−1)) and Success@k (1 − Π(1 − r_i)): E[L], E[L²] and
    E[L1 L2] against the sum over every label vector of the measure written out here."""
    rng = np.random.default_rng(11)
    P, scores1, scores2, group = _random_pool(rng, [1, 4, 6], 3, ties=True)
    first, second = metric_moments(P, scores1, group, measure, k=k)
    cross = cross_moment(P, scores1, scores2, group, measure, k=k)
    name = measure.split("(")[0]
    wants = _enumerated(P, scores1, scores2, group,
                        lambda labels, s: _rbp_or_success_written_out(name, labels, s, k))
    for q, want in enumerate(wants):
        np.testing.assert_allclose([first[q], second[q], cross[q]], want, rtol=1e-12,
                                   atol=1e-15)


def test_a_measure_without_moments_names_why():
    with pytest.raises(ValueError, match="not supported by active evaluation: IDCG depends"):
        metric_moments(uniform_relevance(3, 3), [3.0, 2.0, 1.0], [3], "ndcg", k=None)


def test_bpref_moments_from_seeded_draws_are_near_exact_enumeration():
    """bpref has no closed-form moments: their Monte Carlo averages (256 seeded label draws)
    lie within sampling error of the exact sum over every label vector, and repeat exactly."""
    from lgb_risk import metrics

    rng = np.random.default_rng(12)
    P, scores1, scores2, group = _random_pool(rng, [4, 5], 3)
    first, second = metric_moments(P, scores1, group, "bpref", k=None)
    cross = cross_moment(P, scores1, scores2, group, "bpref", k=None)
    again = metric_moments(P, scores1, group, "bpref", k=None)
    assert first.tobytes() == again[0].tobytes()

    def bpref_of(labels, scores):
        held = ~np.isnan(np.array(scores))
        return (metrics.bpref(np.array(labels)[held], np.array(scores)[held],
                              [int(held.sum())])[0] if held.any() else 0.0)

    for q, want in enumerate(_enumerated(P, scores1, scores2, group, bpref_of)):
        # 256 draws of a value in [0, 1]: standard error at most 0.5 / 16
        np.testing.assert_allclose([first[q], second[q], cross[q]], want, atol=4 * 0.5 / 16)


def _dcg_written_out(labels, scores, k, gain, discount):
    """DCG@k of one query by a loop: documents by score descending (ties in input order);
    gain 2^l − 1 or l; discount 1/log2(r + 1), or LETOR's 1 at ranks 1 and 2 then 1/log2(r)."""
    order = sorted((i for i, s in enumerate(scores) if not math.isnan(s)),
                   key=lambda i: -scores[i])
    total = 0.0
    for rank, i in enumerate(order[:k] if k else order, start=1):
        g = 2.0 ** labels[i] - 1 if gain == "exponential" else float(labels[i])
        total += g / (math.log2(rank + 1) if discount == "log2" else max(1.0, math.log2(rank)))
    return total


@pytest.mark.parametrize("measure, convention, gain, discount", [
    ("dcg(label_gain=linear)", None, "linear", "log2"),
    ("dcg", "letor4", "exponential", "letor"),
    ("dcg@3", "trec_eval", "linear", "log2"),
])
def test_moments_under_a_convention_equal_exact_enumeration(measure, convention, gain, discount):
    """The measure from the registry, with a convention's gain and discount: E[L], E[L²] and
    E[L1 L2] against the sum over every label vector of DCG written out in the test."""
    rng = np.random.default_rng(7)
    P, scores1, scores2, group = _random_pool(rng, [3, 5, 6], 3)
    first, second = metric_moments(P, scores1, group, measure, k=3, convention=convention)
    cross = cross_moment(P, scores1, scores2, group, measure, k=3, convention=convention)
    start = 0
    for q, size in enumerate(group):
        rows = slice(start, start + size)
        start += size
        want = np.zeros(3)
        for labels in itertools.product(range(3), repeat=size):
            weight = math.prod(P[rows][d, y] for d, y in enumerate(labels))
            a = _dcg_written_out(labels, scores1[rows].tolist(), 3, gain, discount)
            b = _dcg_written_out(labels, scores2[rows].tolist(), 3, gain, discount)
            want += weight * np.array([a, a * a, a * b])
        np.testing.assert_allclose([first[q], second[q], cross[q]], want, rtol=1e-12)
    labels = rng.integers(0, 3, group.sum())
    realised = measure_values(labels, scores1, group, measure, k=3, convention=convention)
    offsets = np.concatenate([[0], np.cumsum(group)])
    np.testing.assert_allclose(realised, [
        _dcg_written_out(labels[a:b].tolist(), scores1[a:b].tolist(), 3, gain, discount)
        for a, b in zip(offsets[:-1], offsets[1:])], rtol=1e-12)


@pytest.mark.parametrize("k", [None, 2])
def test_dcg_moments_with_average_ties_equal_enumeration_over_labels_and_tie_orders(k):
    """ties="average": E over labels of the mean DCG over every order of the tied documents."""
    rng = np.random.default_rng(8)
    P, _, _, _ = _random_pool(rng, [5], 3)
    scores1 = np.array([1.0, 2.0, 1.0, 2.0, 1.0])
    scores2 = np.array([0.0, 0.0, np.nan, 1.0, 0.0])
    orders = {}
    for name, s in (("1", scores1), ("2", scores2)):
        held = [d for d in range(5) if not np.isnan(s[d])]
        orders[name] = [p for p in itertools.permutations(held)
                        if all(s[p[i]] >= s[p[i + 1]] for i in range(len(p) - 1))]
    first = second = cross = 0.0
    for labels in itertools.product(range(3), repeat=5):
        weight = math.prod(P[d, y] for d, y in enumerate(labels))
        a, b = (np.mean([naive.dcg([labels[d] for d in order], k) for order in orders[name]])
                for name in ("1", "2"))
        first, second, cross = first + weight * a, second + weight * a * a, cross + weight * a * b
    got_first, got_second = metric_moments(P, scores1, [5], "dcg", k, ties="average")
    got_cross = cross_moment(P, scores1, scores2, [5], "dcg", k, ties="average")
    np.testing.assert_allclose([got_first[0], got_second[0], got_cross[0]],
                               [first, second, cross], rtol=1e-12)


@pytest.mark.parametrize("measure", ["dcg", "err"])
def test_cross_moment_of_a_ranking_with_itself_is_its_second_moment(measure):
    rng = np.random.default_rng(5)
    P, scores, _, group = _random_pool(rng, [30, 120, 7], 5)
    for k in (None, 10):
        second = metric_moments(P, scores, group, measure, k)[1]
        np.testing.assert_allclose(cross_moment(P, scores, scores, group, measure, k), second,
                                   rtol=1e-12)


@pytest.mark.parametrize("measure", ["dcg", "err"])
def test_a_certain_model_gives_the_metric_itself(measure):
    """One grade with probability 1: E[L] = L and E[L²] = L², as lgb_risk.metrics computes L."""
    rng = np.random.default_rng(2)
    group = rng.integers(1, 40, 50)
    labels = rng.integers(0, 5, group.sum())
    scores = rng.integers(0, 6, labels.size).astype(float)  # ties, kept in input order
    P = np.eye(5)[labels]
    for k in (None, 1, 10):
        first, second = metric_moments(P, scores, group, measure, k,
                                       **({"max_label": 4} if measure == "err" else {}))
        want = (metrics.dcg(labels, scores, group, k) if measure == "dcg"
                else metrics.err(labels, scores, group, k, max_label=4))
        np.testing.assert_allclose(first, want, rtol=1e-12, atol=0)
        np.testing.assert_allclose(second, want ** 2, rtol=1e-12, atol=0)


@pytest.mark.parametrize("measure", ["dcg", "err"])
@pytest.mark.slow
def test_moments_agree_with_monte_carlo(measure):
    rng = np.random.default_rng(11)
    P, scores1, scores2, group = _random_pool(rng, [60, 25], 5)
    draws = 100_000
    cumulative = P.cumsum(axis=1)
    labels = (rng.random((draws, P.shape[0], 1)) > cumulative[None]).sum(axis=2)
    flat_group = np.tile(group, draws)
    flat_labels = labels.ravel()
    values = []
    for s in (scores1, scores2):
        held = ~np.isnan(s)
        tiled = np.tile(np.where(held, s, -1e9), draws)  # absent documents ranked last ...
        gains = np.tile(held, draws)                      # ... and worth nothing
        y = flat_labels * gains
        L = (metrics.dcg(y, tiled, flat_group, 10) if measure == "dcg"
             else metrics.err(y, tiled, flat_group, 10, max_label=4))
        values.append(L.reshape(draws, group.size))
    first, second = metric_moments(P, scores1, group, measure, 10)
    cross = cross_moment(P, scores1, scores2, group, measure, 10)
    for got, sample in ((first, values[0]), (second, values[0] ** 2),
                        (cross, values[0] * values[1])):
        se = sample.std(axis=0) / np.sqrt(draws)
        assert np.all(np.abs(got - sample.mean(axis=0)) < 5 * se + 1e-12), (got, sample.mean(0))


def _simulation_pool(seed, m=1500):
    """A pool whose labels are drawn from its own relevance model, with varied lengths (costs)
    and varied certainty (some queries nearly known, others not)."""
    rng = np.random.default_rng(seed)
    group = rng.integers(3, 40, m)
    n = int(group.sum())
    sharpness = np.repeat(rng.choice([0.05, 1.0], m), group)
    P = rng.dirichlet(np.ones(3), size=n) * sharpness[:, None]
    P[np.arange(n), rng.integers(0, 3, n)] += 1 - sharpness
    labels = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1)
    scores = labels + rng.normal(size=n)
    L = metrics.dcg(labels, scores, group, None)
    return P, scores, group, labels, L


@pytest.mark.slow
def test_unnormalised_estimator_is_unbiased_at_fixed_n():
    P, scores, group, _, L = _simulation_pool(0, m=400)
    cost = query_costs(group)
    q, _, _ = sampling_distribution(P, scores, group, cost, "dcg", None)
    rng = np.random.default_rng(1)
    n, reps = 5, 40_000
    draws = rng.choice(q.size, size=(reps, n), p=q)
    weights = 1.0 / (q.size * q[draws])
    estimates = np.array([estimate(L[d], w, normalise=False)[0]
                          for d, w in zip(draws, weights)])
    se = estimates.std(ddof=1) / np.sqrt(reps)
    assert abs(estimates.mean() - L.mean()) < 4 * se, (estimates.mean(), L.mean(), se)


@pytest.mark.slow
def test_simulated_mse_ratio_matches_the_prediction():
    """Active against passive at equal budget, every draw charged (the theory's expected-cost
    constraint), pool labels fixed: within 0.06 of (E√(vλ))² / (E v E λ)."""
    P, scores, group, _, L = _simulation_pool(3)
    cost = query_costs(group)
    q, v, _ = sampling_distribution(P, scores, group, cost, "dcg", None)
    predicted = predicted_mse_ratio(v, cost)
    uniform = np.full(q.size, 1.0 / q.size)
    rng = np.random.default_rng(4)
    mse = {}
    for name, dist in (("active", q), ("passive", uniform)):
        errors = []
        for _ in range(3000):
            draws, _, _ = sample_queries(dist, cost, 60.0, rng, charge_repeats=True)
            errors.append(estimate(L[draws], 1.0 / (q.size * dist[draws]))[0] - L.mean())
        mse[name] = np.mean(np.square(errors))
    ratio = mse["active"] / mse["passive"]
    print(f"MSE ratio active/passive: simulated {ratio:.3f}, predicted {predicted:.3f}")
    assert predicted < 0.9 and abs(ratio - predicted) < 0.06, (ratio, predicted)


def test_sampler_never_overspends_and_stops_when_everything_is_labelled():
    rng = np.random.default_rng(0)
    cost = np.array([0.5, 1.0, 1.5, 2.0])
    q = np.array([0.1, 0.2, 0.3, 0.4])
    for budget in (0.5, 1.7, 3.0, 4.9):
        draws, labelled, spent = sample_queries(q, cost, budget, rng)
        assert spent <= budget and spent == pytest.approx(cost[labelled].sum())
        assert set(draws) == set(labelled) and len(set(labelled)) == labelled.size
    draws, labelled, spent = sample_queries(q, cost, 100.0, rng)
    assert sorted(labelled) == [0, 1, 2, 3] and spent == 5.0 and draws[-1] == labelled[-1]


def test_evaluate_on_a_pool_passive_and_active_compare():
    P, scores, group, labels, _ = _simulation_pool(7, m=300)
    starts = np.concatenate(([0], np.cumsum(group)))
    ids = np.array([f"q{i}" for i in range(group.size)])
    lookup = {qid: labels[starts[i]:starts[i + 1]] for i, qid in enumerate(ids)}
    truth = metrics.dcg(labels, scores, group, 10).mean()
    other = scores + np.random.default_rng(0).normal(size=scores.size)
    truth_difference = truth - metrics.dcg(labels, other, group, 10).mean()
    for passive in (False, True):
        result = evaluate(P, scores, group, lookup.__getitem__, 30, query_ids=ids,
                          passive=passive, seed=3)
        assert result.spent <= 30 and result.n_labelled <= result.n_draws
        assert abs(result.estimate - truth) < 5 * result.standard_error
        assert set(result.draws) <= set(ids)
    compared = evaluate(P, scores, group, lookup.__getitem__, 30, query_ids=ids,
                        scores2=other, seed=3)
    assert abs(compared.estimate - truth_difference) < 5 * compared.standard_error
    everything = evaluate(P, scores, group, lookup.__getitem__, 1e6, query_ids=ids, seed=3)
    assert everything.exhausted and everything.estimate == pytest.approx(truth, rel=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: metric_moments(np.array([[0.5, 0.4]]), [1.0], [1]), "row 0 of P sums to 0.9"),
    (lambda: metric_moments(np.array([[0.5, 0.5]]), [1.0, 2.0], [2]),
     "P has 1 rows, but group.s 1 queries hold 2 documents"),
    (lambda: metric_moments(np.array([[1.5, -0.5]]), [1.0], [1]), r"P\[0, 1\] = -0.5"),
    (lambda: metric_moments(np.ones(3) / 3, [1.0], [1]), "must be a matrix"),
    (lambda: metric_moments(uniform_relevance(2, 3), [1.0, 2.0], [3]),
     "P has 2 rows, but group.s 1 queries hold 3 documents"),
    (lambda: metric_moments(uniform_relevance(1, 3), [1.0], [1], "ndcg"), "IDCG depends"),
    (lambda: metric_moments(uniform_relevance(1, 3), [1.0], [1], "map"),
     "measure=.ap. is not supported by active evaluation: its moments"),
    (lambda: metric_moments(uniform_relevance(1, 3), [1.0], [1], "err", max_label=1),
     "max_label must be a whole number >= 2"),
    (lambda: metric_moments(uniform_relevance(1, 3), [1.0], [1], ties="pessimistic"),
     "labels, which are unknown"),
    (lambda: metric_moments(uniform_relevance(1, 3), [1.0], [1], "err", convention="sklearn"),
     r"ties must be one of \['stable'\] for err .* got 'average'"),
    (lambda: metric_moments(uniform_relevance(1, 3), [1.0], [1], "err@5"),
     "measure 'err@5' has cut-off 5 but k=10: pass k=5"),
    (lambda: metric_moments(uniform_relevance(1, 3), [1.0], [1], "dcg(label_gain=linear)",
                            label_gain="exponential"),
     "sets label_gain='linear', but label_gain='exponential' was also given"),
    (lambda: query_costs([2, 2], doc_cost=[1.0, 0.0, 1.0, 1.0]), r"doc_cost\[1\] is 0.0"),
    (lambda: sample_queries([0.5, 0.5], [2.0, 3.0], 1.0, np.random.default_rng()),
     "budget 1 is below the cheapest query's cost 2"),
    (lambda: evaluate(uniform_relevance(4, 3), [1.0, 2.0, 3.0, 4.0], [2, 2], {}.__getitem__,
                      5, query_ids=["a", "b"], seed=0),
     "the oracle has no labels for query id"),
    (lambda: evaluate(uniform_relevance(4, 3), [1.0, 2.0, 3.0, 4.0], [2, 2],
                      lambda q: [0, 3], 5, seed=0), "label 3 for query id .*, document 1"),
    (lambda: evaluate(uniform_relevance(6, 3), [1.0] * 6, [2, 2, 2], lambda q: [0, 1], 5,
                      query_ids=[500, 7, 500], seed=0),
     "query id 500 is given to queries 0 and 2: the oracle is asked by id"),
])
def test_bad_input_is_a_specific_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _graded_documents(seed, n=3000):
    """Grades from a known ordered-logit model, with each document's true probabilities."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    mean = 1.5 * X[:, 0] - X[:, 1]
    grades = np.digitize(mean + rng.logistic(size=n), [-1.0, 1.5])  # 0, 1, 2
    below = 1 / (1 + np.exp(-(np.array([-1.0, 1.5])[None, :] - mean[:, None])))
    truth = np.diff(np.hstack([np.zeros((n, 1)), below, np.ones((n, 1))]), axis=1)
    return X, grades, truth


@pytest.mark.parametrize("kind", ["multiclass", "ordinal"])
def test_relevance_models_give_valid_informative_probabilities(kind):
    from lgb_risk.active import relevance_probabilities

    X, grades, truth = _graded_documents(0)
    train, pool = slice(0, 2000), slice(2000, None)
    P = relevance_probabilities(X[train], grades[train], X[pool], 3, kind=kind,
                                num_boost_round=100)
    assert P.shape == (1000, 3) and np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # Held-out log-likelihood: three quarters of the way from the uniform model to the true one.
    def loglik(probs):
        return np.log(probs[np.arange(1000), grades[pool]]).mean()
    uniform, best = np.log(1 / 3), loglik(truth[pool])
    assert loglik(P) > uniform + 0.75 * (best - uniform), (loglik(P), uniform, best)


def test_ordered_logit_calibration_recovers_the_generating_model():
    from lgb_risk.active import calibrate_scores

    rng = np.random.default_rng(1)
    scores = rng.normal(size=20_000)
    cuts, beta = np.array([-0.5, 1.0]), 2.0  # P(y <= c | s) = σ(θ_c − β s)
    below = 1 / (1 + np.exp(-(cuts[None, :] - beta * scores[:, None])))
    grades = (rng.random((scores.size, 1)) > below).sum(axis=1)
    pool = np.linspace(-2, 2, 9)
    want_below = 1 / (1 + np.exp(-(cuts[None, :] - beta * pool[:, None])))
    want = np.diff(np.hstack([np.zeros((9, 1)), want_below, np.ones((9, 1))]), axis=1)
    np.testing.assert_allclose(calibrate_scores(scores, grades, pool, 3), want, atol=0.02)


def test_simulate_draws_a_progress_bar_and_the_same_numbers(capsys):
    P, scores, group, labels, _ = _simulation_pool(3)
    plain = simulate(P, scores, group, labels, [20, 40], repetitions=50, seed=1)
    assert capsys.readouterr().err == ""
    shown = simulate(P, scores, group, labels, [20, 40], repetitions=50, seed=1, progress=True)
    pd.testing.assert_frame_equal(plain, shown)
    err = capsys.readouterr().err
    total = 4 * 2 * 50  # methods x budgets x repetitions
    assert "repetitions:" in err and f"{total}/{total}" in err


# -- refusals that name their cause, one check for every entry point -------------------------

def _pool():
    rng = np.random.default_rng(0)
    group = np.full(20, 5)
    n = int(group.sum())
    labels = rng.integers(0, 3, n)
    scores = labels + rng.normal(size=n)
    starts = np.r_[0, np.cumsum(group)]
    return (np.full((n, 3), 1 / 3), scores, group, labels,
            lambda q: labels[starts[q]:starts[q + 1]])


@pytest.mark.parametrize("call, message", [
    (lambda P, s, g, y, o: sampling.evaluate(P, s, g, o, budget="10"),
     r"budget must be a number > 0 in the costs' units .* got '10'"),
    (lambda P, s, g, y, o: sampling.evaluate(P, s, g, o, budget=None),
     r"budget must be a number > 0 .* got None"),
    (lambda P, s, g, y, o: sampling.evaluate(P, s, g, o, budget=0.1),
     r"budget 0.1 is below the cheapest query's cost 1"),
    (lambda P, s, g, y, o: sampling.simulate(P, s, g, y, [0.2], repetitions=2),
     r"budgets 0.2 is below the cheapest query's cost 1"),
    (lambda P, s, g, y, o: sampling.evaluate(P, s, g, o, budget=1.5, seed=0),
     r"budget 1.5 labelled one query .* standard error needs two"),
    (lambda P, s, g, y, o: sampling.simulate(P, s, g, y.astype(str), [5], repetitions=2),
     r"labels must be whole-number grades 0..2, got <U\d+ values \(first: '\d'\)"),
    (lambda P, s, g, y, o: sampling.simulate(P, s, g, y + 1, [5], repetitions=2),
     r"labels\[\d+\] is 3: labels must be grades 0..2, those P's 3 columns describe"),
    (lambda P, s, g, y, o: sampling.simulate(P, s, g, y, [5], repetitions=0),
     r"repetitions must be a whole number >= 1, got 0"),
    (lambda P, s, g, y, o: sampling.evaluate(P[:-1], s, g, o, budget=5),
     r"P has 99 rows, but group's 20 queries hold 100 documents"),
    (lambda P, s, g, y, o: moments.metric_moments(P[:-1], s, g),
     r"P has 99 rows, but group's 20 queries hold 100 documents"),
    (lambda P, s, g, y, o: sampling.evaluate(P, np.full(s.size, np.nan), g, o, budget=5),
     r"scores is NaN for every document"),
    (lambda P, s, g, y, o: sampling.evaluate(P, s, g, o, budget=5, scores2=s[:-1]),
     r"scores2 has shape \(99,\), but group's queries hold 100 documents"),
    (lambda P, s, g, y, o: sampling.sampling_distribution(P, s, g, np.ones(20),
                                                          scores2=s[:-1]),
     r"scores2 has shape \(99,\)"),
])
def test_active_evaluation_refuses_bad_input_naming_its_cause(call, message):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning on the way
        with pytest.raises(ValueError, match=message):
            call(*_pool())


def test_a_narrower_pool_than_the_training_documents_is_refused():
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match=r"X_pool has shape \(5, 3\), X_train \(30, 4\): the "
                                         "model reads the same 4 features"):
        relevance.relevance_probabilities(rng.normal(size=(30, 4)), rng.integers(0, 3, 30),
                                          rng.normal(size=(5, 3)), 3, num_boost_round=2)
