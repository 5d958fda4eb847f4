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

from lgb_risk._inputs.validation import check_whole_number

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from lgb_risk._inputs.type_aliases import ArrayLike

__all__ = ["PairedTest", "paired_t_test", "paired_randomisation_test", "corrected_p_values",
           "CORRECTIONS", "detectable_mean_difference", "t_test_power", "topics_needed",
           "detectable_difference", "topics_needed_by_resampling", "simulated_power",
           "topics_needed_by_simulation",
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

#: The most topics an answer may be: beyond 2**53 whole numbers are no longer exact in
#: floating point, and a difference that needs so many is, for any collection, none.
MOST_TOPICS = 2.0 ** 53


def _levels(level: float, comparisons: int) -> float:
    """The level each of ``comparisons`` tests is run at: Bonferroni's ``level / m``, which is
    also Holm's first (strictest) step, so that the topics it needs are enough under Holm."""
    check_whole_number(comparisons, "comparisons")
    if not _finite(level) or not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return level / comparisons


def _finite(value) -> bool:
    """A real number (not a bool, not text) that is finite."""
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, (bool, np.bool_)) and bool(np.isfinite(value)))


def _check_design(power: float, level: float) -> None:
    """The power and level of a design: each in (0, 1), the power above the level — a
    two-sided test rejects in a share ``level`` of samples where there is no difference at
    all, so a power at or below it is reached with no topics and says nothing."""
    if not _finite(power) or not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    if not _finite(level) or not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if power <= level:
        raise ValueError(f"power ({power:g}) must be above level ({level:g}): with no "
                         "difference at all the test already rejects in a share level of "
                         "samples (usual: power 0.8, level 0.05)")


def _check_sd(sd) -> float:
    """The per-topic differences' standard deviation: a finite number >= 0."""
    if not _finite(sd) or sd < 0:
        raise ValueError(f"sd must be a finite number >= 0 (the per-topic differences' "
                         f"standard deviation), got {sd!r}")
    return float(sd)


def _check_difference(difference) -> float:
    if not _finite(difference):
        raise ValueError(f"difference must be a finite number, got {difference!r}")
    return float(difference)


def _power_of_effects(effect: np.ndarray, n: np.ndarray, alpha: float) -> np.ndarray:
    """The two-sided paired t-test's power at per-test level ``alpha`` on ``n`` topics for
    standardised true differences ``effect`` = abs(δ) / sd (inf where sd is 0): P(abs(T') >
    t_{1−alpha/2, n−1}) for T' noncentral t with n − 1 degrees of freedom and noncentrality
    effect · √n. Element by element, arrays broadcast."""
    from scipy import stats

    df = n - 1.0
    critical = stats.t.ppf(1 - alpha / 2, df)
    with np.errstate(invalid="ignore", over="ignore"):
        shift = effect * np.sqrt(n)
        near = stats.nct.sf(critical, df, shift)
        # The far tail P(T' < −t) as the upper tail of −T' (noncentrality −shift): scipy's
        # lower tail at a large noncentrality is NaN where this is a clean 0.
        far = stats.nct.sf(critical, df, -shift)
    # scipy's noncentral t is NaN beyond a noncentrality of about 1e10 (and at inf): there the
    # near tail is the whole distribution and the far tail none of it.
    near = np.where(np.isnan(near), 1.0, near)
    far = np.where(np.isnan(far), 0.0, far)
    return near + far


def _topics_needed_for_effects(effect: np.ndarray, power: float, alpha: float) -> np.ndarray:
    """For each standardised difference ``effect`` = abs(δ) / sd (>= 0, inf where sd is 0),
    the smallest n >= 2 whose :func:`_power_of_effects` reaches ``power``; inf where the
    effect is 0 or the answer is beyond :data:`MOST_TOPICS`. Searched as one bisection over
    all effects at once, from the normal approximation ((z_{1−alpha/2} + z_power) / effect)²
    doubled until enough (the t-test needs more than the approximation, never fewer than 2)."""
    from scipy import stats

    effect = np.asarray(effect, dtype=np.float64)
    answer = np.full(effect.shape, np.inf)
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    with np.errstate(divide="ignore", over="ignore"):
        guess = np.floor((z / effect) ** 2)
    searched = guess <= MOST_TOPICS
    if not searched.any():
        return answer
    e = effect[searched]

    def enough(effects, n):
        return _power_of_effects(effects, n, alpha) >= power

    at_two = enough(e, np.full(e.shape, 2.0))
    low = np.full(e.shape, 2.0)
    high = np.maximum(2.0, guess[searched])
    open_ = ~at_two & ~enough(e, high)
    beyond = np.zeros(e.shape, dtype=bool)
    while open_.any():  # double until enough: low stays the last size that was not
        low[open_], high[open_] = high[open_], high[open_] * 2
        beyond |= open_ & (high > MOST_TOPICS)
        open_ &= ~beyond
        open_[open_] = ~enough(e[open_], high[open_])
    done = at_two | beyond
    open_ = ~done & (high - low > 1)
    while open_.any():  # power grows with n: the first n that is enough
        middle = np.floor((low[open_] + high[open_]) / 2)
        is_enough = enough(e[open_], middle)
        index = np.flatnonzero(open_)
        high[index[is_enough]] = middle[is_enough]
        low[index[~is_enough]] = middle[~is_enough]
        open_ = ~done & (high - low > 1)
    found = np.where(at_two, 2.0, np.where(beyond, np.inf, high))
    answer[searched] = np.where(found <= MOST_TOPICS, found, np.inf)
    return answer


def t_test_power(sd: float, difference: float, n: int, *, level: float = 0.05,
                 comparisons: int = 1) -> float:
    """The power of a two-sided paired t-test at ``level`` (Bonferroni-corrected for
    ``comparisons``) on ``n`` topics, for a true mean difference ``difference`` and per-topic
    differences of standard deviation ``sd``: P(abs(T') > t_{1−level/2, n−1}) for T' noncentral t
    with n − 1 degrees of freedom and noncentrality δ √n / sd (both tails; Sakai 2016,
    "Topic set size design", Eq. 3). Where sd is 0 and δ is not, every sample shows δ with no
    spread: the power is 1.

    >>> round(t_test_power(0.1, 0.0283, 100), 3)
    0.8
    >>> t_test_power(0.0, 0.1, 2)  # a constant difference
    1.0
    """
    n = check_whole_number(n, "n")
    if n < 2:
        raise ValueError(f"a paired t-test needs n >= 2 topics, got {n}")
    sd, difference = _check_sd(sd), _check_difference(difference)
    alpha = _levels(level, comparisons)
    if sd == 0:
        if difference == 0:
            raise ValueError("sd and difference are both 0: the t statistic is 0/0, no test")
        return 1.0
    effect = np.array([abs(difference) / sd])
    return float(_power_of_effects(effect, np.array([float(n)]), alpha)[0])


def topics_needed(sd: float, difference: float, *, power: float = 0.8, level: float = 0.05,
                  comparisons: int = 1) -> int:
    """The smallest number of topics at which a two-sided paired t-test at ``level``
    (Bonferroni-corrected for ``comparisons``: ``level / m``, Holm's strictest step) detects a
    true mean difference ``difference`` with at least ``power``, for per-topic differences of
    standard deviation ``sd`` — exact, by the noncentral t distribution (:func:`t_test_power`),
    not by the normal approximation ((z_{1−level/2} + z_power) · sd / δ)², which it starts
    from. Sakai's topic-set-size design (Sakai 2016) for a mean; for URisk and TRisk give the sd
    and mean of the risk-weighted differences x_q at α (:func:`lgb_risk.risk.risk_deltas`).

    A difference with no spread (sd 0, or so small against δ that the noncentrality is beyond
    floating point) is found by any 2 topics. The answer is that of a pilot's sd and δ taken
    as the truth: :func:`lgb_risk.power.power_table` gives it with the pilot's own uncertainty.

    >>> topics_needed(0.1, 0.0283)
    100
    >>> topics_needed(0.1, 0.0283, comparisons=7)  # seven runs against one baseline
    160
    >>> topics_needed(0.0, 0.1)  # every topic gains 0.1
    2
    """
    _check_design(power, level)
    sd, difference = _check_sd(sd), _check_difference(difference)
    if difference == 0:
        raise ValueError("difference must be non-zero: no number of topics detects a "
                         "difference of 0")
    alpha = _levels(level, comparisons)
    effect = np.inf if sd == 0 else abs(difference) / sd
    found = _topics_needed_for_effects(np.array([effect]), power, alpha)[0]
    if not np.isfinite(found):
        raise ValueError(f"a difference of {difference!r} with sd {sd!r} needs more than "
                         f"{MOST_TOPICS:.0f} topics (2**53): it is, for any collection, none")
    return int(found)


def detectable_difference(sd: float, n: int, *, power: float = 0.8, level: float = 0.05,
                          comparisons: int = 1) -> float:
    """The inverse of :func:`topics_needed`: the smallest true mean difference that a
    two-sided paired t-test at ``level`` (Bonferroni-corrected for ``comparisons``) on ``n``
    topics detects with ``power``, by the noncentral t distribution (both tails); 0 where sd
    is 0 (any difference is found). It is proportional to ``sd``.

    >>> round(detectable_difference(0.1, 100), 4)
    0.0283
    """
    from scipy import optimize

    _check_design(power, level)
    sd = _check_sd(sd)
    t_test_power(1.0, 1.0, n, level=level, comparisons=comparisons)  # checks n, comparisons
    if sd == 0:
        return 0.0

    def shortfall(effect):
        return t_test_power(sd, effect, n, level=level, comparisons=comparisons) - power

    upper = sd
    while shortfall(upper) < 0:
        upper *= 2
    return float(optimize.brentq(shortfall, 0.0, upper, xtol=1e-12 * sd))


def topics_needed_by_resampling(differences: ArrayLike, *, power: float = 0.8,
                                level: float = 0.05, comparisons: int = 1, draws: int = 2000,
                                seed: int = 0, most: int | None = None) -> int:
    """The smallest number of topics n at which the two-sided paired t-test at ``level``
    (Bonferroni-corrected for ``comparisons``), applied to n topics drawn with replacement
    from a pilot's per-topic ``differences``, rejects in at least ``power`` of ``draws``
    seeded draws — the t-test's power on the pilot's own distribution of differences, not on
    a normal one of the same sd (:func:`topics_needed`). Risk-weighted differences are far
    from normal (many exact zeros, a skewed loss side): there the normal answer can be far
    off, usually too many topics.

    Draw d's set of n topics is the first n of one seeded sequence of draws (common random
    numbers across sizes, so that the simulated power is a smooth curve in n); every size from
    2 to ``most`` (default 20 times the pilot's topics) is tried in order and the first that
    reaches ``power`` is the answer (a ValueError where none does). A drawn set whose
    differences are all equal rejects where they are not 0 (t infinite) and not where they
    are. The simulated power has Monte Carlo error about √(power (1 − power) / draws).

    >>> rng = np.random.default_rng(1)
    >>> d = np.where(rng.uniform(size=200) < 0.5, 0.0, rng.exponential(0.1, 200) - 0.02)
    >>> topics_needed_by_resampling(d), topics_needed(d.std(ddof=1), d.mean())
    (27, 38)
    """
    from scipy import stats

    _check_design(power, level)
    x = np.asarray(differences, dtype=np.float64)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"differences must be one pilot's per-topic differences (at least 2), "
                         f"got shape {x.shape}")
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        raise ValueError(f"differences must be finite; topic {int(bad[0]) + 1} holds "
                         f"{x[bad[0]]}")
    draws = check_whole_number(draws, "draws")
    most = 20 * x.size if most is None else check_whole_number(most, "most", minimum=2)
    alpha = _levels(level, comparisons)
    if not np.any(x):
        raise ValueError("every difference is 0: there is nothing to detect")
    rng = np.random.default_rng(seed)
    sums = np.zeros(draws)
    squares = np.zeros(draws)
    size, width = 0, 64  # the sizes done so far, and the next block's
    while size < most:
        width = min(width, most - size)
        drawn = x[rng.integers(0, x.size, (draws, width))]
        block_sums = sums[:, None] + np.cumsum(drawn, axis=1)
        block_squares = squares[:, None] + np.cumsum(drawn * drawn, axis=1)
        n = np.arange(size + 1, size + width + 1, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = block_sums / n
            variance = np.maximum(block_squares - block_sums * mean, 0.0) / (n - 1)
            t = mean / np.sqrt(variance / n)
            critical = stats.t.ppf(1 - alpha / 2, n - 1)
        reached = np.mean(np.abs(t) > critical, axis=0) >= power  # NaN (0/0) does not reject
        reached[n < 2] = False
        if reached.any():
            return int(n[np.argmax(reached)])
        sums, squares = block_sums[:, -1], block_squares[:, -1]
        size += width
        width = min(2 * width, 1024)
    raise ValueError(f"{most} topics do not reach power {power:g} on these differences: the "
                     "difference is too small for this test, or there is none")


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
