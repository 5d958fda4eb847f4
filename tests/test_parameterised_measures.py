"""Measures with parameters of their own (RBP's persistence, ERR's highest grade) and the
measures added with them: RBP against a loop written for the test, Success@k and bpref against
trec_eval itself (through pytrec_eval), on a random collection with unjudged and negatively
judged documents and on the TREC 2012 runs."""

import re

import numpy as np
import pandas as pd
import pytest

from lgb_risk import measures, trec
from lgb_risk.data import read_qrels, read_run
from tests import naive
from tests.conftest import random_problem, shared_file, split_queries


def _rbp_loop(labels, scores, k, p):
    """(1 − p) Σ_{i ≤ k} p^(i−1) r_i, Moffat & Zobel (2008), rank by rank."""
    ranked = naive.ranked_labels(list(labels), list(scores), "stable")
    total = 0.0
    for i, label in enumerate(ranked[:k] if k else ranked, start=1):
        total += (1 - p) * p ** (i - 1) * (label > 0)
    return total


@pytest.mark.parametrize("p, k", [(0.5, 5), (0.8, 10), (0.95, None)])
def test_rbp_equals_its_formula_by_a_loop(p, k):
    labels, scores, group = random_problem(np.random.default_rng(3), n_queries=50, max_docs=30)
    text = f"rbp(p={p})" + (f"@{k}" if k else "")
    got = measures.parse(text).compute(measures.Judged(labels, scores, group))
    want = [_rbp_loop(y, s, k, p) for y, s in split_queries(labels, scores, group)]
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)


def test_a_measure_declares_its_parameters_which_parse_print_and_are_checked():
    spec = measures.parse("RBP(p=0.9)@10")
    assert spec.label == "RBP(p=0.9)@10" and spec.parameter_values() == {"p": 0.9}
    assert measures.parse("rbp@10").parameter_values() == {"p": 0.8}  # the declared default
    assert measures.parse("err(max_label=2, label_gain=linear)@5").label == \
        "ERR(label_gain=linear, max_label=2)@5"
    for text, message in [("rbp(p=1)@10", r"p must be a probability in \(0, 1\), got '1'"),
                          ("rbp(persistence=0.9)@10", "rbp's own parameters: p"),
                          ("err(max_label=two)@20", "max_label must be a whole number >= 1"),
                          ("bpref@10", "bpref takes no cut-off")]:
        with pytest.raises(ValueError, match=message):
            measures.parse(text)


def test_measures_objectives_and_the_configuration_declare_one_parameter_record():
    """A measure's parameter, an objective's and a configuration key are the same record: the
    same check refuses the same value with the same words, and the numpydoc entry is the
    record's (its type derived from the check)."""
    from lgb_risk._inputs.parameters import Parameter, declared, parameter_of
    from lgb_risk.experiment.config import _TABLES
    from lgb_risk.objectives import UCRO

    persistence = measures.MEASURES["rbp"].parameters[0]
    alpha = parameter_of(UCRO, "alpha")
    folds = parameter_of(_TABLES["split"], "folds")
    assert all(type(p) is Parameter for p in (persistence, alpha, folds))
    assert alpha in declared(UCRO)
    for record, bad in ((persistence, 1.5), (alpha, -1.0), (folds, 2)):
        said = f"{record.name} must be {record.check.expected}, got {bad!r}"
        with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
            record.validate(bad)
        assert record.entry().startswith(f"{record.name} : {record.check.kind}, default "
                                         f"{record.default!r}")
    assert persistence.kind == "float in (0, 1)" and folds.kind == "int >= 3"


def test_err_takes_its_highest_grade_from_the_measure_or_the_collection():
    labels, scores, group = np.array([2, 1, 0]), np.array([0.9, 0.5, 0.1]), [3]
    judged = measures.Judged(labels, scores, group, max_label=4)
    written = measures.parse("err(max_label=2)@3").compute(judged)
    collection = measures.parse("err@3").compute(judged._replace(max_label=2))
    assert written.tolist() == collection.tolist()
    # (2^2-1)/2^2 = 0.75 at rank 1, then (1 - 0.75)(2^1-1)/2^2 / 2 at rank 2
    assert written[0] == pytest.approx(0.75 + 0.25 * 0.25 / 2)


def _collection(seed):
    """Random qrels (grades −1..3, some topics without a relevant document) and a run holding
    judged and unjudged documents, scores distinct in float32."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for topic in range(1, 16):
        judged = [f"d{topic}_{i}" for i in range(int(rng.integers(3, 25)))]
        grades = rng.choice([-1, 0, 0, 1, 2, 3], size=len(judged))
        if topic % 5 == 0:
            grades[:] = np.minimum(grades, 0)
        qrels += [(str(topic), d, int(g)) for d, g in zip(judged, grades)]
        pool = judged + [f"u{topic}_{i}" for i in range(int(rng.integers(0, 15)))]
        chosen = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
        scores = rng.permutation(len(chosen)).astype(float) + rng.uniform(0, 0.5)
        run += [(str(topic), d, float(s)) for d, s in zip(chosen, scores)]
    return (pd.DataFrame(qrels, columns=["topic", "docno", "grade"]),
            pd.DataFrame(run, columns=["topic", "docno", "score"]))


def _trec_eval(qrels, run, names):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    judged = {t: dict(zip(f["docno"], f["grade"].astype(int))) for t, f in qrels.groupby("topic")}
    evaluator = pytrec_eval.RelevanceEvaluator(judged, names)
    return evaluator.evaluate({t: dict(zip(f["docno"], f["score"]))
                               for t, f in run.groupby("topic")})


def _compare(qrels, run):
    official = _trec_eval(qrels, run, {"success", "bpref"})
    ours = trec.evaluate_run(qrels, run, ["success@1", "success@5", "success@10", "bpref"],
                             convention="trec_eval")
    topics = [t for t in ours.index if t in official]
    assert len(topics) > 0
    for ours_name, theirs in [("success@1", "success_1"), ("success@5", "success_5"),
                              ("success@10", "success_10"), ("bpref", "bpref")]:
        np.testing.assert_allclose(ours.loc[topics, ours_name],
                                   [official[t][theirs] for t in topics], rtol=0, atol=1e-12,
                                   err_msg=ours_name)


@pytest.mark.parametrize("seed", range(3))
def test_success_and_bpref_equal_trec_eval_on_a_random_collection(seed):
    _compare(*_collection(seed))


@pytest.mark.shared_data
@pytest.mark.slow
def test_success_and_bpref_equal_trec_eval_on_trec_2012_runs():
    qrels = read_qrels(shared_file("trec2012/qrels.adhoc.txt"))
    for path in sorted(shared_file("trec2012/runs").glob("*.txt"))[:4]:
        _compare(qrels, read_run(path))


def test_the_command_line_evaluates_rbp_as_the_loop_does(tmp_path):
    """lgb-risk evaluate --measures "rbp(p=0.9)@10": each topic's value is the formula's."""
    from tests.test_cli import run_cli

    qrels, run = _collection(7)
    qrels.assign(iteration=0)[["topic", "iteration", "docno", "grade"]].to_csv(
        tmp_path / "qrels", sep=" ", header=False, index=False)
    ranked = run.sort_values(["topic", "score"], ascending=[True, False])
    ranked.assign(q0="Q0", rank=ranked.groupby("topic").cumcount() + 1, tag="mine")[
        ["topic", "q0", "docno", "rank", "score", "tag"]].to_csv(
        tmp_path / "mine", sep=" ", header=False, index=False)
    code, out, err = run_cli("evaluate", tmp_path / "qrels", tmp_path / "mine", "--measures",
                             "rbp(p=0.9)@10", "--per-topic", "--format", "csv", "--decimals",
                             "12", "--convention", "trec_eval")
    assert code == 0, err
    table = pd.read_csv(__import__("io").StringIO(out), dtype={"topic": str})
    grade = {(t, d): g for t, d, g in qrels.itertuples(index=False)}
    for topic, frame in ranked.groupby("topic"):
        relevant = [grade.get((topic, d), 0) for d in frame["docno"]]
        want = sum(0.1 * 0.9 ** i * (g >= 1) for i, g in enumerate(relevant[:10]))
        if topic in set(table["topic"]):
            got = table.loc[table["topic"] == topic, "rbp(p=0.9)@10"].item()
            assert got == pytest.approx(want, abs=1e-12), topic


def test_the_new_measures_get_risk_measures_against_a_baseline(tmp_path):
    """evaluate's risk columns for RBP, Success@k and bpref: URisk against the baseline equal to
    its formula on the per-topic values the command prints."""
    from tests.test_cli import run_cli

    qrels, run = _collection(8)
    other = run.assign(score=np.random.default_rng(1).permutation(run["score"].to_numpy()))
    qrels.assign(iteration=0)[["topic", "iteration", "docno", "grade"]].to_csv(
        tmp_path / "qrels", sep=" ", header=False, index=False)
    for name, frame in (("base", run), ("mine", other)):
        ranked = frame.sort_values(["topic", "score"], ascending=[True, False])
        ranked.assign(q0="Q0", rank=ranked.groupby("topic").cumcount() + 1, tag=name)[
            ["topic", "q0", "docno", "rank", "score", "tag"]].to_csv(
            tmp_path / name, sep=" ", header=False, index=False)
    measures_given = ["rbp(p=0.9)@10", "success@5", "bpref"]
    common = ["evaluate", tmp_path / "qrels", tmp_path / "base", tmp_path / "mine",
              "--measures", *measures_given, "--convention", "trec_eval", "--format", "csv",
              "--decimals", "12"]
    code, out, err = run_cli(*common, "--per-topic")
    assert code == 0, err
    per_topic = pd.read_csv(__import__("io").StringIO(out), dtype={"topic": str})
    code, out, err = run_cli(*common, "--baseline", "base", "--alpha", "5", "--layout", "wide")
    assert code == 0, err
    summary = pd.read_csv(__import__("io").StringIO(out)).set_index("run")
    for measure in measures_given:
        table = per_topic.pivot(index="topic", columns="run", values=measure)
        delta = table["mine"] - table["base"]
        urisk = np.where(delta >= 0, delta, 6 * delta).mean()
        assert summary.loc["mine", f"{measure}_urisk_a5"] == pytest.approx(urisk, abs=1e-9)
