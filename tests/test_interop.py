"""Other tools' runs and judgments in memory: trec.evaluate_run takes ranx Qrels/Run, the
{topic: {docno: value}} dicts of pytrec_eval and ir_measures, ir_measures' records and frames
with PyTerrier's and ir_measures' column names, and its numbers agree per topic with ranx,
ir_measures and pytrec_eval run here; the risk measures take topic-keyed Series and dicts."""

import numpy as np
import pandas as pd
import pytest

from lgb_risk import data, risk, trec

ranx = pytest.importorskip("ranx")
ir_measures = pytest.importorskip("ir_measures")
pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = ["ndcg@10", "p@10", "ap", "rr"]


@pytest.fixture(scope="module")
def collection():
    """15 topics of 30 documents, 70% judged with grades 0-3 (each topic a relevant one), one
    run scoring every document without ties."""
    rng = np.random.default_rng(0)
    qrels, run = {}, {}
    for topic in range(1, 16):
        docs = [f"d{topic}_{i}" for i in range(30)]
        grades = rng.choice(4, size=30, p=[0.6, 0.2, 0.15, 0.05])
        grades[0] = max(grades[0], 1)
        judged = rng.random(30) < 0.7
        judged[0] = True
        qrels[str(topic)] = {d: int(g) for d, g, j in zip(docs, grades, judged) if j}
        run[str(topic)] = {d: float(s) for d, s in zip(docs, grades + rng.normal(scale=1.5,
                                                                              size=30))}
    return qrels, run


def _frames(qrels, run):
    q = pd.DataFrame([(t, d, g) for t, docs in qrels.items() for d, g in docs.items()],
                     columns=["topic", "docno", "grade"])
    r = pd.DataFrame([(t, d, s) for t, docs in run.items() for d, s in docs.items()],
                     columns=["topic", "docno", "score"])
    return q, r


@pytest.mark.slow
def test_every_form_gives_the_numbers_of_our_own_frames(collection):
    qrels, run = collection
    q, r = _frames(qrels, run)
    want = trec.evaluate_run(q, r, MEASURES, convention="trec_eval")
    forms = {
        "dicts (pytrec_eval, ir_measures)": (qrels, run),
        "ranx Qrels and Run": (ranx.Qrels(qrels), ranx.Run(run)),
        "PyTerrier frames": (q.rename(columns={"topic": "qid", "grade": "label"}),
                             r.rename(columns={"topic": "qid"}).assign(rank=0)),
        "ir_measures frames": (q.rename(columns={"topic": "query_id", "docno": "doc_id",
                                                 "grade": "relevance"}),
                               r.rename(columns={"topic": "query_id", "docno": "doc_id"})),
        "ir_measures records": ([ir_measures.Qrel(t, d, g) for t, d, g in q.itertuples(
            index=False)], [ir_measures.ScoredDoc(t, d, s) for t, d, s in r.itertuples(
                index=False)]),
    }
    for name, (given_qrels, given_run) in forms.items():
        got = trec.evaluate_run(given_qrels, given_run, MEASURES, convention="trec_eval")
        pd.testing.assert_frame_equal(got, want, obj=name)


def test_per_topic_numbers_agree_with_ranx_ir_measures_and_pytrec_eval(collection):
    qrels, run = collection
    ours = trec.evaluate_run(ranx.Qrels(qrels), ranx.Run(run), MEASURES, convention="trec_eval")
    ranx_run = ranx.Run(run)
    order = list(ranx_run.keys())
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx_run,
                           ["ndcg@10", "precision@10", "map", "mrr"], return_mean=False)
    for measure, name in zip(MEASURES, ["ndcg@10", "precision@10", "map", "mrr"]):
        np.testing.assert_allclose(ours.loc[order, measure], theirs[name], rtol=1e-12,
                                   err_msg=measure)
    burges = ranx.evaluate(ranx.Qrels(qrels), ranx_run, "ndcg_burges@10", return_mean=False)
    exponential = trec.evaluate_run(qrels, run, ["ndcg@10"], convention="gdeval")
    np.testing.assert_allclose(exponential.loc[order, "ndcg@10"], burges, rtol=1e-12)
    calculated = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(
        [ir_measures.nDCG @ 10, ir_measures.P @ 10, ir_measures.AP, ir_measures.RR], qrels, run)}
    trec_eval = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.10", "map",
                                                       "recip_rank"}).evaluate(run)
    for topic in qrels:
        for measure, im_name, te_name in zip(MEASURES, ["nDCG@10", "P@10", "AP", "RR"],
                                             ["ndcg_cut_10", "P_10", "map", "recip_rank"]):
            assert ours.loc[topic, measure] == pytest.approx(calculated[(topic, im_name)],
                                                             abs=1e-12)
            assert ours.loc[topic, measure] == pytest.approx(trec_eval[topic][te_name],
                                                             abs=1e-12)


def test_bad_in_memory_runs_name_what_is_wrong():
    with pytest.raises(ValueError, match=r"the score of topic '7', document 'b' is 'x', not a "
                                         r"number"):
        data.as_run({"7": {"a": 1.0, "b": "x"}})
    with pytest.raises(ValueError, match=r"the grade of topic '7', document 'a' is 1.5; "
                                         r"expected a whole number"):
        data.as_qrels({"7": {"a": 1.5}})
    with pytest.raises(ValueError, match=r"needs the columns of one of lgb_risk \(topic, docno, "
                                         r"score\); PyTerrier \(qid, docno, score\)"):
        data.as_run(pd.DataFrame({"query": ["1"], "doc": ["a"], "score": [1.0]}))
    with pytest.raises(ValueError, match="topic '1' maps to list"):
        data.as_qrels({"1": [1, 2]})


def test_risk_measures_align_topic_keyed_values_by_topic():
    system = {"151": 0.5, "152": 0.2, "153": 0.9}
    baseline = pd.Series({"153": 0.6, "151": 0.4, "152": 0.3})
    assert risk.urisk(system, baseline, alpha=1) == risk.urisk([0.5, 0.2, 0.9],
                                                              [0.4, 0.3, 0.6], alpha=1)
    assert risk.trisk(system, baseline).trisk == risk.trisk([0.5, 0.2, 0.9],
                                                            [0.4, 0.3, 0.6]).trisk
    several = {"bm25": baseline, "ql": {151: 0.1, 152: 0.2, 153: 0.3}}  # ids compared as text
    np.testing.assert_array_equal(
        risk.georisk_against(pd.Series(system), several, 5),
        risk.georisk_against([0.5, 0.2, 0.9], [[0.4, 0.3, 0.6], [0.1, 0.2, 0.3]], 5))
    with pytest.raises(ValueError, match=r"baseline lacks 1 topic\(s\) of system: 153; has 1 "
                                         r"topic\(s\) system lacks: 154"):
        risk.urisk(system, {"151": 0.4, "152": 0.3, "154": 0.1})
    with pytest.raises(ValueError, match="baseline is an array while another input is keyed"):
        risk.urisk(system, [0.4, 0.3, 0.6])


@pytest.mark.slow
def test_runs_in_memory_are_summarised_in_one_call_as_files_are(collection, tmp_path):
    """trec.summarise takes a ranx Run, a PyTerrier frame, a dict and a file side by side:
    its table equals the command line's on the same runs written as files, and its figures
    and LaTeX come from the same call's result."""
    pytest.importorskip("matplotlib")
    from tests.test_cli import run_cli

    qrels, run = collection
    q, r = _frames(qrels, run)
    rng = np.random.default_rng(1)
    second = r.assign(score=r["score"] + rng.normal(scale=1.0, size=len(r)))
    third = r.assign(score=r["score"] + rng.normal(scale=2.0, size=len(r)))
    files = {}
    for name, frame in (("bm25", r), ("mine", second), ("other", third)):
        ranked = frame.sort_values(["topic", "score"], ascending=[True, False])
        path = tmp_path / name
        ranked.assign(q0="Q0", rank=ranked.groupby("topic").cumcount() + 1, tag=name)[
            ["topic", "q0", "docno", "rank", "score", "tag"]].to_csv(path, sep=" ",
                                                                     header=False, index=False)
        files[name] = path
    q.assign(iteration=0)[["topic", "iteration", "docno", "grade"]].to_csv(
        tmp_path / "qrels", sep=" ", header=False, index=False)
    runs = {"bm25": ranx.Run(run),
            "mine": second.rename(columns={"topic": "qid"}),  # PyTerrier's result frame
            "other": files["other"]}
    summary = trec.summarise(ranx.Qrels(qrels), runs, ["ndcg@10", "ap"], baseline="bm25",
                             alphas=[0, 5], correction="holm", convention="trec_eval")
    code, out, err = run_cli("evaluate", tmp_path / "qrels", *files.values(), "--measures",
                             "ndcg@10", "ap", "--baseline", "bm25", "--alpha", "0", "5",
                             "--correction", "holm", "--convention", "trec_eval", "--format",
                             "csv", "--layout", "wide", "--decimals", "12")
    assert code == 0, err
    cli_table = pd.read_csv(__import__("io").StringIO(out)).set_index("run")
    ours = summary.frame().set_index("run")
    for column in cli_table.columns:
        np.testing.assert_allclose(ours[column].astype(float), cli_table[column].astype(float),
                                   rtol=0, atol=1e-11, err_msg=column)
    paths = summary.write_figures(tmp_path / "figures", figure_format="pdf")
    assert len(paths) == 2 * (3 + 2) and all(p.suffix == ".pdf" and p.read_bytes()[:4] == b"%PDF"
                                             for p in paths)
    latex = summary.latex(decimals=3)
    assert latex.splitlines()[1] == "\\begin{table}" and "mine" in latex
