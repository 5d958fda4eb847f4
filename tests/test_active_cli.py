"""``lgb-risk active``: estimate and simulate from files, and bad input."""

import io
import re
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest

from lgb_risk import cli, metrics
from tests.conftest import pdf_facts


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """A LETOR pool file with document ids, BM25-like scores and a labelled training file."""
    folder = tmp_path_factory.mktemp("active")
    rng = np.random.default_rng(0)
    files = {}
    for name, n_queries in (("pool", 120), ("train", 80)):
        group = rng.integers(3, 25, n_queries)
        labels = rng.choice(3, size=group.sum(), p=[0.6, 0.3, 0.1])
        X = rng.normal(size=(labels.size, 3)) + labels[:, None] * [0.8, 0.3, 0.0]
        qid = np.repeat(np.arange(n_queries) + (1000 if name == "pool" else 1), group)
        lines = [f"{y} qid:{q} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x))
                 + f" #docid = d{i}" for i, (y, q, x) in enumerate(zip(labels, qid, X))]
        path = folder / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n")
        files[name] = (path, labels, group, X, qid)
    path, labels, group, X, qid = files["pool"]
    scores = folder / "scores.txt"
    np.savetxt(scores, X[:, 0])
    run = folder / "run.txt"
    run.write_text("".join(f"{q} Q0 d{i} 1 {s:.6f} r\n" for i, (q, s) in
                           enumerate(zip(qid, X[:, 0])) if i % 5))  # the run lacks every 5th
    return {"folder": folder, "pool": path, "train": files["train"][0], "scores": scores,
            "run": run, "labels": labels, "group": group, "X": X}


def _run(*args):
    out = io.StringIO()
    with redirect_stdout(out):
        status = cli.main(["active", *map(str, args), "--format", "csv"])
    return status, out.getvalue()


def test_estimate_from_files_is_close_to_the_pool_value(pool):
    status, text = _run(pool["pool"], "--scores", pool["scores"], "--relevance-data",
                        pool["train"], "--budget", "30", "1000", "--measure", "err")
    assert status == 0
    frame = pd.read_csv(io.StringIO(text))
    truth = metrics.err(pool["labels"], pool["X"][:, 0], pool["group"], 10, max_label=2).mean()
    partial, everything = frame.iloc[0], frame.iloc[1]
    assert partial["spent"] <= 30 and abs(partial["estimate"] - truth) < 5 * partial[
        "standard_error"]
    assert everything["exhausted"] and everything["estimate"] == pytest.approx(truth, abs=1e-6)


def test_the_measure_and_convention_come_from_the_registry(pool, capsys):
    """--measure takes the registry's grammar and --convention a tool's conventions: with a
    budget that labels the whole pool the estimate is the pool's exact value under them."""
    status, text = _run(pool["pool"], "--scores", pool["scores"], "--budget", "1000",
                        "--measure", "dcg(label_gain=linear)", "--convention", "letor4")
    assert status == 0
    truth = metrics.dcg(pool["labels"], pool["X"][:, 0], pool["group"], 10, convention="letor4",
                        label_gain="linear").mean()
    assert pd.read_csv(io.StringIO(text))["estimate"].iloc[0] == pytest.approx(truth, abs=1e-6)
    status = cli.main(["active", str(pool["pool"]), "--scores", str(pool["scores"]),
                       "--budget", "5", "--measure", "ndcg"])
    assert status != 0 and "IDCG depends on the unknown labels" in capsys.readouterr().err


def test_simulation_reports_every_method_and_budget(pool, tmp_path):
    figure = tmp_path / "error.png"
    status, text = _run(pool["pool"], "--scores", pool["scores"], "--scores2", pool["run"],
                        "--budget", "5", "20", "--simulate", "--repetitions", "50",
                        "--figure", figure)
    assert status == 0 and figure.stat().st_size > 0
    frame = pd.read_csv(io.StringIO(text))
    assert list(frame["method"].unique()) == ["passive", "active", "active uniD", "active uniC"]
    assert sorted(frame["budget"].unique()) == [5, 20]
    held = np.ones(pool["labels"].size, dtype=bool)
    held[::5] = False  # documents the run lacks
    lacking = np.where(held, pool["X"][:, 0], pool["X"][:, 0].min() - 1)
    truth = (metrics.dcg(pool["labels"], pool["X"][:, 0], pool["group"], 10)
             - metrics.dcg(np.where(held, pool["labels"], 0), lacking, pool["group"], 10))
    assert frame["truth"].to_numpy() == pytest.approx(truth.mean(), abs=1e-6)


def test_the_simulation_figure_is_a_paper_figure_in_the_format_its_name_says(pool, tmp_path):
    """--figure FILE.pdf at --figure-size column: a page exactly one ACM column wide with its
    fonts embedded as TrueType; FILE.png: 200 dpi at the page size (7 x 3 in), the default."""
    common = (pool["pool"], "--scores", pool["scores"], "--budget", "5", "20", "--simulate",
              "--repetitions", "20")
    pdf, png = tmp_path / "errors.pdf", tmp_path / "errors.png"
    assert _run(*common, "--figure", pdf, "--figure-size", "column", "--figure-titles")[0] == 0
    width, fonts = pdf_facts(pdf)
    assert width == pytest.approx(3.3 * 72, abs=0.01) and fonts
    assert not any("Type 3" in font for font in fonts), fonts
    assert _run(*common, "--figure", png)[0] == 0
    image_file = pytest.importorskip("PIL.Image")  # matplotlib's own dependency

    with image_file.open(png) as image:
        dpi = image.info["dpi"]
        assert image.size == (1400, 600) and dpi == pytest.approx((200, 200), rel=1e-5)


@pytest.mark.parametrize("figure, extra, message", [
    ("errors.jpg", (), r"--figure .*errors.jpg: the file name should end in .pdf, .svg, .png"),
    ("missing/errors.png", (), r"the folder .*missing does not exist"),
    (None, ("--figure-size", "column"), "--figure-size shapes the figures of --figure FILE, "
                                        "which is not given"),
])
def test_a_figure_that_could_not_be_written_is_refused_before_the_simulation(
        pool, tmp_path, capsys, figure, extra, message):
    """Refused before any work, with nothing written: not after a long simulation."""
    table = tmp_path / "table.csv"
    args = ["active", str(pool["pool"]), "--scores", str(pool["scores"]), "--budget", "5",
            "--simulate", "--repetitions", "20", "-o", str(table), *extra]
    if figure is not None:
        args += ["--figure", str(tmp_path / figure)]
    assert cli.main(args) != 0
    assert re.search(message, capsys.readouterr().err)
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_without_matplotlib_the_figure_is_refused_before_the_simulation(
        pool, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    status = cli.main(["active", str(tmp_path / "no_such_pool.txt"), "--scores", "s.txt",
                       "--budget", "5", "--simulate", "--figure", str(tmp_path / "f.png")])
    assert status != 0 and "--figure needs matplotlib" in capsys.readouterr().err


@pytest.mark.parametrize("content, message", [
    ("1.0\n2.0\n", "has 2 scores but the pool has"),
    ("1.0\nabc\n", r"scores.txt:2: expected one score .* got 'abc'"),
    ("1.0\ninf\n", r"scores.txt:2: expected one score"),
])
def test_bad_score_files_name_the_file_and_line(pool, tmp_path, capsys, content, message):
    bad = tmp_path / "scores.txt"
    bad.write_text(content)
    status = cli.main(["active", str(pool["pool"]), "--scores", str(bad), "--budget", "5"])
    assert status == 2
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.parametrize("measure", ["rbp(p=0.9)", "success"])
def test_rbp_and_success_are_estimated_like_dcg(pool, measure):
    """The measures added with their own parameters work in active evaluation from the
    command line: with a budget covering the pool the estimate is the pool's exact value, with
    a small one it lies within five standard errors of it."""
    status, text = _run(pool["pool"], "--scores", pool["scores"], "--relevance-data",
                        pool["train"], "--budget", "30", "1000", "--measure", measure)
    assert status == 0
    frame = pd.read_csv(io.StringIO(text))
    ranked = [metrics.rank_biased_precision(pool["labels"], pool["X"][:, 0], pool["group"], 10,
                                            persistence=0.9),
              metrics.success(pool["labels"], pool["X"][:, 0], pool["group"], 10)]
    truth = ranked[0 if measure.startswith("rbp") else 1].mean()
    partial, everything = frame.iloc[0], frame.iloc[1]
    assert abs(partial["estimate"] - truth) < 5 * partial["standard_error"]
    assert everything["estimate"] == pytest.approx(truth, abs=1e-6)


def test_bpref_is_estimated_with_sampled_moments(pool):
    """bpref, whose moments come from seeded label draws: the whole pool's estimate is its
    exact value, a small budget's within five standard errors of it."""
    status, text = _run(pool["pool"], "--scores", pool["scores"], "--relevance-data",
                        pool["train"], "--budget", "30", "1000", "--measure", "bpref", "--k",
                        "all")
    assert status == 0, text
    frame = pd.read_csv(io.StringIO(text))
    truth = metrics.bpref(pool["labels"], pool["X"][:, 0], pool["group"]).mean()
    partial, everything = frame.iloc[0], frame.iloc[1]
    assert abs(partial["estimate"] - truth) < 5 * partial["standard_error"]
    assert everything["estimate"] == pytest.approx(truth, abs=1e-6)


def _refused(args, capsys):
    status = cli.main(["active", *map(str, args)])
    assert status == 2
    return capsys.readouterr().err


def test_a_probability_file_row_is_named_by_file_and_line(pool, tmp_path, capsys):
    n = pool["labels"].size
    rows = np.full((n, 3), 1 / 3)
    rows[4] = [0.5, 0.5, 0.5]
    bad = tmp_path / "P.csv"
    np.savetxt(bad, rows, delimiter=",")
    err = _refused([pool["pool"], "--scores", pool["scores"], "--probabilities", bad,
                    "--budget", 5], capsys)
    assert f"{bad}:5: the grade probabilities sum to 1.5, not 1" in err
    bad.write_text("0.5,0.5,0\n0.5,x,0.5\n")
    err = _refused([pool["pool"], "--scores", pool["scores"], "--probabilities", bad,
                    "--budget", 5], capsys)
    assert f"{bad}:2: expected one document's grade probabilities, got '0.5,x,0.5'" in err


def test_a_run_that_matches_nothing_in_the_pool_is_named(pool, tmp_path, capsys):
    run = tmp_path / "elsewhere.txt"
    run.write_text("9 Q0 nowhere 1 2.0 r\n")
    err = _refused([pool["pool"], "--scores", run, "--budget", 5], capsys)
    assert f"{run}: none of the run's documents is in the pool" in err


def test_too_few_grades_are_refused_naming_the_option(pool, capsys):
    err = _refused([pool["pool"], "--scores", pool["scores"], "--grades", 1, "--budget", 5],
                   capsys)
    assert "--grades 1: the pool's labels go up to 2, so the relevance model needs at least 3" \
        in err


def test_a_cost_file_is_named_by_file_and_line(pool, tmp_path, capsys):
    costs = tmp_path / "costs.txt"
    costs.write_text("1\n2\n3\n-1\n")
    err = _refused([pool["pool"], "--scores", pool["scores"], "--doc-cost", costs,
                    "--budget", 5], capsys)
    assert f"{costs}:4: expected one document's labelling cost, finite and > 0, got '-1'" in err
    err = _refused([pool["pool"], "--scores", pool["scores"], "--doc-cost",
                    tmp_path / "absent.txt", "--budget", 5], capsys)
    assert "no such file" in err and "absent.txt" in err and "not found" not in err
