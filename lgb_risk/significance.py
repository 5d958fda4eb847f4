"""Paired significance tests of one system against another on the same queries, each with the
smallest difference it can detect.

A test that finds nothing says little unless one knows what it could have found: every test here
returns, beside its p-value, the *minimal detectable difference* — the smallest true difference
that the test, at two-sided level ``level`` and with these queries, finds with probability
``power`` (0.8 and 0.05 by convention; Cohen 1988, ch. 2).

- :func:`paired_t_test`: Student's paired t-test of the mean per-query difference. Its
  detectable difference δ solves P(T' > t_{1−level/2, n−1}) = power for T' noncentral t with
  n − 1 degrees of freedom and noncentrality δ √n / s_d (s_d the sample standard deviation of the
  per-query differences, taken as the truth).
- :func:`paired_randomisation_test`: for a statistic that is not a mean of per-query values
  (GeoRisk of a system within a matrix of baselines). Under the null hypothesis the two systems
  are exchangeable on every query, so each query's pair of values is swapped with probability
  1/2 (a sign flip; Fisher's randomisation test, as Smucker, Allan & Carterette, CIKM 2007, use it
  for IR). p = (1 + #{abs(d*) ≥ abs(d)}) / (1 + resamples); the detectable difference is
  (z_{1−level/2} + z_power) · sd(d*), the normal approximation of the null distribution.

And the other way round, how many topics a test needs to detect a difference (Sakai's
topic-set-size design, Sakai 2016, "Topic set size design", Information Retrieval Journal):

- :func:`topics_needed` and its inverse :func:`detectable_difference`: the paired t-test of a
  mean, exactly, by the noncentral t distribution (both tails, :func:`t_test_power`); URisk's
  and TRisk's tests are t-tests of the risk-weighted differences x_q at α, so they take those
  differences' sd and mean (:func:`lgb_risk.risk.risk_deltas`). ``comparisons`` m divides the
  level (Bonferroni, also Holm's strictest step: enough for Holm too).
- :func:`simulated_power` and :func:`topics_needed_by_simulation`: tests without a closed form
  (the randomisation tests of URisk and GeoRisk, :func:`sign_test` of wins against losses), by
  resampling a pilot's topics, seeded, with the Monte Carlo error stated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lgb_risk._validation import check_whole_number

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from lgb_risk._typing import ArrayLike

__all__ = ["PairedTest", "paired_t_test", "paired_randomisation_test", "corrected_p_values",
           "CORRECTIONS", "detectable_mean_difference", "t_test_power", "topics_needed",
           "detectable_difference", "simulated_power", "topics_needed_by_simulation",
           "sign_test"]


@dataclass(frozen=True)
class PairedTest:
    """A paired test's result.

    Attributes
    ----------
    difference : float
        The statistic of the first system minus that of the second.
    p_value : float
        Two-sided; NaN where the two systems are equal on every query.
    detectable : float
        The minimal detectable difference of the statistic (see the module docstring); NaN where
        the differences do not vary.
    n : int
        Number of queries.
    spread : float
        The per-query standard deviation the test's power depends on: of the differences for
        the t-test; for the randomisation test, its null distribution's sd times √n (so that
        the normal approximation scales with n alike). NaN where there is none.
    test : str
        ``"t"`` or ``"randomisation"``.
    p_error : float
        The p-value's Monte Carlo standard error (0 for the t-test).
    """

    difference: float
    p_value: float
    detectable: float
    n: int
    spread: float = float("nan")
    test: str = "t"
    p_error: float = 0.0

    def queries_needed(self, *, power: float = 0.8, level: float = 0.05,
                       comparisons: int = 1) -> float:
        """The queries at which the test detects the observed difference with ``power`` at
        ``level`` Bonferroni-corrected for ``comparisons``: the t-test's exactly
        (:func:`topics_needed`), the randomisation test's by its normal approximation,
        ((z_{1−level/2m} + z_power) · spread / difference)²; NaN where the difference is 0 or
        does not vary.

        >>> t = paired_t_test([0.5, 0.6, 0.7, 0.4, 0.6], [0.4, 0.6, 0.5, 0.3, 0.5])
        >>> t.queries_needed()
        7
        """
        if not self.difference or not self.spread > 0:
            return float("nan")
        if self.test == "t":
            return topics_needed(self.spread, self.difference, power=power, level=level,
                                 comparisons=comparisons)
        from scipy import stats

        z = stats.norm.ppf(1 - _levels(level, comparisons) / 2) + stats.norm.ppf(power)
        return float(np.ceil((z * self.spread / self.difference) ** 2))


def _pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(f"a paired test needs two vectors of the same queries (at least 2), got "
                         f"shapes {a.shape} and {b.shape}")
    bad = ~(np.isfinite(a) & np.isfinite(b))
    if bad.any():
        raise ValueError(f"per-query values must be finite; query index "
                         f"{int(np.flatnonzero(bad)[0])} is not")
    return a, b


def detectable_mean_difference(sd: float, n: int, *, power: float = 0.8,
                               level: float = 0.05) -> float:
    """Smallest true mean difference that a two-sided paired t-test at ``level`` on ``n``
    queries finds with probability ``power``, if the per-query differences have standard
    deviation ``sd`` (the far tail's mass, below −t, is left out, as is usual).

    >>> round(detectable_mean_difference(0.1, 100), 4)  # ≈ (1.98 + 0.85) · 0.1 / √100
    0.0283
    """
    from scipy import optimize, stats

    if not (0 < power < 1 and 0 < level < 1) or n < 2:
        raise ValueError(f"need 0 < power, level < 1 and n >= 2, got {power}, {level}, {n}")
    if not sd > 0:
        return float("nan")
    df = n - 1
    critical = stats.t.ppf(1 - level / 2, df)

    def shortfall(effect):
        return stats.nct.sf(critical, df, effect * np.sqrt(n) / sd) - power

    upper = (critical + stats.norm.ppf(power) + 1.0) * sd / np.sqrt(n) * 2
    return float(optimize.brentq(shortfall, 0.0, upper, xtol=1e-12 * sd))


def paired_t_test(a: ArrayLike, b: ArrayLike, *, power: float = 0.8,
                  level: float = 0.05) -> PairedTest:
    """Student's paired t-test of mean(a) − mean(b), with its minimal detectable difference.

    Where every query differs by the same amount (standard deviation 0) the t statistic is
    infinite: p is 0 for a non-zero shift, and NaN (no test) where a equals b.

    >>> t = paired_t_test([0.5, 0.6, 0.7, 0.4], [0.4, 0.6, 0.5, 0.3])
    >>> round(t.difference, 3), round(t.p_value, 3)
    (0.1, 0.092)
    >>> paired_t_test([0.5, 0.75], [0.25, 0.5]).p_value  # a constant shift
    0.0
    """
    from scipy import stats

    a, b = _pair(a, b)
    d = a - b
    sd = float(d.std(ddof=1))
    if sd > 0:
        p = float(stats.ttest_rel(a, b).pvalue)
    else:
        p = 0.0 if d[0] != 0 else float("nan")
    return PairedTest(float(d.mean()), p, detectable_mean_difference(sd, d.size, power=power,
                                                                     level=level), d.size,
                      spread=sd)


#: How far (in Monte Carlo standard errors) a randomisation p-value must lie from a decision's
#: level before more sign flips stop being drawn (:func:`paired_randomisation_test`).
DECISION_MARGIN_SE = 3.0
#: At most this many times the sign flips asked for are drawn to settle a decision.
MOST_RESAMPLES_FACTOR = 64


def paired_randomisation_test(statistic: Callable[[np.ndarray], np.ndarray], a: ArrayLike,
                              b: ArrayLike, *, resamples: int = 10000, seed: int = 0,
                              power: float = 0.8, level: float = 0.05,
                              decide_at: Sequence[float] = ()) -> PairedTest:
    """Randomisation (sign-flip) test of statistic(a) − statistic(b) for paired per-query values.

    The p-value is a Monte Carlo estimate with standard error √(p(1 − p)/resamples)
    (``p_error``). Where it lies within :data:`DECISION_MARGIN_SE` errors of a level in
    ``decide_at`` (0.05, a corrected level), more flips of the same seeded stream are drawn,
    doubling, up to :data:`MOST_RESAMPLES_FACTOR` times ``resamples``, so that the error cannot
    move the decision; elsewhere the result is that of ``resamples`` flips, bit for bit.

    Parameters
    ----------
    statistic : callable
        Maps an array (m, n_queries) of m systems' per-query values to m values (each row on its
        own: e.g. GeoRisk of the row within the matrix of that row and fixed baselines).
    a, b : array-like (n_queries,)
    resamples : int
        Random relabellings (seeded, so the p-value is reproducible).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.uniform(size=50); b = a - 0.05
    >>> t = paired_randomisation_test(lambda rows: rows.mean(axis=1), a, b, resamples=999)
    >>> t.p_value  # every relabelling gives a smaller difference
    0.001
    """
    if not callable(statistic):
        raise TypeError(f"statistic must be a function of an array (m, n_queries) giving m "
                        f"values, got {type(statistic).__name__} (the call is "
                        "paired_randomisation_test(statistic, a, b))")
    a, b = _pair(a, b)
    resamples = check_whole_number(resamples, "resamples")
    from scipy import stats

    observed = _row_values(statistic, np.vstack([a, b]))
    difference = float(observed[0] - observed[1])
    if np.array_equal(a, b):
        return PairedTest(difference, float("nan"), float("nan"), a.size)
    rng = np.random.default_rng(seed)
    chunk = max(1, 4_000_000 // (2 * a.size))

    def flips(count: int) -> np.ndarray:
        """The next ``count`` statistics of relabelled pairs from the seeded stream."""
        null = np.empty(count)
        for start in range(0, count, chunk):
            m = min(chunk, count - start)
            swap = rng.random((m, a.size)) < 0.5
            first, second = np.where(swap, b, a), np.where(swap, a, b)
            values = _row_values(statistic, np.vstack([first, second]))
            null[start:start + m] = values[:m] - values[m:]
        return null

    def p_and_error(null: np.ndarray) -> tuple[float, float]:
        p = (1 + np.count_nonzero(np.abs(null) >= abs(difference) - 1e-15)) / (1 + null.size)
        return float(p), float(np.sqrt(p * (1 - p) / null.size))

    null = flips(resamples)
    p, error = p_and_error(null)
    while (any(abs(p - t) < DECISION_MARGIN_SE * error for t in decide_at)
           and null.size < MOST_RESAMPLES_FACTOR * resamples):
        null = np.concatenate([null, flips(null.size)])  # the same stream, doubled
        p, error = p_and_error(null)
    z = stats.norm.ppf(1 - level / 2) + stats.norm.ppf(power)
    null_sd = float(null.std(ddof=1))
    return PairedTest(difference, p, float(z * null_sd), a.size,
                      spread=null_sd * np.sqrt(a.size), test="randomisation", p_error=error)


def _row_values(statistic, rows: np.ndarray) -> np.ndarray:
    """``statistic(rows)``, checked to be one finite number per row."""
    values = np.asarray(statistic(rows), dtype=np.float64)
    if values.shape != (rows.shape[0],):
        raise ValueError(f"statistic must map an array ({rows.shape[0]}, n_queries) to "
                         f"{rows.shape[0]} values, one per row (e.g. rows.mean(axis=1)); it "
                         f"returned shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError("statistic returned a value that is not finite")
    return values


#: The corrections of p-values for multiple comparisons, by name: Bonferroni's and Holm's
#: control the family-wise error rate, Benjamini–Hochberg's the false discovery rate.
CORRECTIONS = {"bonferroni": "Bonferroni", "holm": "Holm", "bh": "Benjamini-Hochberg"}


def corrected_p_values(p_values: ArrayLike, method: str) -> np.ndarray:
    """p-values corrected for the m comparisons of one family (NaN entries, undefined tests,
    are kept as NaN and not counted in m).

    With p_(1) <= ... <= p_(m) the sorted p-values:

    - ``"bonferroni"``: min(1, m p_i);
    - ``"holm"`` (Holm 1979, step-down): p̃_(i) = max_{j <= i} min(1, (m − j + 1) p_(j));
    - ``"bh"`` (Benjamini & Hochberg 1995, step-up): p̃_(i) = min_{j >= i} min(1, m p_(j) / j),
      as ``scipy.stats.false_discovery_control`` computes it.

    A comparison is significant at level a after the correction where p̃ < a.

    >>> corrected_p_values([0.01, 0.04, 0.03], "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> corrected_p_values([0.01, 0.04, 0.03], "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p-values must be one-dimensional, got shape {p.shape}")
    defined = ~np.isnan(p)
    if np.any((p[defined] < 0) | (p[defined] > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    values = p[defined]
    m = values.size
    if m == 0:
        return out
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    if method == "bonferroni":
        adjusted = np.minimum(1.0, m * ranked)
    elif method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    else:
        step_up = np.minimum(1.0, m * ranked / np.arange(1, m + 1))
        adjusted = np.minimum.accumulate(step_up[::-1])[::-1]
    result = np.empty(m)
    result[order] = adjusted
    out[defined] = result
    return out


# -- how many topics a test needs ------------------------------------------------------------


def _levels(level: float, comparisons: int) -> float:
    """The level each of ``comparisons`` tests is run at: Bonferroni's ``level / m``, which is
    also Holm's first (strictest) step, so that the topics it needs are enough under Holm."""
    check_whole_number(comparisons, "comparisons")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return level / comparisons


def t_test_power(sd: float, difference: float, n: int, *, level: float = 0.05,
                 comparisons: int = 1) -> float:
    """The power of a two-sided paired t-test at ``level`` (Bonferroni-corrected for
    ``comparisons``) on ``n`` topics, for a true mean difference ``difference`` and per-topic
    differences of standard deviation ``sd``: P(abs(T') > t_{1−level/2, n−1}) for T' noncentral t
    with n − 1 degrees of freedom and noncentrality δ √n / sd (both tails; Sakai 2016,
    "Topic set size design", Eq. 3).

    >>> round(t_test_power(0.1, 0.0283, 100), 3)
    0.8
    """
    from scipy import stats

    n = check_whole_number(n, "n")
    if n < 2:
        raise ValueError(f"a paired t-test needs n >= 2 topics, got {n}")
    if not sd > 0:
        raise ValueError(f"sd must be > 0, got {sd!r}")
    alpha = _levels(level, comparisons)
    df = n - 1
    critical = stats.t.ppf(1 - alpha / 2, df)
    shift = abs(difference) * np.sqrt(n) / sd
    # The far tail P(T' < −t) as the upper tail of −T' (noncentrality −shift): scipy's lower
    # tail at a large noncentrality is NaN where this is a clean 0.
    return float(stats.nct.sf(critical, df, shift) + stats.nct.sf(critical, df, -shift))


def topics_needed(sd: float, difference: float, *, power: float = 0.8, level: float = 0.05,
                  comparisons: int = 1) -> int:
    """The smallest number of topics at which a two-sided paired t-test at ``level``
    (Bonferroni-corrected for ``comparisons``: ``level / m``, Holm's strictest step) detects a
    true mean difference ``difference`` with at least ``power``, for per-topic differences of
    standard deviation ``sd`` — exact, by the noncentral t distribution (:func:`t_test_power`),
    not by the normal approximation ((z_{1−level/2} + z_power) · sd / δ)², which it starts
    from. Sakai's topic-set-size design (Sakai 2016) for a mean; for URisk and TRisk give the sd
    and mean of the risk-weighted differences x_q at α (:func:`lgb_risk.risk.risk_deltas`).

    >>> topics_needed(0.1, 0.0283)
    100
    >>> topics_needed(0.1, 0.0283, comparisons=7)  # seven runs against one baseline
    160
    """
    from scipy import stats

    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    if not difference or not np.isfinite(difference):
        raise ValueError(f"difference must be a finite non-zero number, got {difference!r}: no "
                         "number of topics detects a difference of 0")
    alpha = _levels(level, comparisons)
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    guess = max(2, int(np.floor((z * sd / abs(difference)) ** 2)))

    def enough(n: int) -> bool:
        return t_test_power(sd, difference, n, level=level, comparisons=comparisons) >= power

    low, high = 2, guess
    while not enough(high):  # the t-test needs more than the normal approximation
        low, high = high, high * 2
    if enough(low):
        return low
    while high - low > 1:  # power grows with n: the first n that is enough
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high


def detectable_difference(sd: float, n: int, *, power: float = 0.8, level: float = 0.05,
                          comparisons: int = 1) -> float:
    """The inverse of :func:`topics_needed`: the smallest true mean difference that a
    two-sided paired t-test at ``level`` (Bonferroni-corrected for ``comparisons``) on ``n``
    topics detects with ``power``, by the noncentral t distribution (both tails).

    >>> round(detectable_difference(0.1, 100), 4)
    0.0283
    """
    from scipy import optimize

    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    t_test_power(sd, 1.0, n, level=level, comparisons=comparisons)  # checks the arguments

    def shortfall(effect):
        return t_test_power(sd, effect, n, level=level, comparisons=comparisons) - power

    upper = sd
    while shortfall(upper) < 0:
        upper *= 2
    return float(optimize.brentq(shortfall, 0.0, upper, xtol=1e-12 * sd))


def simulated_power(test: Callable[[np.ndarray], float], n_pilot: int, n: int, *,
                    draws: int = 1000, level: float = 0.05, comparisons: int = 1,
                    seed: int = 0) -> tuple[float, float]:
    """The power of a test with no closed form (a randomisation test, the sign test of wins
    and losses), by simulation from a pilot: ``draws`` sets of ``n`` topics drawn with
    replacement from the pilot's ``n_pilot`` (seeded), each given to ``test`` as the pilot's
    topic indices, which returns that set's p-value; the fraction below ``level / comparisons``
    and its Monte Carlo standard error √(p(1 − p)/draws). The pilot's topics stand in for the
    population: the power is that of a collection like the pilot's.

    >>> rng = np.random.default_rng(1)
    >>> d = rng.normal(0.05, 0.1, 60)
    >>> sign = lambda topics: sign_test(d[topics])
    >>> power, se = simulated_power(sign, d.size, 100, draws=200)
    >>> 0.5 < power <= 1.0 and se < 0.04
    True
    """
    n_pilot, n = check_whole_number(n_pilot, "n_pilot"), check_whole_number(n, "n")
    draws = check_whole_number(draws, "draws")
    alpha = _levels(level, comparisons)
    rng = np.random.default_rng(seed)
    found = sum(bool(test(rng.integers(0, n_pilot, n)) < alpha) for _ in range(draws))
    power = found / draws
    return power, float(np.sqrt(power * (1 - power) / draws))


def topics_needed_by_simulation(test: Callable[[np.ndarray], float], n_pilot: int, *,
                                power: float = 0.8, level: float = 0.05, comparisons: int = 1,
                                draws: int = 400, seed: int = 0, most: int = 1_000_000,
                                start: int = 2) -> int:
    """The smallest number of topics whose :func:`simulated_power` (the same seeded draws at
    every size, so that the search sees a smooth curve) reaches ``power``, searched by doubling
    from ``start`` (a guess, such as the t-test's :func:`topics_needed`, spares the costly
    small sizes' simulations) and bisecting; ``most`` bounds the search (a ValueError where
    even that many do not reach it). Within the Monte Carlo error of ``draws``: state it
    beside the answer.

    >>> rng = np.random.default_rng(1)
    >>> d = rng.normal(0.05, 0.1, 60)
    >>> topics_needed_by_simulation(lambda topics: sign_test(d[topics]), d.size, draws=200)
    37
    """
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")

    def enough(n: int) -> bool:
        return simulated_power(test, n_pilot, n, draws=draws, level=level,
                               comparisons=comparisons, seed=seed)[0] >= power

    low, high = 1, max(2, min(int(start), most))
    while not enough(high):
        if high >= most:
            raise ValueError(f"{most} topics do not reach power {power:g}: the effect is too "
                             "small for this test, or there is none")
        low, high = high, min(most, high * 2)
    while low == 1 and high > 2 and enough(high // 2):  # the guess was more than enough
        high //= 2
    if low == 1:
        low = max(1, high // 2)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high


def sign_test(differences: ArrayLike) -> float:
    """The two-sided sign test of wins against losses (per-topic differences > 0 against < 0,
    ties left out): the binomial test of the wins among the topics that differ, p = 1/2; 1.0
    where none differs.

    >>> sign_test([0.1, 0.2, -0.1, 0.3, 0.0])
    0.625
    """
    from scipy import stats

    d = np.asarray(differences, dtype=np.float64)
    wins, losses = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
    if wins + losses == 0:
        return 1.0
    return float(stats.binomtest(wins, wins + losses, 0.5).pvalue)
