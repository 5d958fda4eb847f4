"""What a LambdaMART objective derives once from a training set: the checked labels, query offsets
and weights, each query's IDCG, LightGBM's sigmoid table and the pair kernel's constants
(:class:`~lgb_risk._training.lambda_kernel.LambdaConstants`); and the checks of the labels against
the objective's gains and target.

:func:`prepare` builds it at an objective's first call on a training set; the objective keeps it
while the same labels, groups and weights come back (:meth:`TrainingSet.matches`).
"""

from __future__ import annotations

import functools
import math
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from lgb_risk import measures as registry
from lgb_risk import metrics
from lgb_risk._inputs.validation import check_group, check_labels
from lgb_risk._measuring.ranking import dcg_at_k_of_order, document_order, rerank_by_score
from lgb_risk._measuring.segments import offsets_from_group
from lgb_risk._runtime.kernel_calls import query_ranges
from lgb_risk._training import lambda_kernel as kernel

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import ArrayLike

#: The measures an objective can take as its target (``measure=``): those whose exact change
#: when two documents swap the pair kernel computes.
TARGET_MEASURES = ("ndcg", "err")
#: The cut-off of an objective's target where neither ``measure`` nor ``k`` gives one: NDCG@10.
DEFAULT_CUTOFF = 10


def default_target(k: int | None) -> str:
    """The target measure of an objective given no ``measure``: NDCG@k, k = 10 unless given."""
    return f"ndcg@{DEFAULT_CUTOFF if k is None else int(k)}"


#: LightGBM's sigmoid lookup table: its number of bins, and how many are computed at a time.
SIGMOID_BINS = 1 << 20
SIGMOID_CHUNK = 1 << 16
#: LightGBM's default gain of each label, ``2**l - 1`` for l = 0..30.
DEFAULT_LABEL_GAIN = np.array([float((1 << i) - 1) for i in range(31)])
#: The ideal rankings are found this many documents at a time (about), so that the float64
#: copy of the labels the sort reads adds a few MiB to the first call, not 8 bytes a document.
IDEAL_CHUNK = 1 << 20


def check_target(value: Any, name: str) -> None:
    """The check of an objective's ``measure``: None, or ndcg@k or err@k with its cut-off and
    no convention choice."""
    if value is None:
        return
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a measure such as 'ndcg@10' or 'err@20', got {value!r}")
    spec = registry.parse(value)
    if spec.measure.name not in TARGET_MEASURES or spec.k is None:
        raise ValueError(
            f"{name}={value!r}: an objective's target is ndcg@k or err@k (with its cut-off), the "
            "measures whose exact change when two documents swap the pair kernel computes")
    if spec.params:
        raise ValueError(
            f"{name}={value!r}: the target takes no convention choices; its NDCG uses the "
            "objective's label_gain and LightGBM's 1/log2(p + 2) discount, its ERR the grades "
            "(2^l - 1)/2^l_max (set l_max as err(max_label=...)@k)")


def gain_table(label_gain: Any) -> np.ndarray:
    """The gain of each label: ``label_gain``, or LightGBM's default."""
    return DEFAULT_LABEL_GAIN if label_gain is None else np.asarray(label_gain, np.float64)


@functools.lru_cache(maxsize=4)
def sigmoid_table(sigmoid: float):
    """LightGBM's lookup table for ρ(Δs) = 1 / (1 + exp(σ Δs)): (table, low, high, factor).

    Built with the C library's exp (``math.exp``), as LightGBM builds it; numpy's vectorised exp
    differs from it in the last bit for some entries. The arguments
    ``(i / factor + low) * sigmoid`` and the final ``1 / (1 + e)`` are single correctly
    rounded operations, the same bits vectorised as in LightGBM's loop. The entries are computed
    :data:`SIGMOID_CHUNK` at a time, so that the Python floats ``math.exp`` takes and returns
    never hold the whole table at once (BENCHMARKS.md: the first call's peak memory).
    """
    low = -50.0 / sigmoid / 2.0
    high = -low
    factor = SIGMOID_BINS / (high - low)
    table = np.empty(SIGMOID_BINS)
    for start in range(0, SIGMOID_BINS, SIGMOID_CHUNK):
        arguments = (np.arange(start, start + SIGMOID_CHUNK) / factor + low) * sigmoid
        exps = np.fromiter(map(math.exp, arguments.tolist()), np.float64, SIGMOID_CHUNK)
        table[start:start + SIGMOID_CHUNK] = 1.0 / (1.0 + exps)
    return table, low, high, factor


def fingerprint(values) -> tuple | None:
    """What recognises an input array without keeping a copy of it: its shape, its dtype and
    the CRC-32 of its bytes; None for None. A non-numeric array gets a fingerprint equal to no
    other."""
    if values is None:
        return None
    array = np.ascontiguousarray(values)
    if array.dtype.hasobject:
        return (array.shape, "object", object())
    return (array.shape, array.dtype.str, zlib.crc32(array.data.cast("B")))


def narrow_labels(labels: np.ndarray) -> np.ndarray:
    """Validated labels (whole numbers >= 0 within the gain table) in one byte a document where
    they fit, else four."""
    return labels.astype(np.int8 if labels.max(initial=0) <= 127 else np.int32)


@dataclass
class TrainingSet:
    """What an objective derives once from a training set (labels, groups, weights)."""

    labels: np.ndarray  # int8 (int32 for labels above 127)
    group: np.ndarray
    offsets: np.ndarray
    weights: np.ndarray  # float32, or empty
    constants: kernel.LambdaConstants
    given: tuple  # fingerprints of (labels, group, weight) as given, to recognise the same data
    #: The last call's ranking (int32 below 2**31 documents), re-sorted in place by the next
    #: call (the same order comes out, found faster: few documents move between iterations).
    order: np.ndarray | None = None

    def matches(self, labels, group, weight) -> bool:
        """Whether these inputs are the ones the training set was derived from."""
        return self.given == tuple(fingerprint(v) for v in (labels, group, weight))


def ideal_dcg(labels: np.ndarray, offsets: np.ndarray, gains: np.ndarray,
              discounts: np.ndarray, cutoffs: tuple[int, ...]) -> list[np.ndarray]:
    """IDCG at each cut-off of every query: the DCG of the ideal ranking (labels descending)
    found by the sort that ranks the model (:func:`rerank_by_score`) and measured by the kernel
    that measures it, on narrow ``labels``. The same bits as :func:`lgb_risk.metrics.ideal_dcg`
    and LightGBM's max DCG (equal labels have equal gains, so their order does not matter); a
    new install then compiles no top-k kernel for training."""
    ideal = [np.zeros(offsets.size - 1) for _ in cutoffs]
    for first, last in query_ranges(offsets, -(-int(offsets[-1]) // IDEAL_CHUNK)):
        start, stop = int(offsets[first]), int(offsets[last])
        local = offsets[first:last + 1] - start
        order = document_order(local)
        rerank_by_score(labels[start:stop].astype(np.float64), order, local)
        for values, cutoff in zip(ideal, cutoffs):
            values[first:last] = dcg_at_k_of_order(order, local, labels[start:stop],
                                                    gains, discounts, cutoff)
    return ideal


def _inverse(values: np.ndarray) -> np.ndarray:
    return np.divide(1.0, values, out=np.zeros_like(values), where=values > 0)


def err_max_label(labels: np.ndarray, spec: registry.MeasureSpec) -> int:
    """ERR's l_max: the measure's ``max_label``, else the highest label (at least 1); a label
    above a given ``max_label`` is refused, naming its document."""
    given = spec.parameter_values()["max_label"]
    if given is None:
        return max(1, int(labels.max(initial=0)))
    over = np.flatnonzero(labels > given)
    if over.size:
        raise ValueError(f"label {int(labels[over[0]])} of document {int(over[0])} exceeds "
                         f"max_label={given} of the target {spec.label}")
    return int(given)


def measured_target(target: registry.MeasureSpec, labels: np.ndarray,
                    label_gain: Any) -> registry.MeasureSpec:
    """The target as an objective measures its model on training ``labels``, named in full:
    ERR's l_max (the labels' highest where the measure leaves it unset) and NDCG's gain
    (``label_gain``) written in — what a BaselineStore given to a risk objective must hold.

    >>> measured_target(registry.parse("err@20"), np.array([0, 2, 1]), None).label
    'ERR(max_label=2)@20'
    >>> measured_target(registry.parse("ndcg@10"), np.array([0, 2, 1]), [0, 1, 2, 3]).label
    'NDCG(label_gain=linear)@10'
    """
    if target.measure.name == "err":
        return target.with_unset("max_label", err_max_label(labels, target))
    gains = None if label_gain is None else np.asarray(label_gain, np.float64)
    return target.under(None, label_gain=gains)


def checked_labels(labels: ArrayLike, label_gain: Any,
                   target: registry.MeasureSpec | None) -> np.ndarray:
    """The training labels as int64, refused where an objective of these gains and target
    cannot train on them: not whole numbers >= 0, without a gain in ``label_gain``, or above an
    ERR target's ``max_label``; the error names the document's position in ``labels``."""
    y = check_labels(labels)
    metrics.gains(y, gain_table(label_gain))  # refuses labels outside the gains, naming one
    if target is not None and target.measure.name == "err":
        err_max_label(y, target)
    return y


def _checked_weights(weight: ArrayLike | None, n_documents: int) -> np.ndarray:
    """Document weights as float32 (empty for none), refused unless finite and >= 0."""
    if weight is None:
        return np.empty(0, np.float32)
    w = np.asarray(weight, dtype=np.float32)
    if w.shape != (n_documents,):
        raise ValueError(f"weights must hold one weight per document ({n_documents}), got "
                         f"shape {w.shape}")
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        raise ValueError(f"weight of document {int(bad[0])} is {float(w[bad[0]])} "
                         f"({bad.size} bad in all); weights must be finite and >= 0")
    return w


def prepare(objective: Any, labels: ArrayLike, group: ArrayLike,
            weight: ArrayLike | None) -> TrainingSet:
    """The :class:`TrainingSet` of ``objective`` (a :class:`~lgb_risk.objectives.LambdaMART`,
    its parameters validated) on these labels, query sizes and weights."""
    target = objective.target()
    y = checked_labels(labels, objective.label_gain, target)
    g = check_group(group, y.size)
    gains = gain_table(objective.label_gain)
    w = _checked_weights(weight, y.size)
    table, low, high, factor = sigmoid_table(float(objective.sigmoid))
    k = 0 if target is None or target.k is None else int(target.k)
    offsets = offsets_from_group(g)
    narrow = narrow_labels(y)
    highest = (np.maximum.reduceat(y, offsets[:-1]) if y.size  # no query is empty
               else np.zeros(0, np.int64))
    discounts = metrics.discounts(int(g.max()))
    truncation = int(objective.lambdarank_truncation_level)
    if target is not None and target.measure.name == "err":
        top = err_max_label(y, target)
        stop = metrics.stopping_probabilities(top + 1, top)  # R(l) of every label
        inv_continue = 1.0 / (1.0 - stop)
        # a query without a document of R > 0 has no pair that changes ERR: skipped
        inv_max_dcg = (highest > 0).astype(np.float64)
        inv_ideal_at_k = np.zeros(g.size)
    else:
        stop = inv_continue = np.zeros(0)
        at_truncation, at_k = ideal_dcg(narrow, offsets, gains, discounts, (truncation, k))
        inv_max_dcg = _inverse(at_truncation)
        inv_ideal_at_k = _inverse(at_k)  # zeros without a cut-off (k = 0)
    constants = kernel.LambdaConstants(
        gain_table=gains, discounts=discounts, inv_max_dcg=inv_max_dcg,
        sigmoid=float(objective.sigmoid), truncation=truncation,
        norm=bool(objective.lambdarank_norm),
        norm_includes_risk=objective._norm_includes_risk(),
        exact_sigmoid=bool(objective.exact_sigmoid), sigmoid_table=table, sigmoid_low=low,
        sigmoid_high=high, sigmoid_factor=factor, risk_k=k,
        inv_ideal_dcg_at_k=inv_ideal_at_k, target_err=stop.size > 0,
        stop_probability=stop, inv_continue=inv_continue, highest_label=highest)
    return TrainingSet(labels=narrow, group=g, offsets=offsets, weights=w, constants=constants,
                       given=tuple(fingerprint(v) for v in (labels, group, weight)))
