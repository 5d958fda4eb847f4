"""Active estimation of a ranker's effectiveness (a measure of
:func:`lgb_risk.measures.active_measures`), or of the difference of two rankers ([AE] §4).

A pool D of m unlabelled queries; the target is the pool's mean measure
R_D = (1/m) Σ_{x∈D} L(r(x), y_x) (or Δ_D = R_D[r1] − R_D[r2]). Queries are drawn with
replacement from a sampling distribution q, labelled by an oracle until the labelling budget Λ is
spent, and the estimate reweights them by w = p(x)/q(x) = 1/(m q(x)) ([AE] Eq. 6):

    R̂ = Σ_j w_j L_j / Σ_j w_j                (self-normalised, the paper's; default)
    R̂ = (1/n) Σ_j w_j L_j                    (unnormalised: unbiased for a fixed n)

The cost-optimal q ([AE] Eqs. 16, 17) is q*(x) ∝ sqrt(v(x) / λ(x)) with λ(x) the cost of labelling
x and v(x) = E_θ[(L(r(x), y) − R_θ)² | x], the expectation under the relevance model θ
(``P``: each document's grade probabilities, independent given the query), R_θ = (1/m) Σ_x
E_θ[L | x]; for two rankers L is replaced by δ = L1 − L2 and R_θ by Δ_θ. The moments come from
:mod:`lgb_risk.active.moments`. Passive estimation is the same loop with q uniform ([AE] Eq. 5).

Sampler (Algorithm 1 of [AE], rebuilt from its prose): draw x ~ q; a query not yet labelled is
labelled (all documents of its top-k list, or of the union of both rankers' top-k lists) and
charged λ(x), unless that would exceed the budget, which ends the loop; a repeated query is free
by default (its labels are looked up) and stays in the sample with its weight. The loop also ends
when every query with q > 0 is labelled — the pool value is then known exactly and returned as
such — or after ``max_draws`` draws.

Choices the paper leaves open: queries with nothing to label (every score NaN) have L = 0; they
are left out of the sampling and the estimate is scaled by m'/m (m' the other queries). When some
queries have v(x) = 0, q* would never draw them, which breaks consistency; a uniform share of
1e-3 is then mixed in (``uniform_mix``), with a warning. The standard error is the delta-method
one of importance sampling, sqrt(Σ w_j² (L_j − R̂)²) / Σ w_j (an extension: the paper gives none).

References: [AE] (:mod:`lgb_risk.references`).
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lgb_risk._inputs.validation import check_group, check_k, check_whole_number
from lgb_risk._measuring.segments import offsets_from_group, query_of_document
from lgb_risk._runtime.progress import Bar
from lgb_risk.active.moments import (
    TargetMeasure,
    _discount_weights,
    check_pool,
    check_pool_labels,
    check_pool_scores,
    cross_moment,
    metric_moments,
    target_measure,
)
from lgb_risk.active.relevance import uniform_relevance

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from lgb_risk._inputs.type_aliases import ArrayLike, ConventionLike

__all__ = ["query_costs", "sampling_distribution", "predicted_mse_ratio", "check_budget",
           "sample_queries", "estimate", "evaluate", "ActiveEstimate", "measure_values",
           "simulate", "METHODS"]

_AUTO_MIX = 1e-3
METHODS = ("passive", "active", "active uniD", "active uniC")


def _labelled_documents(group, scores, scores2, k, ties):
    """Per document: whether it is labelled (L of the ranking, or of either ranking, uses it)."""
    if scores is None:
        if k is not None:
            raise ValueError("costs for the top-k documents need the ranker's scores")
        return np.ones(int(group.sum()), dtype=bool)
    keep = _discount_weights(np.asarray(scores, dtype=np.float64), group, k, ties) > 0
    if scores2 is not None:
        keep |= _discount_weights(np.asarray(scores2, dtype=np.float64), group, k, ties) > 0
    return keep


def query_costs(group: ArrayLike, *, scores: ArrayLike | None = None,
                scores2: ArrayLike | None = None, k: int | None = None,
                doc_cost: ArrayLike | None = None, normalise: bool = True,
                ties: str | None = "stable") -> np.ndarray:
    """Labelling cost λ(x) of every query: the sum of per-document costs over the documents to
    label ([AE] §5: cost grows with the number of documents and their length).

    Parameters
    ----------
    group : array-like of int
        Query sizes.
    scores, scores2 : array-like, optional
        The ranker's (and a second ranker's) scores, NaN where a ranking lacks a document. With
        ``k`` only the top-k documents (of either ranking) are labelled.
    k : int or None
        Cut-off; None labels every ranked document (every document without ``scores``).
    doc_cost : array-like, optional
        Positive cost of labelling each document (default 1; e.g. ``log(1 + length)``).
    normalise : bool, default True
        Divide by the mean over queries with something to label, so the mean query costs 1.
    ties : {"stable", "average"}
        With ``"average"``, a tie block reaching into the top k is labelled whole.

    Examples
    --------
    >>> query_costs([2, 4, 6]).tolist()
    [0.5, 1.0, 1.5]
    """
    g = check_group(group, int(np.sum(group)), "group")
    n = int(g.sum())
    cost = np.ones(n) if doc_cost is None else np.asarray(doc_cost, dtype=np.float64)
    if cost.shape != (n,):
        raise ValueError(f"doc_cost must have one value per document ({n}), got shape "
                         f"{cost.shape}")
    bad = np.flatnonzero(~np.isfinite(cost) | (cost <= 0))
    if bad.size:
        raise ValueError(f"doc_cost[{int(bad[0])}] is {float(cost[bad[0]])}: labelling costs "
                         "must be finite and > 0")
    keep = _labelled_documents(g, scores, scores2, check_k(k), ties)
    per_query = np.bincount(query_of_document(g), weights=cost * keep,
                            minlength=g.size)
    if normalise and np.any(per_query > 0):
        per_query = per_query / per_query[per_query > 0].mean()
    return per_query


def predicted_mse_ratio(v: ArrayLike, cost: ArrayLike) -> float:
    """MSE of active against passive estimation at equal budget, predicted from v and λ.

    (E √(vλ))² / (E v · E λ) over the queries that can be drawn (λ > 0): ≤ 1 by Cauchy-Schwarz,
    1 when v ∝ λ; 1 − ratio is the labelling saved at equal accuracy (MSE ∝ 1/Λ).

    Examples
    --------
    >>> predicted_mse_ratio(np.array([1.0, 4.0]), np.array([1.0, 1.0]))
    0.9
    """
    v = np.asarray(v, dtype=np.float64)
    lam = np.asarray(cost, dtype=np.float64)
    drawn = lam > 0
    v, lam = v[drawn], lam[drawn]
    denominator = v.mean() * lam.mean()
    return float(np.sqrt(v * lam).mean() ** 2 / denominator) if denominator > 0 else 1.0


def sampling_distribution(P: ArrayLike, scores: ArrayLike, group: ArrayLike, cost: ArrayLike,
                          measure: str | TargetMeasure = "dcg", k: int | None = 10, *,
                          scores2: ArrayLike | None = None, uniform_mix: float = 0.0,
                          convention: ConventionLike | None = None,
                          label_gain: str | ArrayLike | None = None, max_label: int | None = None,
                          ties: str | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """The cost-optimal sampling distribution q* over the pool's queries ([AE] Eqs. 16, 17).

    q*(x) ∝ sqrt(v(x) / λ(x)), v(x) = E_θ[(L − R_θ)² | x] (one ranker) or E_θ[(δ − Δ_θ)² | x]
    (``scores2`` given: δ = L1 − L2), mixed with a uniform share ``uniform_mix``. Queries with
    λ(x) = 0 (nothing to label) get q = 0.

    Returns
    -------
    q : ndarray, shape (n_queries,)
    v : ndarray, shape (n_queries,)
    target : float
        R_θ (or Δ_θ), the pool value the model expects.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]])  # grade probabilities, 3 documents
    >>> q, v, target = sampling_distribution(P, [0.3, 0.2, 0.1], [2, 1], [1.0, 1.0], "dcg", k=2)
    >>> q.round(4).tolist(), round(target, 4)
    ([0.5676, 0.4324], 0.6815)
    """
    lam = np.asarray(cost, dtype=np.float64)
    measured = target_measure(measure, k, convention=convention, label_gain=label_gain,
                              max_label=max_label, ties=ties)
    P, scores, group = check_pool(P, scores, group)
    if scores2 is not None:
        scores2 = check_pool_scores(scores2, scores.size, "scores2")
    first, second = metric_moments(P, scores, group, measured)
    if lam.shape != first.shape:
        raise ValueError(f"cost must have one value per query ({first.size}), got shape "
                         f"{lam.shape}")
    if np.any(~np.isfinite(lam) | (lam < 0)):
        raise ValueError("costs must be finite and >= 0 (0: a query with nothing to label)")
    if not 0.0 <= uniform_mix < 1.0:
        raise ValueError(f"uniform_mix must be in [0, 1), got {uniform_mix!r}")
    if scores2 is not None:
        first2, second2 = metric_moments(P, scores2, group, measured)
        cross = cross_moment(P, scores, scores2, group, measured)
        first, second = first - first2, second + second2 - 2.0 * cross
    drawn = lam > 0
    if not drawn.any():
        raise ValueError("no query has anything to label (every cost is 0)")
    target = float(first.mean())
    v = np.maximum(second - 2.0 * target * first + target * target, 0.0)
    s = np.zeros_like(v)
    s[drawn] = np.sqrt(v[drawn] / lam[drawn])
    if s.sum() == 0:
        s[drawn] = 1.0  # the model sees no uncertainty anywhere: uniform
    elif uniform_mix == 0.0 and np.any(s[drawn] == 0):
        warnings.warn(f"{int(np.sum(s[drawn] == 0))} queries have v(x) = 0 under the relevance "
                      f"model and would never be drawn; mixing in a uniform share of "
                      f"{_AUTO_MIX:g} to keep the estimate consistent", stacklevel=2)
        uniform_mix = _AUTO_MIX
    q = (1.0 - uniform_mix) * s / s.sum() + uniform_mix * drawn / drawn.sum()
    return q, v, target


def check_budget(budget: Any, costs: np.ndarray, name: str = "budget") -> float:
    """A labelling budget: a finite number > 0 (not text, not None) that pays for at least the
    cheapest query of ``costs`` (those with something to label)."""
    if isinstance(budget, (bool, np.bool_)) or not isinstance(
            budget, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number > 0 in the costs' units (with the default "
                         f"costs, the mean query costs 1), got {budget!r}")
    if not np.isfinite(budget) or budget <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {budget!r}")
    cheapest = float(costs.min())
    if budget < cheapest:
        raise ValueError(f"{name} {budget:g} is below the cheapest query's cost {cheapest:g}: "
                         "nothing could be labelled; give at least that")
    return float(budget)


def sample_queries(q: ArrayLike, cost: ArrayLike, budget: float, rng: np.random.Generator, *,
                   charge_repeats: bool = False,
                   max_draws: int | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Draw queries from q until the budget is spent ([AE] Algorithm 1).

    Returns
    -------
    draws : ndarray of int
        Query indices in drawing order, repeats included.
    labelled : ndarray of int
        The distinct queries labelled, in labelling order.
    spent : float
        Labelling cost spent (never above ``budget``).

    Examples
    --------
    >>> draws, labelled, spent = sample_queries([0.5, 0.5], [1.0, 1.0], 3, np.random.default_rng(0))
    >>> sorted(labelled.tolist()), float(spent)
    ([0, 1], 2.0)
    """
    q = np.asarray(q, dtype=np.float64)
    lam = np.asarray(cost, dtype=np.float64)
    drawable = q > 0
    budget = check_budget(budget, lam[drawable])
    limit = 100 * q.size if max_draws is None else int(max_draws)
    seen = np.zeros(q.size, dtype=bool)
    draws: list[int] = []
    labelled: list[int] = []
    spent = 0.0
    remaining = int(drawable.sum())
    while len(draws) < limit and remaining > 0:
        for x in rng.choice(q.size, size=min(256, limit - len(draws)), p=q):
            if not seen[x] or charge_repeats:
                if spent + lam[x] > budget:
                    return np.array(draws, dtype=np.int64), np.array(labelled, np.int64), spent
                spent += lam[x]
            if not seen[x]:
                seen[x] = True
                labelled.append(x)
                remaining -= 1
            draws.append(x)
            if remaining == 0:
                break
    return np.array(draws, dtype=np.int64), np.array(labelled, dtype=np.int64), spent


def estimate(values: ArrayLike, weights: ArrayLike, *,
             normalise: bool = True) -> tuple[float, float]:
    """Importance-weighted mean of the drawn values and its standard error ([AE] Eq. 6).

    ``weights`` are p(x)/q(x) of the draws. Self-normalised (default): Σ w L / Σ w with SE
    sqrt(Σ w² (L − R̂)²) / Σ w; unnormalised: mean of w L with its sample standard error.

    Examples
    --------
    >>> estimate(np.array([1.0, 3.0]), np.array([1.0, 3.0]), normalise=False)
    (5.0, 4.0)
    """
    values = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if values.size == 0:
        raise ValueError("no draws to estimate from")
    if normalise:
        value = float(np.sum(w * values) / np.sum(w))
        se = float(np.sqrt(np.sum(w * w * (values - value) ** 2)) / np.sum(w))
    else:
        terms = w * values
        value = float(terms.mean())
        se = float(terms.std(ddof=1) / np.sqrt(terms.size)) if terms.size > 1 else np.nan
    return value, se


@dataclass
class ActiveEstimate:
    """Result of :func:`evaluate`."""

    estimate: float  # of the pool's mean measure (or mean difference of two rankers)
    standard_error: float
    n_draws: int  # queries drawn, repeats included
    n_labelled: int  # distinct queries labelled
    spent: float  # labelling cost spent, in the costs' units
    draws: np.ndarray  # query ids in drawing order
    weights: np.ndarray  # p(x)/q(x) of each draw
    exhausted: bool  # every drawable query was labelled: the estimate is the exact pool value
    model_target: float  # R_θ (or Δ_θ) that the relevance model expects
    predicted_mse_ratio: float  # active against passive at equal budget (1 for passive)


def measure_values(labels: ArrayLike, scores: ArrayLike, group: ArrayLike,
                   measure: str | TargetMeasure = "dcg", k: int | None = 10, *,
                   convention: ConventionLike | None = None,
                   label_gain: str | ArrayLike | None = None, max_label: int | None = None,
                   ties: str | None = None) -> np.ndarray:
    """L of every query on the documents its ranking holds (score not NaN; 0 if none).

    The realised counterpart of :func:`~lgb_risk.active.metric_moments`' E[L]: the same
    measure, cut-off, gains, discount and ties (:func:`~lgb_risk.active.target_measure`),
    computed by the measure registry's formula.

    Examples
    --------
    >>> measure_values(np.array([1, 0, 1]), np.array([0.3, 0.2, 0.1]), np.array([2, 1]), "dcg",
    ...                k=2).tolist()
    [1.0, 1.0]
    """
    target = target_measure(measure, k, convention=convention, label_gain=label_gain,
                            max_label=max_label, ties=ties)
    return target.values(labels, scores, np.asarray(group, dtype=np.int64))


def simulate(P: ArrayLike, scores: ArrayLike, group: ArrayLike, labels: ArrayLike,
             budgets: Sequence[float], *, repetitions: int = 1000,
             measure: str | TargetMeasure = "dcg", k: int | None = 10,
             scores2: ArrayLike | None = None, doc_cost: ArrayLike | None = None,
             methods: Sequence[str] = METHODS, convention: ConventionLike | None = None,
             label_gain: str | ArrayLike | None = None, max_label: int | None = None,
             ties: str | None = None, seed: int | np.random.Generator | None = None,
             progress: bool = False) -> pd.DataFrame:
    """Error of each estimation method per budget on a pool whose labels are known.

    The pool value (R_D, or Δ_D with ``scores2``) is computed from ``labels``; each method samples
    ``repetitions`` times per budget (repeated queries free) and estimates with Eq. 6. Methods:
    "passive" (uniform), "active" (q* under P), "active uniD" (q* under a uniform relevance
    model), "active uniC" (q* with costs left out). ``max_label`` defaults to G − 1 of P.
    ``progress=True`` draws a progress bar of the repetitions on standard error.

    Returns
    -------
    DataFrame
        One row per method and budget: truth, mean_abs_error, abs_error_sd, sq_error (mean),
        wrong_sign (share of estimates whose sign differs from the truth's), draws (mean),
        predicted_ratio (active against passive, from the model), repetitions.

    Examples
    --------
    >>> P = np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]])
    >>> frame = simulate(P, np.array([0.3, 0.2, 0.1]), np.array([2, 1]), np.array([1, 0, 1]), [2],
    ...                  repetitions=20, k=2, seed=0)
    >>> frame["method"].tolist()
    ['passive', 'active', 'active uniD', 'active uniC']
    """
    probs, s1, g = check_pool(P, scores, group)
    s2 = None if scores2 is None else check_pool_scores(scores2, s1.size, "scores2")
    repetitions = check_whole_number(repetitions, "repetitions")
    labels = check_pool_labels(labels, s1.size, probs.shape[1])
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; allowed: {list(METHODS)}")
    target = target_measure(measure, k, convention=convention, label_gain=label_gain,
                            max_label=max_label, ties=ties).for_grades(probs.shape[1])
    truth_per_query = measure_values(labels, s1, g, target)
    if s2 is not None:
        truth_per_query = truth_per_query - measure_values(labels, s2, g, target)
    truth = float(truth_per_query.mean())
    cost = query_costs(g, scores=s1, scores2=s2, k=target.k, doc_cost=doc_cost,
                       ties=target.convention.ties)
    q_active, v, _ = sampling_distribution(probs, s1, g, cost, target, scores2=s2)
    distributions = {
        "passive": np.full(g.size, 1.0 / g.size),
        "active": q_active,
        "active uniD": sampling_distribution(uniform_relevance(*probs.shape), s1, g, cost,
                                             target, scores2=s2)[0],
        "active uniC": sampling_distribution(probs, s1, g, np.ones_like(cost), target,
                                             scores2=s2)[0]}
    predicted = predicted_mse_ratio(v, cost)
    budgets = [check_budget(b, cost[cost > 0], "budgets") for b in budgets]
    rng = np.random.default_rng(seed)
    rows: list[dict] = []
    bar = (Bar(len(methods) * len(budgets) * repetitions, sys.stderr, description="repetitions")
           if progress else None)
    try:
        for method in methods:
            q = distributions[method]
            weight_of = 1.0 / (q.size * q)
            for budget in budgets:
                errors, draws_made = np.empty(repetitions), np.empty(repetitions)
                for r in range(repetitions):
                    draws, _, _ = sample_queries(q, cost, budget, rng)
                    errors[r] = estimate(truth_per_query[draws], weight_of[draws])[0] - truth
                    draws_made[r] = draws.size
                    if bar is not None:
                        bar.show(len(rows) * repetitions + r + 1, f"{method}, budget {budget:g}")
                rows.append({"method": method, "budget": budget, "truth": truth,
                             "mean_abs_error": np.abs(errors).mean(),
                             "abs_error_sd": np.abs(errors).std(ddof=1),
                             "sq_error": np.square(errors).mean(),
                             "wrong_sign": np.mean(np.sign(errors + truth) != np.sign(truth)),
                             "draws": draws_made.mean(), "predicted_ratio": predicted,
                             "repetitions": repetitions})
    finally:
        if bar is not None:
            bar.close()
    return pd.DataFrame(rows)


def evaluate(P: ArrayLike, scores: ArrayLike, group: ArrayLike, oracle: Callable[[Any], ArrayLike],
             budget: float, *, measure: str | TargetMeasure = "dcg", k: int | None = 10,
             scores2: ArrayLike | None = None, query_ids: ArrayLike | None = None,
             doc_cost: ArrayLike | None = None, passive: bool = False, costs_in_q: bool = True,
             uniform_mix: float = 0.0, normalise: bool = True, charge_repeats: bool = False,
             max_draws: int | None = None, convention: ConventionLike | None = None,
             label_gain: str | ArrayLike | None = None, max_label: int | None = None,
             ties: str | None = None,
             seed: int | np.random.Generator | None = None) -> ActiveEstimate:
    """Estimate a ranker's mean DCG@k/ERR@k over an unlabelled pool, or the difference of two
    rankers, within a labelling budget ([AE]; see the module docstring).

    Parameters
    ----------
    P : array-like, shape (n_documents, G)
        The relevance model: each pool document's grade probabilities (:mod:`.relevance`).
    scores : array-like, shape (n_documents,)
        The ranker's scores (NaN: not in its ranking).
    group : array-like of int
        Query sizes of the pool.
    oracle : callable
        ``oracle(query_id) -> labels`` of that query's documents (grades 0..G−1, in the pool's
        document order); called once per labelled query.
    budget : float
        Labelling budget Λ in the costs' units (with the default costs: mean-query units).
    measure : str, default "dcg"
        A measure of :data:`~lgb_risk.active.moments.MEASURES`
        (:func:`lgb_risk.measures.active_measures`), with its parameters and convention choices
        in ir_measures' grammar (``"rbp(p=0.9)"``, ``"dcg(label_gain=linear)"``):
        :func:`~lgb_risk.active.moments.target_measure`.
    k : int or None, default 10
    scores2 : array-like, optional
        A second ranker's scores: estimate the mean of L1 − L2.
    query_ids : array-like, optional
        Ids passed to the oracle and returned in ``draws`` (default 0..m−1).
    doc_cost : array-like, optional
        Per-document labelling cost (default 1); query costs are normalised to mean 1.
    passive : bool, default False
        Sample uniformly ([AE] Eq. 5) instead of from q*.
    costs_in_q : bool, default True
        False: q* computed as if every query cost the same ("active uniC"); costs still charged.
    uniform_mix, normalise, charge_repeats, max_draws
        See :func:`sampling_distribution`, :func:`estimate`, :func:`sample_queries`.
    convention, label_gain, max_label, ties
        The measure's convention (:mod:`lgb_risk.conventions`: gain, discount, ties) and
        single overrides, as :func:`lgb_risk.metrics.dcg` and :func:`~.metrics.err`
        (``ties`` "stable", or "average" for DCG; ``max_label`` defaults to G − 1 of P).
    seed : int or numpy Generator, optional

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> group = np.full(200, 10)
    >>> labels = rng.integers(0, 3, group.sum())
    >>> scores = labels + rng.normal(size=labels.size)
    >>> P = np.full((labels.size, 3), 1 / 3)                  # a uniform relevance model
    >>> starts = np.concatenate([[0], np.cumsum(group)])
    >>> oracle = lambda q: labels[starts[q]:starts[q + 1]]
    >>> result = evaluate(P, scores, group, oracle, budget=40, seed=1)
    >>> from lgb_risk import metrics
    >>> truth = metrics.dcg(labels, scores, group, 10).mean()
    >>> bool(abs(result.estimate - truth) < 4 * result.standard_error), result.n_labelled <= 40
    (True, True)
    """
    probs, s1, g = check_pool(P, scores, group)
    m = g.size
    ids = np.arange(m) if query_ids is None else np.asarray(query_ids)
    if ids.shape != (m,):
        raise ValueError(f"query_ids must have one id per query ({m}), got shape {ids.shape}")
    values, first, counts = np.unique(ids, return_index=True, return_counts=True)
    if np.any(counts > 1):
        again = int(np.flatnonzero(counts > 1)[0])
        second = int(np.flatnonzero(ids == values[again])[1])
        raise ValueError(f"query id {values[again].item()!r} is given to queries {first[again]} "
                         f"and {second}: the oracle is asked by id, so each query needs its own")
    s2 = None if scores2 is None else check_pool_scores(scores2, s1.size, "scores2")
    measured = target_measure(measure, k, convention=convention, label_gain=label_gain,
                              max_label=max_label, ties=ties).for_grades(probs.shape[1])
    cost = query_costs(g, scores=s1, scores2=s2, k=measured.k, doc_cost=doc_cost,
                       ties=measured.convention.ties)
    check_budget(budget, cost[cost > 0])  # before the model's work
    q_star, v, target = sampling_distribution(
        probs, s1, g, cost if costs_in_q else (cost > 0).astype(np.float64), measured,
        scores2=s2, uniform_mix=uniform_mix)
    drawable = cost > 0
    q = drawable / drawable.sum() if passive else q_star
    rng = np.random.default_rng(seed)
    draws, labelled, spent = sample_queries(q, cost, budget, rng, charge_repeats=charge_repeats,
                                            max_draws=max_draws)
    offsets = offsets_from_group(g)
    n_grades = probs.shape[1]
    value = np.zeros(m)
    for x in labelled:
        y = _oracle_labels(oracle, ids[x], int(g[x]), n_grades)
        a, b = offsets[x], offsets[x + 1]
        value[x] = measure_values(y, s1[a:b], [b - a], measured)[0]
        if s2 is not None:
            value[x] -= measure_values(y, s2[a:b], [b - a], measured)[0]
    share = drawable.sum() / m  # queries with nothing to label have L = 0
    exhausted = labelled.size == int((q > 0).sum())
    weights = 1.0 / (drawable.sum() * q[draws])
    if exhausted:
        result, se = float(value.sum() / m), 0.0
    elif labelled.size < 2:
        raise ValueError(f"budget {budget:g} labelled one query (of cost "
                         f"{float(cost[labelled[0]]):g}): an estimate's standard error needs "
                         "two at least; raise the budget")
    else:
        result, se = estimate(value[draws], weights, normalise=normalise)
        result, se = result * share, se * share
    return ActiveEstimate(
        estimate=result, standard_error=se, n_draws=int(draws.size),
        n_labelled=int(labelled.size), spent=float(spent), draws=ids[draws], weights=weights,
        exhausted=exhausted, model_target=target,
        predicted_mse_ratio=1.0 if passive else predicted_mse_ratio(v, cost))


def _oracle_labels(oracle, query_id, size, n_grades):
    query_id = query_id.item() if isinstance(query_id, np.generic) else query_id
    try:
        labels = oracle(query_id)
    except (KeyError, IndexError) as exc:
        raise ValueError(f"the oracle has no labels for query id {query_id!r} ({exc!r})") from None
    y = np.asarray(labels)
    if y.shape != (size,):
        raise ValueError(f"the oracle returned {y.shape} labels for query id {query_id!r}, "
                         f"which has {size} documents")
    bad = np.flatnonzero((y != np.round(y)) | (y < 0) | (y >= n_grades))
    if bad.size:
        raise ValueError(f"the oracle's label {y[bad[0]].item()!r} for query id "
                         f"{query_id!r}, document {int(bad[0])}, is not a grade "
                         f"0..{n_grades - 1} of the relevance model")
    return y.astype(np.int64)
