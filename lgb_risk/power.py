"""How many topics a comparison of runs needs, with the uncertainty of the answer: for each run
against a baseline, the difference its topics show, the smallest difference they could detect,
and the topics needed to detect the observed one (or one given) with the power asked — for the
mean (α = 0) and for URisk and TRisk at each α, whose tests are t-tests of the risk-weighted
differences x_q ([TR] Eq. 3).

Three answers, each for a reason:

- the t-test's exact answer (:func:`lgb_risk.significance.topics_needed`), which takes the
  pilot's mean and sd of x_q as the truth and the x_q as normal;
- its percentile-bootstrap interval: the pilot's topics resampled with replacement and the whole
  answer recomputed on each resample. The observed difference's own error dominates it; where
  the resampled difference changes sign in more than (1 − confidence)/2 of the resamples, no
  number of topics is certain to suffice: the upper end is unbounded and the answer is *not
  determined* (NaN), whatever the point estimate says;
- the resampled answer (:func:`lgb_risk.significance.topics_needed_by_resampling`): the t-test
  applied to topics drawn from the pilot's own x_q, which are far from normal where they are
  risk-weighted (many exact zeros, a skewed loss side).

And, with ``simulate``, for the tests with no closed form: the sign test of wins against losses
and the randomisation (sign-flip) test of URisk
(:func:`lgb_risk.significance.topics_needed_by_simulation`).

The topics at hand are a pilot: the numbers are for a collection like the pilot's (Sakai 2016,
"Topic set size design", recommends a pilot of at least a few dozen topics).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lgb_risk import risk, significance
from lgb_risk._inputs.validation import check_whole_number

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import pandas as pd

__all__ = ["power_table", "topic_set_answers", "randomisation_test_answers", "SIMULATED_UP_TO",
           "RESAMPLED_BY_DEFAULT_UP_TO"]

#: The simulated searches stop at this many times the pilot's topics: beyond, the answer is
#: NaN (the t-test's ``needed`` says how far beyond).
SIMULATED_UP_TO = 20
#: The resampled answer is computed by default where its search costs at most this many drawn
#: topics (``pilot_resamples`` × :data:`SIMULATED_UP_TO` × the pilot's topics: about a second
#: a row on 2 cores), otherwise only with ``simulate``.
RESAMPLED_BY_DEFAULT_UP_TO = 10 ** 8


def power_table(scores: pd.DataFrame, baseline: str, alphas: Sequence[float] = (0.0, 5.0), *,
                difference: float | None = None, power: float = 0.8, level: float = 0.05,
                correction: str | None = None, confidence: float = 0.95,
                pilot_resamples: int = 2000, simulate: bool = False, draws: int = 200,
                resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """For every run of ``scores`` (runs × topics) but ``baseline``, and each α, the
    topic-set-size answers against the baseline, each with its ``confidence`` interval.

    Columns, one row per run and α:

    - ``run, alpha, topics``; ``observed``, the mean of the per-topic x_q at α (at α = 0 the
      mean difference; otherwise URisk, whose t-test TRisk is); ``sd``, their standard
      deviation;
    - ``sign_flips``: the share of the pilot's bootstrap resamples whose observed value has
      the other sign (or is 0). Above (1 − ``confidence``)/2 the answers for the observed
      difference are not determined;
    - ``detectable``, the smallest true mean of x_q the paired t-test detects with ``power``
      on these topics, with ``detectable_low``/``_high``;
    - ``needed``, the topics the t-test needs to detect the observed one (exact, noncentral
      t), with ``needed_low``/``_high``; NaN (and ``needed_high`` inf) where not determined;
    - ``needed_resampled``: the topics at which the t-test, applied to topics drawn from the
      pilot's x_q, rejects in ``power`` of ``pilot_resamples`` draws; the answer to quote
      where the x_q are skewed or tied at 0. Computed where its search costs at most
      :data:`RESAMPLED_BY_DEFAULT_UP_TO` drawn topics, otherwise with ``simulate`` (NaN
      where not computed, not determined, or beyond :data:`SIMULATED_UP_TO` times the pilot);
      with ``simulate`` also ``needed_resampled_low``/``_high``, from ``draws`` bootstrap
      pilots searched with ``draws`` draws each (their Monte Carlo error widens them);
    - with ``difference``: ``needed_for_difference`` and its ``_low``/``_high``;
    - with ``simulate``: ``wins``, ``losses`` and ``needed_sign_test`` (the sign test of
      wins against losses, α = 0 rows only) and ``needed_randomisation`` (the sign-flip test
      of URisk with ``resamples`` flips), each by
      :func:`lgb_risk.significance.topics_needed_by_simulation` with ``draws`` seeded draws
      (Monte Carlo error about √(0.16/draws) in the power reached), searched from the
      t-test's answer and up to :data:`SIMULATED_UP_TO` times these topics.

    The intervals are percentile-bootstrap intervals: the pilot's topics drawn with
    replacement ``pilot_resamples`` times (seeded; the same draws for every row), the whole
    answer recomputed on each, and the order statistics at (1 ∓ ``confidence``)/2
    (``numpy.quantile``'s ``inverted_cdf``). ``correction`` (``"bonferroni"`` or ``"holm"``,
    bounded by Bonferroni's level / m) divides the level by m, the number of runs compared to
    the baseline. An answer is NaN where there is nothing to detect (an observed value of 0).

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> base = rng.uniform(0.2, 0.6, 50)
    >>> scores = pd.DataFrame([base, base + rng.normal(0.03, 0.1, 50)], index=["bm25", "mine"])
    >>> table = power_table(scores, "bm25", [0, 5])
    >>> table[["alpha", "needed", "needed_low", "needed_high", "needed_resampled"]]
       alpha  needed  needed_low  needed_high  needed_resampled
    0    0.0      76          24       1649.0                73
    1    5.0      72          29        617.0                63

    50 topics of a pilot leave the answer uncertain by a factor of 3 to 20 either way.
    """
    import pandas as pd

    significance._check_design(power, level)
    if baseline not in scores.index:
        raise ValueError(f"baseline {baseline!r} is not among the runs "
                         f"{', '.join(map(str, scores.index))}")
    if correction not in (None, "bonferroni", "holm"):
        raise ValueError(f"correction must be 'bonferroni' or 'holm' (bounded by Bonferroni), "
                         f"or None, got {correction!r}: topic-set sizes have no closed form "
                         "under Benjamini-Hochberg")
    runs = [run for run in scores.index if run != baseline]
    if not runs:
        raise ValueError(f"the table holds only the baseline {baseline!r}: give other runs")
    _check_scores(scores)
    base = scores.loc[baseline].to_numpy(dtype=np.float64)
    options: dict[str, Any] = {
        "power": power, "level": level, "difference": difference, "confidence": confidence,
        "comparisons": len(runs) if correction is not None else 1,
        "pilot_resamples": pilot_resamples, "simulate": simulate, "draws": draws, "seed": seed}
    rows = []
    for run in runs:
        values = scores.loc[run].to_numpy(dtype=np.float64)
        for alpha in alphas:
            row = {"run": str(run), "alpha": float(alpha),
                   **topic_set_answers(risk.risk_deltas(values, base, float(alpha)), **options)}
            if simulate:
                row.update(_simulated(values, base, float(alpha), draws=draws,
                                      resamples=resamples, seed=seed, guess=row["needed"],
                                      power=power, level=level,
                                      comparisons=options["comparisons"]))
            rows.append(row)
    table = pd.DataFrame(rows)
    wholes = [c for c in table.columns if c.startswith("needed") and not c.endswith("_high")]
    for column in wholes:  # whole numbers of topics (NaN: none); the upper ends may be inf
        table[column] = table[column].astype("Int64")
    return table


def topic_set_answers(differences: np.ndarray, *, difference: float | None = None,
                      power: float = 0.8, level: float = 0.05, comparisons: int = 1,
                      confidence: float = 0.95, pilot_resamples: int = 2000,
                      simulate: bool = False, draws: int = 200, seed: int = 0) -> dict:
    """The answers of :func:`power_table`'s row for one pilot's per-topic ``differences``
    (x_q), as a mapping of its columns from ``topics`` on (the simulated tests' columns
    aside): the t-test's answers with their percentile-bootstrap intervals and the resampled
    answer. ``comparisons`` divides the level (Bonferroni; Holm's strictest step).

    >>> rng = np.random.default_rng(3)
    >>> d = np.where(rng.uniform(size=300) < 0.6, 0.0, rng.exponential(0.05, 300) - 0.01)
    >>> answers = topic_set_answers(d)
    >>> [answers[k] for k in ("needed", "needed_low", "needed_high", "needed_resampled")]
    [44, 34.0, 58.0, 31.0]
    """
    significance._check_design(power, level)
    if not (significance._finite(confidence) and 0 < confidence < 1):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    pilot_resamples = check_whole_number(pilot_resamples, "pilot_resamples")
    tail = _tail(confidence)
    if pilot_resamples * tail < 1:
        raise ValueError(f"pilot_resamples must be at least {int(np.ceil(1 / tail))} for a "
                         f"{confidence:g} interval (each tail needs a resample), got "
                         f"{pilot_resamples}")
    if difference is not None and not (significance._finite(difference) and difference != 0):
        raise ValueError(f"difference must be a finite non-zero number, got {difference!r}")
    x = np.asarray(differences, dtype=np.float64)
    if x.ndim != 1 or x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"differences must be the finite per-topic differences of a pilot of "
                         f"at least 2 topics (one topic has no variance), got shape {x.shape}")
    check_whole_number(draws, "draws")
    options = {"power": power, "level": level, "comparisons": comparisons}
    bootstrap = _Bootstrap(x.size, pilot_resamples, seed, tail)
    row = _answers(x, bootstrap, difference, options)
    if simulate or pilot_resamples * SIMULATED_UP_TO * x.size <= RESAMPLED_BY_DEFAULT_UP_TO:
        row.update(_resampled(x, row, bootstrap, simulate=simulate, draws=draws, seed=seed,
                              options=options))
    else:
        row["needed_resampled"] = np.nan
    return row


def randomisation_test_answers(difference_on: Callable[[np.ndarray], float],
                               test: significance.PairedTest, *, power: float = 0.8,
                               level: float = 0.05, comparisons: int = 1,
                               confidence: float = 0.95, pilot_resamples: int = 2000,
                               seed: int = 0) -> dict:
    """The topics a randomisation test (:func:`lgb_risk.significance.paired_randomisation_test`)
    needs to detect its observed difference, by the normal approximation its detectable
    difference is, n = ((z_{1−level/2m} + z_power) · spread / difference)²
    (:meth:`~lgb_risk.significance.PairedTest.queries_needed`), with the percentile-bootstrap
    interval of :func:`power_table`: ``difference_on(indices)`` recomputes the statistic's
    difference on the topics at ``indices`` (a resample of the pilot's, with repeats), the
    null distribution's spread is held at the pilot's. Keys ``sign_flips``, ``needed`` (NaN
    where not determined), ``needed_low``, ``needed_high``.

    >>> from lgb_risk.significance import paired_randomisation_test
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.uniform(size=80), rng.uniform(size=80)
    >>> mean = lambda rows: rows.mean(axis=1)
    >>> test = paired_randomisation_test(mean, a + 0.15, b, resamples=999)
    >>> answers = randomisation_test_answers(lambda i: (a + 0.15 - b)[i].mean(), test)
    >>> answers["needed"], answers["needed_low"], answers["needed_high"]
    (125.0, 39.0, 3579.0)
    """
    from scipy import stats

    significance._check_design(power, level)
    tail = _tail(confidence)
    bootstrap = _Bootstrap(test.n, check_whole_number(pilot_resamples, "pilot_resamples"),
                           seed, tail)
    differences = np.array([difference_on(row) for rows in bootstrap.indices()
                            for row in rows])
    same_sign = np.sign(differences) == np.sign(test.difference)
    flips = float(1 - same_sign.mean()) if test.difference else np.nan
    z = (stats.norm.ppf(1 - significance._levels(level, comparisons) / 2)
         + stats.norm.ppf(power))
    if not test.difference or not test.spread > 0:
        return {"sign_flips": flips, "needed": np.nan, "needed_low": np.nan,
                "needed_high": np.nan}
    with np.errstate(divide="ignore"):
        needed = np.where(same_sign, np.ceil((z * test.spread / differences) ** 2), np.inf)
    low, high = bootstrap.interval(needed)
    determined = flips <= tail
    return {"sign_flips": flips,
            "needed": (test.queries_needed(power=power, level=level, comparisons=comparisons)
                       if determined else np.nan),
            "needed_low": low, "needed_high": high if determined else np.inf}


def _check_scores(scores: pd.DataFrame) -> None:
    """Every run's score on every topic a finite number, and at least two topics."""
    if scores.shape[1] < 2:
        raise ValueError(f"the scores have {scores.shape[1]} topic(s): one topic has no "
                         "variance, and a topic-set size needs a pilot of at least 2 topics "
                         "(a few dozen for a useful answer)")
    try:
        values = scores.to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("the scores must be numbers (runs × topics)") from None
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        run, topic = scores.index[bad[0, 0]], scores.columns[bad[0, 1]]
        missing = [str(t) for t, v in zip(scores.columns, values[bad[0, 0]])
                   if not np.isfinite(v)]
        raise ValueError(f"run {run!r} has no finite score for topic(s) {', '.join(missing)} "
                         f"(first: {topic!r}, {values[bad[0, 0], bad[0, 1]]}): the tests pair "
                         "every topic")


def _tail(confidence: float) -> float:
    """Each tail's share, (1 − confidence)/2, rounded to 12 decimals so that 0.95 gives the
    exact 0.025 (whose order statistic is the 50th of 2,000, not the 51st)."""
    return round((1 - confidence) / 2, 12)


class _Bootstrap:
    """The pilot's topics resampled with replacement, ``count`` times (seeded: every row of a
    table sees the same resamples), and the percentile interval of an answer over them."""

    def __init__(self, topics: int, count: int, seed: int, tail: float):
        self.topics, self.count, self.seed, self.tail = topics, count, seed, tail

    def indices(self):
        """The resamples' topic indices, in chunks of rows (one row a resample)."""
        rng = np.random.default_rng(self.seed)
        chunk = max(1, 4_000_000 // self.topics)
        for start in range(0, self.count, chunk):
            yield rng.integers(0, self.topics, (min(chunk, self.count - start), self.topics))

    def moments(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each resample's mean and sd (ddof 1) of ``x``."""
        drawn = [x[rows] for rows in self.indices()]
        return (np.concatenate([d.mean(axis=1) for d in drawn]),
                np.concatenate([d.std(axis=1, ddof=1) for d in drawn]))

    def interval(self, answers: np.ndarray) -> tuple[float, float]:
        low, high = np.quantile(answers, [self.tail, 1 - self.tail], method="inverted_cdf")
        return float(low), float(high)


def _answers(x: np.ndarray, bootstrap: _Bootstrap, difference: float | None,
             options: dict) -> dict:
    """The t-test's answers for one row's x_q and their bootstrap intervals."""
    observed, sd = float(x.mean()), float(x.std(ddof=1))
    row: dict[str, Any] = {"topics": int(x.size), "observed": observed, "sd": sd}
    alpha = options["level"] / options["comparisons"]
    means, sds = bootstrap.moments(x)
    same_sign = np.sign(means) == np.sign(observed)
    row["sign_flips"] = float(1 - same_sign.mean()) if observed != 0 else np.nan
    detectable = significance.detectable_difference(sd, x.size, **options)
    row["detectable"] = detectable
    # the detectable difference is proportional to sd
    row["detectable_low"], row["detectable_high"] = (
        bootstrap.interval(detectable * sds / sd) if sd > 0 else (0.0, 0.0))
    determined = observed != 0 and row["sign_flips"] <= bootstrap.tail
    row["needed"] = significance.topics_needed(sd, observed, **options) if determined else np.nan
    if observed != 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            effects = np.where(same_sign, np.abs(means) / sds, 0.0)
        effects = np.nan_to_num(effects, nan=0.0)  # 0/0: a resample of equal zeros
        needed = significance._topics_needed_for_effects(effects, options["power"], alpha)
        row["needed_low"], row["needed_high"] = bootstrap.interval(needed)
    else:
        row["needed_low"], row["needed_high"] = np.nan, np.nan
    if not determined:
        row["needed_high"] = np.inf if observed != 0 else np.nan
    if difference is not None:
        row["needed_for_difference"] = significance.topics_needed(sd, difference, **options)
        with np.errstate(divide="ignore"):
            effects = abs(difference) / sds
        needed = significance._topics_needed_for_effects(effects, options["power"], alpha)
        row["needed_for_difference_low"], row["needed_for_difference_high"] = (
            bootstrap.interval(needed))
    return row


def _resampled(x: np.ndarray, row: dict, bootstrap: _Bootstrap, *, simulate: bool,
               draws: int, seed: int, options: dict) -> dict:
    """The resampled answer (and, with ``simulate``, its interval from ``draws`` bootstrap
    pilots each searched with ``draws`` draws)."""
    most = SIMULATED_UP_TO * x.size
    found: dict[str, float] = {
        "needed_resampled": (_by_resampling(x, bootstrap.count, seed, most, options)
                             if not np.isnan(row["needed"]) else np.nan)}
    if simulate:
        if np.isnan(row["needed"]):  # nothing to detect, or not determined
            found["needed_resampled_low"] = np.nan
            found["needed_resampled_high"] = row["needed_high"]
            return found
        rng = np.random.default_rng(seed)
        answers = np.empty(draws)
        for b in range(draws):
            pilot = x[rng.integers(0, x.size, x.size)]
            same = np.sign(pilot.mean()) == np.sign(row["observed"])
            answers[b] = (_by_resampling(pilot, draws, seed, most, options) if same
                          else np.nan)
        answers = np.nan_to_num(answers, nan=np.inf)  # not reached: beyond the bound
        outer = _Bootstrap(x.size, draws, seed, bootstrap.tail)
        found["needed_resampled_low"], found["needed_resampled_high"] = (
            outer.interval(answers))
    return found


def _by_resampling(x: np.ndarray, draws: int, seed: int, most: int, options: dict) -> float:
    """:func:`lgb_risk.significance.topics_needed_by_resampling`, NaN where no size up to
    ``most`` reaches the power or every difference is 0."""
    try:
        return float(significance.topics_needed_by_resampling(x, draws=draws, seed=seed,
                                                              most=most, **options))
    except ValueError:
        return np.nan


def _simulated(values, base, alpha, *, draws, resamples, seed, guess, power, level,
               comparisons) -> dict:
    """The tests without a closed form, by simulation from these topics."""
    delta = values - base
    options = {"power": power, "level": level, "comparisons": comparisons, "draws": draws,
               "seed": seed}
    found: dict = {}
    if alpha == 0:
        found["wins"] = int(np.count_nonzero(delta > 0))
        found["losses"] = int(np.count_nonzero(delta < 0))
        found["needed_sign_test"] = _needed(
            lambda topics: significance.sign_test(delta[topics]), delta.size,
            found["wins"] != found["losses"], options, guess)

    def randomisation(topics: np.ndarray) -> float:
        p = risk.urisk_randomisation_p(values[topics], base[topics], alpha,
                                       resamples=resamples, seed=seed)
        return 1.0 if np.isnan(p) else p

    x = risk.risk_deltas(values, base, alpha)
    found["needed_randomisation"] = _needed(randomisation, delta.size, bool(x.mean() != 0),
                                            options, guess)
    return found


def _needed(test, n_pilot: int, something: bool, options: dict, guess: float) -> float:
    """Topics needed by simulation, searched from ``guess`` (the t-test's answer); NaN where
    there is nothing to detect or :data:`SIMULATED_UP_TO` times the pilot's topics do not
    reach the power."""
    if not something:
        return np.nan
    most = SIMULATED_UP_TO * n_pilot
    if np.isnan(guess) or guess > most:
        return np.nan
    try:
        return float(significance.topics_needed_by_simulation(test, n_pilot, most=most,
                                                              start=int(guess), **options))
    except ValueError:
        return np.nan
