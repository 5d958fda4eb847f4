"""Evaluation conventions by tool name: every choice a tool makes, in one named record.

Tools that all claim to compute "NDCG@10" disagree (Busa-Fekete et al. 2012, "An apple-to-apple
comparison of learning-to-rank algorithms in terms of NDCG", [NDCG]): on the gain of a grade,
the discount of the first ranks, the value of a query with no relevant document, the value of a
query shorter than the cut-off, the order of tied scores, AP's denominator and which topics a mean
runs over. A :class:`Convention` fixes all of them; ``convention="letor4"`` anywhere in the library
(:mod:`lgb_risk.metrics`, :mod:`lgb_risk.feval`, :func:`lgb_risk.trec.evaluate_run`,
``lgb-risk evaluate --convention``) reproduces that tool's numbers, and an explicit keyword still
overrides one choice (``convention="lightgbm", empty="zero"``).

The choices (each a keyword of the metrics functions):

``label_gain``
    ``"exponential"`` (``2**l - 1``) or ``"linear"`` (``l``); the metrics also take a table.
``discount``
    ``"log2"``: ``1 / log2(r + 1)`` at 1-based rank r. ``"letor"``: 1 at ranks 1 and 2, then
    ``1 / log2(r)`` (the LETOR and MSLR Perl scripts).
``ties``
    Order of equal scores in the array API (see :mod:`lgb_risk.metrics`). TREC runs are first
    sorted by score descending then DOCNO descending (trec_eval, gdeval), so ``"stable"`` there
    means DOCNO order.
``empty``
    Value of NDCG, AP, recall and R-precision where nothing normalises them (no relevant
    document): ``"zero"``, ``"one"`` or ``"skip"`` (NaN).
``short``
    NDCG@k of a query with fewer than k documents: ``"available"`` or ``"zero"``.
``ap_denominator``
    ``"relevant"``: R_q, the query's relevant documents (from the qrels for TREC runs);
    ``"capped"``: ``min(R_q, k)`` (LightGBM's ``map@k``).
``relevance_level``
    The lowest grade binary measures (P, AP, recall, RR, R-precision, SP) count as relevant:
    1 by default, 2 for the MSLR script (trec_eval's ``-l``).
``score_dtype``
    ``"float64"``, or ``"float32"`` where the tool keeps scores in single precision (trec_eval 9:
    scores equal in float32 are ties there).
``topics`` (TREC runs)
    Which topics of a run are scored: ``"relevant"`` (those whose qrels have a grade > 0;
    gdeval) or ``"judged"`` (every topic of the qrels; trec_eval).
``missing_topics`` (TREC runs)
    A topic of the qrels the run has no ranking for: ``"skip"`` (the mean runs over the run's
    topics; both tools' default) or ``"zero"`` (it scores 0 and counts; gdeval's and trec_eval's
    ``-c``).

>>> from lgb_risk import metrics
>>> labels, scores, group = [2, 0, 1], [0.3, 0.2, 0.1], [3]
>>> metrics.ndcg(labels, scores, group, k=3).round(4).tolist()  # (3 + 1/2) / (3 + 1/log2(3))
[0.9639]
>>> metrics.ndcg(labels, scores, group, k=3, convention="letor4").round(4).tolist()
[0.9077]
>>> metrics.ndcg(labels, scores, group, k=5, convention="letor4").tolist()  # 3 documents < 5
[0.0]
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["Convention", "CONVENTIONS", "get", "resolve", "gain_name"]


class Convention(NamedTuple):
    """Every choice of one evaluation tool (see the module docstring for each field)."""

    name: str
    source: str
    label_gain: str = "exponential"
    discount: str = "log2"
    ties: str = "stable"
    empty: str = "zero"
    short: str = "available"
    ap_denominator: str = "relevant"
    relevance_level: int = 1
    score_dtype: str = "float64"
    topics: str = "relevant"
    missing_topics: str = "skip"


#: The library's own defaults (``convention=None``): the formula as [NDCG] and the TREC Web track
#: define it, with LightGBM's tie order so that training and evaluation agree.
DEFAULT = Convention("default", "lgb_risk's defaults (exponential gain, log2 discount, "
                     "LightGBM's tie order)")

CONVENTIONS = {c.name: c for c in (
    Convention("trec_eval", "trec_eval 9.0.8 (NIST), as wrapped by pytrec_eval-terrier: "
               "m_ndcg_cut.c, m_map.c, m_P.c", label_gain="linear", score_dtype="float32",
               topics="judged"),
    Convention("gdeval", "gdeval.pl version 1.3 (TREC Web track 2013)"),
    Convention("lightgbm", "LightGBM 4.x metric/rank_metric.hpp and map_metric.hpp (ndcg@k, "
               "map@k)", empty="one", ap_denominator="capped"),
    Convention("sklearn", "scikit-learn 1.x sklearn.metrics.ndcg_score (ignore_ties=False)",
               label_gain="linear", ties="average"),
    Convention("ranklib", "RankLib 2.x NDCGScorer/APScorer, as [NDCG] §3 groups it with "
               "trec_eval"),
    Convention("letor3", "LETOR 3.0 Eval-Score-3.0.pl", discount="letor", short="zero"),
    Convention("letor4", "LETOR 4.0 Eval-Score-4.0.pl (March 2009)", discount="letor",
               short="zero"),
    Convention("ms", "MSLR-WEB eval-score-mslr.pl, which [NDCG] §3 finds equal to the LETOR 4.0 "
               "script with grades up to 4; its binary measures count grades >= 2",
               discount="letor", short="zero", relevance_level=2),
    Convention("yahoo", "Yahoo! Learning to Rank Challenge evaluate.py, per [NDCG] §3",
               empty="one"),
)}

CHOICES = {
    "label_gain": ("exponential", "linear"),
    "discount": ("log2", "letor"),
    "ties": ("stable", "pessimistic", "optimistic", "average"),
    "empty": ("zero", "one", "skip"),
    "short": ("available", "zero"),
    "ap_denominator": ("relevant", "capped"),
    "score_dtype": ("float64", "float32"),
    "topics": ("relevant", "judged"),
    "missing_topics": ("skip", "zero"),
}


def get(convention: str | Convention | None) -> Convention:
    """The :class:`Convention` named ``convention`` (None: the library's defaults).

    >>> get("letor4").discount, get(None).name
    ('letor', 'default')
    """
    if convention is None:
        return DEFAULT
    if isinstance(convention, Convention):
        return convention
    try:
        return CONVENTIONS[convention]
    except (KeyError, TypeError):
        raise ValueError(f"unknown convention {convention!r}; expected one of "
                         f"{', '.join(CONVENTIONS)} (or None for the defaults)") from None


def resolve(convention: str | Convention | None, **given: Any) -> Convention:
    """The convention with every keyword the caller gave (not None) in place of its choice.

    A ``label_gain`` table (array) is passed through as given; every other value must be one of
    the choices listed in the module docstring.

    >>> resolve("lightgbm", empty="zero").empty
    'zero'
    """
    base = get(convention)
    changes = {name: value for name, value in given.items() if value is not None}
    for name, value in changes.items():
        if name == "relevance_level":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"relevance_level must be a whole number >= 1, got {value!r}")
            continue
        if name not in CHOICES:
            raise TypeError(f"{name!r} is not a convention keyword")
        if name == "label_gain" and not isinstance(value, str):
            continue
        if value not in CHOICES[name]:
            raise ValueError(f"{name} must be one of {list(CHOICES[name])}, got {value!r}")
    return base._replace(**changes) if changes else base


def gain_name(label_gain: Any) -> str | None:
    """The ``label_gain`` choice that a gain equals: ``"exponential"`` for None, that name or a
    table of ``2**l - 1``; ``"linear"`` for that name or a table of ``l``; None for any other
    table (gains no choice names).

    >>> gain_name(None), gain_name([0, 1, 3, 7]), gain_name([0.0, 1.0, 2.0]), gain_name([0, 2, 9])
    ('exponential', 'exponential', 'linear', None)
    """
    if label_gain is None or isinstance(label_gain, str):
        return "exponential" if label_gain is None else str(label_gain)
    table = np.asarray(label_gain, dtype=np.float64).ravel()
    grades = np.arange(table.size, dtype=np.float64)
    if np.array_equal(table, np.exp2(grades) - 1.0):
        return "exponential"
    if np.array_equal(table, grades):
        return "linear"
    return None
