"""The LambdaMART pair kernel and the risk multipliers it applies, pair by pair.

One kernel serves every objective of :mod:`lgb_risk.objectives`: LightGBM's LambdaMART pair loop
(Burges 2010; LightGBM's ``rank_objective.hpp``) in which each pair's λ and hessian are multiplied
by a non-negative risk multiplier ``m``. The multiplier is a compiled function of the objective's
per-iteration *risk state* (a ``NamedTuple``), chosen by the state's type when numba compiles the
kernel, so the pair loop carries no mode switch and stays in numba's on-disk cache.

A risk function is added as :mod:`lgb_risk.objectives` describes (the one recipe): a state
type and its multiplier here, registered with :func:`multiplier_of`, and a class there whose
``risk_state`` builds the state. A state type is a ``NamedTuple`` holding what the function
needs per query (arrays indexed by the query's position in the training set) and per training
set (scalars) — every array field is per query, so that :func:`for_queries` can give each
machine of a distributed training its own queries' part. Its multiplier is a function
``(state, q, delta_m, misordered) -> m`` of the query index q, the signed change ΔM of the
query's target measure (NDCG@k or ERR@k) if the pair were swapped, and whether the pair is
mis-ordered (its lower document holds the higher label); the paper's rule is
m = (F(M + ΔM) − F(M)) / ΔM (``@multiplier_of(StateType, per_query=True)`` where m reads only
q: it is then taken once per query).

The library's own states (:data:`BUILT_IN_STATES`) reach the kernel packed into one type,
:class:`BuiltinRisk`, whose fields are generated from theirs and whose ``kind`` chooses the
multiplier at run time in :func:`_builtin_multiplier`: the kernel is compiled once for every
built-in objective, where a specialisation per state type would compile it once for each
(``BENCHMARKS.md``: the first training's compilation). A built-in state type's multiplier is
registered as any other's, and the type is also listed in :data:`BUILT_IN_STATES` (its kind
named beside it) and given its branch in :func:`_builtin_multiplier`. With
LambdaMART's kind no multiplier applies (:func:`applies_risk` is false), and its pairs are
computed as LightGBM computes them. The built-in multipliers are inlined into
:func:`_builtin_multiplier`, which the pair loop calls out of line, for the pairs within the
top k and, for the pairs reaching below it, once per upper position within k and label of the
query: inlining it at every call site, or tabulating every position's multipliers before the
pair loop, cost more run or compile time than they saved (``BENCHMARKS.md``).

The built-in multipliers live in this file on purpose: numba's on-disk cache notices edits only
in the file of the function it caches (the kernel). A multiplier registered from any other module
(a researcher's script or notebook) is therefore compiled with its own copy of the kernel, which
numba keeps in memory only: the cached kernel would keep serving the multiplier as it was when
first compiled, however often it is edited, and the cache's index would record the other
module's state type, so that every later process loading the cache, from any folder, would
have to import that module. The copy is compiled afresh each time a multiplier is registered.

Where the multiplier acts (``norm_includes_risk``). LightGBM rescales each query's λs by
log2(1 + Σ)/Σ, Σ the query's sum of pair |λ| (``lambdarank_norm``). By default Σ is LambdaMART's
own sum Σ0, without the multipliers, and each pair's λ and hessian are multiplied by m on top of
that normalisation: a multiplier constant over a query (T-FARO's 1 + α'_q) then scales the
query's λs by exactly that factor. With ``norm_includes_risk=True`` Σ sums the multiplied pairs,
as version 0.1 did, and log2(1 + Σ)/Σ cancels most of the emphasis (a query's weight grows
like log2(1 + mΣ0) instead of m·log2(1 + Σ0)).
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, get_type_hints

import numba as nb
import numpy as np
from numba.core.errors import TypingError
from numba.extending import overload

SCORE_EPS = float(np.float32(0.01))  # LightGBM adds 0.01f to the score distance
FD_STEP = 1e-6  # one-sided difference step for GeoRisk's slope where ΔM = 0
# M and M_b closer than this are a tie M = M_b (U-CRO's and T-SARO's kink): the model's NDCG@k
# and the baseline's come from different code paths and may differ in the last bits.
TIE_TOLERANCE = 1e-9


class Ranking(NamedTuple):
    """The training set and its current ranking (flat arrays, queries contiguous)."""

    scores: np.ndarray  # float64, current raw scores
    labels: np.ndarray  # int8 (int32 for labels above 127)
    order: np.ndarray  # int32 (int64 from 2**31 documents): order[offsets[q] + p] is the
    # document at position p of query q
    offsets: np.ndarray  # int64, n_queries + 1 query boundaries
    weights: np.ndarray  # float32 document weights, or empty for none


class LambdaConstants(NamedTuple):
    """LambdaMART's parameters and the per-training-set constants derived from them."""

    gain_table: np.ndarray  # gain of each label
    discounts: np.ndarray  # D(p) = 1 / log2(p + 2) for 0-based positions p
    inv_max_dcg: np.ndarray  # per query, 1 / IDCG@T (0 where IDCG@T = 0: the query is skipped;
    # with an ERR target 1 where a document has R > 0, else 0)
    sigmoid: float
    truncation: int  # T: a pair needs one document at a position < T
    norm: bool  # lambdarank_norm
    norm_includes_risk: bool  # Σ of log2(1 + Σ)/Σ sums multiplied pairs (version 0.1's)
    exact_sigmoid: bool  # ρ exactly, or from LightGBM's lookup table below
    sigmoid_table: np.ndarray
    sigmoid_low: float
    sigmoid_high: float
    sigmoid_factor: float
    risk_k: int  # k of the target measure (the risk state's NDCG@k or ERR@k)
    inv_ideal_dcg_at_k: np.ndarray  # per query, 1 / IDCG@k (0 where IDCG@k = 0)
    # ERR@k as the target (else NDCG): a pair's weight is the exact change of ERR@k if its two
    # documents swapped, and so is the risk multiplier's ΔM.
    target_err: bool
    stop_probability: np.ndarray  # ERR's R(l) = (2^l − 1) / 2^l_max of each label (ERR target)
    inv_continue: np.ndarray  # 1 / (1 − R(l)) of each label (ERR target)
    # per query, its highest label: the size of the pair loop's table by label, taken with the
    # training set (in the pair loop, numpy's max lengthened its compilation and a loop of its
    # own slowed it: BENCHMARKS.md)
    highest_label: np.ndarray


# ----------------------------------------------------------------------------------------------
# Risk states and their multipliers.


class RiskState(Protocol):
    """What every risk state is: a ``NamedTuple`` whose array fields hold one value per query of
    the training set (indexed by the query's position) and whose other fields are scalars of the
    set, so that :func:`for_queries` can give each machine its queries' part."""

    @property
    def _fields(self) -> tuple[str, ...]: ...

    def _asdict(self) -> dict[str, Any]: ...


class PairMultiplier(Protocol):
    """A compiled risk multiplier, ``(state, q, ΔM, misordered) -> m`` (see
    :func:`multiplier_of`): the non-negative factor of a pair's λ and hessian in query q, whose
    swap would change the query's NDCG@k by ΔM; ``misordered`` says the pair's lower document
    holds the higher label."""

    def __call__(self, state: Any, q: int, delta_m: float, misordered: bool) -> float: ...

#: This module's state types -> their compiled multipliers, compiled into the cached kernel.
_MULTIPLIERS: dict = {}
#: State types registered from other modules -> their own uncached copy of the kernel.
_FOREIGN_KERNELS: dict = {}
#: State types whose multiplier is constant over a query (taken once per query).
_PER_QUERY: set = set()


def multiplier_of(state_type: type, *,
                  per_query: bool = False) -> Callable[[Callable[..., float]], PairMultiplier]:
    """Register the decorated function as the compiled pair multiplier of ``state_type``.

    ``per_query=True`` declares the multiplier constant over a query (it reads only q): the
    kernel then calls it once per query, with ΔM = 0, instead of once per pair.

    The functions of this module go into the kernel that numba caches on disk; a function of any
    other module gets its own copy of the kernel, compiled in memory now and at every new
    registration (see the module docstring), so that an edited multiplier is always the one
    used and the library's cache only ever holds the library's own types.
    """
    def register(function):
        if per_query:
            _PER_QUERY.add(state_type)
        else:
            _PER_QUERY.discard(state_type)
        if function.__module__ == __name__:
            compiled = nb.njit(cache=True, inline="always")(function)
            _MULTIPLIERS[state_type] = compiled
        else:
            compiled = nb.njit(function)
            _FOREIGN_KERNELS[state_type] = _uncached_kernel(compiled)
        return compiled
    return register


def pair_multiplier(state, q, delta_m, misordered):
    """The risk multiplier m of one pair of query q; compiled per state type (see above)."""
    raise NotImplementedError("pair_multiplier is called from compiled code only")


@overload(pair_multiplier)
def _multiplier_for_state_type(state, q, delta_m, misordered):
    multiplier = _MULTIPLIERS.get(getattr(state, "instance_class", None))
    if multiplier is None:
        raise TypingError(f"no risk multiplier is registered for the state type {state}")
    return lambda state, q, delta_m, misordered: multiplier(state, q, delta_m, misordered)


def applies_risk(state):
    """Whether the state's multiplier can differ from 1: LambdaMART's kind of the packed state
    says no (a run-time flag); every other state yes."""
    raise NotImplementedError("applies_risk is called from compiled code only")


@overload(applies_risk, inline="always")
def _applies_risk_for_state_type(state):
    if getattr(state, "instance_class", None) is BuiltinRisk:
        return lambda state: state.kind != _NONE
    return lambda state: True


def per_query(state):
    """Whether the state's multiplier is constant over a query (the packed state's flag, or a
    compile-time constant of a registered state type)."""
    raise NotImplementedError("per_query is called from compiled code only")


@overload(per_query, inline="always")
def _per_query_for_state_type(state):
    if getattr(state, "instance_class", None) is BuiltinRisk:
        return lambda state: state.per_query
    constant = getattr(state, "instance_class", None) in _PER_QUERY
    return lambda state: constant


def for_queries(state: RiskState, queries: np.ndarray) -> RiskState:
    """The state restricted to some training queries (their positions in the training set, in
    the order of a shard's own queries): every array field is per query, every scalar field per
    training set, as the state types here declare."""
    fields = state._asdict()
    return type(state)(**{name: value[queries] if isinstance(value, np.ndarray) else value
                          for name, value in fields.items()})


class NoRisk(NamedTuple):
    """Plain LambdaMART: every multiplier is 1."""


@multiplier_of(NoRisk, per_query=True)
def _no_multiplier(state, q, delta_m, misordered):
    return 1.0


class CrossingRisk(NamedTuple):
    """U-CRO and T-SARO: F(M) = M − M_b if M ≥ M_b, else (1 + α_q)(M − M_b)."""

    alpha: np.ndarray  # per query: α (U-CRO) or α'_q = α (1 − Φ(TR_q)) (T-SARO)
    model_values: np.ndarray  # per query: NDCG@k of the current model, M
    baseline_values: np.ndarray  # per query: the baseline's NDCG@k, M_b


@multiplier_of(CrossingRisk)
def _crossing_multiplier(state, q, delta_m, misordered):
    """m = 1 + α_q φ, φ the fraction of [M, M + ΔM] below the baseline (Wang et al. 2012).

    This equals (F(M + ΔM) − F(M)) / ΔM. Where ΔM = 0, φ is F's one-sided slope indicator at M:
    right-hand for a mis-ordered pair (the swap would raise M), left-hand otherwise. M within
    ``TIE_TOLERANCE`` of M_b is on the kink (M = M_b), so that which side a tie falls on does not
    depend on rounding in the last bits of two NDCG computations.
    """
    m = state.model_values[q]
    b = state.baseline_values[q]
    if delta_m == 0.0:
        tied = abs(m - b) <= TIE_TOLERANCE
        below = (m < b and not tied) if misordered else (m <= b or tied)
        phi = 1.0 if below else 0.0
    else:
        lo = min(m, m + delta_m)
        hi = max(m, m + delta_m)
        phi = min(1.0, max(0.0, (b - lo) / (hi - lo)))
    return 1.0 + state.alpha[q] * phi


class FlatRisk(NamedTuple):
    """T-FARO and T*-FARO: every pair of query q weighted by 1 + α'_q."""

    alpha: np.ndarray  # per query: α'_q


@multiplier_of(FlatRisk, per_query=True)
def _flat_multiplier(state, q, delta_m, misordered):
    return 1.0 + state.alpha[q]


_named_tuple: Any = NamedTuple  # a record type made from fields known when the module runs


class GeoRiskState(NamedTuple):
    """GeoRisk of the model's row in the matrix of the model's and the baselines' NDCG@k."""

    model_values: np.ndarray  # per query: the model's NDCG@k, x_mq
    column_totals: np.ndarray  # per query: T_q, the column sum over the model and the baselines
    weighted_z: np.ndarray  # per query: w(z_q) z_q of the model's row (w = 1 + α below 0)
    georisk_now: np.ndarray  # per query: the model's GeoRisk as the multiplier evaluates it
    model_total: float  # S, the model row's sum
    grand_total: float  # N, the matrix's sum
    zrisk: float  # ZRisk of the model's row
    n_queries: float  # c
    georisk_alpha: float  # α
    scale: float  # the multipliers are divided by this (mean marginal gain over queries)


#: GeoRisk with every z of the model's row recomputed for a pair's ΔM (O(c) per pair: for tests
#: and small data): :class:`GeoRiskState`'s fields, another type. It is not a built-in state: the
#: pair kernel is compiled for it on its own (and cached), so that the exact update's loop and
#: its call stay out of the kernel every built-in objective runs.
GeoRiskExactState = _named_tuple("GeoRiskExactState", list(get_type_hints(GeoRiskState).items()))


@nb.njit(cache=True, inline="always")
def _std_normal_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@nb.njit(cache=True, inline="always")
def _weighted_z(z, alpha):
    """The compiled twin of :func:`lgb_risk.risk.downside_weighted` for one value."""
    return z if z >= 0.0 else (1.0 + alpha) * z


@nb.njit(cache=True, inline="always")
def _georisk_of(model_total, n_queries, zrisk):
    """GeoRisk = √(S/c · Φ(ZRisk/c)) of a row with sum S and ZRisk over c queries."""
    return math.sqrt(max(model_total, 0.0) / n_queries * _std_normal_cdf(zrisk / n_queries))


@nb.njit(cache=True)
def _georisk_local(model_total, grand_total, n_queries, alpha, zrisk, weighted_z_q,
                   column_total_q, model_value_q, d):
    """The local update from the state's numbers and query q's: S' = S + d, T'_q = T_q + d,
    N' = N + d and only z_q recomputed."""
    s2 = model_total + d
    n2 = grand_total + d
    e = s2 * (column_total_q + d) / n2 if n2 > 0.0 else 0.0
    z = (model_value_q + d - e) / math.sqrt(e) if e > 0.0 else 0.0
    return _georisk_of(s2, n_queries, zrisk - weighted_z_q + _weighted_z(z, alpha))


@nb.njit(cache=True)
def _georisk_exact(state, q, d):
    """Every z_j of the model's row recomputed with S' = S + d and N' = N + d: O(c)."""
    s2 = state.model_total + d
    n2 = state.grand_total + d
    zr = 0.0
    for j in range(state.model_values.size):
        shift = d if j == q else 0.0
        e = s2 * (state.column_totals[j] + shift) / n2 if n2 > 0.0 else 0.0
        z = (state.model_values[j] + shift - e) / math.sqrt(e) if e > 0.0 else 0.0
        zr += _weighted_z(z, state.georisk_alpha)
    return _georisk_of(s2, state.n_queries, zr)


def georisk_after(state, q, d):
    """GeoRisk of the model's row if its NDCG on query q changed by d ([GEO] §6): the local
    update (:func:`_georisk_local`), or every z recomputed for a :data:`GeoRiskExactState`
    (:func:`_georisk_exact`), chosen by the state's type when numba compiles the caller.

    Both are compiled once and called: inlined, the multiplier and
    :func:`georisk_marginal_gains` compiled them three times. The local update is handed
    numbers only, and the pair kernel of the built-in states holds no call of the exact one:
    a call handed the state (or its arrays), even one its branch never takes, costs every pair
    the reference counts of the state's arrays (BENCHMARKS.md, "GeoRisk's multiplier called or
    inlined").
    """
    raise NotImplementedError("georisk_after is called from compiled code only")


@overload(georisk_after, inline="always")
def _georisk_after_for_state_type(state, q, d):
    if getattr(state, "instance_class", None) is GeoRiskExactState:
        return lambda state, q, d: _georisk_exact(state, q, d)
    return lambda state, q, d: _georisk_local(
        state.model_total, state.grand_total, state.n_queries, state.georisk_alpha,
        state.zrisk, state.weighted_z[q], state.column_totals[q], state.model_values[q], d)


@nb.njit(cache=True, inline="always")
def georisk_expectation_vanishes(state, q):
    """Whether e_q = S T_q / N is 0: the model and every baseline score 0 on q, or the model
    scores 0 on every query. GeoRisk's slope in M_q is infinite there (z_q grows like √ΔM, and
    so does GeoRisk itself where S = 0)."""
    return state.model_total * state.column_totals[q] == 0.0


@nb.njit(cache=True, inline="always")
def georisk_slope(state, q, d, misordered, georisk_now):
    """ΔGeoRisk / ΔM for a change d of M_q; a one-sided difference where d = 0."""
    if d == 0.0:
        d = FD_STEP if misordered else -FD_STEP
    return (georisk_after(state, q, d) - georisk_now) / d


@nb.njit(cache=True)
def georisk_marginal_gains(state):
    """Per query: the model's GeoRisk as the multiplier evaluates it (local or exact), and its
    right-hand slope ∂GeoRisk/∂M_q, NaN where e_q = 0 (infinite there: see
    :func:`georisk_expectation_vanishes`). The rescaling constant is taken from these."""
    n = state.model_values.size
    current = np.empty(n)
    gains = np.empty(n)
    for q in range(n):
        current[q] = georisk_after(state, q, 0.0)
        if georisk_expectation_vanishes(state, q):
            gains[q] = np.nan
        else:
            gains[q] = georisk_slope(state, q, 0.0, True, current[q])
    return current, gains


@multiplier_of(GeoRiskState)
def _georisk_multiplier(state, q, delta_m, misordered):
    """max(0, ΔGeoRisk/ΔM) / scale; 1 (LambdaMART's weight) on a query where e_q = 0."""
    if georisk_expectation_vanishes(state, q):
        return 1.0
    slope = georisk_slope(state, q, delta_m, misordered, state.georisk_now[q])
    return max(slope, 0.0) / state.scale


@multiplier_of(GeoRiskExactState)
def _georisk_exact_multiplier(state, q, delta_m, misordered):
    """GeoRisk's multiplier, with ΔGeoRisk recomputed over every query."""
    return _georisk_multiplier(state, q, delta_m, misordered)


#: The library's own risk states, packed into :class:`BuiltinRisk`; the position of each is its
#: ``kind``.
BUILT_IN_STATES = (CrossingRisk, FlatRisk, GeoRiskState, NoRisk)
_CROSSING, _FLAT, _GEORISK, _NONE = range(len(BUILT_IN_STATES))
_KINDS = {state_type: kind for kind, state_type in enumerate(BUILT_IN_STATES)}
_EMPTY = np.empty(0)


def _packed_fields() -> tuple[list[tuple[str, type]], dict[str, Any]]:
    """The fields of :class:`BuiltinRisk`: ``kind``, ``per_query``, then every field of the
    built-in states in order of first appearance (a name the states share is one field, which
    must have one type), each with its empty value (an empty array, 0.0, False)."""
    fields: dict[str, type] = {"kind": int, "per_query": bool}
    for state_type in BUILT_IN_STATES:
        for name, kind in get_type_hints(state_type).items():
            if fields.setdefault(name, kind) is not kind:
                raise TypeError(f"{state_type.__name__}.{name} is {kind.__name__}, but another "
                                f"built-in state's {name} is {fields[name].__name__}")
    empty = {np.ndarray: _EMPTY, float: 0.0, bool: False}
    return list(fields.items()), {name: empty[kind] for name, kind in list(fields.items())[2:]}


_FIELDS, _EMPTY_FIELDS = _packed_fields()
#: The built-in states in one type (see the module docstring): ``kind`` says which, the fields
#: of the others are empty.
BuiltinRisk = _named_tuple("BuiltinRisk", _FIELDS)


def packed(state: RiskState) -> Any:
    """The state as the compiled code receives it: a built-in state as :class:`BuiltinRisk`
    (arrays made contiguous, so that every state has the one numba type), any other as it is."""
    if type(state) not in _KINDS:
        return state
    fields = dict(_EMPTY_FIELDS)
    for name, value in state._asdict().items():
        fields[name] = (np.ascontiguousarray(value, dtype=np.float64)
                        if isinstance(value, np.ndarray) else value)
    return BuiltinRisk(**fields, kind=_KINDS[type(state)], per_query=type(state) in _PER_QUERY)


@multiplier_of(BuiltinRisk)
def _builtin_multiplier(state, q, delta_m, misordered):
    if state.kind == _NONE:
        return _no_multiplier(state, q, delta_m, misordered)
    if state.kind == _FLAT:
        return _flat_multiplier(state, q, delta_m, misordered)
    if state.kind == _CROSSING:
        return _crossing_multiplier(state, q, delta_m, misordered)
    return _georisk_multiplier(state, q, delta_m, misordered)


# ----------------------------------------------------------------------------------------------
# The pair kernel.

@nb.njit(cache=True, inline="always")
def _err_prefixes(lab, k, stop):
    """For the first depth = min(k, n) positions p of a ranked query: ``weight[p]`` =
    Π_{s<p} (1 − R_s) / (p + 1), the probability that the user reaches p over the rank, and
    ``cumulative[p]`` = ERR@p, the sum of R_s weight[s] over s < p (one more entry, p = depth).

    With them the change of ERR@k when the documents at positions i < j (i < k) swap is exact
    in O(1) (:func:`_query_lambdas`): position i gets R_j; the positions strictly between i and
    j (up to k) are reached with probability multiplied by (1 − R_j)/(1 − R_i); position j (if
    < k) gets R_i, reached with that factor; the positions after j are reached as before:
    ΔERR = (R_j − R_i) w_i + (R_i − R_j)/(1 − R_i) (C_min(j,depth) − C_{i+1})
    + [j < depth] (R_i (1 − R_j)/(1 − R_i) − R_j) w_j.
    """
    depth = min(k, lab.size)
    weight = np.empty(depth + 1)
    cumulative = np.empty(depth + 1)
    reach = 1.0
    cumulative[0] = 0.0
    for p in range(depth):
        r = stop[lab[p]]
        weight[p] = reach / (p + 1)
        cumulative[p + 1] = cumulative[p] + r * weight[p]
        reach *= 1.0 - r
    weight[depth] = 0.0
    return weight, cumulative


@nb.njit(parallel=True, cache=True)
def err_at_k_of_order(order, offsets, labels, stop_probability, k):
    """ERR@k of each query ranked by ``order`` (flat: ``order[offsets[q] + p]`` is the document
    at position p of query q), document d stopping the user with
    ``stop_probability[labels[d]]``: the risk state's M, from the prefixes the pair weights
    use (:func:`_err_prefixes`)."""
    out = np.zeros(offsets.size - 1)
    for q in nb.prange(offsets.size - 1):
        a = offsets[q]
        depth = min(k, offsets[q + 1] - a)
        _, cumulative = _err_prefixes(labels[order[a:a + depth]], k, stop_probability)
        out[q] = cumulative[depth]
    return out


# The pair loop's two rules (the measurements behind them: BENCHMARKS.md, "The pair loop's
# helpers, taking scalars (kept)" and the sections on the multipliers after it):
# 1. A helper the loop calls for every pair is inlined at numba's level (``inline="always"``)
#    and takes scalars only: handed an array or the risk state, such a helper left LLVM a loop it
#    optimised worse.
# 2. The risk state reaches only the query's helper (:func:`_query_multipliers`) and the
#    multiplier itself (``pair_multiplier``): a pair beyond k shares a multiplier taken once per
#    upper position and label, and only a pair with both documents within k calls its own.
# A change to the loop is counted (``scripts/bench_gradient_call.py --count``) as well as timed:
# the code LLVM makes of it moves with small edits (BENCHMARKS.md, "The gradient call counted").

@nb.njit(cache=True, inline="always")
def _query_multipliers(by_label, risk, q, lab, k):
    """What a query's pairs share, taken before its pair loop: the multipliers of an ordered and
    of a mis-ordered pair with both documents at or beyond k (ΔM = 0; where the multiplier is
    constant over the query, the query's for both); ``by_label`` gets NaN at each label not
    found at or beyond k, 0 at the others (the pair loop fills those per upper position)."""
    if per_query(risk):
        query_mult = pair_multiplier(risk, q, 0.0, False)
        return query_mult, query_mult
    if not applies_risk(risk):
        return 1.0, 1.0
    by_label[:] = np.nan
    for p in range(k, lab.size):
        by_label[lab[p]] = 0.0
    if lab.size <= k:
        return 1.0, 1.0
    return pair_multiplier(risk, q, 0.0, False), pair_multiplier(risk, q, 0.0, True)


@nb.njit(cache=True, inline="always")
def _multiplier_if_shared(query_wide, j_within_k, i_upper, beyond_ordered, beyond_misordered,
                          by_label_j):
    """``(has_own, m)``: the multiplier m a pair shares, with ``has_own`` False, or
    ``(True, 0.0)`` where the pair has its own (both documents within k). The shared one is the
    query's, constant over it or with both documents at or beyond k (ΔM = 0), else its upper
    position's and lower label's (``by_label_j``, else unused)."""
    if query_wide:
        return False, beyond_ordered if i_upper else beyond_misordered
    if j_within_k:
        return True, 0.0
    return False, by_label_j


@nb.njit(cache=True, inline="always")
def _err_swap_change(upper, stop_j, cumulative_j, weight_j, within):
    """The signed change of ERR@k if the documents at positions i < j swapped (the formula of
    :func:`_err_prefixes`): ``upper`` is (R_i, w_i, 1/(1 − R_i), C_{i+1}); ``cumulative_j`` is
    C_min(j, depth); ``within`` says j < depth, where ``weight_j`` is w_j."""
    stop_i, weight_i, over_continue_i, cumulative_i = upper
    change = (stop_j - stop_i) * (weight_i - over_continue_i * (cumulative_j - cumulative_i))
    if within:
        change += (stop_i * (1.0 - stop_j) * over_continue_i - stop_j) * weight_j
    return change


@nb.njit(cache=True, inline="always")
def _target_change(target_err, err_change, gain_change, discount_i, discount_j, inv_idcg_k):
    """ΔM, the signed change of the query's target measure if the pair swapped: ERR@k's
    (``err_change``), or NDCG@k's (g_j − g_i)(D(i) − D(j)) / IDCG@k, D(j) = 0 for j ≥ k."""
    if target_err:
        return err_change
    return gain_change * (discount_i - discount_j) * inv_idcg_k


@nb.njit(cache=True, inline="always")
def _beyond_k_change(const, q, label, label_i, discount_i, upper, cumulative_end):
    """ΔM of a pair of an upper position i < k and a lower document of label l at or beyond k,
    which reads only i and l: D = 0 there, and ERR@k's change reaches ``cumulative_end``,
    C_depth (``upper`` is ERR's terms of i, :func:`_err_swap_change`)."""
    err_change = (_err_swap_change(upper, const.stop_probability[label], cumulative_end, 0.0,
                                   False) if const.target_err else 0.0)
    return _target_change(const.target_err, err_change,
                          const.gain_table[label] - const.gain_table[label_i], discount_i, 0.0,
                          const.inv_ideal_dcg_at_k[q])


@nb.njit(cache=True, inline="always")
def _rho(const, delta_score):
    """ρ = 1 / (1 + exp(σ Δs)): exactly, or from LightGBM's lookup table (clamped at its ends;
    the bin as an unsigned index, LightGBM's size_t: no wrap-around check)."""
    if const.exact_sigmoid:
        return 1.0 / (1.0 + math.exp(const.sigmoid * delta_score))
    table = const.sigmoid_table
    if delta_score <= const.sigmoid_low:
        return table[0]
    if delta_score >= const.sigmoid_high:
        return table[table.size - 1]
    return table[np.uint64((delta_score - const.sigmoid_low) * const.sigmoid_factor)]


@nb.njit(cache=True, inline="always")
def _pair_lambda(rho, sigmoid, pair_weight, delta, i_upper, norm_includes_risk):
    """A pair's λ = −σ ρ m|ΔM| and hessian σ² ρ(1 − ρ) m|ΔM| as float32, and the λ that counts
    toward the query's Σ (with or without the multiplier m). The λ is signed for document i:
    the upper document gains it, the lower loses it (x − λ is x + (−λ), bit for bit)."""
    p_lambda = rho * (-sigmoid * pair_weight)
    p_hessian = rho * (1.0 - rho) * (sigmoid * sigmoid * pair_weight)
    counted = p_lambda if norm_includes_risk else rho * (-sigmoid * delta)
    lambda32 = np.float32(p_lambda) if i_upper else -np.float32(p_lambda)
    return lambda32, np.float32(p_hessian), counted


@nb.njit(cache=True, inline="always")
def _normalise(grad, hess, sum_lambdas):
    """LightGBM's ``lambdarank_norm``: a query's λs and hessians times log2(1 + Σ)/Σ."""
    if sum_lambdas > 0.0:
        norm_factor = math.log2(1.0 + sum_lambdas) / sum_lambdas
        for p in range(grad.size):
            grad[p] = np.float32(grad[p] * norm_factor)
            hess[p] = np.float32(hess[p] * norm_factor)


# error_model="numpy": a float division by zero gives inf or nan rather than raising, and the
# pair loop carries no test before each division (with Python's it trained slower:
# BENCHMARKS.md). Its divisors are score distances (>= 0.01), the GeoRisk scale (> 0) and sums
# tested > 0.
@nb.njit(cache=True, error_model="numpy")
def _query_lambdas(q, lab, sco, grad, hess, const, risk):
    """One query's λs and hessians by rank position: ``lab``/``sco`` are its labels and scores in
    ranked order; ``grad``/``hess`` (float32, zeroed) receive the sums in LightGBM's order.

    A pair's weight is LightGBM's ΔNDCG (IDCG at T), or with an ERR@k target the exact change
    of ERR@k if the pair swapped, times the risk multiplier: the pair's own within the top k,
    else the one its upper position and lower label share (``by_label``, taken before i's pairs
    for each label found at or beyond k, :func:`_beyond_k_change`). The upper document keeps
    its float32 sums in a register (its terms come in j order, as LightGBM adds them to
    memory): the same bits.
    """
    cnt, k, discounts, stop = lab.size, const.risk_k, const.discounts, const.stop_probability
    gains, inv, target_err = const.gain_table[lab], const.inv_max_dcg[q], const.target_err
    use_norm = const.norm and sco[0] != sco[cnt - 1]
    last, depth = min(cnt - 1, const.truncation), 0
    if target_err:  # a swap below k leaves ERR@k as it is: only pairs with i < k count
        reach_weight, cumulative = _err_prefixes(lab, k, stop)
        depth = reach_weight.size - 1
        last = min(last, depth)
    else:
        reach_weight = cumulative = np.empty(1)
    by_label = np.empty(const.highest_label[q] + 1)
    beyond_ordered, beyond_misordered = _query_multipliers(by_label, risk, q, lab, k)
    sum_lambdas = 0.0
    for i in range(last):
        label_i, gain_i, discount_i, score_i = lab[i], gains[i], discounts[i], sco[i]
        grad_i, hess_i = grad[i], hess[i]
        upper = ((stop[label_i], reach_weight[i], const.inv_continue[label_i], cumulative[i + 1])
                 if target_err else (0.0, 0.0, 0.0, 0.0))
        if applies_risk(risk) and not per_query(risk) and i < k:  # i's, per label below k
            for label in range(by_label.size):  # (NaN: a label not found there)
                if label != label_i and not np.isnan(by_label[label]):
                    by_label[label] = pair_multiplier(risk, q, _beyond_k_change(
                        const, q, label, label_i, discount_i, upper, cumulative[depth]),
                        label > label_i)
        for j in range(i + 1, cnt):
            at_j = np.uint64(j)  # unsigned: no test for a negative index (BENCHMARKS.md)
            label_j = lab[at_j]
            if label_i == label_j:
                continue
            i_upper = label_i > label_j  # i is the pair's more relevant document
            delta_score = score_i - sco[at_j] if i_upper else sco[at_j] - score_i
            delta_gain = gain_i - gains[at_j] if i_upper else gains[at_j] - gain_i
            err_change = (_err_swap_change(upper, stop[label_j], cumulative[min(j, depth)],
                                           reach_weight[at_j] if j < depth else 0.0, j < depth)
                          if target_err else 0.0)
            delta = (abs(err_change) if target_err
                     else delta_gain * abs(discount_i - discounts[at_j]) * inv)
            pair_weight = delta
            if applies_risk(risk):
                has_own, mult = _multiplier_if_shared(per_query(risk) or i >= k, j < k,
                                                      i_upper, beyond_ordered,
                                                      beyond_misordered, by_label[label_j])
                if has_own:  # both documents within k: the pair's own multiplier
                    mult = pair_multiplier(risk, q, _target_change(
                        target_err, err_change, gains[at_j] - gain_i, discount_i,
                        discounts[at_j], const.inv_ideal_dcg_at_k[q]), not i_upper)
                pair_weight = delta * mult
            if use_norm:
                distance = SCORE_EPS + abs(delta_score)
                delta /= distance
                pair_weight = pair_weight / distance if applies_risk(risk) else delta
            lambda32, hessian32, counted = _pair_lambda(_rho(const, delta_score), const.sigmoid,
                                                        pair_weight, delta, i_upper,
                                                        const.norm_includes_risk)
            grad_i += lambda32
            grad[at_j] -= lambda32
            hess_i += hessian32
            hess[at_j] += hessian32
            sum_lambdas -= 2.0 * counted
        grad[i], hess[i] = grad_i, hess_i
    if const.norm:
        _normalise(grad, hess, sum_lambdas)


def lambdarank_gradients(ranking, const, risk):
    """Gradients and hessians (float32) of every document: LambdaMART's, each pair's λ and hessian
    multiplied by ``pair_multiplier(risk, ...)``; document weights multiply the sums.

    Parallel over queries; within a query the pair loop and its float32 accumulation follow
    LightGBM's order exactly, so that with :class:`NoRisk` the result is LightGBM's own. The
    library's state types run the cached kernel; another module's, their own copy.
    """
    risk = packed(risk)
    kernel = _FOREIGN_KERNELS.get(type(risk), _cached_kernel)
    # made here: numpy's zeros compiled in the kernel would lengthen its first compilation
    grad = np.zeros(ranking.scores.size, np.float32)
    hess = np.zeros(ranking.scores.size, np.float32)
    kernel(ranking, const, risk, grad, hess)
    return grad, hess


def _with_globals(function, **replaced):
    """A copy of a Python function whose global names in ``replaced`` refer to other objects."""
    return types.FunctionType(function.__code__, {**function.__globals__, **replaced},
                              function.__name__, function.__defaults__, function.__closure__)


def _uncached_kernel(multiplier):
    """The pair kernel compiled in memory with ``multiplier`` called for every pair (and for the
    multipliers a query or an upper position shares)."""
    shared = nb.njit(inline="always")(_with_globals(_query_multipliers.py_func,
                                                    pair_multiplier=multiplier))
    query_lambdas = nb.njit(_with_globals(_query_lambdas.py_func, pair_multiplier=multiplier,
                                          _query_multipliers=shared))
    return nb.njit(parallel=True)(_with_globals(_cached_kernel.py_func,
                                                _query_lambdas=query_lambdas))


@nb.njit(parallel=True, cache=True)
def _cached_kernel(ranking, const, risk, grad, hess):
    offsets = ranking.offsets
    use_weights = ranking.weights.size > 0
    for q in nb.prange(offsets.size - 1):
        start = offsets[q]
        cnt = offsets[q + 1] - start
        if cnt < 2 or const.inv_max_dcg[q] == 0.0:
            continue  # LightGBM's loop adds only zeros here
        docs = ranking.order[start:start + cnt]
        g = np.empty(cnt, np.float32)
        h = np.empty(cnt, np.float32)
        for p in range(cnt):  # numpy's zeros compiled here would lengthen the compilation
            g[p] = 0.0
            h[p] = 0.0
        # q as int64: the parallel loop's body gets it as uint64, where the kernel's own typing
        # has int64, and the pair loop would be compiled once for each
        _query_lambdas(np.int64(q), ranking.labels[docs], ranking.scores[docs], g, h, const,
                       risk)
        for p in range(cnt):
            d = docs[p]
            if use_weights:
                grad[d] = g[p] * ranking.weights[d]
                hess[d] = h[p] * ranking.weights[d]
            else:
                grad[d] = g[p]
                hess[d] = h[p]
