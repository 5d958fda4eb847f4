"""Moments of DCG, ERR, RBP, Success@k and bpref under independent graded labels ([AE] Thm 3).

[AE]: Sawade et al., Machine Learning 2013 (:mod:`lgb_risk.references`).

A relevance model gives every document z a distribution P_z over the grades 0..G−1, and the
grades of a query's documents are independent given the query ([AE] Eq. 3). For a ranking of the
query, best first, with top K = min(k, length) documents a_1..a_K, the moments of the measure L
under that model are computed exactly, without enumerating label vectors:

DCG (gain g(y), discount d_i = 1/log2(i + 1)), with μ_i = E g(y_{a_i}) and Var_i its variance::

    E[DCG] = Σ_i d_i μ_i,        E[DCG²] = E[DCG]² + Σ_i d_i² Var_i.

ERR (ℓ(y) = (2^y − 1)/2^{y_max}; [AE] Eq. 2) by the backward recursion
T_i = ℓ_i / i + (1 − ℓ_i) T_{i+1}, T_{K+1} = 0, ERR = T_1, ℓ_i independent of T_{i+1}::

    E[T_i]  = E ℓ_i / i + E(1 − ℓ_i) E[T_{i+1}]
    E[T_i²] = E ℓ_i² / i² + 2 E[ℓ_i (1 − ℓ_i)] E[T_{i+1}] / i + E(1 − ℓ_i)² E[T_{i+1}²].

RBP is DCG's form with position weights (1 − p) p^(i−1) and v(y) = 1 for a relevant grade;
Success@k, with r_i = P(y_{a_i} relevant): E[S] = E[S²] = 1 − Π_i (1 − r_i). Each measure's
record in :mod:`lgb_risk.measures` says which form it has (``ActiveForm``).

Two rankings of the same query's documents (the cross moment E[L1 L2], for comparing rankers):
DCG with per-document weights w1_z, w2_z (the discount of z in each top-k list, 0 if absent)::

    E[L1 L2] = (Σ_z w1_z μ_z)(Σ_z w2_z μ_z) + Σ_z w1_z w2_z Var_z;

ERR as the double sum over positions (i, j) of the two lists of
E[ℓ_a ℓ_b Π_{z above a in r1} (1 − ℓ_z) Π_{z above b in r2} (1 − ℓ_z)] / (i j), each expectation
a product of per-document factors (E ℓ, E ℓ², E ℓ(1 − ℓ), E(1 − ℓ), E(1 − ℓ)²) held in
prefix-product tables: O(K1 K2) per query; Success@k with top lists A and B::

    E[S1 S2] = 1 − Π_A (1 − r) − Π_B (1 − r) + Π_{A∪B} (1 − r).

Rankings follow :mod:`lgb_risk.metrics`: documents ordered by score descending, ties in input
order (``ties="stable"``, LightGBM's convention) or, for DCG, ``ties="average"`` (each tied
document weighted by the mean discount of its tie block: DCG stays linear in the gains, so the
formulas hold with those weights); a document with score NaN is not in the ranking. The
label-dependent tie rules (pessimistic, optimistic) are refused: the labels are unknown.
bpref, a ratio over the judged documents, has no such closed form: its moments are averages
over SAMPLED_DRAWS seeded draws of the grades from P. They only shape the sampling distribution
q*, so the estimate stays unbiased and only q*'s optimality is approximate.
NDCG is not covered: its normaliser IDCG depends on the labels, so E[NDCG²] does not factorise
([AE] covers DCG and ERR only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba as nb
import numpy as np

from lgb_risk import measures as registry
from lgb_risk import metrics
from lgb_risk._inputs.validation import check_k, check_query_sizes
from lgb_risk._measuring.ranking import argsort_segments
from lgb_risk._measuring.segments import offsets_from_group, positions_in_query, query_of_document
from lgb_risk.conventions import Convention

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import ArrayLike, ConventionLike

__all__ = ["metric_moments", "cross_moment", "check_probabilities", "check_pool",
           "check_pool_scores", "check_pool_labels", "target_measure", "TargetMeasure",
           "MEASURES"]

#: The measures of the registry whose moments are computed here: those whose record declares
#: how (:class:`lgb_risk.measures.ActiveForm`).
MEASURES = tuple(name for name, m in registry.MEASURES.items()
                 if isinstance(m.active, registry.ActiveForm))


@dataclass(frozen=True)
class TargetMeasure:
    """The measure active evaluation estimates, resolved once at the boundary by
    :func:`target_measure`: a registry measure with its cut-off, its convention (gain, discount,
    ties) and its parameters; ERR's y_max None until the relevance model's grades are known
    (:meth:`for_grades`)."""

    spec: registry.MeasureSpec
    convention: Convention
    max_label: int | None = None

    @property
    def name(self) -> str:
        return self.spec.measure.name

    @property
    def k(self) -> int | None:
        return self.spec.k

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def form(self) -> registry.ActiveForm:
        form = self.spec.measure.active
        assert isinstance(form, registry.ActiveForm)  # target_measure refuses the others
        return form

    def parameters(self) -> dict:
        """The measure's parameters, ERR's y_max as resolved here."""
        values = self.spec.parameter_values()
        if "max_label" in values:
            values["max_label"] = self.max_label
        return values

    def for_grades(self, n_grades: int) -> TargetMeasure:
        """This measure for a relevance model of ``n_grades`` grades: a y_max (``max_label``)
        left unset defaults to G − 1 and must be at least that."""
        if "max_label" not in self.spec.parameter_values():
            return self
        top = n_grades - 1 if self.max_label is None else self.max_label
        if top < n_grades - 1:
            raise ValueError(f"max_label must be a whole number >= {n_grades - 1} (the highest "
                             f"grade of P), got {self.max_label!r}")
        return TargetMeasure(self.spec, self.convention, top)

    def grade_values(self, n_grades: int) -> np.ndarray:
        """Per grade: the value v(y) the kernels read (DCG's gain, ERR's stopping probability
        (2^y − 1) / 2^y_max, RBP's and Success's relevance indicator)."""
        if self.form.gain:
            table = self.convention.label_gain
            if not isinstance(table, str) and (np.ndim(table) != 1 or np.size(table) < n_grades
                                               or not np.all(np.isfinite(table))):
                raise ValueError(f"label_gain must hold a finite gain for each of the {n_grades} "
                                 f"grades, got {table!r}")
        return self.form.values(n_grades, self.convention,
                                **self.for_grades(n_grades).parameters())

    def position_weights(self, width: int) -> np.ndarray:
        """An additive measure's weight of each 0-based position below ``width``."""
        assert self.form.weights is not None
        return self.form.weights(width, self.convention, **self.parameters())

    def values(self, labels: ArrayLike, scores: ArrayLike, group: ArrayLike) -> np.ndarray:
        """The realised measure of every query on the documents its ranking holds (score not
        NaN; 0 for a query whose ranking holds none), by the registry's formula."""
        if "max_label" in self.spec.parameter_values() and self.max_label is None:
            raise ValueError(f"{self.name} needs max_label (the relevance model's highest "
                             "grade)")
        y, s, g = np.asarray(labels), np.asarray(scores, dtype=np.float64), np.asarray(group)
        held = ~np.isnan(s)
        held_per_query = np.bincount(query_of_document(g), weights=held,
                                     minlength=g.size).astype(np.int64)
        values = np.zeros(g.size)
        ranked = held_per_query > 0
        if ranked.any():
            judged = registry.Judged(y[held], s[held], held_per_query[ranked])
            values[ranked] = self.spec.measure.compute(judged, self.k, self.convention,
                                                       **self.parameters())
        return values


def target_measure(measure: str | TargetMeasure = "dcg", k: int | None = 10, *,
                   convention: ConventionLike | None = None,
                   label_gain: str | ArrayLike | None = None, max_label: int | None = None,
                   ties: str | None = None) -> TargetMeasure:
    """The measure to estimate, from the measure registry (:mod:`lgb_risk.measures`).

    ``measure`` is one of :data:`MEASURES` (the registry's measures with an active form,
    :func:`lgb_risk.measures.active_measures`), with its parameters and convention choices
    in ir_measures' grammar (``"dcg(label_gain=linear)"``, ``"rbp(p=0.9)"``) and optionally
    the cut-off
    (``"err@10"``, which must then equal ``k``); ``convention`` names a tool's conventions
    (:mod:`lgb_risk.conventions`), and ``label_gain``, ``max_label`` (ERR's y_max) and ``ties``
    override single choices. Of a convention, active evaluation reads the gain, the discount,
    the relevance level and the tie rule: ``ties`` must be ``"stable"`` (or, for DCG,
    ``"average"``), since the other rules depend on the unknown labels.

    >>> target = target_measure("dcg(label_gain=linear)", k=5)
    >>> target.label, target.grade_values(3).tolist()
    ('DCG(label_gain=linear)@5', [0.0, 1.0, 2.0])
    >>> target_measure("rbp(p=0.5)", k=3).position_weights(3).tolist()
    [0.5, 0.25, 0.125]
    """
    if isinstance(measure, TargetMeasure):
        return measure
    spec = registry.parse(measure)
    name = spec.measure.name
    form = spec.measure.active
    if not isinstance(form, registry.ActiveForm):
        raise ValueError(f"measure={name!r} is not supported by active evaluation: {form}. "
                         f"Supported: {', '.join(MEASURES)} (with options, e.g. "
                         "'dcg(label_gain=linear)', 'rbp(p=0.9)')")
    k = check_k(k)
    if spec.k is not None and spec.k != k:
        raise ValueError(f"measure {measure!r} has cut-off {spec.k} but k={k!r}: pass "
                         f"k={spec.k}, or the measure without @K")
    declared = spec.parameter_values()
    if max_label is not None and "max_label" not in declared:
        raise ValueError(f"max_label is an option of ERR; {name} takes none")
    if label_gain is not None and not form.gain:
        raise ValueError(f"label_gain is an option of DCG; {name} takes none (ERR's stopping "
                         "probability is (2^y - 1) / 2^max_label; RBP and Success count "
                         "relevant documents)")
    if max_label is not None and (isinstance(max_label, bool)
                                  or not isinstance(max_label, (int, np.integer))):
        raise ValueError(f"max_label must be a whole number, got {max_label!r}")
    written = declared.get("max_label")
    if written is not None and max_label is not None and written != max_label:
        raise ValueError(f"measure {measure!r} sets max_label={written}, but max_label="
                         f"{max_label} was also given")
    conv = spec.convention(convention, label_gain=label_gain, ties=ties)
    if conv.ties not in form.ties:
        raise ValueError(f"ties must be one of {list(form.ties)} for {name} in active "
                         f"evaluation, got {conv.ties!r}: the pessimistic and optimistic rules "
                         "depend on the labels, which are unknown before labelling")
    top = max_label if max_label is not None else written
    return TargetMeasure(spec._replace(k=k), conv, None if top is None else int(top))


def check_probabilities(P: ArrayLike, n_docs: int | None = None) -> np.ndarray:
    """Validate a grade-probability matrix (n_docs × G): finite, >= 0, rows summing to 1.

    Rows within 1e-6 of 1 are renormalised; anything else is an error naming the document.

    Examples
    --------
    >>> check_probabilities([[0.5, 0.5], [0.9, 0.1]]).shape
    (2, 2)
    """
    probs = np.asarray(P, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[1] < 2:
        raise ValueError(f"P must be a matrix (n_documents × n_grades, n_grades >= 2), got "
                         f"shape {probs.shape}")
    if n_docs is not None and probs.shape[0] != n_docs:
        raise ValueError(f"P has {probs.shape[0]} rows but there are {n_docs} documents; one "
                         "row of grade probabilities per document")
    bad = ~np.isfinite(probs) | (probs < 0)
    if bad.any():
        d, g = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(f"P[{d}, {g}] = {float(probs[d, g])}: probabilities must be finite "
                         "and >= 0")
    sums = probs.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
    if off.size:
        raise ValueError(f"row {int(off[0])} of P sums to {float(sums[off[0]])!r}; each "
                         "document's grade probabilities must sum to 1")
    return probs / sums[:, None]


def _ranked(scores, offsets):
    """Flat order by score descending within queries (NaN last) and ranked count per query."""
    key = np.where(np.isnan(scores), np.inf, -scores)
    order = argsort_segments(key, key, False, offsets)
    ranked = np.add.reduceat((~np.isnan(scores)).astype(np.int64), offsets[:-1])
    return order, ranked


def check_pool(P: ArrayLike, scores: ArrayLike, group: ArrayLike,
               name: str = "scores") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pool's inputs, checked against each other once for every entry point of active
    evaluation: ``group``'s query sizes, ``P`` with one row per document they hold
    (:func:`check_probabilities`), and ``scores`` (named ``name``) with one value per document,
    finite or NaN (a document the ranking does not hold), not all NaN. Each error names the
    argument that disagrees with ``group``. Returns ``(P, scores, group)`` as arrays.

    >>> [a.shape for a in check_pool([[0.5, 0.5], [0.9, 0.1]], [0.3, 0.1], [2])]
    [(2, 2), (2,), (1,)]
    """
    g = check_query_sizes(group)
    n = int(g.sum())
    probs = check_probabilities(P)
    if probs.shape[0] != n:
        raise ValueError(f"P has {probs.shape[0]} rows, but group's {g.size} queries hold {n} "
                         "documents: one row of grade probabilities per document")
    return probs, check_pool_scores(scores, n, name), g


def check_pool_scores(scores: ArrayLike, n_docs: int, name: str = "scores") -> np.ndarray:
    """A ranker's scores of the pool's ``n_docs`` documents: numbers, finite or NaN (not in
    its ranking), not all NaN; returned as float64."""
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers, one per document (NaN: not in the "
                         f"ranking), got {type(scores).__name__} holding "
                         f"{np.asarray(scores).dtype} values") from None
    if s.shape != (n_docs,):
        raise ValueError(f"{name} has shape {s.shape}, but group's queries hold {n_docs} "
                         "documents: one score per document (NaN: not in the ranking)")
    bad = np.flatnonzero(np.isinf(s))
    if bad.size:
        raise ValueError(f"{name}[{int(bad[0])}] is {float(s[bad[0]])}: scores must be finite, "
                         "or NaN for a document the ranking does not hold")
    if n_docs and np.all(np.isnan(s)):
        raise ValueError(f"{name} is NaN for every document: the ranking holds none of the "
                         "pool's documents (NaN marks a document it does not hold)")
    return s


def check_pool_labels(labels: ArrayLike, n_docs: int, n_grades: int,
                      name: str = "labels") -> np.ndarray:
    """The pool's known labels: one whole-number grade from 0 to ``n_grades`` − 1 (the grades
    the relevance model P describes) per document; returned as int64."""
    y = np.asarray(labels)
    if y.shape != (n_docs,):
        raise ValueError(f"{name} has shape {y.shape}, but group's queries hold {n_docs} "
                         "documents: one label per document")
    if not (np.issubdtype(y.dtype, np.integer) or np.issubdtype(y.dtype, np.floating)
            or y.dtype == bool):
        raise ValueError(f"{name} must be whole-number grades 0..{n_grades - 1}, got "
                         f"{y.dtype} values (first: {str(y.flat[0])!r})")
    yf = y.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(yf) | (yf != np.round(yf)) | (yf < 0)
                         | (yf > n_grades - 1))
    if bad.size:
        raise ValueError(f"{name}[{int(bad[0])}] is {yf[bad[0]]:g}: labels must be grades "
                         f"0..{n_grades - 1}, those P's {n_grades} columns describe")
    return yf.astype(np.int64)


def _prepare(P, scores, group, target: TargetMeasure, name="scores"):
    probs, s, g = check_pool(P, scores, group, name)
    return probs, s, g, target.grade_values(probs.shape[1])


def _discount_weights(scores, group, k, ties="stable", discount="log2"):
    """Per document: its DCG@k discount in the ranking (``discount`` as
    :mod:`lgb_risk.conventions` names it; tie-block mean with ``"average"``), 0 beyond k or
    where the ranking does not hold it (score NaN). ``group`` must be validated.

    Its non-zero entries are the documents whose labels L depends on: those to label.
    """
    return _ranking_weights(scores, group, k, lambda width: metrics.discounts(width, discount),
                           ties)


def _ranking_weights(scores, group, k, table, ties="stable"):
    """Per document: ``table(width)[i]`` for its 0-based position i in the ranking (the mean
    over its tie block with ``ties="average"``), 0 beyond k or where the ranking does not hold
    it (score NaN). ``group`` must be validated."""
    held = ~np.isnan(scores)
    held_per_query = np.bincount(query_of_document(group), weights=held,
                                 minlength=group.size).astype(np.int64)
    held_group = held_per_query[held_per_query > 0]
    weights = np.zeros(scores.size)
    if held_group.size == 0:
        return weights
    held_scores = scores[held]
    order = argsort_segments(-held_scores, -held_scores, False, offsets_from_group(held_group))
    positions = positions_in_query(held_group)
    cutoff = int(held_group.max()) if k is None else k
    weight = np.where(positions < cutoff, table(int(held_group.max()))[positions], 0.0)
    if ties == "average":  # each block of equal scores shares the mean of its weights
        ranked = held_scores[order]
        new_block = np.ones(positions.size, dtype=bool)
        new_block[1:] = (ranked[1:] != ranked[:-1]) | (positions[1:] == 0)
        block = np.cumsum(new_block) - 1
        weight = (np.bincount(block, weights=weight) / np.bincount(block))[block]
    in_ranking = np.empty(held_scores.size)
    in_ranking[order] = weight
    weights[held] = in_ranking
    return weights


def _grade_mean_variance(probs, table):
    """E v(y) and Var v(y) of every document, the grades added in their order (not through
    BLAS, whose kernels add in an order of their own and differ in the last bits by CPU)."""
    mean = np.zeros(probs.shape[0])
    second = np.zeros(probs.shape[0])
    for grade, value in enumerate(table):
        mean += probs[:, grade] * value
        second += probs[:, grade] * (value * value)
    return mean, np.maximum(second - mean * mean, 0.0)


@nb.njit(cache=True)
def _grade_moments(probs, d, table):
    """E v(y), E v(y)² of one document for the per-grade values ``table``."""
    first = 0.0
    second = 0.0
    for y in range(table.size):
        first += probs[d, y] * table[y]
        second += probs[d, y] * table[y] * table[y]
    return first, second


@nb.njit(parallel=True, cache=True)
def _err_moments_kernel(probs, order, offsets, ranked, width, table):
    """E[ERR], E[ERR²] per query by the backward recursion (module docstring)."""
    n_queries = offsets.size - 1
    first = np.zeros(n_queries)
    second = np.zeros(n_queries)
    for q in nb.prange(n_queries):
        start = offsets[q]
        t1 = 0.0
        t2 = 0.0
        for p in range(min(width, ranked[q]) - 1, -1, -1):
            e1, e2 = _grade_moments(probs, order[start + p], table)
            rank = p + 1.0
            t2 = e2 / (rank * rank) + 2.0 * (e1 - e2) * t1 / rank + (1.0 - 2.0 * e1 + e2) * t2
            t1 = e1 / rank + (1.0 - e1) * t1
        first[q] = t1
        second[q] = t2
    return first, second


def metric_moments(P: ArrayLike, scores: ArrayLike, group: ArrayLike,
                   measure: str | TargetMeasure = "dcg", k: int | None = 10, *,
                   convention: ConventionLike | None = None,
                   label_gain: str | ArrayLike | None = None, max_label: int | None = None,
                   ties: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """E[L] and E[L²] of every query's DCG@k or ERR@k under the relevance model P ([AE] Thm 3).

    Parameters
    ----------
    P : array-like, shape (n_documents, G)
        Probability of each grade 0..G−1 for every document (rows >= 0 summing to 1), queries
        contiguous as in ``scores``.
    scores : array-like, shape (n_documents,)
        The ranker's scores; NaN for a document the ranking does not hold.
    group : array-like of int
        Query sizes.
    measure : str, default "dcg"
        A measure of :data:`MEASURES` (:func:`lgb_risk.measures.active_measures`), with its
        parameters and convention choices in ir_measures' grammar (``"rbp(p=0.9)"``,
        ``"dcg(label_gain=linear)"``); see :func:`target_measure`.
    k : int or None, default 10
        Cut-off; None for the whole list.
    convention : str, optional
        A tool's conventions (:mod:`lgb_risk.conventions`): its gain, discount and tie rule.
    label_gain : sequence of float or str, optional
        DCG's gain per grade (default ``2**y - 1``), as :func:`lgb_risk.metrics.dcg`.
    max_label : int, optional
        ERR's y_max (default G − 1), as :func:`lgb_risk.metrics.err`.
    ties : {"stable", "average"}, optional
        Equal scores keep their input order (the default); or, for DCG, share their block's
        mean discount.

    Returns
    -------
    first, second : ndarray, shape (n_queries,)
        E[L | query] and E[L² | query].

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]])   # 2 grades, one query of 3
    >>> first, second = metric_moments(P, [3.0, 2.0, 1.0], [3], "dcg", k=None)
    >>> round(float(first[0]), 4), round(float(second[0] - first[0] ** 2), 4)  # mean, variance
    (1.0, 0.25)
    """
    target = target_measure(measure, k, convention=convention, label_gain=label_gain,
                            max_label=max_label, ties=ties)
    probs, s, g, table = _prepare(P, scores, group, target)
    return _MOMENTS[target.form.family](probs, s, g, target, table)


def _additive_moments(probs, s, g, target, table):
    """DCG, RBP: E[L] = Σ_i w_i μ_i, E[L²] = E[L]² + Σ_i w_i² Var_i (module docstring)."""
    query = query_of_document(g)
    weights = _ranking_weights(s, g, target.k, target.position_weights, target.convention.ties)
    mean, variance = _grade_mean_variance(probs, table)
    first = np.bincount(query, weights=weights * mean, minlength=g.size)
    return first, first * first + np.bincount(query, weights=weights ** 2 * variance,
                                              minlength=g.size)


def _err_moments(probs, s, g, target, table):
    """ERR: the backward recursion over the ranking (module docstring)."""
    offsets = offsets_from_group(g)
    order, ranked = _ranked(s, offsets)
    return _err_moments_kernel(probs, order, offsets, ranked, _width(g, target.k), table)


def _width(group, k) -> int:
    return int(group.max()) if k is None else int(k)


@nb.njit(cache=True)
def _err_cross(probs, r1, r2, pos1, pos2, table):
    """E[ERR1 · ERR2] of one query: r1, r2 the two top lists (local document indices), pos1/pos2
    each document's 0-based position in them (a large number where absent)."""
    k1 = r1.size
    k2 = r2.size
    n = pos1.size
    e1 = np.empty(n)
    e2 = np.empty(n)
    for z in range(n):
        e1[z], e2[z] = _grade_moments(probs, z, table)
    m1 = 1.0 - e1
    m2 = 1.0 - 2.0 * e1 + e2
    x = e1 - e2
    # Prefix-product tables over the prefix lengths (u, v) of A = r1[:u], B = r2[:v]:
    # both = Π_{A∩B} E(1-ℓ)², only1 = Π_{A∖B} E(1-ℓ), only2 = Π_{B∖A} E(1-ℓ).
    both = np.ones((k1 + 1, k2 + 1))
    only1 = np.ones((k1 + 1, k2 + 1))
    only2 = np.ones((k1 + 1, k2 + 1))
    for v in range(k2 + 1):
        for u in range(k1):
            z = r1[u]
            in_b = pos2[z] < v
            both[u + 1, v] = both[u, v] * (m2[z] if in_b else 1.0)
            only1[u + 1, v] = only1[u, v] * (1.0 if in_b else m1[z])
    for u in range(k1 + 1):
        for v in range(k2):
            z = r2[v]
            only2[u, v + 1] = only2[u, v] * (1.0 if pos1[z] < u else m1[z])
    total = 0.0
    for i in range(k1):
        a = r1[i]
        for j in range(k2):
            b = r2[j]
            if a == b:
                f = e2[a]
            else:
                f = ((x[a] if pos2[a] < j else e1[a]) * (x[b] if pos1[b] < i else e1[b]))
            total += both[i, j] * only1[i, j + 1] * only2[i + 1, j] * f / ((i + 1.0) * (j + 1.0))
    return total


@nb.njit(parallel=True, cache=True)
def _err_cross_kernel(probs, order1, order2, offsets, ranked1, ranked2, width, table):
    n_queries = offsets.size - 1
    out = np.zeros(n_queries)
    absent = np.iinfo(np.int64).max
    for q in nb.prange(n_queries):
        start = offsets[q]
        n = offsets[q + 1] - start
        r1 = order1[start:start + min(width, ranked1[q])] - start
        r2 = order2[start:start + min(width, ranked2[q])] - start
        pos1 = np.full(n, absent)
        pos2 = np.full(n, absent)
        for p in range(r1.size):
            pos1[r1[p]] = p
        for p in range(r2.size):
            pos2[r2[p]] = p
        out[q] = _err_cross(probs[start:start + n], r1, r2, pos1, pos2, table)
    return out


def cross_moment(P: ArrayLike, scores1: ArrayLike, scores2: ArrayLike, group: ArrayLike,
                 measure: str | TargetMeasure = "dcg", k: int | None = 10, *,
                 convention: ConventionLike | None = None,
                 label_gain: str | ArrayLike | None = None, max_label: int | None = None,
                 ties: str | None = None) -> np.ndarray:
    """E[L1 · L2] of every query for two rankings of its documents ([AE] Eq. 17's moments).

    With :func:`metric_moments`, E[(L1 − L2)²] = E[L1²] + E[L2²] − 2 E[L1 L2]. The rankings may
    hold different documents (an index update removes some): a document a ranking does not hold
    has score NaN in it. Parameters as :func:`metric_moments`.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]])
    >>> same = cross_moment(P, [3.0, 2.0, 1.0], [3.0, 2.0, 1.0], [3], "err", k=None)
    >>> bool(np.isclose(same[0], metric_moments(P, [3.0, 2.0, 1.0], [3], "err", k=None)[1][0]))
    True
    """
    target = target_measure(measure, k, convention=convention, label_gain=label_gain,
                            max_label=max_label, ties=ties)
    probs, s1, g, table = _prepare(P, scores1, group, target, "scores1")
    s2 = _prepare(probs, scores2, group, target, "scores2")[1]
    return _CROSS_MOMENTS[target.form.family](probs, s1, s2, g, target, table)


def _additive_cross_moment(probs, s1, s2, g, target, table):
    """DCG, RBP: (Σ_z w1_z μ_z)(Σ_z w2_z μ_z) + Σ_z w1_z w2_z Var_z (module docstring)."""
    query = query_of_document(g)
    ties = target.convention.ties
    w1 = _ranking_weights(s1, g, target.k, target.position_weights, ties)
    w2 = _ranking_weights(s2, g, target.k, target.position_weights, ties)
    mean, variance = _grade_mean_variance(probs, table)
    return (np.bincount(query, weights=w1 * mean, minlength=g.size)
            * np.bincount(query, weights=w2 * mean, minlength=g.size)
            + np.bincount(query, weights=w1 * w2 * variance, minlength=g.size))


def _none_in(query, in_list, probs, table, n_queries):
    """Per query: the probability that no document of the list (``in_list``) has v(y) = 1,
    Π_z (1 − P(v(y_z) = 1)), multiplied in document order."""
    hit, _ = _grade_mean_variance(probs, table)  # P(v = 1): v is 0 or 1
    out = np.ones(n_queries)
    np.multiply.at(out, query[in_list], 1.0 - hit[in_list])
    return out


def _top_k(s, g, k):
    return _ranking_weights(s, g, k, lambda width: np.ones(width)) > 0


def _any_moments(probs, s, g, target, table):
    """Success: E[L] = E[L²] = 1 − Π_{i ≤ K} (1 − P(relevant)) (module docstring)."""
    first = 1.0 - _none_in(query_of_document(g), _top_k(s, g, target.k), probs, table, g.size)
    return first, first


def _any_cross_moment(probs, s1, s2, g, target, table):
    """Success: E[L1 L2] = 1 − P(none in A) − P(none in B) + P(none in A ∪ B) for the two top
    lists A and B (module docstring)."""
    query = query_of_document(g)
    a, b = _top_k(s1, g, target.k), _top_k(s2, g, target.k)
    return (1.0 - _none_in(query, a, probs, table, g.size) - _none_in(query, b, probs, table,
                                                                        g.size)
            + _none_in(query, a | b, probs, table, g.size))


def _err_cross_moment(probs, s1, s2, g, target, table):
    """ERR: the double sum over the two lists' positions (module docstring)."""
    offsets = offsets_from_group(g)
    order1, ranked1 = _ranked(s1, offsets)
    order2, ranked2 = _ranked(s2, offsets)
    return _err_cross_kernel(probs, order1, order2, offsets, ranked1, ranked2,
                             _width(g, target.k), table)


#: Each measure's moments: E[L], E[L²] of one ranking, and E[L1 L2] of two.
#: Label draws behind the moments of a measure without closed-form ones (bpref), in blocks.
SAMPLED_DRAWS = 256
_DRAW_BLOCK = 16


def _sampled_values(probs, score_sets, g, target):
    """L of each ranking in ``score_sets`` under SAMPLED_DRAWS seeded draws of every document's
    grade from P (the same draws for every ranking): arrays (draws, n_queries)."""
    rng = np.random.default_rng(0)
    cumulative = np.cumsum(probs, axis=1)  # along each row, in grade order
    top = probs.shape[1] - 1
    out = [np.zeros((SAMPLED_DRAWS, g.size)) for _ in score_sets]
    for start in range(0, SAMPLED_DRAWS, _DRAW_BLOCK):
        m = min(_DRAW_BLOCK, SAMPLED_DRAWS - start)
        u = rng.random((m, probs.shape[0]))
        labels = np.minimum((u[:, :, None] >= cumulative[None, :, :]).sum(axis=2), top)
        for values, s in zip(out, score_sets):
            values[start:start + m] = target.values(labels.ravel(), np.tile(s, m),
                                                    np.tile(g, m)).reshape(m, g.size)
    return out


def _sampled_moments(probs, s, g, target, table):
    """bpref: E[L] and E[L²] as averages over seeded label draws (module docstring)."""
    (values,) = _sampled_values(probs, [s], g, target)
    return values.mean(axis=0), (values * values).mean(axis=0)


def _sampled_cross_moment(probs, s1, s2, g, target, table):
    """bpref: E[L1 L2] as the average over the same seeded label draws."""
    first, second = _sampled_values(probs, [s1, s2], g, target)
    return (first * second).mean(axis=0)


#: The moments of each family of :class:`lgb_risk.measures.ActiveForm`.
_MOMENTS = {"additive": _additive_moments, "cascade": _err_moments, "any": _any_moments,
            "sampled": _sampled_moments}
_CROSS_MOMENTS = {"additive": _additive_cross_moment, "cascade": _err_cross_moment,
                  "any": _any_cross_moment, "sampled": _sampled_cross_moment}
