"""Fixed-order linear algebra: bit for bit a plain Python loop adding in row order, and
scikit-learn's models to rounding."""

import numpy as np
import pytest

from lgb_risk.experiment.fixed_order import (
    logistic_regression,
    matvec,
    ridge_regression,
    standardise,
)
from lgb_risk.experiment.protocol_baselines import fit_logistic_regression, fit_ridge


def _problem(seed=0, n=400, d=7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 5.0, d) + rng.normal(size=d)
    y = X @ rng.normal(size=d) + rng.normal(size=n)
    return X, y


def test_matvec_adds_each_row_in_column_order_without_fused_multiply_adds():
    X, _ = _problem()
    w = np.random.default_rng(1).normal(size=X.shape[1])
    expected = []
    for row in X.tolist():  # Python floats: every product and sum rounded on its own
        total = 0.0
        for value, weight in zip(row, w.tolist()):
            total += value * weight
        expected.append(total)
    assert matvec(X, w).tobytes() == np.array(expected).tobytes()


def test_standardise_is_scikit_learns_scaler():
    from sklearn.preprocessing import StandardScaler

    X, _ = _problem()
    X[:, 2] = 3.0  # a constant column: scale 1
    mean, scale = standardise(X)
    scaler = StandardScaler().fit(X)
    np.testing.assert_allclose(mean, scaler.mean_, rtol=1e-13)
    np.testing.assert_allclose(scale, scaler.scale_, rtol=1e-12)


def test_ridge_regression_is_scikit_learns_cholesky_ridge():
    from sklearn.linear_model import Ridge

    X, y = _problem()
    for alpha in (0.1, 1.0, 50.0):
        w, b = ridge_regression(X, y, alpha)
        model = Ridge(alpha=alpha, solver="cholesky").fit(X, y)
        np.testing.assert_allclose(w, model.coef_, rtol=1e-10, atol=1e-12)
        assert b == pytest.approx(model.intercept_, rel=1e-10, abs=1e-12)


def test_logistic_regression_is_scikit_learns_to_its_tolerance():
    from sklearn.linear_model import LogisticRegression

    X, y = _problem(2)
    relevant = (y > np.median(y)).astype(float)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    for C in (0.05, 1.0):
        w, b = logistic_regression(Z, relevant, C)
        model = LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(Z, relevant)
        np.testing.assert_allclose(w, model.coef_[0], rtol=1e-6, atol=1e-7)
        assert b == pytest.approx(model.intercept_[0], rel=1e-6, abs=1e-7)


def test_logistic_regression_says_when_newton_does_not_converge():
    X, y = _problem(3)
    with pytest.raises(ValueError, match="did not converge in 1 Newton steps"):
        logistic_regression(X, (y > 0).astype(float), max_iter=1)


def test_the_protocols_linear_scorers_are_scikit_learns_pipelines_on_sparse_data():
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _problem(4, n=300)
    X[X < 0] = 0.0
    sparse = sp.csr_matrix(X)
    ridge = make_pipeline(StandardScaler(with_mean=False), Ridge(alpha=1.0, solver="sparse_cg",
                                                                 tol=1e-12)).fit(sparse, y)
    np.testing.assert_allclose(fit_ridge(sparse, y)(sparse[:50]), ridge.predict(sparse[:50]),
                               rtol=1e-8, atol=1e-8)
    relevant = y > np.median(y)
    logistic = make_pipeline(StandardScaler(with_mean=False),
                             LogisticRegression(tol=1e-12, max_iter=10_000)).fit(sparse, relevant)
    np.testing.assert_allclose(fit_logistic_regression(sparse, relevant)(sparse[:50]),
                               logistic.decision_function(sparse[:50]), rtol=1e-6, atol=1e-6)
