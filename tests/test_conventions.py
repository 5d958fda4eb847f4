"""Each named convention against the tool it names.

Installed tools are run here: trec_eval (through pytrec_eval-terrier), LightGBM's own ndcg@k and
map@k, scikit-learn's ndcg_score, per query, to 1e-9. Tools that do not install from a package
registry (gdeval.pl, the LETOR 3.0 / 4.0 and MSLR Perl scripts) were run once on the shared data;
their outputs are pinned under tests/data/ with the commands that made them (tests/data/README.md).
"""

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from lgb_risk import conventions, data, measures, metrics, trec
from tests.conftest import shared_file

PINNED = Path(__file__).parent / "data"


def _bm25_ranking(relative, feature):
    """Labels, BM25 scores (a feature column), group and query ids of a shared LETOR file."""
    letor = data.load_letor(shared_file(relative))
    column = letor.X[:, feature - 1].toarray().ravel()
    return letor.y, column, letor.group, [str(q) for q in letor.query_ids]


# -- trec_eval ------------------------------------------------------------------------------------

TREC_EVAL_MEASURES = {"ndcg_cut_10": "ndcg@10", "ndcg_cut_20": "ndcg@20", "ndcg": "ndcg",
                      "map": "ap", "map_cut_100": "ap@100", "P_10": "p@10",
                      "recall_100": "recall@100", "recip_rank": "rr", "Rprec": "rprec"}


def _official(evaluator, run):
    return evaluator.evaluate({t: dict(zip(f["docno"], f["score"].astype(float)))
                               for t, f in run.groupby("topic")})


@pytest.mark.shared_data
@pytest.mark.slow
def test_trec_eval_convention_equals_trec_eval_per_topic_on_trec_2012_runs():
    """convention="trec_eval" through trec.evaluate_run: linear gain for ndcg_cut, R_q from the
    qrels, float32 scores with ties by DOCNO descending, every judged topic scored."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = data.read_qrels(shared_file("trec2012/qrels.adhoc.txt"))
    judged = {t: dict(zip(f["docno"], f["grade"].astype(int))) for t, f in qrels.groupby("topic")}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, set(TREC_EVAL_MEASURES))
    for path in sorted(shared_file("trec2012/runs").glob("*.txt")):
        run = data.read_run(path)
        official = _official(evaluator, run)
        ours = trec.evaluate_run(qrels, run, list(TREC_EVAL_MEASURES.values()),
                                 convention="trec_eval")
        assert list(ours.index) == trec.natural_topic_order(official)
        for name, text in TREC_EVAL_MEASURES.items():
            np.testing.assert_allclose(ours[text], [official[t][name] for t in ours.index],
                                       rtol=0, atol=1e-9, err_msg=f"{path.name} {name}")


@pytest.mark.shared_data
def test_trec_eval_convention_differs_from_gdeval_where_the_tools_differ():
    """The gap the conventions close: trec_eval's ndcg_cut_20 (linear gain) is not gdeval's."""
    qrels = data.read_qrels(shared_file("trec2012/qrels.adhoc.txt"))
    run = data.read_run(shared_file("trec2012/runs/rm_cata-filtered.txt"))
    linear = trec.evaluate_run(qrels, run, ["ndcg@20"], convention="trec_eval")["ndcg@20"]
    exponential = trec.evaluate_run(qrels, run, ["ndcg@20"], convention="gdeval")["ndcg@20"]
    common = exponential.index
    assert np.max(np.abs(linear[common] - exponential)) > 0.05
    # and a keyword overrides one choice of the convention:
    overridden = trec.evaluate_run(qrels, run, ["ndcg@20"], convention="trec_eval",
                                   label_gain="exponential", topics="relevant",
                                   score_dtype="float64")["ndcg@20"]
    np.testing.assert_allclose(overridden, exponential, rtol=0, atol=1e-12)


@pytest.mark.shared_data
def test_trec_eval_convention_in_the_array_api_on_mq2008():
    """metrics.* with convention="trec_eval" on MQ2008 (BM25 scores, many ties) per query.

    Document ids are chosen so that DOCNO-descending order is the input order, which is how the
    array API breaks ties ("stable")."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    labels, scores, group, qids = _bm25_ranking("mq2008/Fold1/test.txt", 25)
    starts = np.concatenate(([0], np.cumsum(group)))
    qrels, run = {}, {}
    for q, a, b in zip(qids, starts[:-1], starts[1:]):
        docs = [f"d{b - i:06d}" for i in range(a, b)]  # descending along the input
        qrels[q] = {d: int(y) for d, y in zip(docs, labels[a:b])}
        run[q] = {d: float(s) for d, s in zip(docs, scores[a:b])}
    official = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut_5", "ndcg_cut_10", "map", "P_5", "recip_rank"}).evaluate(run)
    assert sorted(official) == sorted(qids)
    ours = {
        "ndcg_cut_5": metrics.ndcg(labels, scores, group, 5, convention="trec_eval"),
        "ndcg_cut_10": metrics.ndcg(labels, scores, group, 10, convention="trec_eval"),
        "map": metrics.average_precision(labels, scores, group, None, convention="trec_eval"),
        "P_5": metrics.precision(labels, scores, group, 5, convention="trec_eval"),
        "recip_rank": metrics.reciprocal_rank(labels, scores, group, convention="trec_eval"),
    }
    for name, values in ours.items():
        np.testing.assert_allclose(values, [official[q][name] for q in qids], rtol=0, atol=1e-9,
                                   err_msg=name)


# -- LightGBM ---------------------------------------------------------------------------------


@pytest.mark.shared_data
def test_lightgbm_convention_equals_lightgbm_ndcg_and_map_per_query():
    """LightGBM's own ndcg@k and map@k (empty query: 1; map divides by min(R, k)), evaluated by
    LightGBM query by query at a trained model's predictions."""
    lgb = pytest.importorskip("lightgbm")
    train = data.load_letor(shared_file("mq2008/Fold1/train.txt"))
    test = data.load_letor(shared_file("mq2008/Fold1/test.txt"), n_features=train.X.shape[1])
    params = {"objective": "lambdarank", "metric": ["ndcg", "map"], "eval_at": [1, 3, 10],
              "num_leaves": 7, "min_data_in_leaf": 20, "verbose": -1, "num_threads": 1,
              "deterministic": True}
    train_set = lgb.Dataset(train.X, train.y, group=train.group)
    booster = lgb.train(params, train_set, num_boost_round=10, keep_training_booster=True)
    scores = booster.predict(test.X)
    ours = {f"{name}@{k}": measures.parse(f"{name.replace('map', 'ap')}@{k}").compute(
        measures.Judged(test.y, scores, test.group), "lightgbm")
        for name in ("ndcg", "map") for k in (1, 3, 10)}
    starts = np.concatenate(([0], np.cumsum(test.group)))
    checked = {"empty": 0, "short": 0}
    for q in range(60):
        a, b = starts[q], starts[q + 1]
        one = lgb.Dataset(test.X[a:b], test.y[a:b], group=[b - a], reference=train_set)
        for _, name, value, _ in booster.eval(one, "q"):
            assert ours[name][q] == pytest.approx(value, abs=1e-9), (q, name)
        checked["empty"] += int(not np.any(test.y[a:b] > 0))
        checked["short"] += int(b - a < 10)
    assert checked["empty"] > 0  # the queries where the conventions differ are among them


# -- scikit-learn ----------------------------------------------------------------------------------


@pytest.mark.shared_data
@pytest.mark.parametrize("k", [1, 5, 10, None])
def test_sklearn_convention_equals_ndcg_score_per_query(k):
    """sklearn.metrics.ndcg_score: linear gain, tied scores averaged, IDCG = 0 gives 0."""
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    labels, scores, group, _ = _bm25_ranking("mq2008/Fold1/test.txt", 25)
    ours = metrics.ndcg(labels, scores, group, k, convention="sklearn")
    starts = np.concatenate(([0], np.cumsum(group)))
    tied = 0
    for q, (a, b) in enumerate(zip(starts[:-1], starts[1:])):
        if b - a < 2:
            continue  # ndcg_score refuses single-document queries
        want = sklearn_metrics.ndcg_score([labels[a:b]], [scores[a:b]], k=k)
        assert ours[q] == pytest.approx(want, abs=1e-9), q
        tied += int(np.unique(scores[a:b]).size < b - a)
    assert tied > 10


# -- gdeval.pl (pinned) ---------------------------------------------------------------------------


def _gdeval_rows(path):
    with open(path) as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    per_topic = {r[1]: (float(r[2]), float(r[3])) for r in body if r[1] != "amean"}
    mean = next(tuple(map(float, r[2:4])) for r in body if r[1] == "amean")
    return header, per_topic, mean


@pytest.mark.shared_data
def test_gdeval_convention_equals_pinned_gdeval_output():
    """gdeval.pl -k 20 on the eight runs, printed to 5 decimals: per topic and mean."""
    qrels = data.read_qrels(shared_file("trec2012/qrels.adhoc.txt"))
    pinned = sorted((PINNED / "gdeval").glob("*.k20.csv"))
    assert len(pinned) == 8
    for path in pinned:
        run = data.read_run(shared_file(f"trec2012/runs/{path.name[:-len('.k20.csv')]}.txt"))
        header, per_topic, mean = _gdeval_rows(path)
        assert header[2:] == ["ndcg@20", "err@20"]
        ours = trec.evaluate_run(qrels, run, ["ndcg@20", "err@20"], convention="gdeval")
        assert list(ours.index) == list(per_topic)
        want = np.array([per_topic[t] for t in ours.index])
        np.testing.assert_allclose(ours.to_numpy(), want, rtol=0, atol=5e-6 + 1e-12)
        np.testing.assert_allclose(ours.mean().to_numpy(), mean, rtol=0, atol=5e-6 + 1e-12)


@pytest.mark.shared_data
@pytest.mark.parametrize("flag, missing", [("", "skip"), (".c", "zero")])
def test_gdeval_missing_topics_as_gdeval_and_its_c_flag(tmp_path, flag, missing):
    """A run without topics 151-155: gdeval leaves them out of the mean, and with -c counts them
    as 0 (mean over the 50 topics with a relevant document)."""
    qrels = data.read_qrels(shared_file("trec2012/qrels.adhoc.txt"))
    source = shared_file("trec2012/runs/ql_cata.txt").read_text().splitlines(keepends=True)
    truncated = tmp_path / "ql_cata_without_151-155.txt"
    truncated.write_text("".join(line for line in source
                                 if not re.match(r"15[1-5]\s", line)))
    _, per_topic, mean = _gdeval_rows(PINNED / "gdeval" / f"ql_cata_without_151-155.k10{flag}.csv")
    ours = trec.evaluate_run(qrels, data.read_run(truncated), ["ndcg@10", "err@10"],
                             convention="gdeval", missing_topics=missing)
    assert ours.attrs["missing_topics"] == ["151", "152", "153", "154", "155"]
    assert len(ours) == (45 if missing == "skip" else 50)
    np.testing.assert_allclose(ours.mean().to_numpy(), mean, rtol=0, atol=5e-6 + 1e-12)
    for topic, values in per_topic.items():
        np.testing.assert_allclose(ours.loc[topic].to_numpy(), values, rtol=0, atol=5e-6 + 1e-12)


# -- LETOR 4.0, MSLR and LETOR 3.0 scripts (pinned) ----------------------------------------------


def _letor4_tables(path):
    """The two per-query tables of Eval-Score-4.0.pl / eval-score-mslr.pl (flag 1)."""
    tables, current = [], None
    for line in Path(path).read_text().splitlines():
        fields = line.split("\t")
        if fields[0] == "qid":
            current = {"header": fields[1:]}
            tables.append(current)
        elif current is not None and fields[0] and fields[0] != "Average":
            current[fields[0]] = np.array([float(v) for v in fields[1:]])
    return tables


@pytest.mark.shared_data
@pytest.mark.parametrize("convention, relative, feature, pinned", [
    ("letor4", "mq2008/Fold1/test.txt", 25, "letor4_mq2008_test_bm25.txt"),
    ("ms", "mslr_sample/msn1.fold1.test.5k.txt", 110, "ms_mslr_test_bm25.txt"),
])
def test_letor4_and_ms_conventions_equal_pinned_script_output(convention, relative, feature,
                                                              pinned):
    """P@1..10, MAP and NDCG@1..10 per query, printed to 4 decimals by the Perl scripts: discount
    1 at ranks 1 and 2, a query shorter than k scores NDCG@k 0, P@k divides by k; the MSLR script
    counts grades >= 2 as relevant."""
    labels, scores, group, qids = _bm25_ranking(relative, feature)
    precision_table, ndcg_table = _letor4_tables(PINNED / "letor" / pinned)
    assert set(precision_table) - {"header"} == set(qids)
    row = {q: i for i, q in enumerate(qids)}
    order = [row[q] for q in precision_table if q != "header"]
    columns = {f"p@{k}": metrics.precision(labels, scores, group, k, convention=convention)
               for k in range(1, 11)}
    columns["map"] = metrics.average_precision(labels, scores, group, None, convention=convention)
    for k in range(1, 11):
        columns[f"ndcg@{k}"] = metrics.ndcg(labels, scores, group, k, convention=convention)
    want_p = np.array([v for q, v in precision_table.items() if q != "header"])
    want_n = np.array([v for q, v in ndcg_table.items() if q != "header"])
    got_p = np.column_stack([columns[f"p@{k}"] for k in range(1, 11)] + [columns["map"]])[order]
    got_n = np.column_stack([columns[f"ndcg@{k}"] for k in range(1, 11)])[order]
    np.testing.assert_allclose(got_p, want_p, rtol=0, atol=5e-5 + 1e-12)
    np.testing.assert_allclose(got_n, want_n[:, :10], rtol=0, atol=5e-5 + 1e-12)
    assert convention == "ms" or np.any(group < 10)  # MQ2008 has queries shorter than 10


@pytest.mark.shared_data
def test_letor3_convention_equals_pinned_script_output():
    """Eval-Score-3.0.pl prints NDCG@1..16 and P@1..16 per query at full precision, and nothing
    past a query's length (which its mean counts as 0, as the convention scores NDCG)."""
    labels, scores, group, qids = _bm25_ranking("mq2008/Fold1/test.txt", 25)
    text = (PINNED / "letor" / "letor3_mq2008_test_bm25.txt").read_text()
    per_query = {kind: [np.array([float(v) for v in line.split("\t")[1:] if v.strip()])
                        for line in text.splitlines() if line.startswith(f"{kind} of query")]
                 for kind in ("NDCG", "precision", "Map")}
    order = np.argsort([int(q) for q in qids], kind="stable")  # the script's numeric qid order
    for k in range(1, 17):
        ndcg = metrics.ndcg(labels, scores, group, k, convention="letor3")[order]
        precision = metrics.precision(labels, scores, group, k, convention="letor3")[order]
        for q, (n_row, p_row) in enumerate(zip(per_query["NDCG"], per_query["precision"])):
            if k <= n_row.size:
                assert ndcg[q] == pytest.approx(n_row[k - 1], abs=1e-12)
                assert precision[q] == pytest.approx(p_row[k - 1], abs=1e-12)
            else:
                assert ndcg[q] == 0.0
        mean = float(re.search(r"^NDCG:\t(.*)$", text, re.M).group(1).split("\t")[k - 1])
        assert ndcg.mean() == pytest.approx(mean, abs=1e-12)
    ap = metrics.average_precision(labels, scores, group, None, convention="letor3")[order]
    np.testing.assert_allclose(ap, [v[0] for v in per_query["Map"]], rtol=0, atol=1e-12)


# -- the conventions themselves --------------------------------------------------------------------


def test_every_convention_is_usable_everywhere_and_keywords_override():
    labels, scores, group = [2, 0, 1, 0, 0], [0.5, 0.4, 0.4, 0.1, 0.0], [3, 2]
    judged = measures.Judged(labels, scores, group)
    for name in conventions.CONVENTIONS:
        for text in ("ndcg@2", "dcg@2", "dcg_ue2@2", "ap@2", "p@2", "rr", "rprec", "ap_ue1@2"):
            if name == "sklearn" and text[:3] not in ("ndc", "dcg"):
                # scikit-learn averages tied scores, which is defined for DCG and NDCG only
                with pytest.raises(ValueError, match="defined for DCG and NDCG only"):
                    measures.parse(text).compute(judged, name)
                assert measures.parse(text).compute(judged, name, ties="stable").shape == (2,)
                continue
            assert measures.parse(text).compute(judged, name).shape == (2,)
    lightgbm = metrics.ndcg(labels, scores, group, 2, convention="lightgbm")
    assert lightgbm[1] == 1.0  # the second query has no relevant document
    assert metrics.ndcg(labels, scores, group, 2, convention="lightgbm", empty="zero")[1] == 0.0
    with pytest.raises(ValueError, match="unknown convention 'letor5'"):
        metrics.ndcg(labels, scores, group, 2, convention="letor5")
    with pytest.raises(ValueError, match="empty must be one of"):
        metrics.ndcg(labels, scores, group, 2, convention="lightgbm", empty="none")
