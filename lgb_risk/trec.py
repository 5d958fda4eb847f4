"""Evaluation of TREC runs against qrels by the conventions of a named tool (gdeval.pl's default).

Every convention (:mod:`lgb_risk.conventions`) shares what both TREC tools do:

* documents are ranked by score descending, ties broken by DOCNO descending (string order), scores
  rounded to float32 first where the tool keeps them so (trec_eval);
* judged grades below 0 (spam, −2) count as 0, unjudged documents count as 0;
* the ideal DCG and R_q (AP, recall, R-precision) come from the qrels' grades, not only from the
  documents the run retrieved.

and the convention decides the rest: which topics are scored (gdeval: those with a relevant
document; trec_eval: every judged topic, a topic without a relevant document scoring 0), what a
topic the run lacks counts (left out by default; 0 with ``missing_topics="zero"``, the tools'
``-c``), the gain (gdeval ``2**g − 1``, trec_eval ``g``) and the discount. ERR uses l_max =
``max_label`` (4 for TREC Web).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from lgb_risk import measures as registry
from lgb_risk.conventions import resolve

__all__ = ["evaluate_run", "natural_topic_order", "scored_topics"]


def natural_topic_order(topics) -> list[str]:
    """Topics sorted numerically where they are numbers (``"9" < "10"``), as strings otherwise."""
    return sorted(set(topics), key=lambda t: (0, int(t), "") if t.isdigit() else (1, 0, t))


def scored_topics(qrels: pd.DataFrame, convention="gdeval") -> list[str]:
    """The qrels' topics a convention scores: with a grade > 0 (``topics="relevant"``) or every
    judged topic (``"judged"``), in natural order."""
    conv = resolve(convention)
    if conv.topics == "judged":
        return natural_topic_order(qrels["topic"].unique())
    return natural_topic_order(qrels.loc[qrels["grade"] > 0, "topic"].unique())


def evaluate_run(qrels: pd.DataFrame, run: pd.DataFrame, measures=("ndcg@20", "err@20"), *,
                 convention="gdeval", max_label: int = 4, missing_topics=None,
                 **overrides) -> pd.DataFrame:
    """Per-topic effectiveness of one run.

    Parameters
    ----------
    qrels : DataFrame
        As returned by :func:`lgb_risk.data.read_qrels` (``topic``, ``docno``, ``grade``).
    run : DataFrame
        As returned by :func:`lgb_risk.data.read_run` (``topic``, ``docno``, ``score``).
    measures : sequence of str
        Registered measures (:mod:`lgb_risk.measures`), e.g. ``ndcg@20``, ``p@10``, ``ap``.
    convention : str
        A tool's conventions (:mod:`lgb_risk.conventions`); default ``"gdeval"``.
    max_label : int
        l_max of ERR (4 for TREC Web). A qrels grade above it is an error when ERR is asked.
    missing_topics : {"skip", "zero"}, optional
        Overrides the convention: a scored topic the run has no ranking for is left out, or
        scores 0 on every measure.
    **overrides
        Single choices overriding the convention (``label_gain="exponential"``, ...).

    Returns
    -------
    DataFrame
        Index ``topic`` (natural order), one column per measure, in the order given;
        ``attrs["missing_topics"]`` lists the scored topics the run lacks (scored 0 or left out
        as the convention says).

    Raises
    ------
    ValueError
        An unknown measure, or a run with no topic the convention scores.
    """
    specs = [registry.parse(m) for m in measures]
    conv = resolve(convention, missing_topics=missing_topics, **overrides)
    judged = qrels.assign(grade=qrels["grade"].clip(lower=0))
    scored = scored_topics(judged, conv)
    in_run = set(run["topic"].unique())
    topics = [t for t in scored if t in in_run]
    missing = [t for t in scored if t not in in_run]
    if not topics:
        raise ValueError(f"run {run.attrs.get('name', '')!r} has no topic that the qrels "
                         f"{'judge' if conv.topics == 'judged' else 'give a relevant document'}")
    code = {t: i for i, t in enumerate(topics)}

    score = run["score"].to_numpy(dtype=np.float64)
    if conv.score_dtype == "float32":
        score = score.astype(np.float32).astype(np.float64)
    ranked = run.assign(score=score)[run["topic"].isin(code)]
    ranked = ranked.assign(code=ranked["topic"].map(code))
    # Score descending, then DOCNO descending; "stable" ties then keep this order.
    ranked = ranked.sort_values(["code", "score", "docno"], ascending=[True, False, False],
                                kind="mergesort")
    ranked = ranked.merge(judged[["topic", "docno", "grade"]], on=["topic", "docno"], how="left",
                          sort=False)
    pool = judged[judged["topic"].isin(code)]
    pool = pool.assign(code=pool["topic"].map(code)).sort_values("code", kind="mergesort")
    lists = registry.Judged(
        labels=ranked["grade"].fillna(0).to_numpy(dtype=np.int64),  # unjudged counts as 0
        scores=ranked["score"].to_numpy(),
        group=np.bincount(ranked["code"].to_numpy(), minlength=len(topics)),
        pool_labels=pool["grade"].to_numpy(dtype=np.int64),
        pool_group=np.bincount(pool["code"].to_numpy(), minlength=len(topics)),
        max_label=max_label)
    frame = pd.DataFrame({spec.text: spec.compute(lists, conv) for spec in specs},
                         index=pd.Index(topics, name="topic"))
    if missing and conv.missing_topics == "zero":
        frame = frame.reindex(natural_topic_order([*topics, *missing]), fill_value=0.0)
    frame.attrs["missing_topics"] = missing
    return frame
