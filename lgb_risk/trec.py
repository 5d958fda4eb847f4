"""Evaluation of TREC runs against qrels, with the conventions of the official ``gdeval.pl``.

gdeval.pl (TREC Web track 2010-2014) conventions, SPEC.md §1 last item:

* documents are ranked by score descending, ties broken by DOCNO descending (string order);
* judged grades below 0 (spam, −2) count as 0, unjudged documents count as 0;
* topics with no grade > 0 in the qrels are left out; a run is scored on the topics it contains
  that have a relevant document;
* ERR uses l_max = 4; NDCG uses gain ``2**g − 1``, the log discount and IDCG over the qrels' grades
  (not only over the documents the run retrieved).

The same per-topic machinery serves DCG, AP (R_q from the qrels, as trec_eval) and SP.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from lgb_risk import metrics

__all__ = ["parse_measure", "evaluate_run", "natural_topic_order", "MEASURES"]

MEASURES = ("ndcg", "dcg", "err", "ap", "sp")
_MEASURE = re.compile(r"^(ndcg|dcg|err|ap|sp)@([1-9][0-9]*)$")


def parse_measure(text: str) -> tuple[str, int]:
    """``"ndcg@20"`` → ``("ndcg", 20)``. Raises ValueError naming the accepted forms."""
    m = _MEASURE.match(text.strip().lower())
    if not m:
        raise ValueError(f"unknown measure {text!r}: expected NAME@K with NAME one of "
                         f"{', '.join(MEASURES)} and K >= 1, e.g. ndcg@20")
    return m.group(1), int(m.group(2))


def natural_topic_order(topics) -> list[str]:
    """Topics sorted numerically where they are numbers (``"9" < "10"``), as strings otherwise."""
    return sorted(set(topics), key=lambda t: (0, int(t), "") if t.isdigit() else (1, 0, t))


def evaluate_run(qrels: pd.DataFrame, run: pd.DataFrame, measures=("ndcg@20", "err@20"), *,
                 max_label: int = 4) -> pd.DataFrame:
    """Per-topic effectiveness of one run, gdeval.pl-style.

    Parameters
    ----------
    qrels : DataFrame
        As returned by :func:`lgb_risk.data.read_qrels` (``topic``, ``docno``, ``grade``).
    run : DataFrame
        As returned by :func:`lgb_risk.data.read_run` (``topic``, ``docno``, ``score``).
    measures : sequence of str
        ``NAME@K`` with NAME in ndcg, dcg, err, ap, sp.
    max_label : int
        l_max of ERR (4 for TREC Web). A qrels grade above it is an error.

    Returns
    -------
    DataFrame
        Index ``topic`` (the run's topics that have a relevant document, natural order), one
        column per measure, in the order given.

    Raises
    ------
    ValueError
        An unknown measure, or a run with no topic that has a relevant document.
    """
    parsed = [parse_measure(m) for m in measures]
    judged = qrels.assign(grade=qrels["grade"].clip(lower=0))
    relevant_topics = set(judged.loc[judged["grade"] > 0, "topic"])
    topics = natural_topic_order(t for t in run["topic"].unique() if t in relevant_topics)
    if not topics:
        raise ValueError(f"run {run.attrs.get('name', '')!r} has no topic with a relevant document "
                         "in the qrels")
    code = {t: i for i, t in enumerate(topics)}

    ranked = run[run["topic"].isin(code)].assign(code=lambda f: f["topic"].map(code))
    # gdeval.pl: score descending, then DOCNO descending; "stable" ties then keep this order.
    ranked = ranked.sort_values(["code", "score", "docno"], ascending=[True, False, False],
                                kind="mergesort")
    ranked = ranked.merge(judged[["topic", "docno", "grade"]], on=["topic", "docno"], how="left",
                          sort=False)
    labels = ranked["grade"].fillna(0).to_numpy(dtype=np.int64)  # unjudged counts as 0
    scores = ranked["score"].to_numpy()
    group = np.bincount(ranked["code"].to_numpy(), minlength=len(topics))

    pool = judged[judged["topic"].isin(code)].assign(code=lambda f: f["topic"].map(code))
    pool = pool.sort_values("code", kind="mergesort")
    pool_labels = pool["grade"].to_numpy(dtype=np.int64)
    pool_group = np.bincount(pool["code"].to_numpy(), minlength=len(topics))

    columns = {}
    for text, (name, k) in zip(measures, parsed):
        if name == "ndcg":
            ideal = metrics.ideal_dcg(pool_labels, pool_group, k)
            values = metrics.ndcg(labels, scores, group, k, ideal=ideal)
        elif name == "dcg":
            values = metrics.dcg(labels, scores, group, k)
        elif name == "err":
            over = pool_labels > max_label
            if over.any():
                raise ValueError(f"qrels grade {int(pool_labels[over][0])} exceeds max_label="
                                 f"{max_label} of ERR; pass the collection's highest grade")
            values = metrics.err(labels, scores, group, k, max_label=max_label)
        elif name == "ap":
            n_rel = np.bincount(pool["code"].to_numpy(), weights=pool_labels > 0,
                                minlength=len(topics))
            values = metrics.average_precision(labels, scores, group, k, n_relevant=n_rel)
        else:
            values = metrics.sum_precision(labels, scores, group, k)
        columns[text] = values
    return pd.DataFrame(columns, index=pd.Index(topics, name="topic"))
