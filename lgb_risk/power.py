"""How many topics a comparison of runs needs: for each run against a baseline, the difference
its topics show, the smallest difference they could detect, and the topics needed to detect the
observed one (or one given) with the power asked — for the mean (α = 0) and for URisk and TRisk
at each α, whose tests are t-tests of the risk-weighted differences x_q ([TR] Eq. 3), exactly
(:func:`lgb_risk.significance.topics_needed`); and, by simulation from the topics at hand, for
the tests with no closed form: the sign test of wins against losses and the randomisation
(sign-flip) test of URisk (:func:`lgb_risk.significance.topics_needed_by_simulation`).

The topics at hand are a pilot: their variance stands in for the population's, so a small
collection gives a rough answer (Sakai 2016 recommends a pilot of at least a few dozen topics);
the numbers are for a collection like the pilot's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lgb_risk import risk, significance

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

__all__ = ["power_table"]


def power_table(scores: pd.DataFrame, baseline: str, alphas: Sequence[float] = (0.0, 5.0), *,
                difference: float | None = None, power: float = 0.8, level: float = 0.05,
                correction: str | None = None, simulate: bool = False, draws: int = 200,
                resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """For every run of ``scores`` (runs × topics) but ``baseline``, and each α, the
    topic-set-size answers against the baseline.

    Columns: ``run, alpha, topics``; ``observed``, the mean of the per-topic x_q at α (at α = 0
    the mean difference; otherwise URisk, whose t-test TRisk is); ``sd``, their standard
    deviation; ``detectable``, the smallest true mean of x_q the paired t-test detects with
    ``power`` on these topics; ``needed``, the topics needed to detect the observed one;
    ``needed_for_difference`` with ``difference``. ``correction`` (``"bonferroni"`` or
    ``"holm"``, bounded by Bonferroni's level / m) divides the level by m, the number of runs
    compared to the baseline. With ``simulate``: ``wins``, ``losses`` and
    ``needed_sign_test`` (the sign test of wins against losses, α = 0 rows only) and
    ``needed_randomisation`` (the sign-flip test of URisk with ``resamples`` flips), each by
    :func:`lgb_risk.significance.topics_needed_by_simulation` with ``draws`` seeded draws
    (Monte Carlo error about √(0.16/draws) in the power reached), searched from the t-test's
    answer and up to :data:`SIMULATED_UP_TO` times these topics. An answer is NaN where there
    is nothing to detect (an observed value of 0, or every x_q equal) or beyond that bound.

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> base = rng.uniform(0.2, 0.6, 50)
    >>> scores = pd.DataFrame([base, base + rng.normal(0.03, 0.1, 50)], index=["bm25", "mine"])
    >>> table = power_table(scores, "bm25", [0, 5])
    >>> table[["run", "alpha", "topics", "needed"]].to_dict("records")[0]
    {'run': 'mine', 'alpha': 0.0, 'topics': 50, 'needed': 76}
    """
    import pandas as pd

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
    comparisons = len(runs) if correction is not None else 1
    base = scores.loc[baseline].to_numpy(dtype=np.float64)
    options: dict[str, Any] = {"power": power, "level": level, "comparisons": comparisons}
    rows = []
    for run in runs:
        values = scores.loc[run].to_numpy(dtype=np.float64)
        for alpha in alphas:
            x = risk.risk_deltas(values, base, float(alpha))
            observed, sd = float(x.mean()), float(x.std(ddof=1))
            row = {"run": str(run), "alpha": float(alpha), "topics": int(x.size),
                   "observed": observed, "sd": sd}
            varies = sd > 0 and x.size >= 2
            row["detectable"] = (significance.detectable_difference(sd, x.size, **options)
                                 if varies else np.nan)
            row["needed"] = (significance.topics_needed(sd, observed, **options)
                             if varies and observed != 0 else np.nan)
            if difference is not None:
                row["needed_for_difference"] = (
                    significance.topics_needed(sd, difference, **options) if varies else np.nan)
            if simulate:
                row.update(_simulated(values, base, float(alpha), draws=draws,
                                      resamples=resamples, seed=seed, guess=row["needed"],
                                      **options))
            rows.append(row)
    return pd.DataFrame(rows)


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


#: The simulated searches stop at this many times the pilot's topics: beyond, the answer is
#: NaN (the t-test's ``needed`` says how far beyond).
SIMULATED_UP_TO = 20


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
