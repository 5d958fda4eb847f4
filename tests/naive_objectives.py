"""A naive pure-Python reference of the objectives, written for the tests: LightGBM's lambdarank
pair loop (its rank_objective.hpp) and the risk functions of U-CRO, T-SARO/T-FARO ([TR] §6) and
GeoRisk ([GEO] §6).

Loops over queries and pairs, float64 throughout, the exact sigmoid, and the risk functions F
written literally: a pair's multiplier is ``(F(M + ΔM) − F(M)) / ΔM``, with a one-sided
difference quotient where ΔM = 0. Independent of lgb_risk's kernel and its φ formulation.
"""

import math

from tests import naive
from tests.conftest import split_queries

STEP = 1e-6


def phi(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def query_ndcg(labels, scores, k):
    return naive.ndcg(labels, scores, k)


def disc(p):
    return 1.0 / math.log2(p + 2)


def delta_m(li, lj, i, j, k, idcg_k):
    """Signed change of NDCG@k if the documents at positions i < j swapped."""
    if idcg_k == 0:
        return 0.0
    dk = lambda p: disc(p) if p < k else 0.0  # noqa: E731
    return ((2 ** lj - 1) - (2 ** li - 1)) * (dk(i) - dk(j)) / idcg_k


def slope(F, m, dm, misordered):
    """(F(m + dm) − F(m)) / dm, or a one-sided quotient in the pair's direction if dm = 0."""
    if dm == 0.0:
        dm = STEP if misordered else -STEP
    return (F(m + dm) - F(m)) / dm


def err_swap_change(ranked, i, j, k, max_label):
    """ERR@k of the ranked labels with positions i and j swapped, minus ERR@k as ranked: both
    evaluated by the measure's definition (tests/naive.py), nothing derived."""
    swapped = list(ranked)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    in_order = [-p for p in range(len(ranked))]  # scores that keep the list as it is
    return (naive.err(swapped, in_order, k, max_label)
            - naive.err(list(ranked), in_order, k, max_label))


def err_context(labels, scores, group, k, max_label):
    """Per query: ERR@k of the current ranking, and its labels in ranked order."""
    model, ranked = [], []
    for y, s in split_queries(labels, scores, group):
        model.append(naive.err(y, s, k, max_label))
        ranked.append(ranked_positions_labels(y, s))
    return model, ranked


def lambdamart(labels, scores, group, multiplier=None, sigmoid=1.0, T=30, norm=True,
               weights=None, norm_includes_risk=False, change=None):
    """Gradients and hessians; ``multiplier(q, i, j, li, lj)`` gives a pair's m (default 1).

    A pair's weight is LightGBM's ΔNDCG, or ``abs(change(q, i, j))`` where ``change`` gives the
    target measure's change if the documents at positions i and j swapped. The query's
    normaliser log2(1 + Σ)/Σ sums the pairs without m, unless ``norm_includes_risk`` (then
    with m)."""
    grad = [0.0] * len(labels)
    hess = [0.0] * len(labels)
    start = 0
    for q, n in enumerate(group):
        idx = list(range(start, start + n))
        start += n
        order = sorted(idx, key=lambda d: -scores[d])  # stable
        ideal = naive.dcg(sorted((labels[d] for d in idx), reverse=True), T)
        if ideal == 0 or n < 2:
            continue
        best, worst = scores[order[0]], scores[order[-1]]
        total = 0.0
        g = {d: 0.0 for d in idx}
        h = {d: 0.0 for d in idx}
        for i in range(min(T, n - 1)):
            for j in range(i + 1, n):
                a, b = order[i], order[j]
                if labels[a] == labels[b]:
                    continue
                hi_, lo_ = (a, b) if labels[a] > labels[b] else (b, a)
                if change is None:
                    dndcg = (abs((2 ** labels[hi_] - 1) - (2 ** labels[lo_] - 1))
                             * abs(disc(i) - disc(j)) / ideal)
                else:
                    dndcg = abs(change(q, i, j))
                m = 1.0 if multiplier is None else multiplier(q, i, j, labels[a], labels[b])
                ds = scores[hi_] - scores[lo_]
                if norm and best != worst:
                    dndcg /= 0.01 + abs(ds)
                rho = 1.0 / (1.0 + math.exp(sigmoid * ds))
                lam = -sigmoid * rho * dndcg * m
                g[hi_] += lam
                g[lo_] -= lam
                h[hi_] += sigmoid ** 2 * rho * (1 - rho) * dndcg * m
                h[lo_] += sigmoid ** 2 * rho * (1 - rho) * dndcg * m
                total += 2 * sigmoid * rho * dndcg * (m if norm_includes_risk else 1.0)
        factor = math.log2(1 + total) / total if norm and total > 0 else 1.0
        for d in idx:
            w = 1.0 if weights is None else weights[d]
            grad[d] = g[d] * factor * w
            hess[d] = h[d] * factor * w
    return grad, hess


def ranked_positions_labels(labels, scores):
    order = sorted(range(len(labels)), key=lambda d: -scores[d])
    return [labels[d] for d in order]


def risk_context(labels, scores, group, k):
    """Per query: M (NDCG@k of the current ranking) and IDCG@k."""
    model, idcg = [], []
    for y, s in split_queries(labels, scores, group):
        model.append(query_ndcg(y, s, k))
        idcg.append(naive.dcg(sorted(y, reverse=True), k))
    return model, idcg


def crossing_multiplier(model, base, idcg, alpha_of_query, k, change=None):
    """U-CRO / T-SARO: F(M) = M − M_b if M ≥ M_b else (1 + α_q)(M − M_b); ΔM the change of
    NDCG@k, or ``change(q, i, j)``."""
    def multiplier(q, i, j, li, lj):
        a = alpha_of_query[q]
        F = lambda m: (m - base[q]) if m >= base[q] else (1 + a) * (m - base[q])  # noqa: E731
        dm = delta_m(li, lj, i, j, k, idcg[q]) if change is None else change(q, i, j)
        return slope(F, model[q], dm, lj > li)
    return multiplier


def risk_x(model, base, alpha):
    return [(m - b) if m >= b else (1 + alpha) * (m - b) for m, b in zip(model, base)]


def sample_sd(x):
    mean = sum(x) / len(x)
    return math.sqrt(sum((v - mean) ** 2 for v in x) / (len(x) - 1))


def saro_alphas(model, base, alpha, sx=None, definition="x_over_sx"):
    """α'_q = α (1 − Φ(TR_q)); s_x from this x unless given (a frozen value). TR_q is x_q / s_x
    ([TR] Eq. 21), δ_q / (s_x / √c) ([GEO] §6) or δ_q / ((1 + α) sd(M_b)) (Jforests)."""
    x = risk_x(model, base, alpha)
    sx = sample_sd(x) if sx is None else sx
    delta = [m - b for m, b in zip(model, base)]
    if definition == "x_over_sx":
        top, scale = x, sx
    elif definition == "delta_over_se":
        top, scale = delta, sx / math.sqrt(len(x))
    else:
        top, scale = delta, (1 + alpha) * sample_sd(base)
    return [alpha * (1 - phi(v / scale)) if scale > 0 else alpha * 0.5 for v in top]


def georisk_row(rows, alpha):
    """GeoRisk of rows[0] within the matrix rows (systems × queries), by loops ([GEO] Eq. 7)."""
    c = len(rows[0])
    S = [sum(r) for r in rows]
    T = [sum(r[j] for r in rows) for j in range(c)]
    N = sum(S)
    zr = 0.0
    for j in range(c):
        e = S[0] * T[j] / N
        z = (rows[0][j] - e) / math.sqrt(e) if e > 0 else 0.0
        zr += z if z >= 0 else (1 + alpha) * z
    return math.sqrt(S[0] / c * phi(zr / c))


def georisk_local(model, baselines, alpha):
    """F_q(d): GeoRisk of the model row after M_q += d by [GEO] §6's local update."""
    c = len(model)
    T = [model[j] + sum(b[j] for b in baselines) for j in range(c)]
    S, N = sum(model), sum(T)
    z = []
    for j in range(c):
        e = S * T[j] / N
        z.append((model[j] - e) / math.sqrt(e) if e > 0 else 0.0)
    w = lambda v: v if v >= 0 else (1 + alpha) * v  # noqa: E731
    zr = sum(w(v) for v in z)

    def after(q, d):
        e = (S + d) * (T[q] + d) / (N + d)
        zq = (model[q] + d - e) / math.sqrt(e) if e > 0 else 0.0
        return math.sqrt((S + d) / c * phi((zr - w(z[q]) + w(zq)) / c))
    return after


def georisk_exact(model, baselines, alpha):
    def after(q, d):
        row = list(model)
        row[q] += d
        return georisk_row([row] + [list(b) for b in baselines], alpha)
    return after


def georisk_multiplier(model, baselines, idcg, alpha, k, exact=False, change=None):
    """GeoRisk's multiplier: the slope of F_q, clipped at 0, divided by the mean right-hand slope
    over the queries whose expected value e_q = S T_q / N is not 0; 1 on those where it is."""
    after = (georisk_exact if exact else georisk_local)(model, baselines, alpha)
    c = len(model)
    column = [model[j] + sum(b[j] for b in baselines) for j in range(c)]
    vanishes = [sum(model) * column[j] / sum(column) == 0 for j in range(c)]
    gains = [max(0.0, (after(q, STEP) - after(q, 0.0)) / STEP)
             for q in range(c) if not vanishes[q]]
    scale = (sum(gains) / len(gains) if gains else 0.0) or 1.0

    def multiplier(q, i, j, li, lj):
        if vanishes[q]:
            return 1.0
        dm = delta_m(li, lj, i, j, k, idcg[q]) if change is None else change(q, i, j)
        s = slope(lambda m: after(q, m - model[q]), model[q], dm, lj > li)
        return max(s, 0.0) / scale
    return multiplier
