"""The registry of effectiveness measures: one entry per measure, read by every caller.

The CLI (``lgb-risk evaluate --measures``), :func:`lgb_risk.trec.evaluate_run`, the fevals
(:func:`lgb_risk.feval.metric_feval`), the baseline store and the reports parse measure names
here and compute them through :meth:`MeasureSpec.compute`; the formulas themselves live in
:mod:`lgb_risk.metrics`, one function each.

A measure is written ``NAME@K`` (``ndcg@10``, ``p@5``) or ``NAME`` for the whole list
(``ap``, ``rr``, ``rprec``), and may carry keywords in ir_measures' grammar,
``NAME(key=value, ...)@K``: the measure's own parameters, which its entry declares
(:class:`Parameter`; ``rbp(p=0.9)@10``, ``err(max_label=3)@20``), and choices of
:mod:`lgb_risk.conventions` (``ndcg(label_gain=linear)@10``, ``p(relevance_level=2)@5``). A
choice written in the measure overrides the convention it is computed under:

{catalogue}

[UE]: Feng & Karmaker 2023 (:mod:`lgb_risk.references`).

>>> spec = parse("p@2")
>>> spec.compute(Judged([1, 0, 2, 0], [0.9, 0.8, 0.7, 0.6], [4]), None).tolist()
[0.5]
"""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np

from lgb_risk import metrics
from lgb_risk._inputs.parameters import Bounds, Parameter
from lgb_risk._measuring.segments import query_of_document
from lgb_risk.conventions import DEFAULT, Convention, gain_name, resolve

if TYPE_CHECKING:
    from typing import Any

    from lgb_risk._inputs.type_aliases import ConventionLike

__all__ = ["Measure", "MeasureSpec", "Parameter", "ActiveForm", "Judged", "MEASURES", "parse",
           "active_measures"]


class Judged(NamedTuple):
    """Ranked lists and what was judged for them.

    ``labels``, ``scores`` and ``group`` are the documents each list contains (queries
    contiguous, LightGBM's ``group`` sizes); ``scores=None`` when they are already in rank order.
    ``pool_labels``/``pool_group``, when given, are all judged grades of each query (a TREC qrels
    file judges documents a run lacks): the ideal DCG and R_q come from them; ``pool_sorted``
    says they are already in descending order within each query. ``max_label`` is the
    collection's highest grade, ERR's unless the measure sets its own; None: the highest grade
    of the labels given (the pool's where there is one), at least 1 — as the objectives take
    it from their training labels. ``judged`` flags the
    listed documents the judgments cover (bpref leaves the others out; their ``labels`` are 0),
    and ``pool_unjudged`` counts per query the pool's entries (grade 0) that are no judgment (a
    TREC qrels' negative grades).
    """

    labels: np.ndarray
    scores: np.ndarray | None
    group: np.ndarray
    pool_labels: np.ndarray | None = None
    pool_group: np.ndarray | None = None
    max_label: int | None = None
    pool_sorted: bool = False
    judged: np.ndarray | None = None  # per listed document: judged (None: all are)
    pool_unjudged: np.ndarray | None = None  # per query: pool entries that are no judgment

    def _pool(self):
        if self.pool_labels is None:
            return self.labels, self.group
        return self.pool_labels, self.pool_group

    def n_relevant(self, conv: Convention, *, from_lists: bool = False) -> np.ndarray | None:
        """R_q per query (grades >= the convention's relevance level) from the pool; None
        without a pool (the metrics count in the lists) unless ``from_lists``."""
        if self.pool_labels is None and not from_lists:
            return None
        labels, group = self._pool()
        query = query_of_document(group)
        return np.bincount(query, weights=np.asarray(labels) >= conv.relevance_level,
                           minlength=len(group))

    def n_nonrelevant(self, conv: Convention) -> np.ndarray | None:
        """N_q per query (judged grades below the relevance level; the pool's entries that are
        no judgment, ``pool_unjudged``, not counted) from the pool; None without a pool."""
        if self.pool_labels is None:
            return None
        labels, group = self._pool()
        query = query_of_document(group)
        below = np.bincount(query, weights=np.asarray(labels) < conv.relevance_level,
                            minlength=len(group))
        return below if self.pool_unjudged is None else below - self.pool_unjudged

    def ideal_dcg(self, k: int | None, conv: Convention) -> np.ndarray:
        labels, group = self._pool()
        if self.pool_sorted:
            return metrics.dcg(labels, None, group, k, convention=conv)
        return metrics.ideal_dcg(labels, group, k, convention=conv)


class ActiveForm(NamedTuple):
    """How active evaluation ([AE], :mod:`lgb_risk.active`) takes the moments of a measure under
    independent graded labels, from the grade probabilities of the ranked documents.

    ``family``: ``"additive"``, L = Σ_{i ≤ k} w_i v(y_i), with the position weights
    ``weights(width, convention, **parameters)`` (DCG's discounts, RBP's (1 − p) p^(i−1));
    ``"cascade"``, ERR's recursion with v(y) the stopping probability; ``"any"``, L = 1 if a
    document of the top k has v(y) = 1 (Success@k); ``"sampled"``, no closed form (bpref, a
    ratio over the judged documents): the moments are averages over seeded draws of the
    labels, which only shape the sampling distribution (the estimate stays unbiased).
    ``values(n_grades, convention, **parameters)`` gives v per grade. ``ties``: the tie rules it
    allows (the label-dependent ones never); ``gain``: whether v is the convention's gain
    (``label_gain`` applies).
    """

    family: str
    values: Callable[..., np.ndarray]
    weights: Callable[..., np.ndarray] | None = None
    ties: tuple = ("stable",)
    gain: bool = False


def _relevant_grades(n_grades, conv, **_):
    return (np.arange(n_grades) >= conv.relevance_level).astype(np.float64)


def _stopping_probabilities(n_grades, conv, *, max_label):
    """ERR's (2^y − 1) / 2^y_max per grade."""
    return metrics.stopping_probabilities(n_grades, max_label)


_DCG_FORM = ActiveForm("additive", lambda n, conv: metrics.gains(np.arange(n), conv.label_gain),
                       lambda width, conv: metrics.discounts(width, conv.discount),
                       ("stable", "average"), gain=True)


class Measure(NamedTuple):
    """One registered measure: how to compute it per query, what it accepts (its cut-off and
    its own parameters), and the range of its per-query values (``None``: unbounded on that
    side). ``compute(judged, k, convention, **parameters)``."""

    name: str
    summary: str
    cutoff: str  # "optional" (NAME or NAME@K) or "none" (NAME only)
    compute: Callable[..., np.ndarray]
    bounds: tuple = (0.0, 1.0)
    label: str = ""  # display name (``NDCG``); the name itself where empty
    parameters: tuple = ()  # its Parameters
    # How active evaluation estimates it (ActiveForm), or why it cannot (a reason).
    active: ActiveForm | str = "its moments under uncertain labels are not derived here"
    # The convention choices its per-query values depend on, beyond the order of tied scores
    # (which every measure of a ranking shares): part of its identity (MeasureSpec.under).
    reads: tuple = ()


class MeasureSpec(NamedTuple):
    """A measure with its cut-off and keyword choices, as parsed from text such as
    ``"ndcg@10"`` or ``"p(relevance_level=2)@5"``."""

    measure: Measure
    k: int | None
    text: str
    params: tuple = ()  # (key, value) pairs of convention choices written in the measure
    arguments: tuple = ()  # (name, value) pairs of the measure's own parameters written in it

    @property
    def label(self) -> str:
        """Display name, e.g. ``NDCG@10``, ``P(relevance_level=2)@5`` or ``RBP(p=0.9)@10``."""
        name = self.measure.label or self.measure.name
        written = sorted((*self.arguments, *self.params))
        if written:
            name += "(" + ", ".join(f"{key}={value}" for key, value in written) + ")"
        return name if self.k is None else f"{name}@{self.k}"

    @property
    def written(self) -> str:
        """The measure as :func:`parse` reads it back, without its cut-off: its registered name
        and every parameter and convention choice written in it (``err(max_label=3)``).

        >>> parse("ERR(max_label=3)@20").written, parse("ndcg(label_gain=linear)@10").written
        ('err(max_label=3)', 'ndcg(label_gain=linear)')
        """
        written = sorted((*self.arguments, *self.params))
        if not written:
            return self.measure.name
        return (self.measure.name + "(" + ", ".join(f"{key}={value}" for key, value in written)
                + ")")

    @property
    def identity(self) -> MeasureSpec:
        """This measure with the convention choices that equal the library's defaults left
        out (``ndcg(label_gain=exponential)@10`` is ``ndcg@10``): two values are of one measure
        when their identities' labels are equal — name, cut-off, parameters and every choice
        that changes the values."""
        kept = tuple((key, value) for key, value in self.params
                     if getattr(DEFAULT, key, None) != value)
        return self if kept == self.params else self._replace(params=kept)

    def under(self, convention: ConventionLike | None = None, **overrides: Any) -> MeasureSpec:
        """This measure as computed under ``convention`` with ``overrides``: its
        :attr:`identity` with the choices it :attr:`~Measure.reads` written in (a gain table
        as its choice's name, :func:`~lgb_risk.conventions.gain_name`, or as its values).

        >>> parse("ndcg@10").under("trec_eval").label, parse("err@20").under("trec_eval").label
        ('NDCG(label_gain=linear)@10', 'ERR@20')
        """
        conv = self.convention(convention, **overrides)
        params = dict(self.params)
        for key in self.measure.reads:
            value = getattr(conv, key)
            if key == "label_gain" and not isinstance(value, str):
                value = gain_name(value) or "[" + " ".join(
                    f"{g:g}" for g in np.asarray(value, dtype=np.float64).ravel()) + "]"
            params[key] = value
        return self._replace(params=tuple(sorted(params.items()))).identity

    def with_unset(self, name: str, value: Any) -> MeasureSpec:
        """This measure with its parameter ``name`` written as ``value`` where it is unset (a
        declared default of None, such as ERR's ``max_label``); itself otherwise.

        >>> parse("err@20").with_unset("max_label", 2).label
        'ERR(max_label=2)@20'
        """
        if self.parameter_values().get(name, 0) is not None:
            return self
        return parse(self._replace(arguments=tuple(sorted((*self.arguments,
                                                           (name, value))))).label)

    def parameter_values(self) -> dict:
        """The measure's parameters: those written, the declared defaults for the others."""
        return {**{p.name: p.default for p in self.measure.parameters}, **dict(self.arguments)}

    def convention(self, convention: ConventionLike | None = None, **overrides: Any) -> Convention:
        """``convention`` (a name, a Convention or None) with the measure's own choices and
        keyword overrides of single choices (``empty="zero"``); an override that contradicts
        the measure's own choice is refused."""
        choices = dict(self.params)
        clash = [key for key, value in overrides.items()
                 if value is not None and key in choices and choices[key] != value]
        if clash:
            raise ValueError(f"measure {self.text!r} sets {clash[0]}={choices[clash[0]]!r}, but "
                             f"{clash[0]}={overrides[clash[0]]!r} was also given")
        return resolve(convention, **{**overrides, **choices})

    def compute(self, judged: Judged, convention: ConventionLike | None = None,
                **overrides: Any) -> np.ndarray:
        """Per-query values on ``judged`` under :meth:`convention` of the same arguments."""
        return self.measure.compute(judged, self.k, self.convention(convention, **overrides),
                                    **self.parameter_values())


def _ndcg(j, k, conv):
    return metrics.ndcg(j.labels, j.scores, j.group, k, convention=conv,
                        ideal=None if j.pool_labels is None else j.ideal_dcg(k, conv))


def _dcg(j, k, conv):
    return metrics.dcg(j.labels, j.scores, j.group, k, convention=conv)


def _err(j, k, conv, *, max_label):
    top = j.max_label if max_label is None else max_label
    if top is None:
        labels, _ = j._pool()
        top = max(1, int(np.max(labels, initial=0)))
    if j.pool_labels is not None and np.any(np.asarray(j.pool_labels) > top):
        raise ValueError(f"a judged grade exceeds max_label={top} of ERR; pass the "
                         "collection's highest grade")
    return metrics.err(j.labels, j.scores, j.group, k, convention=conv, max_label=top)


def _ap(j, k, conv):
    return metrics.average_precision(j.labels, j.scores, j.group, k, convention=conv,
                                     n_relevant=j.n_relevant(conv))


def _sp(j, k, conv):
    return metrics.sum_precision(j.labels, j.scores, j.group, k, convention=conv)


def _p(j, k, conv):
    return metrics.precision(j.labels, j.scores, j.group, k, convention=conv)


def _recall(j, k, conv):
    return metrics.recall(j.labels, j.scores, j.group, k, convention=conv,
                          n_relevant=j.n_relevant(conv))


def _rr(j, k, conv):
    return metrics.reciprocal_rank(j.labels, j.scores, j.group, k, convention=conv)


def _rprec(j, k, conv):
    return metrics.r_precision(j.labels, j.scores, j.group, convention=conv,
                               n_relevant=j.n_relevant(conv))


def _rbp(j, k, conv, *, p):
    return metrics.rank_biased_precision(j.labels, j.scores, j.group, k, persistence=p,
                                         convention=conv)


def _success(j, k, conv):
    return metrics.success(j.labels, j.scores, j.group, k, convention=conv)


def _bpref(j, k, conv):
    return metrics.bpref(j.labels, j.scores, j.group, judged=j.judged,
                         n_relevant=j.n_relevant(conv), n_nonrelevant=j.n_nonrelevant(conv),
                         convention=conv)


def _dcg_ue(version):
    def compute(j, k, conv):
        return metrics.ue_normalise(_dcg(j, k, conv), j.ideal_dcg(k, conv),
                                    metrics.expected_dcg(j.labels, j.group, k, convention=conv),
                                    version)
    return compute


def _ap_ue(version):
    def compute(j, k, conv):
        n_relevant = j.n_relevant(conv, from_lists=True)
        relevant = (np.asarray(j.labels) >= conv.relevance_level).astype(np.int64)
        ideal = n_relevant if k is None else np.minimum(n_relevant, k)
        return metrics.ue_normalise(_sp(j, k, conv), ideal,
                                    metrics.expected_sum_precision(relevant, j.group, k), version)
    return compute


_GAIN = ("label_gain", "discount")
_LEVEL = ("relevance_level",)

MEASURES = {m.name: m for m in (
    Measure("ndcg", "normalised discounted cumulative gain", "optional", _ndcg, label="NDCG",
            reads=("label_gain", "discount", "empty", "short"),
            active="IDCG depends on the unknown labels, so E[NDCG²] does not factorise ([AE] "
                   "covers DCG and ERR); use 'dcg' or 'err'"),
    Measure("dcg", "discounted cumulative gain", "optional", _dcg, (0.0, None), "DCG",
            active=_DCG_FORM, reads=_GAIN),
    Measure("err", "expected reciprocal rank", "optional", _err, label="ERR", parameters=(
        Parameter("max_label", None, Bounds(integer=True, minimum=1),
                  "the highest grade, y_max of (2^y − 1)/2^y_max (default: the collection's)"),),
            active=ActiveForm("cascade", _stopping_probabilities)),
    Measure("ap", "average precision (binary relevance)", "optional", _ap, label="AP",
            reads=("relevance_level", "ap_denominator", "empty")),
    Measure("sp", "sum of precisions at relevant ranks ([UE] Eq. 4)", "optional", _sp,
            (0.0, None), "SP", reads=_LEVEL),
    Measure("p", "precision", "optional", _p, label="P", reads=_LEVEL),
    Measure("recall", "recall", "optional", _recall, label="Recall",
            reads=("relevance_level", "empty")),
    Measure("rr", "reciprocal rank of the first relevant document (with @k: cut at k)",
            "optional", _rr, label="RR", reads=_LEVEL),
    Measure("rprec", "R-precision", "none", _rprec, label="R-prec",
            reads=("relevance_level", "empty")),
    Measure("rbp", "rank-biased precision", "optional", _rbp, label="RBP", parameters=(
        Parameter("p", 0.8, Bounds(minimum=0, maximum=1, above=True, below=True,
                                   what="a probability"),
                  "persistence: the probability of going on to the next document"),),
            active=ActiveForm("additive", _relevant_grades,
                              lambda width, conv, *, p: metrics.rbp_weights(width, p)),
            reads=_LEVEL),
    Measure("success", "a relevant document in the top k", "optional", _success,
            label="Success", active=ActiveForm("any", _relevant_grades), reads=_LEVEL),
    Measure("bpref", "binary preference (unjudged documents left out)", "none", _bpref,
            label="bpref", active=ActiveForm("sampled", _relevant_grades), reads=_LEVEL),
    Measure("dcg_ue1", "DCG normalised by its ideal and its expectation under a random "
            "ranking ([UE] Eq. 5, V1)", "optional", _dcg_ue("v1"), reads=_GAIN),
    Measure("dcg_ue2", "DCG normalised as dcg_ue1, [UE] Eq. 6 (V2)", "optional",
            _dcg_ue("v2"), (-1.0, 1.0), reads=_GAIN),
    Measure("ap_ue1", "SP normalised by its ideal min(R_q, k) and its expectation under a "
            "random ranking ([UE]'s MSP^UE, V1)", "optional", _ap_ue("v1"), reads=_LEVEL),
    Measure("ap_ue2", "SP normalised as ap_ue1, V2", "optional", _ap_ue("v2"), (-1.0, 1.0),
            reads=_LEVEL),
)}

#: Other names accepted for registered measures (UE normalisation is scale-free: NDCG's and
#: DCG's give one value).
ALIASES = {"map": "ap", "recip_rank": "rr", "ndcg_ue1": "dcg_ue1", "ndcg_ue2": "dcg_ue2"}

def active_measures() -> list[str]:
    """The measures active evaluation estimates (those whose entry has an :class:`ActiveForm`).

    >>> active_measures()
    ['dcg', 'err', 'rbp', 'success', 'bpref']
    """
    return [name for name, m in MEASURES.items() if isinstance(m.active, ActiveForm)]


_PATTERN = re.compile(r"^([a-z_0-9]+?)(?:\(([^()]*)\))?(?:@([0-9]+))?$")


def _choice_value(text: str):
    """A keyword choice's value as written: a whole number, or a word."""
    text = text.strip().strip("'\"")
    return int(text) if text.isdigit() else text


def _choices(text: str, written: str, measure: Measure) -> tuple[tuple, tuple]:
    """``"key=value, key=value"`` → the measure's own parameters (declared in its entry, each
    read and checked by its :class:`Parameter`) and the convention choices (checked by the
    conventions), each as sorted (key, value) pairs."""
    pairs = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, equals, value = item.partition("=")
        key = key.strip()
        if not equals or not key or not value.strip():
            raise ValueError(f"measure {written!r}: expected NAME(key=value, ...)@K, got "
                             f"{item!r} between the parentheses")
        if key in pairs:
            raise ValueError(f"measure {written!r}: {key} is given twice")
        pairs[key] = value.strip().strip("'\"")
    declared = {p.name: p for p in measure.parameters}
    arguments = {key: declared[key].read(value, f"measure {written!r}")
                 for key, value in pairs.items() if key in declared}
    choices = {key: _choice_value(value) for key, value in pairs.items() if key not in declared}
    try:
        resolve(None, **choices)
    except (TypeError, ValueError) as error:
        own = (f" ({measure.name}'s own parameters: {', '.join(declared)})" if declared else "")
        raise ValueError(f"measure {written!r}: {error}{own}") from None
    return tuple(sorted(arguments.items())), tuple(sorted(choices.items()))


def parse(text: str) -> MeasureSpec:
    """``"ndcg@20"`` → the NDCG entry with k = 20. Raises ValueError naming the accepted forms.

    >>> parse("map").label, parse("P@10").label
    ('AP', 'P@10')
    """
    match = _PATTERN.match(str(text).strip().lower())
    name = match and ALIASES.get(match.group(1), match.group(1))
    if not match or name not in MEASURES:
        raise ValueError(f"unknown measure {text!r}: expected NAME, NAME@K or "
                         f"NAME(key=value, ...)@K with NAME one of "
                         f"{', '.join([*MEASURES, *ALIASES])}, e.g. ndcg@20, p@10, ap, rr, "
                         "p(relevance_level=2)@10")
    measure = MEASURES[name]
    arguments, params = (_choices(match.group(2), text, measure) if match.group(2) is not None
                         else ((), ()))
    k = None if match.group(3) is None else int(match.group(3))
    if k is not None and k < 1:
        raise ValueError(f"measure {text!r}: the cut-off must be >= 1")
    if k is not None and measure.cutoff == "none":
        raise ValueError(f"measure {text!r}: {name} takes no cut-off")
    return MeasureSpec(measure, k, str(text).strip(), params, arguments)


def _catalogue() -> str:
    """The module docstring's table of the registered measures, from :data:`MEASURES`."""
    aliases: dict[str, list[str]] = {}
    for alias, name in ALIASES.items():
        aliases.setdefault(name, []).append(alias)
    rows = []
    for name, measure in MEASURES.items():
        text = measure.summary
        if measure.parameters:
            text += "; " + ", ".join(f"{p.name} ({p.check.kind})" for p in measure.parameters)
        if measure.cutoff == "none":
            text += "; no cut-off"
        if name in aliases:
            text += "; also " + ", ".join(f"``{a}``" for a in aliases[name])
        rows.append((f"``{name}``", text))
    width = max(len(cell) for cell, _ in rows)
    rule = "=" * width + "  " + "=" * 78
    lines = [rule, "name".ljust(width) + "  measure", rule]
    for cell, text in rows:
        wrapped = textwrap.wrap(text, 78) or [""]
        lines.append(cell.ljust(width) + "  " + wrapped[0])
        lines += [" " * width + "  " + more for more in wrapped[1:]]
    return "\n".join(lines + [rule])


__doc__ = (__doc__ or "").replace("{catalogue}", _catalogue())
