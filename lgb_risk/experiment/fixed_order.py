"""Linear algebra whose every sum runs in one fixed order: the same bits on any x86-64 CPU.

A BLAS library (OpenBLAS, which numpy and scipy ship; MKL) picks its kernels by the processor at
load time, and each kernel adds the terms of a dot product in its own order, some with fused
multiply-adds. ``X @ w`` on MQ2008 therefore gives other last bits under OpenBLAS's Prescott
(generic SSE) kernels than under its Haswell ones, and scikit-learn's ``Ridge`` gives other
predictions under each of Prescott, Haswell and SkylakeX. The learned baselines' predictions
decide per-query baseline NDCG values, which feed the multi-baseline objectives' multipliers and
every test statistic against them, so a last-bit difference there grows into other trees.

The few linear-algebra steps the library needs are written here as compiled loops instead:
numba compiles them without ``fastmath``, so LLVM may neither reorder a sum nor fuse a multiply
into an add, and each sum runs over the rows in their order, whatever the CPU and its vector
width. Tests check every function against a plain Python loop, bit for bit, and against
scikit-learn to rounding.

Cost: these loops give up BLAS's blocked, vectorised sums, the price of the same bits on every
CPU; what that costs at MQ2008's and at MSLR-WEB30K's sizes is in BENCHMARKS.md.

What can still change a number between machines: the C library's ``exp`` and ``log`` (glibc
selects FMA variants on CPUs with FMA; used by :func:`logistic_regression` and, outside this
module, by LightGBM and the objectives' sigmoid and discount tables alike).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["matvec", "standardise", "ridge_regression", "logistic_regression"]


@nb.njit(cache=True)
def _matvec(A, x):
    out = np.empty(A.shape[0])
    for i in range(A.shape[0]):
        total = 0.0
        for j in range(A.shape[1]):
            total += A[i, j] * x[j]
        out[i] = total
    return out


def matvec(A, x) -> np.ndarray:
    """``A @ x`` with each row's products added from the first column to the last.

    Examples
    --------
    >>> matvec(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, 0.25])).tolist()
    [1.0, 2.5]
    """
    A = np.ascontiguousarray(A, dtype=np.float64)
    x = np.ascontiguousarray(x, dtype=np.float64)
    if A.ndim != 2 or x.shape != (A.shape[1],):
        raise ValueError(f"matvec needs a matrix and a vector of its width, got shapes "
                         f"{A.shape} and {x.shape}")
    return _matvec(A, x)


@nb.njit(cache=True)
def _column_moments(X):
    n, d = X.shape
    mean = np.zeros(d)
    for i in range(n):
        for j in range(d):
            mean[j] += X[i, j]
    mean /= n
    var = np.zeros(d)
    for i in range(n):
        for j in range(d):
            var[j] += (X[i, j] - mean[j]) ** 2
    return mean, var / n


def standardise(X) -> tuple[np.ndarray, np.ndarray]:
    """Column means and scales (population standard deviations; 1 for a constant column), as
    scikit-learn's ``StandardScaler`` computes them."""
    mean, var = _column_moments(np.ascontiguousarray(X, dtype=np.float64))
    scale = np.sqrt(var)
    scale[scale == 0.0] = 1.0
    return mean, scale


@nb.njit(cache=True)
def _gram(Z, weights, ridge, penalise_last):
    """[Z 1]' diag(weights) [Z 1] + ridge I (the constant column's entry unpenalised unless
    ``penalise_last``), rows added in order; upper triangle mirrored."""
    n, d = Z.shape
    G = np.zeros((d + 1, d + 1))
    for i in range(n):
        w = weights[i]
        for a in range(d):
            wa = w * Z[i, a]
            for b in range(a, d):
                G[a, b] += wa * Z[i, b]
            G[a, d] += wa
        G[d, d] += w
    for a in range(d + 1):
        if a < d or penalise_last:
            G[a, a] += ridge
        for b in range(a):
            G[a, b] = G[b, a]
    return G


@nb.njit(cache=True)
def _cross(Z, r):
    """[Z 1]' r, rows added in order."""
    n, d = Z.shape
    out = np.zeros(d + 1)
    for i in range(n):
        for a in range(d):
            out[a] += Z[i, a] * r[i]
        out[d] += r[i]
    return out


@nb.njit(cache=True)
def _cholesky_solve(G, b):
    """x with G x = b for a symmetric positive definite G (Cholesky, then two triangular
    solves)."""
    m = G.shape[0]
    L = np.zeros((m, m))
    for j in range(m):
        s = G[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            raise ValueError("the system is not positive definite")
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, m):
            s = G[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    y = np.empty(m)
    for i in range(m):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * y[k]
        y[i] = s / L[i, i]
    x = np.empty(m)
    for i in range(m - 1, -1, -1):
        s = y[i]
        for k in range(i + 1, m):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]
    return x


def ridge_regression(Z, y, alpha: float = 1.0) -> tuple[np.ndarray, float]:
    """Weights and intercept minimising ||y − Z w − b||² + alpha ||w||² (b unpenalised).

    Solved exactly through the normal equations ([Z 1]'[Z 1] + alpha I) [w; b] = [Z 1]' y by
    Cholesky factorisation, every sum in row order. Equal to scikit-learn's
    ``Ridge(alpha, solver="cholesky")`` up to rounding.
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    G = _gram(Z, np.ones(Z.shape[0]), float(alpha), False)
    solution = _cholesky_solve(G, _cross(Z, y))
    return solution[:-1], float(solution[-1])


@nb.njit(cache=True)
def _logistic_newton(Z, y, C, max_iter, tol):
    n, d = Z.shape
    theta = np.zeros(d + 1)  # weights, then the intercept
    p = np.empty(n)
    curvature = np.empty(n)
    for _ in range(max_iter):
        for i in range(n):
            s = theta[d]
            for a in range(d):
                s += Z[i, a] * theta[a]
            p[i] = 1.0 / (1.0 + math.exp(-s))
            curvature[i] = C * p[i] * (1.0 - p[i])
        residual = np.empty(n)
        for i in range(n):
            residual[i] = C * (p[i] - y[i])
        gradient = _cross(Z, residual)
        for a in range(d):
            gradient[a] += theta[a]
        step = _cholesky_solve(_gram(Z, curvature, 1.0, False), gradient)
        largest = 0.0
        for a in range(d + 1):
            theta[a] -= step[a]
            largest = max(largest, abs(step[a]))
        if largest <= tol:
            return theta, True
    return theta, False


def logistic_regression(Z, y, C: float = 1.0, *, max_iter: int = 100,
                        tol: float = 1e-10) -> tuple[np.ndarray, float]:
    """Weights and intercept minimising C Σ_i [log(1 + e^{s_i}) − y_i s_i] + ||w||²/2,
    s = Z w + b (b unpenalised), for labels y in {0, 1}: scikit-learn's ``LogisticRegression(C)``
    objective, solved by Newton's method to a step of at most ``tol``.

    Raises ``ValueError`` if Newton's method has not converged in ``max_iter`` steps.
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    theta, converged = _logistic_newton(Z, y, float(C), int(max_iter), float(tol))
    if not converged:
        raise ValueError(f"logistic regression did not converge in {max_iter} Newton steps")
    return theta[:-1], float(theta[-1])
