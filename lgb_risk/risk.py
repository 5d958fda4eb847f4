"""Risk-reward measures of a system against one or several baselines ([TR], [GEO]).

Inputs are per-query effectiveness values (e.g. NDCG@10 or ERR@20 of each query), aligned by
position, or keyed by topic — a pandas Series or a dict topic -> value, aligned by topic (a topic
one input lacks or has in excess is an error naming it). Several systems or baselines are given
as a matrix of shape ``(n_systems, n_queries)`` (systems × queries, the layout of [GEO] Table
3), a DataFrame with a row per system and a column per topic, or a dict name -> Series.

NaN values (a metric computed with ``empty="skip"``) are refused unless ``nan_policy="omit"``, which
drops every query where any of the compared systems is NaN.

References: [TR], [GEO] (:mod:`lgb_risk.references`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np

from lgb_risk._inputs.validation import check_alpha, check_choice
from lgb_risk._measuring.distributions import normal_cdf, student_t_two_sided_p
from lgb_risk._measuring.per_query_input import aligned
from lgb_risk.significance import corrected_p_values

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from lgb_risk._inputs.type_aliases import ArrayLike, PerQuery

__all__ = [
    "risk_deltas", "urisk", "trisk", "tstar_risk", "TRiskResult",
    "trisk_if_defined", "loss_field", "zscores", "zrisk", "georisk", "georisk_against",
    "downside_weighted",
    "urisk_against", "trisk_against", "zrisk_against", "RiskMeasure", "RISK_MEASURES",
    "summary", "risk_table", "risk_rows", "urisk_randomisation_p", "TESTS", "DEFAULT_ALPHAS",
]

#: The evaluation αs of a risk table by default (the API's and the command line's): α = 0, the
#: plain difference, beside the papers' 1, 5 and 10.
DEFAULT_ALPHAS = (0.0, 1.0, 5.0, 10.0)


def downside_weighted(values: ArrayLike, alpha: float) -> np.ndarray:
    """Values below 0 weighted by (1 + α), the others kept: the risk-sensitive weighting of
    URisk's x_q ([TR] Eq. 4) and of ZRisk's z-scores ([GEO] Eq. 6) alike. (The pair kernel has
    its compiled twin, :func:`lgb_risk._training.lambda_kernel._weighted_z`.)"""
    values = np.asarray(values, dtype=np.float64)
    return np.where(values >= 0, values, (1.0 + alpha) * values)


def risk_deltas(system: PerQuery, baseline: PerQuery, alpha: float = 1.0) -> np.ndarray:
    """Risk-weighted per-query differences ``x_q`` ([TR] Eq. 4).

    ``x_q = δ_q`` if ``δ_q >= 0`` else ``(1 + α) δ_q``, with ``δ_q = M_s(q) − M_b(q)``.

    >>> risk_deltas([0.5, 0.2], [0.4, 0.3], alpha=1).round(2).tolist()
    [0.1, -0.2]
    """
    alpha = check_alpha(alpha)
    delta = np.asarray(system, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    return downside_weighted(delta, alpha)


def urisk(system: PerQuery, baseline: PerQuery, alpha: float = 1.0, *,
          nan_policy: str = "raise") -> float:
    """URisk = mean of ``x_q`` = UGain − α·FRisk ([TR] Eq. 4; TREC 2013 Web track risk task).

    Parameters
    ----------
    system, baseline : array-like, shape (n_queries,)
        Per-query effectiveness of the system and of the baseline.
    alpha : float >= 0
        Risk sensitivity; losses weigh ``1 + alpha``.

    Returns
    -------
    float
        Positive: the system's gains outweigh its weighted losses.

    >>> round(urisk([0.5, 0.2, 0.9, 0.4], [0.4, 0.3, 0.6, 0.4], alpha=1), 4)
    0.05
    """
    s, b = aligned(nan_policy, system=system, baseline=baseline)
    return float(risk_deltas(s[0], b[0], alpha).mean())


@dataclass(frozen=True)
class TRiskResult:
    """TRisk of a system against a baseline ([TR] §3).

    Attributes
    ----------
    trisk : float
        URisk / SE, a Student t statistic with ``n_queries − 1`` degrees of freedom ([TR] Eq. 10).
    urisk : float
        Mean of ``x_q``.
    se : float
        ``s_x / sqrt(c)``, s_x the sample standard deviation of x ([TR] Eq. 12).
    se_jackknife : float
        Jackknife standard error of URisk ([TR] §3.2); equals ``se`` for this estimator.
    p_value : float
        Two-sided p-value of ``trisk``.
    tr, tj : ndarray, shape (n_queries,)
        Per-query scores ``TR_q = x_q / s_x`` ([TR] Eq. 21) and the jackknife form
        ``TJ_q = (c − 1)(θ̂ − θ_(q)) / (sqrt(c) SE_J)``; negative is a loss, ``|·| > 2`` significant.
    n_queries : int
    alpha : float
    """

    trisk: float
    urisk: float
    se: float
    se_jackknife: float
    p_value: float
    tr: np.ndarray
    tj: np.ndarray
    n_queries: int
    alpha: float


def trisk(system: PerQuery, baseline: PerQuery, alpha: float = 1.0, *,
          nan_policy: str = "raise") -> TRiskResult:
    """TRisk: URisk standardised by its standard error, with inference ([TR] Eqs. 10-12, 21).

    Parameters
    ----------
    system, baseline : array-like, shape (n_queries,)
    alpha : float >= 0
    nan_policy : {"raise", "omit"}

    Returns
    -------
    TRiskResult

    Raises
    ------
    ValueError
        Fewer than two queries, or every ``x_q`` equal (SE = 0: TRisk undefined).

    >>> result = trisk([0.5, 0.2, 0.9, 0.4], [0.4, 0.3, 0.6, 0.4], alpha=1)
    >>> round(result.trisk, 4), round(result.se, 4), round(result.p_value, 4)
    (0.4804, 0.1041, 0.6638)
    """
    alpha = check_alpha(alpha)
    s, b = aligned(nan_policy, system=system, baseline=baseline)
    x = risk_deltas(s[0], b[0], alpha)
    c = x.size
    if c < 2:
        raise ValueError(f"TRisk needs at least 2 queries, got {c}")
    t, u, s_x = (float(v) for v in _t_statistics(x))
    if not s_x > 0:
        raise ValueError("TRisk is undefined: every query has the same risk-weighted difference "
                         "x_q (standard error 0), e.g. the system equals the baseline")
    se = s_x / np.sqrt(c)
    # Jackknife: URisk without query i, theta_(i) = (sum x - x_i) / (c - 1).
    theta = (x.sum() - x) / (c - 1)
    se_j = np.sqrt((c - 1) / c * np.sum((theta - theta.mean()) ** 2))
    if se_j > 0:
        tj = (c - 1) * (u - theta) / (np.sqrt(c) * se_j)
    else:  # the x_q differ below θ's floating-point resolution: TJ_q = (x_q − x̄)/s_x exactly
        tj = (x - u) / s_x
    return TRiskResult(
        trisk=t, urisk=u, se=float(se), se_jackknife=float(se_j),
        p_value=student_t_two_sided_p(t, c - 1), tr=x / s_x, tj=tj, n_queries=c, alpha=alpha,
    )


def _t_statistics(x: np.ndarray):
    """TRisk = URisk / (s_x / sqrt(c)) of each row of x_q ([TR] Eqs. 10, 12): (t, URisk, s_x),
    t NaN where s_x is 0 or there are fewer than 2 queries."""
    c = x.shape[-1]
    u = x.mean(axis=-1)
    s_x = x.std(axis=-1, ddof=1) if c > 1 else np.zeros(x.shape[:-1])
    t = np.divide(u, s_x / np.sqrt(c), out=np.full_like(u, np.nan), where=s_x > 0)
    return t, u, s_x


def tstar_risk(system: PerQuery, baselines: PerQuery, alpha: float = 1.0, *,
               nan_policy: str = "raise") -> TRiskResult:
    """T*Risk: TRisk against the per-query mean of several baselines ([GEO] Eq. 3).

    ``baselines`` has shape (n_baselines, n_queries).

    >>> round(tstar_risk([0.5, 0.2, 0.9], [[0.4, 0.3, 0.6], [0.1, 0.2, 0.3]], 1).trisk, 4)
    1.2443
    """
    s, bs = aligned(nan_policy, system=system, baselines=baselines)
    return trisk(s[0], bs.mean(axis=0), alpha)


def zscores(matrix: ArrayLike) -> np.ndarray:
    """Standardised residuals ``z_ij = (x_ij − e_ij) / sqrt(e_ij)`` of a systems × queries matrix.

    ``e_ij = S_i T_j / N`` (row sum × column sum / total), ``z_ij = 0`` wherever ``e_ij = 0``
    ([GEO] §3.1). Scores must be finite and non-negative.

    >>> zscores([[0.5, 0.2, 0.9], [0.4, 0.3, 0.6]]).round(3).tolist()
    [[0.005, -0.144, 0.08], [-0.005, 0.16, -0.088]]
    """
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 1:
        raise ValueError(f"the score matrix must be (n_systems >= 2, n_queries >= 1), got shape "
                         f"{x.shape}")
    bad = ~np.isfinite(x) | (x < 0)
    if bad.any():
        i, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(f"scores must be finite and non-negative; system row {i}, query column "
                         f"{j} holds {float(x[i, j])}")
    return _zscores(x)


def _zscores(x: np.ndarray) -> np.ndarray:
    """:func:`zscores` of the last two axes (a stack of systems × queries matrices)."""
    return _residuals(x, x.sum(axis=-1, keepdims=True), x.sum(axis=-2, keepdims=True),
                      x.sum(axis=(-2, -1), keepdims=True))


def _residuals(x, row_totals, column_totals, total) -> np.ndarray:
    """z = (x − e) / √e with e = S T / N from the totals of x's matrix (0 where e = 0)."""
    shape = np.broadcast_shapes(x.shape, column_totals.shape)
    expected = np.divide(row_totals * column_totals, total, out=np.zeros(shape), where=total > 0)
    return np.divide(x - expected, np.sqrt(expected), out=np.zeros(shape), where=expected > 0)


def _zrisk(z: np.ndarray, alpha: float) -> np.ndarray:
    return downside_weighted(z, alpha).sum(axis=-1)


def _georisk(x: np.ndarray, zrisk_values: np.ndarray) -> np.ndarray:
    c = x.shape[-1]
    return np.sqrt(x.sum(axis=-1) / c * normal_cdf(zrisk_values / c))


def zrisk(matrix: ArrayLike, alpha: float = 1.0) -> np.ndarray:
    """ZRisk of every system (row) within the matrix ([GEO] Eq. 6).

    ``ZRisk_i = sum_{z_ij > 0} z_ij + (1 + α) sum_{z_ij < 0} z_ij``. For a single baseline pass
    the 2 × c matrix ``[system, baseline]``; for several, the system's row plus the baselines'.

    >>> zrisk([[0.5, 0.2, 0.9], [0.4, 0.3, 0.6], [0.1, 0.2, 0.3]], alpha=5).round(4).tolist()
    [-1.1244, -0.3778, -0.8967]
    """
    return _zrisk(zscores(matrix), check_alpha(alpha))


def georisk(matrix: ArrayLike, alpha: float = 1.0) -> np.ndarray:
    """GeoRisk of every system (row) within the matrix ([GEO] Eq. 7).

    ``GeoRisk_i = sqrt( (S_i / c) · Φ(ZRisk_i / c) )``: the geometric mean of mean effectiveness
    and the normal-CDF-squashed ZRisk.

    >>> georisk([[0.5, 0.2, 0.9], [0.4, 0.3, 0.6], [0.1, 0.2, 0.3]], alpha=5).round(4).tolist()
    [0.4345, 0.4415, 0.2766]
    """
    x = np.asarray(matrix, dtype=np.float64)
    return _georisk(x, zrisk(x, alpha))


def georisk_against(systems: PerQuery, baselines: PerQuery, alpha: float = 1.0) -> np.ndarray:
    """GeoRisk of each system within the matrix of that system and the same baselines.

    Where :func:`georisk` scores every row of one matrix against all the others, this scores
    each system on its own against fixed baselines: for system i the matrix is
    ``[systems[i]; baselines]`` and the value is its first row's GeoRisk ([GEO] Eq. 7, as the
    GeoRisk learner and :func:`lgb_risk.feval.risk_feval` measure a model).

    Parameters
    ----------
    systems : array-like (n_systems, n_queries) or (n_queries,)
    baselines : array-like (n_baselines, n_queries) or (n_queries,)

    >>> base = [[0.4, 0.3, 0.6], [0.1, 0.2, 0.3]]
    >>> georisk_against([[0.5, 0.2, 0.9]], base, alpha=5).round(4).tolist()
    [0.4345]
    """
    s, b = aligned("raise", systems=systems, baselines=baselines)
    if np.any(s < 0) or np.any(b < 0):
        raise ValueError("scores must be non-negative for GeoRisk")
    row_totals = s.sum(axis=1, keepdims=True)
    # Only each system's own row of its matrix is needed: its totals, and its z-scores.
    z = _residuals(s, row_totals, s + b.sum(axis=0), row_totals + b.sum())
    return _georisk(s, _zrisk(z, check_alpha(alpha)))


def urisk_against(systems: PerQuery, baselines: PerQuery, alpha: float = 1.0) -> np.ndarray:
    """URisk of each system against the per-query mean of the baselines ([TR] Eq. 4; with one
    baseline, :func:`urisk`).

    >>> urisk_against([[0.5, 0.2, 0.9, 0.4]], [0.4, 0.3, 0.6, 0.4], alpha=1).round(4).tolist()
    [0.05]
    """
    s, b = aligned("raise", systems=systems, baselines=baselines)
    return risk_deltas(s, b.mean(axis=0), alpha).mean(axis=1)


def trisk_against(systems: PerQuery, baselines: PerQuery, alpha: float = 1.0) -> np.ndarray:
    """TRisk of each system against the per-query mean of the baselines ([TR] Eq. 10; T*Risk,
    [GEO] Eq. 3, with several), NaN where it is undefined (fewer than 2 queries, or every x_q
    equal). :func:`trisk` gives the inference too.

    >>> trisk_against([[0.5, 0.2, 0.9, 0.4]], [0.4, 0.3, 0.6, 0.4], alpha=1).round(4).tolist()
    [0.4804]
    """
    s, b = aligned("raise", systems=systems, baselines=baselines)
    return _t_statistics(risk_deltas(s, b.mean(axis=0), alpha))[0]


def zrisk_against(systems: PerQuery, baselines: PerQuery, alpha: float = 1.0) -> np.ndarray:
    """ZRisk of each system within the matrix of that system and the baselines ([GEO] Eq. 6),
    as :func:`georisk_against` scores GeoRisk.

    >>> zrisk_against([[0.5, 0.2, 0.9]], [[0.4, 0.3, 0.6], [0.1, 0.2, 0.3]], 5).round(4).tolist()
    [-1.1244]
    """
    s, b = aligned("raise", systems=systems, baselines=baselines)
    if np.any(s < 0) or np.any(b < 0):
        raise ValueError("scores must be non-negative for ZRisk")
    row_totals = s.sum(axis=1, keepdims=True)
    z = _residuals(s, row_totals, s + b.sum(axis=0), row_totals + b.sum())
    return _zrisk(z, check_alpha(alpha))


class RiskMeasure(NamedTuple):
    """One registered risk measure of systems against baselines: ``against(systems, baselines,
    alpha)`` gives one value per system (systems × queries, baselines × queries; higher is
    better for every measure)."""

    name: str
    label: str
    summary: str
    against: Callable[..., np.ndarray]


#: The risk measures by name, read by :func:`lgb_risk.feval.risk_feval`, :func:`risk_rows` and
#: the experiment report.
RISK_MEASURES = {m.name: m for m in (
    RiskMeasure("urisk", "URisk", "mean risk-weighted difference to the baselines' mean",
                urisk_against),
    RiskMeasure("trisk", "TRisk", "URisk over its standard error (T*Risk with several "
                "baselines)", trisk_against),
    RiskMeasure("zrisk", "ZRisk", "risk-weighted sum of the z-scores within the systems and "
                "baselines", zrisk_against),
    RiskMeasure("georisk", "GeoRisk", "geometric mean of effectiveness and Φ(ZRisk / c)",
                georisk_against),
)}


def loss_field(loss_fraction: float = 0.2) -> str:
    """The name of :func:`summary`'s count of large losses: ``loss_gt_20`` for losses of more
    than 20% of the baseline (``loss_fraction=0.2``), ``loss_gt_12.5`` for 0.125.

    >>> loss_field(0.2), loss_field(0.125)
    ('loss_gt_20', 'loss_gt_12.5')
    """
    if not 0.0 < loss_fraction < 1.0:
        raise ValueError(f"loss_fraction must be in (0, 1), got {loss_fraction!r}")
    return f"loss_gt_{round(100 * loss_fraction, 6):g}"


def _summary_one(s: np.ndarray, b: np.ndarray, loss_fraction: float) -> dict:
    delta = s - b
    reward = np.maximum(delta, 0).mean()
    risk = np.maximum(-delta, 0).mean()
    wins = int(np.sum(delta > 0))
    losses = int(np.sum(delta < 0))
    return {
        "mean": s.mean(),
        "reward": reward,
        "risk": risk,
        "reward_risk": reward / risk if risk > 0 else (np.inf if reward > 0 else np.nan),
        "wins": wins,
        "losses": losses,
        "wins_losses": wins / losses if losses > 0 else (np.inf if wins > 0 else np.nan),
        loss_field(loss_fraction): int(np.sum((b > 0) & (s < (1.0 - loss_fraction) * b))),
    }


def summary(system: PerQuery, baselines: PerQuery, *, loss_fraction: float = 0.2,
            nan_policy: str = "raise") -> pd.Series:
    """Risk-reward summary of a system against baselines ([GEO] Table 7; [TR] Table 3).

    Fields: ``mean`` (of the system), ``reward`` (FReward), ``risk`` (FRisk), ``reward_risk``,
    ``wins`` (#δ > 0), ``losses`` (#δ < 0), ``wins_losses``, and the count of large losses
    #{M_b > 0 and M_s < (1 − loss_fraction) M_b}, named by the fraction (:func:`loss_field`:
    ``loss_gt_20`` by default). Ratios are ``inf`` when the denominator is 0 and the numerator
    is not, NaN when both are 0. Against several baselines (a matrix (n_baselines, n_queries)) each
    field is computed per baseline and then averaged (macro-average), so counts may be fractional.

    >>> fields = summary([0.5, 0.2, 0.9, 0.4], [0.4, 0.3, 0.6, 0.4])
    >>> fields[["reward", "risk", "wins"]].round(4).tolist()
    [0.1, 0.025, 2.0]
    """
    import pandas as pd

    s, bs = aligned(nan_policy, system=system, baselines=baselines)
    rows = [_summary_one(s[0], b, loss_fraction) for b in bs]
    return pd.DataFrame(rows).mean(axis=0)


def risk_table(scores: pd.DataFrame, alphas: Sequence[float] = DEFAULT_ALPHAS,
               baseline: str | None = None, correction: str | None = None,
               loss_fraction: float = 0.2, test: str = "t") -> pd.DataFrame:
    """Every risk measure of every system of a population, for several α.

    Parameters
    ----------
    scores : DataFrame
        Per-query effectiveness, systems × queries (index: system names; columns: queries),
        no missing value.
    alphas : sequence of float
    baseline : str, optional
        A system of ``scores`` to compare every system against (URisk, TRisk, and ZRisk/GeoRisk
        with this single baseline, r = 2).

    Returns
    -------
    DataFrame
        One row per system and α, columns ``run, alpha, mean, zrisk, georisk, tstar_risk``
        (ZRisk and GeoRisk within the whole population, [GEO] Table 5; T*Risk against the
        per-query mean of all systems, [GEO] Table 6), then with a baseline ``urisk, trisk,
        trisk_p, zrisk_baseline, georisk_baseline`` ([GEO] Table 4; ``trisk_p`` from ``test``,
        :data:`TESTS`), and with a ``correction`` ``trisk_p_METHOD``; and
        ``wins, losses, ties, loss_gt_20`` (:func:`risk_rows`). Baseline
        columns are empty
        (NaN) on the baseline's own row, and TRisk is empty where it is undefined (SE = 0).

    Examples
    --------
    >>> import pandas as pd
    >>> scores = pd.DataFrame([[0.5, 0.2, 0.9], [0.4, 0.3, 0.6]], index=["model", "bm25"],
    ...                       columns=["q1", "q2", "q3"])
    >>> table = risk_table(scores, alphas=[5], baseline="bm25")
    >>> table[["run", "urisk", "georisk"]].round(4).to_dict("list")
    {'run': ['model', 'bm25'], 'urisk': [-0.0667, nan], 'georisk': [0.4602, 0.44]}
    """
    import pandas as pd

    if scores.isna().any().any():
        bad = scores.isna().stack()
        system, query = bad[bad].index[0]
        raise ValueError(f"no score for system {system!r} on query {query!r}; every system needs "
                         "a score on every query")
    matrix = scores.to_numpy(dtype=np.float64)
    negative = np.argwhere(matrix < 0)
    if negative.size:
        i, j = negative[0]
        raise ValueError(f"the score of system {scores.index[i]!r} on query {scores.columns[j]!r} "
                         f"is {matrix[i, j]}; ZRisk and GeoRisk are defined for effectiveness "
                         ">= 0")
    # A row names its run as every table of the library does (``run``; risk_rows' "system").
    return pd.DataFrame(risk_rows(matrix, list(scores.index), alphas, baseline, correction,
                                  loss_fraction, test)).rename(columns={"system": "run"})


#: The tests of a system against the baseline whose p-value ``trisk_p`` holds: TRisk's
#: t-test of the risk-weighted differences x_q ([TR] Eq. 10), or the paired randomisation test
#: of their mean, URisk (:func:`urisk_randomisation_p`).
TESTS = {"t": "TRisk's two-sided $t$-test of the risk-weighted differences $x_q$",
         "randomisation": "paired randomisation test of URisk (the mean of the risk-weighted "
                          "differences $x_q$; 9,999 sign flips, seeded)"}


def urisk_randomisation_p(system: ArrayLike, baseline: ArrayLike, alpha: float = 1.0, *,
                          resamples: int = 9999, seed: int = 0) -> float:
    """Two-sided p-value of URisk = mean x_q against 0 by a paired randomisation test: under the
    null hypothesis each query's system and baseline values are exchangeable, so each
    δ_q = M_s(q) − M_b(q) is as likely to be −δ_q; the p-value is the share of ``resamples``
    seeded sign flips (and the observed one) whose absolute URisk reaches the observed one. NaN
    where every δ_q is 0.

    Four queries each 0.1 above the baseline, α = 1: of the 16 sign patterns, 6 reach the
    observed absolute URisk of 0.1 (all up, all down at 0.2, and the four with one up at 0.125):

    >>> round(urisk_randomisation_p([0.5, 0.6, 0.7, 0.8], [0.4, 0.5, 0.6, 0.7], 1), 2)
    0.37
    """
    delta = np.asarray(system, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    if not np.any(delta):
        return float("nan")
    alpha = check_alpha(alpha)
    observed = abs(float(downside_weighted(delta, alpha).mean()))
    rng = np.random.default_rng(seed)
    reaching = 0
    for start in range(0, resamples, 1000):
        flips = np.where(rng.random((min(1000, resamples - start), delta.size)) < 0.5, -1.0, 1.0)
        null = np.abs(downside_weighted(flips * delta, alpha).mean(axis=1))
        reaching += int(np.count_nonzero(null >= observed - 1e-15))
    return (1 + reaching) / (1 + resamples)


def risk_rows(matrix: np.ndarray, systems: list, alphas: Sequence[float] = DEFAULT_ALPHAS,
              baseline: str | None = None, correction: str | None = None,
              loss_fraction: float = 0.2, test: str = "t") -> list[dict]:
    """:func:`risk_table`'s rows from a finite systems × queries matrix and the systems' names.
    ``test`` (:data:`TESTS`) gives the ``trisk_p`` column.

    With a ``baseline`` and a ``correction`` (:data:`lgb_risk.significance.CORRECTIONS`), the
    TRisk p-values of the systems compared to the baseline at each α are corrected as one
    family, in a column named after the method (``trisk_p_holm``). With a baseline the rows
    also count each system's ``wins``, ``losses`` and ``ties`` against it (queries above, below,
    equal) and its large losses, queries more than ``loss_fraction`` below a baseline value
    > 0 (:func:`loss_field`: ``loss_gt_20``).

    >>> rows = risk_rows(np.array([[0.5, 0.2, 0.9], [0.4, 0.3, 0.6]]), ["model", "bm25"],
    ...                  alphas=[1], baseline="bm25")
    >>> rows[0]["system"], round(rows[0]["urisk"], 4)
    ('model', 0.0667)
    """
    if baseline is not None and baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not among the systems "
                         f"{', '.join(map(str, systems))}")
    check_choice(test, "test", tuple(TESTS))
    if correction is not None:
        if baseline is None:
            raise ValueError("a correction of the TRisk p-values needs a baseline")
        corrected_p_values([], correction)  # an unknown method is refused before any work
    n_queries = matrix.shape[1]
    population_mean = matrix.mean(axis=0)
    own = np.array([system == baseline for system in systems])
    counts: dict[str, np.ndarray] = {}
    if baseline is not None:
        b = matrix[systems.index(baseline)]
        delta = matrix - b
        counts = {"wins": np.sum(delta > 0, axis=1), "losses": np.sum(delta < 0, axis=1),
                  "ties": np.sum(delta == 0, axis=1),
                  loss_field(loss_fraction): np.sum((b > 0) & (matrix < (1.0 - loss_fraction)
                                                               * b), axis=1)}
    rows = []
    for alpha in alphas:
        alpha = check_alpha(alpha)
        z_all = zrisk(matrix, alpha)
        geo_all = _georisk(matrix, z_all)
        tstar, _, _ = _t_statistics(risk_deltas(matrix, population_mean, alpha))
        columns = {"zrisk": z_all, "georisk": geo_all, "tstar_risk": tstar}
        if baseline is not None:
            against = {name: RISK_MEASURES[name].against(matrix, b, alpha)
                       for name in ("urisk", "trisk", "zrisk", "georisk")}
            columns.update({
                "urisk": against["urisk"], "trisk": against["trisk"],
                "trisk_p": (np.array([student_t_two_sided_p(v, n_queries - 1) if v == v
                                      else np.nan for v in against["trisk"].tolist()])
                            if test == "t" else
                            np.array([urisk_randomisation_p(row, b, alpha) for row in matrix])),
                "zrisk_baseline": against["zrisk"],
                "georisk_baseline": against["georisk"],
            })
            for name in ("urisk", "trisk", "trisk_p", "zrisk_baseline", "georisk_baseline"):
                columns[name] = np.where(own, np.nan, columns[name])
            if correction is not None:
                columns[f"trisk_p_{correction}"] = corrected_p_values(columns["trisk_p"],
                                                                      correction)

        columns = {"mean": matrix.mean(axis=1), **columns}
        as_floats = {name: values.tolist() for name, values in columns.items()}
        for i, system in enumerate(systems):
            rows.append({"system": system, "alpha": alpha,
                         **{name: values[i] for name, values in as_floats.items()},
                         **{name: None if own[i] else int(values[i])  # the baseline's own row
                            for name, values in counts.items()}})
    return rows


def trisk_if_defined(system: PerQuery, baseline: PerQuery,
                     alpha: float = 1.0) -> TRiskResult | None:
    """:func:`trisk`, or None where TRisk is undefined (fewer than 2 queries, or a standard
    deviation of the x_q that is 0 in floating point: every x_q equal, or differences that
    underflow).

    For tables and training-time monitoring, where one undefined value must not stop the rest.

    >>> trisk_if_defined([0.5, 0.5], [0.4, 0.4]) is None  # every x_q equal: SE = 0
    True
    """
    x = risk_deltas(system, baseline, alpha)
    return trisk(system, baseline, alpha) if x.size > 1 and x.std(ddof=1) > 0 else None

