"""LambdaMART and risk-sensitive LambdaMART objectives for LightGBM (SPEC.md §3-§4).

Every objective is a callable ``(preds, train_data) -> (grad, hess)`` for
``lightgbm.train(params={"objective": obj, ...})``; ``obj.sklearn_objective`` has the signature
``(y_true, y_pred, weight, group)`` that ``LGBMRanker(objective=...)`` expects.

One pair kernel serves every objective: LightGBM's LambdaMART pair loop (§3) in which each pair's
ΔNDCG is multiplied by a non-negative risk multiplier ``m_ho`` (§4). The per-query risk state
(NDCG@k of the current ranking, the baseline, TR_q, GeoRisk's S, T, N, z) is computed once per
boosting iteration for all queries at once; the kernel, compiled with numba and parallel over
queries, reads it.

Faithful mode (the default) reproduces LightGBM's native ``lambdarank`` tree for tree: ρ comes
from LightGBM's sigmoid lookup table (2**20 bins over [−25/σ, 25/σ], clamped at the ends), the
score distance gets ``0.01f`` (float32) added, and each document's λ and hessian accumulate in
float32, pair by pair in LightGBM's order. ``exact_sigmoid=True`` evaluates ρ exactly instead.

References
----------
Burges. From RankNet to LambdaRank to LambdaMART: an overview. MSR-TR-2010-82.
Wang, Bennett, Collins-Thompson. Robust ranking models via risk-sensitive optimization.
    SIGIR 2012 (U-CRO).
[TR]  Dinçer, Macdonald, Ounis. Hypothesis testing for the risk-sensitive evaluation of retrieval
      systems. SIGIR 2014 (T-SARO, T-FARO, §6).
[GEO] Dinçer, Macdonald, Ounis. Risk-sensitive evaluation and learning to rank using multiple
      baselines. SIGIR 2016 (T*-FARO, GeoRisk, §6).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numba as nb
import numpy as np
from scipy import stats

from lgb_risk import metrics, risk
from lgb_risk._ranking import offsets_from_group, positions_in_query, rank_by_score
from lgb_risk._validation import check_alpha, check_choice, check_group, check_labels

__all__ = ["LambdaMART", "UCRO", "TSARO", "TFARO", "TStarFARO", "GeoRisk"]

_SIGMOID_BINS = 1 << 20
_SCORE_EPS = float(np.float32(0.01))  # LightGBM adds 0.01f to the score distance
_FD_STEP = 1e-6  # one-sided difference step for GeoRisk's derivative where ΔM = 0
_DEFAULT_LABEL_GAIN = np.array([float((1 << i) - 1) for i in range(31)])  # LightGBM's default

# Risk modes of the pair kernel.
_NONE, _CROSSING, _FLAT, _GEORISK = 0, 1, 2, 3


@functools.lru_cache(maxsize=4)
def _sigmoid_table(sigmoid: float):
    """LightGBM's lookup table for ρ(Δs) = 1 / (1 + exp(σ Δs)): (table, low, high, factor).

    Built with the C library's exp (``math.exp``), as LightGBM builds it; numpy's vectorised exp
    differs from it in the last bit for about 2% of the entries.
    """
    low = -50.0 / sigmoid / 2.0
    high = -low
    factor = _SIGMOID_BINS / (high - low)
    table = np.array([1.0 / (1.0 + math.exp((i / factor + low) * sigmoid))
                      for i in range(_SIGMOID_BINS)])
    return table, low, high, factor


# ----------------------------------------------------------------------------------------------
# Risk multipliers m_ho (SPEC §4), one pair at a time.

@nb.njit(cache=True)
def _std_normal_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@nb.njit(cache=True)
def _crossing_multiplier(alpha_q, m_q, b_q, delta_m, misordered):
    """U-CRO / T-SARO: ``1 + α_q φ``, φ the fraction of [M, M + ΔM] below the baseline.

    Where ΔM = 0, φ is the one-sided slope indicator of F at M: right-hand for a mis-ordered pair
    (the swap would raise M), left-hand otherwise.
    """
    if delta_m == 0.0:
        below = m_q < b_q if misordered else m_q <= b_q
        phi = 1.0 if below else 0.0
    else:
        lo = min(m_q, m_q + delta_m)
        hi = max(m_q, m_q + delta_m)
        phi = min(1.0, max(0.0, (b_q - lo) / (hi - lo)))
    return 1.0 + alpha_q * phi


@nb.njit(cache=True)
def _weighted_z(z, alpha):
    return z if z >= 0.0 else (1.0 + alpha) * z


@nb.njit(cache=True)
def _georisk_after(d, q, model, totals, weighted_z, glob, exact):
    """GeoRisk of the model row if its score on query q changed by d ([GEO] §6).

    ``glob = [S, N, ZRisk, c, alpha]``. Local update (default): only z_q is recomputed, with
    S' = S + d, T'_q = T_q + d, N' = N + d. Exact: every z_j of the model row is recomputed.
    """
    s2 = glob[0] + d
    n2 = glob[1] + d
    c = glob[3]
    alpha = glob[4]
    if exact:
        zr = 0.0
        for j in range(model.size):
            shift = d if j == q else 0.0
            e = s2 * (totals[j] + shift) / n2 if n2 > 0.0 else 0.0
            z = (model[j] + shift - e) / math.sqrt(e) if e > 0.0 else 0.0
            zr += _weighted_z(z, alpha)
    else:
        e = s2 * (totals[q] + d) / n2 if n2 > 0.0 else 0.0
        z = (model[q] + d - e) / math.sqrt(e) if e > 0.0 else 0.0
        zr = glob[2] - weighted_z[q] + _weighted_z(z, alpha)
    return math.sqrt(max(s2, 0.0) / c * _std_normal_cdf(zr / c))


@nb.njit(cache=True)
def _georisk_slope(d, misordered, q, geo_q, model, totals, weighted_z, glob, exact):
    """ΔGeoRisk / ΔM for a change d of M_q; a one-sided difference where d = 0."""
    if d == 0.0:
        d = _FD_STEP if misordered else -_FD_STEP
    return (_georisk_after(d, q, model, totals, weighted_z, glob, exact) - geo_q) / d


@nb.njit(parallel=True, cache=True)
def _georisk_marginal_gains(model, totals, weighted_z, glob, exact):
    """Per query: the model row's GeoRisk as the kernel evaluates it (local or exact), and its
    right-hand ∂GeoRisk/∂M_m(q) (the rescaling constant's ingredients)."""
    current = np.empty(model.size)
    gains = np.empty(model.size)
    for q in nb.prange(model.size):
        current[q] = _georisk_after(0.0, q, model, totals, weighted_z, glob, exact)
        gains[q] = _georisk_slope(0.0, True, q, current[q], model, totals, weighted_z, glob,
                                  exact)
    return current, gains


@nb.njit(cache=True)
def _pair_multiplier(mode, q, delta_m, misordered, alpha_q, model, base, totals, weighted_z,
                     glob, geo_q, exact):
    if mode == _FLAT:
        return 1.0 + alpha_q[q]
    if mode == _CROSSING:
        return _crossing_multiplier(alpha_q[q], model[q], base[q], delta_m, misordered)
    slope = _georisk_slope(delta_m, misordered, q, geo_q, model, totals, weighted_z, glob, exact)
    return max(slope, 0.0) / glob[5]


# ----------------------------------------------------------------------------------------------
# The pair kernel.

@nb.njit(cache=True)
def _query_lambdas(q, lab, sco, grad, hess, gain_table, discounts, inv, sigmoid, truncation,
                   norm, table, low, high, factor, exact_sigmoid, mode, k, inv_idcg_k, alpha_q,
                   model, base, totals, weighted_z, georisk_now, glob, exact_geo):
    """One query's λ and hessians, by rank position: ``lab``/``sco`` are its labels and scores
    in ranked order, ``grad``/``hess`` (float32, zeroed) receive the sums in LightGBM's order."""
    cnt = lab.size
    use_norm = norm and sco[0] != sco[cnt - 1]
    geo_q = georisk_now[q] if mode == _GEORISK else 0.0
    # Multipliers of pairs whose lower document sits at or beyond k depend only on the upper
    # position and the lower label (ΔM = (g_j - g_i) D_k(i) / IDCG@k): cached per i.
    by_label = np.empty(gain_table.size)
    beyond_k = np.full(2, np.nan)
    sum_lambdas = 0.0
    for i in range(min(cnt - 1, truncation)):
        label_i = lab[i]
        if mode != _NONE and i < k:
            by_label[:] = np.nan
        for j in range(i + 1, cnt):
            label_j = lab[j]
            if label_i == label_j:
                continue
            if label_i > label_j:
                hi, lo = i, j
            else:
                hi, lo = j, i
            delta_score = sco[hi] - sco[lo]
            delta = ((gain_table[lab[hi]] - gain_table[lab[lo]])
                     * abs(discounts[hi] - discounts[lo]) * inv)
            if mode != _NONE:
                misordered = label_j > label_i
                if j >= k and i >= k:
                    slot = 1 if misordered else 0
                    if np.isnan(beyond_k[slot]):
                        beyond_k[slot] = _pair_multiplier(
                            mode, q, 0.0, misordered, alpha_q, model, base, totals, weighted_z,
                            glob, geo_q, exact_geo)
                    mult = beyond_k[slot]
                elif j >= k:
                    if np.isnan(by_label[label_j]):
                        delta_m = ((gain_table[label_j] - gain_table[label_i]) * discounts[i]
                                   * inv_idcg_k[q])
                        by_label[label_j] = _pair_multiplier(
                            mode, q, delta_m, misordered, alpha_q, model, base, totals,
                            weighted_z, glob, geo_q, exact_geo)
                    mult = by_label[label_j]
                else:
                    delta_m = ((gain_table[label_j] - gain_table[label_i])
                               * (discounts[i] - discounts[j]) * inv_idcg_k[q])
                    mult = _pair_multiplier(mode, q, delta_m, misordered, alpha_q, model, base,
                                            totals, weighted_z, glob, geo_q, exact_geo)
                delta = delta * mult
            if use_norm:
                delta /= _SCORE_EPS + abs(delta_score)
            if exact_sigmoid:
                rho = 1.0 / (1.0 + math.exp(sigmoid * delta_score))
            elif delta_score <= low:
                rho = table[0]
            elif delta_score >= high:
                rho = table[table.size - 1]
            else:
                rho = table[int((delta_score - low) * factor)]
            p_lambda = rho * (-sigmoid * delta)
            p_hessian = rho * (1.0 - rho) * (sigmoid * sigmoid * delta)
            grad[lo] -= np.float32(p_lambda)
            hess[lo] += np.float32(p_hessian)
            grad[hi] += np.float32(p_lambda)
            hess[hi] += np.float32(p_hessian)
            sum_lambdas -= 2.0 * p_lambda
    if norm and sum_lambdas > 0.0:
        norm_factor = math.log2(1.0 + sum_lambdas) / sum_lambdas
        for p in range(cnt):
            grad[p] = np.float32(grad[p] * norm_factor)
            hess[p] = np.float32(hess[p] * norm_factor)


@nb.njit(parallel=True, cache=True)
def _lambdarank_kernel(scores, labels, gain_table, discounts, order, offsets, inv_max_dcg,
                       weights, use_weights, sigmoid, truncation, norm, table, low, high, factor,
                       exact_sigmoid, mode, k, inv_idcg_k, alpha_q, model, base, totals,
                       weighted_z, georisk_now, glob, exact_geo):
    """LambdaMART gradients and hessians (float32) of every document, SPEC §3, with the risk
    multiplier of ``mode`` applied to each pair's ΔNDCG before the score-distance division.

    Parallel over queries; within a query the pair loop and its float32 accumulation follow
    LightGBM's order exactly.
    """
    grad = np.zeros(scores.size, np.float32)
    hess = np.zeros(scores.size, np.float32)
    for q in nb.prange(offsets.size - 1):
        start = offsets[q]
        cnt = offsets[q + 1] - start
        if cnt < 2 or inv_max_dcg[q] == 0.0:
            continue  # LightGBM's loop adds only zeros here
        docs = order[start:start + cnt]
        lab = labels[docs]
        sco = scores[docs]
        g = np.zeros(cnt, np.float32)
        h = np.zeros(cnt, np.float32)
        _query_lambdas(q, lab, sco, g, h, gain_table, discounts, inv_max_dcg[q], sigmoid,
                       truncation, norm, table, low, high, factor, exact_sigmoid, mode, k,
                       inv_idcg_k, alpha_q, model, base, totals, weighted_z, georisk_now, glob,
                       exact_geo)
        for p in range(cnt):
            d = docs[p]
            if use_weights:
                grad[d] = g[p] * weights[d]
                hess[d] = h[p] * weights[d]
            else:
                grad[d] = g[p]
                hess[d] = h[p]
    return grad, hess


# ----------------------------------------------------------------------------------------------
# Python side: validation, per-dataset setup and per-iteration risk state.

@dataclass
class _Setup:
    """What an objective derives once from a training set (labels, groups, weights)."""

    labels: np.ndarray  # int64
    group: np.ndarray
    offsets: np.ndarray
    weights: np.ndarray  # float32, or empty
    gain_table: np.ndarray
    positions: np.ndarray
    query_index: np.ndarray
    inv_max_dcg: np.ndarray  # 1 / IDCG@T (0 where IDCG@T = 0)
    inv_idcg_k: np.ndarray  # 1 / IDCG@k of the risk measure (0 where 0)
    given: tuple  # copies of (labels, group, weight) as given, to recognise the same data

    def matches(self, labels, group, weight) -> bool:
        """Whether these inputs are the ones the setup was derived from."""
        return all(
            (old is None and new is None) or (old is not None and new is not None
                                              and np.array_equal(old, new))
            for old, new in zip(self.given, (labels, group, weight)))


def _inverse(values: np.ndarray) -> np.ndarray:
    return np.divide(1.0, values, out=np.zeros_like(values), where=values > 0)


class LambdaMART:
    """LambdaMART gradients as LightGBM's native ``lambdarank`` computes them (SPEC §3).

    Parameters
    ----------
    sigmoid : float, default 1.0
        σ of ρ = 1 / (1 + exp(σ Δs)) (LightGBM's ``sigmoid``).
    lambdarank_truncation_level : int, default 30
        T: pairs need one document at a position < T; IDCG is taken at T.
    lambdarank_norm : bool, default True
        Divide ΔNDCG by the score distance and rescale each query by log2(1 + Σ)/Σ.
    label_gain : sequence of float, optional
        Gain of each label; default ``2**l - 1`` for l = 0..30, as LightGBM.
    exact_sigmoid : bool, default False
        Evaluate ρ exactly instead of through LightGBM's lookup table (then models drift from
        native ones after a few trees; faithful mode is the default).

    Notes
    -----
    Usage: ``lightgbm.train({"objective": LambdaMART(), ...}, train_set)``, or
    ``LGBMRanker(objective=LambdaMART().sklearn_objective)``. Dataset weights multiply each
    document's gradient and hessian, as in LightGBM. The objective refuses labels outside
    ``label_gain``, NaN or infinite predictions and a Dataset without query groups.
    """

    _mode = _NONE

    def __init__(self, *, sigmoid=1.0, lambdarank_truncation_level=30, lambdarank_norm=True,
                 label_gain=None, exact_sigmoid=False):
        self.sigmoid = sigmoid
        self.lambdarank_truncation_level = lambdarank_truncation_level
        self.lambdarank_norm = lambdarank_norm
        self.label_gain = label_gain
        self.exact_sigmoid = exact_sigmoid
        self._setup_cache = None

    # -- entry points --------------------------------------------------------------------------

    def __call__(self, preds, train_data):
        """Gradients and hessians for ``lightgbm.train``: ``(preds, Dataset) -> (grad, hess)``."""
        if isinstance(train_data, np.ndarray):
            raise TypeError(
                f"{type(self).__name__} was called as (y_true, y_pred): for LGBMRanker pass "
                f"objective={type(self).__name__}(...).sklearn_objective"
            )
        group = train_data.get_group()
        if group is None:
            raise ValueError(f"{type(self).__name__} needs query groups: build the training "
                             "Dataset with group=... (query sizes)")
        return self.gradients(preds, train_data.get_label(), group, train_data.get_weight())

    def sklearn_objective(self, y_true, y_pred, weight, group):
        """The objective with LGBMRanker's signature ``(y_true, y_pred, weight, group)``."""
        if group is None:
            raise ValueError(f"{type(self).__name__} needs query groups (fit(..., group=...))")
        return self.gradients(y_pred, y_true, group, weight)

    def gradients(self, preds, labels, group, weight=None):
        """Gradients and hessians (float32 arrays) of all documents for the current scores.

        Parameters
        ----------
        preds : array-like, shape (n_documents,)
            Current raw scores.
        labels : array-like, shape (n_documents,)
            Relevance labels, whole numbers within ``label_gain``.
        group : array-like of int, shape (n_queries,)
            Query sizes.
        weight : array-like, shape (n_documents,), optional
            Document weights.
        """
        setup = self._setup(labels, group, weight)
        scores = np.asarray(preds, dtype=np.float64)
        if scores.shape != setup.labels.shape:
            raise ValueError(f"predictions have shape {scores.shape}, the training set has "
                             f"{setup.labels.size} documents")
        bad = np.flatnonzero(~np.isfinite(scores))
        if bad.size:
            raise ValueError(f"prediction {int(bad[0])} is {float(scores[bad[0]])}: predictions "
                             "must be finite (a diverging model? lower the learning rate)")
        order = rank_by_score(scores, setup.labels, setup.offsets)
        state = self._risk_state(scores, order, setup)
        table, low, high, factor = _sigmoid_table(float(self.sigmoid))
        return _lambdarank_kernel(
            scores, setup.labels, setup.gain_table, metrics._discounts(int(setup.group.max())),
            order, setup.offsets, setup.inv_max_dcg, setup.weights, setup.weights.size > 0,
            float(self.sigmoid), int(self.lambdarank_truncation_level),
            bool(self.lambdarank_norm), table, low, high, factor, bool(self.exact_sigmoid),
            self._mode, self._risk_cutoff(), setup.inv_idcg_k, *state)

    # -- setup and state -----------------------------------------------------------------------

    def _check_params(self):
        if not (isinstance(self.sigmoid, (int, float)) and self.sigmoid > 0):
            raise ValueError(f"sigmoid must be a number > 0, got {self.sigmoid!r}")
        t = self.lambdarank_truncation_level
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 1:
            raise ValueError(f"lambdarank_truncation_level must be a whole number >= 1, got {t!r}")

    def _setup(self, labels, group, weight) -> _Setup:
        cached = self._setup_cache
        if cached is not None and cached.matches(labels, group, weight):
            return cached
        self._check_params()
        y = check_labels(labels)
        g = check_group(group, y.size)
        table = (_DEFAULT_LABEL_GAIN if self.label_gain is None
                 else np.asarray(self.label_gain, dtype=np.float64))
        metrics.gains(y, table)  # refuses labels outside label_gain, naming the document
        w = np.empty(0, np.float32)
        if weight is not None:
            w = np.asarray(weight, dtype=np.float32)
            if w.shape != y.shape or not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError(f"weights must be {y.size} finite, non-negative numbers")
        setup = _Setup(
            labels=y, group=g, offsets=offsets_from_group(g), weights=w, gain_table=table,
            positions=positions_in_query(g), query_index=np.repeat(np.arange(g.size), g),
            inv_max_dcg=_inverse(metrics.ideal_dcg(y, g, int(self.lambdarank_truncation_level),
                                                   label_gain=table)),
            inv_idcg_k=np.zeros(g.size),
            given=tuple(None if v is None else np.array(v, copy=True)
                        for v in (labels, group, weight)),
        )
        self._prepare_risk(setup)
        self._setup_cache = setup
        return setup

    def _prepare_risk(self, setup: _Setup) -> None:
        """Validate risk parameters and baselines against the training set (first call)."""

    def _risk_cutoff(self) -> int:
        """k of the risk state's NDCG@k (unused without a risk multiplier)."""
        return 0

    def _risk_state(self, scores, order, setup):
        """Per-query arrays the kernel reads: alpha_q, model, base, totals, weighted_z,
        georisk_now, glob, exact_geo."""
        empty = np.zeros(0)
        return empty, empty, empty, empty, empty, empty, empty, False

    def _model_ndcg(self, order, setup) -> np.ndarray:
        """NDCG@k of the current ranking of every training query (0 where IDCG@k = 0)."""
        ranked_gains = setup.gain_table[setup.labels[order]]
        dcg = metrics.dcg_of_ranking(ranked_gains, setup.positions, setup.query_index,
                                     setup.group.size, self.k)
        return dcg * setup.inv_idcg_k


class _RiskSensitive(LambdaMART):
    """Shared parameters and baseline handling of the risk-sensitive objectives (SPEC §4)."""

    _multi_baseline = False

    def __init__(self, *, alpha=1.0, k=10, baseline=None, baselines=None, query_ids=None,
                 sigmoid=1.0, lambdarank_truncation_level=30, lambdarank_norm=True,
                 label_gain=None, exact_sigmoid=False):
        super().__init__(sigmoid=sigmoid, lambdarank_truncation_level=lambdarank_truncation_level,
                         lambdarank_norm=lambdarank_norm, label_gain=label_gain,
                         exact_sigmoid=exact_sigmoid)
        self.alpha = alpha
        self.k = k
        self.baseline = baseline
        self.baselines = baselines
        self.query_ids = query_ids

    def _baseline_matrix(self, n_queries: int) -> np.ndarray:
        """Baseline effectiveness aligned to the training queries: (n_queries, n_systems)."""
        from lgb_risk.baselines import BaselineStore

        name = type(self).__name__
        given, other = ("baselines", "baseline") if self._multi_baseline else ("baseline",
                                                                                "baselines")
        value = getattr(self, given)
        if getattr(self, other) is not None:
            raise ValueError(f"{name} takes {given}=, not {other}=")
        if value is None:
            raise ValueError(f"{name} needs {given}=: per-query baseline NDCG@{self.k} of the "
                             "training queries (an array in the Dataset's query order, or a "
                             "BaselineStore with query_ids=)")
        if isinstance(value, BaselineStore):
            if self.query_ids is None:
                raise ValueError(f"{name}: a BaselineStore needs query_ids= (the training "
                                 "queries' ids, in the Dataset's query order)")
            value.require_measure("ndcg", self.k)
            matrix = value.align(self.query_ids)
        else:
            matrix = np.asarray(value, dtype=np.float64)
            if matrix.ndim == 1:
                matrix = matrix[:, None]
        if matrix.ndim != 2 or matrix.shape[0] != n_queries:
            raise ValueError(f"{name}: {given} cover {matrix.shape[0] if matrix.ndim else 0} "
                             f"queries but the training set has {n_queries}; they must be "
                             "aligned to the Dataset's query order")
        if not self._multi_baseline and matrix.shape[1] != 1:
            raise ValueError(f"{name} takes one baseline, got {matrix.shape[1]} systems; select "
                             "one (BaselineStore.select(name))")
        bad = ~np.isfinite(matrix) | (matrix < 0)
        if bad.any():
            q = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ValueError(f"{name}: baseline value for query index {q} is "
                             f"{float(matrix[q][bad[q]][0])}; expected a finite NDCG >= 0")
        return matrix

    def _risk_cutoff(self) -> int:
        return int(self.k)

    def _prepare_risk(self, setup):
        check_alpha(self.alpha)
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ValueError(f"k must be a whole number >= 1, got {self.k!r}")
        setup.inv_idcg_k = _inverse(metrics.ideal_dcg(setup.labels, setup.group, int(self.k),
                                                      label_gain=setup.gain_table))
        self._base = self._baseline_matrix(setup.group.size)


class UCRO(_RiskSensitive):
    """U-CRO: LambdaMART optimising URisk against one baseline (Wang et al. 2012; SPEC §4).

    F(M) = M − M_b if M ≥ M_b else (1 + α)(M − M_b), measured with NDCG@k. Each pair's ΔNDCG is
    multiplied by ``1 + α φ``, φ the fraction of the swap's NDCG change [M, M + ΔM] that lies
    below the baseline (so α = 0 is LambdaMART exactly).

    Parameters
    ----------
    alpha : float >= 0
        Risk sensitivity.
    k : int, default 10
        Cut-off of the NDCG@k that the risk state is measured with.
    baseline : array-like (n_queries,) or BaselineStore
        Baseline NDCG@k of each training query, in the Dataset's query order; or a store with one
        baseline plus ``query_ids``.
    query_ids : array-like, optional
        Training query ids in the Dataset's order, to align a BaselineStore.
    sigmoid, lambdarank_truncation_level, lambdarank_norm, label_gain, exact_sigmoid
        As :class:`LambdaMART`.
    """

    _mode = _CROSSING

    def _risk_state(self, scores, order, setup):
        model = self._model_ndcg(order, setup)
        alpha_q = np.full(model.size, float(self.alpha))
        empty = np.zeros(0)
        return alpha_q, model, self._base[:, 0], empty, empty, empty, empty, False


class TSARO(UCRO):
    """T-SARO: U-CRO with a per-query α'_q = α (1 − Φ(TR_q)) ([TR] §6.3, Eq. 25; SPEC §4).

    ``TR_q = x_q / s_x`` with x_q the risk-weighted difference of the current model against the
    baseline on query q (:func:`lgb_risk.risk.risk_deltas`) and s_x its standard deviation over
    the training queries: queries with significant losses (TR_q < −2) get nearly α, wins nearly 0.

    Parameters
    ----------
    se_update : {"iteration", "first"}, default "iteration"
        Recompute s_x every boosting iteration, or freeze it after the first call for this
        training set ([TR] §6.3); :meth:`reset` forgets a frozen value.
    **kwargs
        As :class:`UCRO`.
    """

    def __init__(self, *, se_update="iteration", **kwargs):
        super().__init__(**kwargs)
        self.se_update = se_update

    def _prepare_risk(self, setup):
        check_choice(self.se_update, "se_update", ("iteration", "first"))
        super()._prepare_risk(setup)
        self._frozen_sx = None

    def reset(self):
        """Forget the frozen s_x (``se_update="first"``) before training a new model."""
        self._frozen_sx = None

    def _alpha_prime(self, model, base):
        x = risk.risk_deltas(model, base, self.alpha)
        if self.se_update == "first" and self._frozen_sx is not None:
            s_x = self._frozen_sx
        else:
            s_x = float(x.std(ddof=1)) if x.size > 1 else 0.0
            if self.se_update == "first":
                self._frozen_sx = s_x
        tr = x / s_x if s_x > 0 else np.zeros_like(x)  # no spread: no query stands out
        return float(self.alpha) * (1.0 - stats.norm.cdf(tr))

    def _risk_state(self, scores, order, setup):
        model = self._model_ndcg(order, setup)
        base = self._base[:, 0]
        empty = np.zeros(0)
        return self._alpha_prime(model, base), model, base, empty, empty, empty, empty, False


class TFARO(TSARO):
    """T-FARO: every pair of query q weighted by ``1 + α'_q`` ([TR] Eq. 26; SPEC §4).

    α'_q = α (1 − Φ(TR_q)) as in :class:`TSARO`; the multiplier does not depend on whether the
    swap crosses the baseline. Parameters as :class:`TSARO`.
    """

    _mode = _FLAT


class TStarFARO(TFARO):
    """T*-FARO: T-FARO against the per-query mean of several baselines ([GEO] §6.1).

    Parameters
    ----------
    baselines : array-like (n_queries, n_systems) or BaselineStore
        Baseline NDCG@k of each training query (rows in the Dataset's query order), or a store
        plus ``query_ids``.
    **kwargs
        As :class:`TSARO` (``alpha``, ``k``, ``se_update``, ``query_ids``, LambdaMART's).
    """

    _multi_baseline = True

    def _prepare_risk(self, setup):
        super()._prepare_risk(setup)
        self._base = self._base.mean(axis=1, keepdims=True)


class GeoRisk(_RiskSensitive):
    """GeoRisk-optimising LambdaMART against several baselines ([GEO] §6; SPEC §4).

    The data matrix is the baselines' rows plus the model's row of per-query NDCG@k; F is the
    model row's GeoRisk (:func:`lgb_risk.risk.georisk`). A pair's multiplier is
    ``ΔGeoRisk / ΔM``, with ΔGeoRisk from the paper's local update (``delta="local"``: S, T_q, N
    and z_q updated) or recomputed over all queries (``delta="exact"``, O(c) per pair: for tests
    and small data). Where ΔM = 0 it is a one-sided difference (step 1e-6) in the pair's
    direction. Multipliers are clipped at 0 and divided, each iteration, by the mean over queries
    of the marginal gain ∂GeoRisk/∂M_m(q), which keeps gradients on LambdaMART's scale.

    Parameters
    ----------
    baselines : array-like (n_queries, n_systems) or BaselineStore
        As :class:`TStarFARO`.
    delta : {"local", "exact"}, default "local"
    **kwargs
        ``alpha``, ``k``, ``query_ids`` and LambdaMART's parameters.
    """

    _mode = _GEORISK
    _multi_baseline = True

    def __init__(self, *, delta="local", **kwargs):
        super().__init__(**kwargs)
        self.delta = delta

    def _prepare_risk(self, setup):
        check_choice(self.delta, "delta", ("local", "exact"))
        super()._prepare_risk(setup)

    def _risk_state(self, scores, order, setup):
        model = self._model_ndcg(order, setup)
        alpha = float(self.alpha)
        matrix = np.vstack([model, self._base.T])  # systems × queries, model first
        z = risk.zscores(matrix)[0]
        weighted_z = np.where(z >= 0, z, (1.0 + alpha) * z)
        glob = np.array([model.sum(), matrix.sum(), weighted_z.sum(), float(model.size), alpha,
                         1.0])
        totals = matrix.sum(axis=0)
        exact = self.delta == "exact"
        georisk_now, gains = _georisk_marginal_gains(model, totals, weighted_z, glob, exact)
        scale = np.maximum(gains, 0.0).mean()
        glob[5] = scale if scale > 0 else 1.0  # no positive marginal gain: leave unscaled
        return np.zeros(0), model, np.zeros(0), totals, weighted_z, georisk_now, glob, exact
