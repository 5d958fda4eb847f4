"""A risk-sensitive ranker inside PyTerrier: pt.ltr.apply_learned_model(RiskRanker, form="ltr")
trained in a pipeline and compared in pt.Experiment, the baseline taken from the first-stage
score carried as a feature, so that PyTerrier's reordering of the rows cannot misalign it."""

import numpy as np
import pandas as pd
import pytest

from lgb_risk import RiskRanker, trec
from tests import naive

pt = pytest.importorskip("pyterrier")


@pytest.fixture(scope="module")
def collection():
    """60 topics of 15 candidates: a BM25-like first-stage score, four features, grades 0-2."""
    rng = np.random.default_rng(0)
    rows, judged = [], []
    for q in range(60):
        for d in range(15):
            label = int(rng.choice(3, p=[0.6, 0.3, 0.1]))
            features = rng.normal(size=4) + label * np.array([0.8, 0.3, 0.0, 0.0])
            bm25 = label + rng.normal(scale=1.2)
            rows.append({"qid": f"q{q}", "docno": f"q{q}d{d}", "score": bm25,
                         "features": np.append(features, bm25)})
            judged.append({"qid": f"q{q}", "docno": f"q{q}d{d}", "label": label})
    topics = pd.DataFrame({"qid": [f"q{q}" for q in range(60)], "query": ["x"] * 60})
    return pd.DataFrame(rows), pd.DataFrame(judged), topics


def _ranker():
    return RiskRanker("UCRO", alpha=5, baseline_feature=4, n_estimators=30,
                      min_child_samples=5, random_state=0, n_jobs=1)


def test_a_risk_sensitive_ranker_in_a_pyterrier_pipeline_and_experiment(collection):
    results, qrels, topics = collection
    first_stage = pt.Transformer.from_df(results.drop(columns=["features"]))
    train, valid, test = topics[:30], topics[30:40], topics[40:]
    pipeline = pt.Transformer.from_df(results) >> pt.ltr.apply_learned_model(_ranker(),
                                                                            form="ltr")
    pipeline.fit(train, qrels, valid, qrels)

    # The same model fitted by hand on the rows PyTerrier trains on: the first stage's results
    # for the training topics joined with their judgments and sorted by qid, as it does.
    rows = pt.Transformer.from_df(results).transform(train).merge(
        qrels, on=["qid", "docno"], how="left").fillna(0).sort_values("qid")
    by_hand = _ranker().fit(np.stack(rows["features"].to_numpy()), rows["label"].to_numpy(),
                            qid=rows["qid"].to_numpy())
    ranked = pipeline.transform(test)
    np.testing.assert_allclose(ranked["score"].to_numpy(),
                               by_hand.predict(np.stack(ranked["features"].to_numpy())))

    # The baseline each training topic was trained against is BM25's NDCG@10 of that topic,
    # whatever order PyTerrier's rows come in (the candidates shuffled here).
    bm25 = {qid: naive.ndcg(part["label"].to_numpy(), part["score"].to_numpy(), 10)
            for qid, part in results.merge(qrels).groupby("qid")}
    shuffled = pt.Transformer.from_df(results.sample(frac=1.0, random_state=1))
    for first in (pt.Transformer.from_df(results), shuffled):
        ranker = _ranker()
        (first >> pt.ltr.apply_learned_model(ranker, form="ltr")).fit(train, qrels, valid,
                                                                       qrels)
        order = sorted(train["qid"])  # PyTerrier's order of the training queries
        np.testing.assert_allclose(ranker.objective_.baseline.ravel(),
                                   [bm25[q] for q in order], rtol=1e-12)

    table = pt.Experiment([first_stage, pipeline], test, qrels, eval_metrics=["ndcg_cut_10"],
                          names=["BM25", "U-CRO"], baseline=0)
    ours = trec.evaluate_run(qrels.rename(columns={"qid": "topic", "label": "grade"}),
                             ranked, ["ndcg@10"], convention="trec_eval")
    assert table.set_index("name").loc["U-CRO", "ndcg_cut_10"] == pytest.approx(
        ours["ndcg@10"].mean(), abs=1e-12)
