"""Options and inputs that would otherwise be accepted and then ignored, or answered with a
plausible wrong number: each is refused with a message naming the option, the argument or the
row, and what was expected."""

import io
from contextlib import redirect_stderr

import numpy as np
import pytest

from lgb_risk import cli, latex, trec
from lgb_risk.experiment import synthetic
from tests.test_cli import run_cli


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    folder = tmp_path_factory.mktemp("collection")
    synthetic.write_trec_collection(folder, n_topics=8, docs_per_topic=15, n_runs=3)
    return folder


def _runs(folder):
    return sorted(str(p) for p in (folder / "runs").iterdir())


@pytest.mark.parametrize("options, message", [
    (["--figure-size", "column"], "--figure-size shapes the figures of --figure DIR, which is "
                                  "not given"),
    (["--figure-format", "pdf", "--figure-size", "page"], "--figure-format and --figure-size "
                                                          "shape the figures"),
    (["--test", "randomisation"], "--test randomisation tests each run against --baseline"),
    (["--test", "randomisation", "--per-topic", "--baseline", "run1"],
     "--per-topic prints each topic's values, without tests"),
    (["--caption", "x"], "--caption shapes a LaTeX table: with --format table it would be "
                         "ignored"),
    (["--format", "csv", "--caption", "x", "--label", "t"], "--caption and --label shape a LaTeX "
                                                            "table: with --format csv they"),
    (["--format", "latex", "--header", "nosuch=X"], "the table has no measure 'nosuch'; its "
                                                    "measures: ndcg@20, err@20"),
    (["--format", "csv", "--header", "ndcg@20=X"], "--header shapes a LaTeX table"),
])
def test_evaluate_refuses_options_it_would_ignore(collection, options, message):
    code, out, err = run_cli("evaluate", collection / "qrels.txt", *_runs(collection), *options)
    assert code == 2 and out == "" and message in err, err


def test_risk_refuses_figure_options_without_a_figure(collection, tmp_path):
    code, out, _ = run_cli("evaluate", collection / "qrels.txt", *_runs(collection),
                           "--per-topic", "--format", "csv", "-o", tmp_path / "t.csv")
    assert code == 0
    code, _, err = run_cli("risk", tmp_path / "t.csv", "--measure", "ndcg@20",
                           "--figure-format", "svg")
    assert code == 2 and "--figure-format shapes the figures of --figure DIR" in err, err


def test_max_label_zero_is_refused_as_an_option(collection):
    with pytest.raises(SystemExit) as stopped, redirect_stderr(io.StringIO()) as captured:
        cli.main(["evaluate", str(collection / "qrels.txt"), *_runs(collection),
                  "--max-label", "0"])
    code, err = stopped.value.code, captured.getvalue()
    assert code == 2 and "--max-label: expected a whole number >= 1, got '0'" in err, err
    assert "judged grade" not in err


def test_a_caption_is_plain_text_escaped(collection):
    code, out, err = run_cli("evaluate", collection / "qrels.txt", *_runs(collection),
                             "--format", "latex", "--baseline", "run1",
                             "--caption", "50% of runs & #1_best")
    assert code == 0, err
    assert r"\caption{50\% of runs \& \#1\_best" in out


def test_the_baseline_alone_is_not_captioned_with_risk_columns(collection):
    code, out, err = run_cli("evaluate", collection / "qrels.txt", _runs(collection)[0],
                             "--format", "latex", "--baseline", "run1")
    assert code == 0, err
    assert "URisk" not in out and "TRisk" not in out


def test_run_names_that_collide_as_text_are_refused():
    qrels, runs = synthetic.make_trec_collection(n_topics=4, docs_per_topic=10, n_runs=2)
    first, second = runs.values()
    with pytest.raises(ValueError, match=r"runs 1 and '1' both have the name '1'"):
        trec.summarise(qrels, {1: first, "1": second}, ["ndcg@10"])
    with pytest.raises(ValueError, match=r"runs 1 and '1' both have the name '1'"):
        trec.evaluate_runs(qrels, {1: first, "1": second}, ["ndcg@10"])
    both = trec.summarise(qrels, {1: first, "2": second}, ["ndcg@10"])
    assert both.table["run"] == ["1", "2"]


def test_a_layout_is_one_of_the_two():
    qrels, runs = synthetic.make_trec_collection(n_topics=4, docs_per_topic=10, n_runs=2)
    with pytest.raises(ValueError, match="layout must be one of .*'wide'.*got 'tall'"):
        trec.summarise(qrels, runs, ["ndcg@10"], layout="tall")


@pytest.mark.parametrize("decimals", [-1, 2.5, True, 18])
def test_latex_decimals_are_a_whole_number_of_places(decimals):
    with pytest.raises(ValueError, match=rf"decimals must be a whole number of decimals from 0 "
                                         rf"to 17, got {decimals!r}"):
        latex.latex_table({"run": ["a"], "mean": [0.5]}, decimals=decimals)


def test_latex_p_values_must_be_numbers():
    table = {"run": ["a", "b"], "mean": [0.4, 0.5]}
    with pytest.raises(ValueError, match=r"marks\['mean'\]: the p-value of row 1 is '0.01'"):
        latex.latex_table(table, marks={"mean": ([None, "0.01"], "a test")})
    with pytest.raises(ValueError, match=r"column 'trisk_p': the p-value of row 0 is 3.0"):
        latex.latex_table({**table, "trisk": [1.0, 2.0], "trisk_p": [3.0, 0.5]})
    marked = latex.latex_table(table, marks={"mean": ([np.nan, np.float32(0.01)], "a test")})
    assert r"\rlap{$^{\ddagger}$}" in marked


def test_risk_ranker_scores_err_on_the_training_scale():
    """A fold whose labels top at 2 is scored with the training labels' l_max (3), as the
    objective measured it, not with its own: the naive ERR with l_max 3 is the score."""
    from lgb_risk.sklearn import RiskRanker
    from tests import naive

    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(40), 8)
    X = rng.normal(size=(qid.size, 3))
    y = np.clip(np.round(X[:, 0] + rng.normal(size=qid.size)), 0, 3).astype(int)
    y[:8] = [3, 0, 0, 1, 0, 0, 0, 0]
    model = RiskRanker("LambdaMART", measure="err@20", score_measure="err@20", n_estimators=5,
                       min_child_samples=5).fit(X, y, qid=qid)
    assert model.max_label_ == 3
    fold = qid >= 20
    y_fold = np.minimum(y[fold], 2)
    assert y_fold.max() == 2
    scores = model.predict(X[fold])
    want = np.mean([naive.err(y_fold[qid[fold] == q], scores[qid[fold] == q], 20, 3)
                    for q in np.unique(qid[fold])])
    assert model.score(X[fold], y_fold, qid=qid[fold]) == pytest.approx(want, abs=1e-12)
    own_scale = np.mean([naive.err(y_fold[qid[fold] == q], scores[qid[fold] == q], 20, 2)
                         for q in np.unique(qid[fold])])
    assert abs(want - own_scale) > 0.01  # the two scales differ on this fold
    with pytest.raises(ValueError, match=r"y holds grade 4, above the highest grade of the "
                                         r"training labels, 3, .*\(max_label=4\)@20"):
        model.score(X[fold], y[fold] + 1, qid=qid[fold])


def test_a_write_that_stops_short_names_the_file_and_the_disk(tmp_path):
    """numpy reports a full disk as "N requested and M written", with no errno: the message
    names the user's file and the free space, and nothing is left behind."""
    from lgb_risk._files.atomic import atomic_write

    (tmp_path / "scores.npy").write_bytes(b"before")

    def short_write(tmp):
        with open(tmp, "wb") as handle:
            handle.write(b"part")
        raise OSError("140552 requested and 38896 written")

    with pytest.raises(OSError) as raised:
        atomic_write(tmp_path / "scores.npy", short_write)
    text = str(raised.value)
    assert text.startswith(f"cannot write {tmp_path / 'scores.npy'}: the write stopped short "
                           "(140552 requested and 38896 written); the disk holding it has ")
    assert "MiB free" in text and "the file there is kept as it was" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.npy"]
    assert (tmp_path / "scores.npy").read_bytes() == b"before"


@pytest.mark.slow
def test_a_unit_whose_scores_were_deleted_is_trained_again(tmp_path):
    """A finished unit whose kept test scores were deleted is trained again on resume, saying
    so; its table and scores come back the same bits, and the report is the same."""
    import io as text_io

    from lgb_risk.experiment.config import load_config
    from lgb_risk.experiment.runner import run_experiment
    from tests.test_experiment import SMALL

    small = SMALL.replace("TFARO = [2]\nGeoRisk = [2]\n", "").replace(
        'learned = ["ridge", "coordinate_ascent"]', 'learned = ["ridge"]')
    (tmp_path / "small.toml").write_text(small)
    config = load_config(tmp_path / "small.toml")
    out = tmp_path / "run"
    run_experiment(config, out, stream=text_io.StringIO())
    scores = sorted((out / "units").rglob("*.scores.npy"))
    assert scores
    lost = scores[0]
    kept_bytes = lost.read_bytes()
    table = lost.with_name(lost.name.replace(".scores.npy", ".csv"))
    table_bytes = table.read_bytes()
    report = (out / "report.md").read_bytes()
    lost.unlink()
    stream = text_io.StringIO()
    run_experiment(config, out, stream=stream)
    assert "1 finished unit(s) lost their kept test scores" in stream.getvalue()
    assert lost.read_bytes() == kept_bytes
    assert table.read_bytes() == table_bytes
    assert (out / "report.md").read_bytes() == report


def test_a_document_listed_twice_in_a_run_in_memory_is_refused():
    """It gave an NDCG of 1.5; now the document, the topic and both rows are named."""
    import pandas as pd

    qrels = {"1": {"a": 1, "b": 0}}
    run = pd.DataFrame({"topic": ["1", "1", "1"], "docno": ["a", "b", "a"],
                        "score": [3.0, 2.0, 1.0]})
    with pytest.raises(ValueError, match=r"document 'a' is listed twice for topic '1' \(rows 0 "
                                         r"and 2 of the run"):
        trec.evaluate_run(qrels, run, ["ndcg@10"])
    with pytest.raises(ValueError, match=r"run 'mine': document 'a' is listed twice"):
        trec.summarise(qrels, {"mine": run}, ["ndcg@10"])
    assert trec.evaluate_run(qrels, run.iloc[:2], ["ndcg@10"])["ndcg@10"].tolist() == [1.0]


def test_distributed_train_names_what_is_wrong_with_its_client_and_labels():
    """Refused before any cluster is touched: an address given for a client, a closed client,
    and a label the objective cannot train on, named at the caller's row (not a rank's)."""
    distributed_module = pytest.importorskip("distributed")
    from lgb_risk import distributed
    from lgb_risk.objectives import LambdaMART

    rng = np.random.default_rng(0)
    group = np.full(10, 6)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 3, 60)
    with pytest.raises(TypeError, match=r"got the address 'tcp://127.0.0.1:1': connect first, "
                                        r"client=distributed.Client\('tcp://127.0.0.1:1'\)"):
        distributed.train({}, X, y, group, client="tcp://127.0.0.1:1")
    client = distributed_module.Client(processes=False, n_workers=1, dashboard_address=":0")
    client.close()
    with pytest.raises(ValueError, match="client is closed"):
        distributed.train({}, X, y, group, client=client)
    y_bad = y.copy()
    y_bad[47] = 40  # no gain for it in LightGBM's default table (labels 0..30)
    with pytest.raises(ValueError, match=r"label 40 at position 47 has no entry in label_gain"):
        distributed.train({}, X, y_bad, group, client="unused", objective=LambdaMART())


@pytest.mark.slow
def test_a_refused_configuration_leaves_the_run_folder_as_it_was(tmp_path):
    """Adding [split] repeats to a finished run is another split: refused, and no folder of
    the new repeats is left behind."""
    import io as text_io

    from lgb_risk.experiment.config import load_config
    from lgb_risk.experiment.runner import run_experiment
    from tests.test_experiment import SMALL

    small = SMALL.replace("TFARO = [2]\nGeoRisk = [2]\nUCRO = [2]\n", "").replace(
        "UCRO = [2]\nTFARO = [2]\nGeoRisk = [2]\n", "").replace(
        'learned = ["ridge", "coordinate_ascent"]', "learned = []")
    (tmp_path / "small.toml").write_text(small)
    out = tmp_path / "run"
    run_experiment(load_config(tmp_path / "small.toml"), out, stream=text_io.StringIO())
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    (tmp_path / "more.toml").write_text(small.replace("folds = 3", "folds = 3\nrepeats = 2"))
    with pytest.raises(ValueError, match="holds a run with another configuration .*differs in "
                                         "split"):
        run_experiment(load_config(tmp_path / "more.toml"), out, stream=text_io.StringIO())
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_the_run_record_says_what_decides_its_bits(monkeypatch):
    """environment.json records llvmlite (numba's compiler) and matplotlib (the figures'
    bytes) as installed, a probe of the C library's exp/log bits, and OPENBLAS_CORETYPE."""
    import math
    from importlib import metadata

    from lgb_risk._runtime.machine import environment, libm_probe

    monkeypatch.setenv("OPENBLAS_CORETYPE", "Prescott")
    record = environment()
    assert record["reproducing"]["llvmlite"] == metadata.version("llvmlite")
    assert record["outputs"]["matplotlib"] == metadata.version("matplotlib")
    assert record["machine"]["environment"]["OPENBLAS_CORETYPE"] == "Prescott"
    assert record["reproducing"]["libm_probe"] == libm_probe()
    # the probe reads the bits: a changed exp changes it
    real_exp = math.exp
    monkeypatch.setattr(math, "exp", lambda x: np.nextafter(real_exp(x), np.inf))
    assert libm_probe() != record["reproducing"]["libm_probe"]


def test_a_baseline_is_checked_against_its_measures_own_range():
    """A DCG baseline above 1 is a DCG, not a percentage; a negative one is refused with
    DCG's range, and NDCG keeps its hint."""
    from lgb_risk.baselines import aligned_baselines

    assert aligned_baselines([3.5, 0.2], 2, measure="dcg@10").ravel().tolist() == [3.5, 0.2]
    with pytest.raises(ValueError, match=r"the baseline DCG@10 of query index 1 is -1.0; "
                                         r"expected a finite DCG in \[0, ∞\]$"):
        aligned_baselines([3.5, -1.0], 2, measure="dcg@10")
    with pytest.raises(ValueError, match=r"in \[0, 1\] \(a percentage instead of a fraction\?\)"):
        aligned_baselines([35.0, 0.2], 2, measure="ndcg@10")
