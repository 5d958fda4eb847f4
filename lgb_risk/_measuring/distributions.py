"""The two distribution functions the risk measures and objectives need, from the C math library:
Φ here is the one the library uses (T-SARO's α'_q, GeoRisk), and the pair kernel has its
compiled twin (:func:`lgb_risk._training.lambda_kernel._std_normal_cdf`, the same formula).

Importing ``scipy.stats`` (or ``scipy.special``) costs more start-up time than ``lgb-risk
evaluate`` spends on eight TREC runs (``scripts/bench_cli.py``); these functions need only
``math``.
Both agree with scipy to 1e-11 relative up to 1,000 degrees of freedom and 1e-9 beyond (the
log-beta front factor loses digits for large df); ``tests/test_risk.py`` compares them over a
grid.
"""

from __future__ import annotations

import math

import numpy as np

_TINY = 1e-300


def normal_cdf(z) -> np.ndarray:
    """Φ(z) = erfc(−z/√2)/2, elementwise."""
    values = np.asarray(z, dtype=np.float64)
    erfc = np.frompyfunc(math.erfc, 1, 1)
    return 0.5 * np.asarray(erfc(-values / math.sqrt(2.0)), dtype=np.float64)


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta function (modified Lentz)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge for "
                          f"a={a}, b={b}, x={x}")


def _regularised_incomplete_beta(a: float, b: float, x: float, y: float) -> float:
    """I_x(a, b), with y = 1 - x given separately (exact where x is close to 1)."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log(y))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, y) / b


def student_t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2)."""
    if not math.isfinite(t):
        return 0.0
    return _regularised_incomplete_beta(df / 2.0, 0.5, df / (df + t * t), t * t / (df + t * t))
