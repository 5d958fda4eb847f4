"""P@k, recall@k, reciprocal rank and R-precision: against naive loops, and against trec_eval
itself (through pytrec_eval) on the TREC 2012 runs."""

import numpy as np
import pytest

from lgb_risk import metrics
from lgb_risk.data import read_qrels, read_run
from tests import naive
from tests.conftest import random_problem, shared_file, split_queries


def _naive(labels, scores, k, n_relevant, ties):
    ranked = [int(v > 0) for v in naive.ranked_labels(labels, scores, ties)]
    top = ranked if k is None else ranked[:k]
    first = next((r for r, rel in enumerate(ranked, start=1) if rel and (k is None or r <= k)),
                 None)
    return {
        "precision": sum(top) / (len(ranked) if k is None else k),
        "recall": sum(top) / n_relevant if n_relevant else 0.0,
        "reciprocal_rank": 1.0 / first if first else 0.0,
        "r_precision": sum(ranked[:n_relevant]) / n_relevant if n_relevant else 0.0,
    }


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ties", ["stable", "pessimistic", "optimistic"])
@pytest.mark.parametrize("k", [1, 5, None])
def test_binary_measures_match_naive_loops(seed, ties, k):
    rng = np.random.default_rng(seed)
    labels, scores, group = random_problem(rng, n_queries=40, max_docs=15, tie_levels=4)
    in_list = np.array([int(np.sum(y > 0)) for y, _ in split_queries(labels, scores, group)])
    extra = rng.integers(0, 3, group.size)  # relevant documents the ranking lacks
    for n_relevant in (None, in_list + extra):
        totals = in_list if n_relevant is None else n_relevant
        want = [_naive(list(y), list(s), k, int(r), ties)
                for (y, s), r in zip(split_queries(labels, scores, group), totals)]
        got = {
            "precision": metrics.precision(labels, scores, group, k, ties=ties),
            "recall": metrics.recall(labels, scores, group, k, ties=ties, n_relevant=n_relevant),
            "reciprocal_rank": metrics.reciprocal_rank(labels, scores, group, k, ties=ties),
            "r_precision": metrics.r_precision(labels, scores, group, ties=ties,
                                               n_relevant=n_relevant),
        }
        for name, values in got.items():
            np.testing.assert_allclose(values, [w[name] for w in want], rtol=0, atol=1e-15,
                                       err_msg=name)


def test_empty_convention_for_queries_without_relevant_documents():
    labels, scores, group = np.zeros(3, int), np.array([0.3, 0.2, 0.1]), [3]
    for name in ("recall", "r_precision"):
        function = getattr(metrics, name)
        assert np.isnan(function(labels, scores, group, empty="skip")[0])
        assert function(labels, scores, group, empty="one")[0] == 1.0
    with pytest.raises(ValueError, match=r"n_relevant\[0\] is 1: a whole-number count at "
                                         "least the 2 relevant document"):
        metrics.recall([1, 1], [0.2, 0.1], [2], n_relevant=[1])
    with pytest.raises(ValueError, match="n_relevant must give one count per query"):
        metrics.recall([1, 1], [0.2, 0.1], [2], n_relevant=[2, 2])


@pytest.mark.shared_data
@pytest.mark.slow
def test_binary_measures_equal_trec_eval_per_topic_on_trec_2012_runs():
    """trec_eval's P_10, P_20, recall_10, recall_100, recip_rank and Rprec, per topic, to 1e-9.

    trec_eval orders a run by score descending, ties by document id descending, with scores
    held as float32 (pytrec_eval): the ranking is rebuilt that way here and handed over as a
    strictly decreasing score. R_q comes from the qrels (grade >= 1)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = read_qrels(shared_file("trec2012/qrels.adhoc.txt"))
    judged = {t: dict(zip(f["docno"], f["grade"].astype(int)))
              for t, f in qrels.groupby("topic")}
    measures = {"P_10", "P_20", "recall_10", "recall_100", "recip_rank", "Rprec"}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, measures)
    runs = sorted(shared_file("trec2012/runs").glob("*.txt"))
    assert len(runs) == 8
    for path in runs:
        run = read_run(path)
        official = evaluator.evaluate({t: dict(zip(f["docno"], f["score"]))
                                       for t, f in run.groupby("topic")})
        topics = sorted(official)
        labels, scores, group, relevant = [], [], [], []
        for topic in topics:
            frame = run[run["topic"] == topic]
            docs = sorted(zip(frame["score"].astype(np.float32), frame["docno"]),
                          key=lambda pair: (pair[0], pair[1]), reverse=True)
            grades = judged[topic]
            labels += [max(grades.get(d, 0), 0) for _, d in docs]
            scores += list(-np.arange(len(docs), dtype=float))
            group.append(len(docs))
            relevant.append(sum(g >= 1 for g in grades.values()))
        ours = {
            "P_10": metrics.precision(labels, scores, group, 10),
            "P_20": metrics.precision(labels, scores, group, 20),
            "recall_10": metrics.recall(labels, scores, group, 10, n_relevant=relevant),
            "recall_100": metrics.recall(labels, scores, group, 100, n_relevant=relevant),
            "recip_rank": metrics.reciprocal_rank(labels, scores, group),
            "Rprec": metrics.r_precision(labels, scores, group, n_relevant=relevant),
        }
        for name, values in ours.items():
            np.testing.assert_allclose(values, [official[t][name] for t in topics], rtol=0,
                                       atol=1e-9, err_msg=f"{path.name} {name}")
