"""The experiment runner: validation before training, determinism, resume after SIGKILL."""

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from lgb_risk.experiment.config import load_config, validate
from lgb_risk.experiment.layout import Unit, all_units
from lgb_risk.experiment.protocol import fold_queries, make_split
from lgb_risk.experiment.runner import run_experiment
from lgb_risk.experiment.training import make_objective
from lgb_risk.objectives import OBJECTIVES
from tests.conftest import SHARED_DATA, wait_for_a_unit_file

ROOT = Path(__file__).resolve().parents[1]

SMALL = """
name = "small"
[data]
source = "synthetic"
queries = 70
mean_docs = 15
features = 8
[split]
folds = 3
[baselines]
learned = ["ridge", "coordinate_ascent"]
[learners]
LambdaMART = [0]
UCRO = [2]
TFARO = [2]
GeoRisk = [2]
[training]
rounds = 40
early_stopping = 5
[lightgbm]
num_leaves = 7
min_data_in_leaf = 10
"""


def _config_file(tmp_path, text=SMALL, name="small.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _restore_sigint():
    """In the child: Ctrl-C's default action, which Python turns into KeyboardInterrupt. A
    command started in the background by a non-interactive shell inherits SIGINT ignored, and
    Python then leaves it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(*args, cwd):
    return subprocess.Popen([sys.executable, "-m", "lgb_risk.cli", *map(str, args)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            preexec_fn=_restore_sigint)


def test_split_follows_the_protocol():
    config = validate({"split": {"seed": 3, "heldout": 0.2, "folds": 5}})
    ids = list(range(100, 200))
    split = make_split(ids, config)
    assert split == make_split(ids, config)  # seeded
    held = split["heldout_train"] + split["heldout_valid"]
    assert len(held) == 20 and len(split["heldout_train"]) == 13
    main = [q for part in split["parts"] for q in part]
    assert sorted(map(int, held + main)) == ids and len(set(held) & set(main)) == 0
    tests = []
    for fold in range(5):
        train, valid, test = fold_queries(split, fold)
        assert len(train) == 48 and len(valid) == 16 and len(test) == 16
        assert not (set(train) & set(valid)) and not (set(train) & set(test))
        tests += test
    assert sorted(tests) == sorted(main)  # the test parts cover every main query once


@pytest.mark.slow
def test_a_run_resumes_after_sigkill_with_the_same_report(tmp_path):
    config_path = _config_file(tmp_path)
    whole = _cli("run", "--jobs", "1", config_path, "--out", tmp_path / "whole", cwd=tmp_path)
    assert whole.wait(timeout=600) == 0, whole.stderr.read()

    killed = _cli("run", config_path, "--out", tmp_path / "killed", "--jobs", "2",
                  cwd=tmp_path)  # on a local Dask cluster
    units = tmp_path / "killed" / "units"
    wait_for_a_unit_file(units, killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    done_before = len(list(units.glob("*.csv")))
    assert 0 < done_before < 12, "the kill should land mid-way"
    resumed = _cli("run", config_path, "--out", tmp_path / "killed", "--jobs", "2",
                   cwd=tmp_path)
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert f"{12 - done_before} unit(s) to run" in err
    for name in ("report.md", "report.csv", "split.json", "baselines/learned__ndcg_10.csv"):
        assert (tmp_path / "whole" / name).read_bytes() == (tmp_path / "killed" / name
                                                            ).read_bytes(), name
    assert not list(units.glob(".*"))  # no half-written file left behind

    again = _cli("run", "--jobs", "1", config_path, "--out", tmp_path / "whole", cwd=tmp_path)
    _, err = again.communicate(timeout=600)
    assert again.returncode == 0 and "0 unit(s) to run" in err
    report = (tmp_path / "whole" / "report.md").read_text()
    assert "| GeoRisk | 2" in report and "Against the learned baselines" in report


@pytest.mark.parametrize("text, message", [
    ("[data]\nsource = 'letor'\npath = 'nowhere'\n", "does not exist"),
    ("[baselines]\nletor_feature = 99\n", "column 98 is out of range; the data has columns 0..19"),
    ("[baselines]\ncolumn = 20\n", "column 20 is out of range; the data has columns 0..19"),
    ("[baselines]\nfeature = 25\n", "baselines.feature: features are named by column = "
                                     "\\(0-based\\) or letor_feature = .* write letor_feature "
                                     "= 25 \\(or column = 24\\)"),
    ("[baselines]\ncolumn = 1\nletor_feature = 2\n", "not both"),
    ("[learners]\nLambdaMART = [0]\nUCRO = [-1]\n", "learners.UCRO: must be a number >= 0, got -1"),
    ("[learners]\nLambdaMART = [0]\nXRO = [1]\n", "learners.XRO: unknown learner; allowed: "
                                                  "LambdaMART, UCRO"),
    ("[data]\nqueries = 10\n", "the dataset has 10 queries; the split needs at least 13"),
    ("[training]\nround = 5\n", "training.round: unknown key; allowed: rounds, early_stopping"),
    ("colour = 'red'\n", "colour: unknown key; allowed: name, data"),
    ("[lightgbm]\nobjective = 'lambdarank'\n", "lightgbm.objective: set by the runner"),
    ("[lightgbm]\nlambdarank_norm = false\n",
     "lightgbm.lambdarank_norm: an objective parameter.*set it in \\[objective\\]"),
    ("[objective]\nnorm = false\n",
     "objective.norm: unknown key; allowed: sigmoid, lambdarank_truncation_level, "
     "lambdarank_norm, exact_sigmoid, measure, norm_includes_risk, se_update, tr_definition, "
     "delta"),
    ("[objective]\nalpha = 3\n", "objective.alpha: unknown key"),
    ("[objective]\nse_update = 'once'\n[learners]\nLambdaMART = [0]\nTFARO = [1]\n",
     "se_update must be one of .* got 'once' \\(for TFARO\\)"),
    ("[objective]\ndelta = 'exact'\n", "objective.delta: taken by GeoRisk, none of which is"),
    ("[objective]\nlambdarank_norm = 'no'\n",
     "lambdarank_norm must be True or False, got 'no' \\(for LambdaMART\\)"),
    ("[training]\nselection = 'best'\n",
     "training.selection: expected one of 'target', 'risk', 'last' or a measure such as "
     "'ndcg@10', got 'best'"),
    ("[training]\nselection = 'last'\n",
     "training.selection: 'last' keeps every tree.*set early_stopping = 0"),
    ("[training]\nearly_stopping = -1\n",
     "training.early_stopping: must be a whole number >= 0, got -1"),
    ("[split]\nrepeats = 100000\n", "split.repeats: at most 1000 .* got 100000"),
    ("[report]\ncorrection = 'fdr'\n",
     "report.correction: must be one of \\['bh', 'bonferroni', 'holm'\\], got 'fdr'"),
])
def test_bad_configuration_is_refused_before_training(tmp_path, text, message):
    out = tmp_path / "out"
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        run_experiment(load_config(_config_file(tmp_path, text)), out)
    assert not (out / "units").exists() or not any((out / "units").iterdir())


def test_shipped_configurations_are_valid():
    for name in ("demo.toml", "mq2008.toml", "mslr_web10k.toml"):
        config = load_config(ROOT / "experiments" / name)
        assert "LambdaMART" in config.learners
    assert load_config(None) == load_config(ROOT / "experiments" / "demo.toml")
    mq = load_config(ROOT / "experiments" / "mq2008.toml")
    assert Path(mq.data.path) == (SHARED_DATA / "mq2008").resolve()


@pytest.mark.shared_data
@pytest.mark.slow
def test_mq2008_experiment_reproduces_the_committed_results(tmp_path):
    """The full protocol on the real MQ2008 data (784 queries, every learner at α = 1, 5, 10),
    its first repeat (the seed-2016 split; the committed run has five, too long for CI)."""
    import pandas as pd

    from tests.conftest import shared_file

    shared_file("mq2008/Fold1/train.txt")
    from lgb_risk._runtime.machine import environment

    recorded = json.loads((ROOT / "experiments" / "results" / "mq2008_environment.json")
                          .read_text())["reproducing"]
    here = environment()["reproducing"]
    moved = {name: (recorded[name], here.get(name)) for name in recorded
             if name != "lgb_risk" and recorded[name] != here.get(name)}
    if moved:  # LightGBM's trees, the kernels' last bits and libm's differ between these
        pytest.skip(f"the committed MQ2008 results were made with another {', '.join(moved)} "
                    f"({moved}: recorded, here): regenerate them with the commands in "
                    "experiments/results/mq2008.md to compare")
    config = load_config(ROOT / "experiments" / "mq2008.toml")
    assert config.split.repeats == 5
    config = dataclasses.replace(config, split=dataclasses.replace(config.split, repeats=1))
    run_experiment(config, tmp_path / "mq2008", jobs=2, stream=open(os.devnull, "w"))
    got = pd.read_csv(tmp_path / "mq2008" / "report.csv")
    committed = pd.read_csv(ROOT / "experiments" / "results" / "mq2008_one_split.csv")
    assert len(got) == 18 and set(got["learner"]) == {"LambdaMART", "U-CRO", "T-SARO", "T-FARO",
                                                       "T*-FARO", "GeoRisk"}
    # Exactly: the BLAS kernels, numpy's SIMD level and the thread counts must not matter.
    pd.testing.assert_frame_equal(got, committed, check_exact=True)
    assert (tmp_path / "mq2008" / "report.csv").read_bytes() == (
        ROOT / "experiments" / "results" / "mq2008_one_split.csv").read_bytes()


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("small")
    config = load_config(_config_file(tmp))
    out = tmp / "out"
    run_experiment(config, out, stream=open(os.devnull, "w"))
    return config, out


@pytest.mark.slow
def test_report_numbers_match_a_recomputation_from_the_unit_files(small_run):
    """Mean NDCG, wins/losses/large losses against BM25 and the t-test, recomputed by hand."""
    import json

    import numpy as np
    import pandas as pd
    from scipy import stats

    config, out = small_run
    report = pd.read_csv(out / "report.csv")
    split = json.loads((out / "split.json").read_text())
    main = [q for part in split["parts"] for q in part]
    bm25 = pd.read_csv(out / "baselines" / "feature__ndcg_10.csv", dtype={"query_id": str}
                       ).set_index("query_id")["bm25"]
    learned = pd.read_csv(out / "baselines" / "learned__ndcg_10.csv", dtype={"query_id": str}
                          ).set_index("query_id")
    per_learner = {}
    for path in (out / "units").glob("*.csv"):
        fold, learner, alpha = path.stem.split("__")
        frame = pd.read_csv(path, dtype={"query_id": str})
        per_learner.setdefault(learner, []).append(frame)
    for learner, frames in per_learner.items():
        ndcg = pd.concat(frames).set_index("query_id")["NDCG@10"]
        assert sorted(ndcg.index) == sorted(main)  # every main query tested exactly once
        b = bm25.loc[ndcg.index]
        row = report[report["learner"] == OBJECTIVES[learner].paper_name].iloc[0]
        assert row["ndcg"] == pytest.approx(ndcg.mean(), abs=1e-6)
        assert row["bm25_wins"] == sum(ndcg > b) and row["bm25_losses"] == sum(ndcg < b)
        assert row["bm25_loss_gt_20"] == sum((b > 0) & (ndcg < 0.8 * b))
        lm = pd.concat(per_learner["LambdaMART"]).set_index("query_id")["NDCG@10"].loc[
            ndcg.index]
        if learner != "LambdaMART":
            assert row["ndcg_p_vs_lambdamart"] == pytest.approx(
                stats.ttest_rel(ndcg, lm).pvalue, abs=1e-6)
            losses = [np.array([max(0.0, bq - v) for bq, v in zip(b, values)])
                      for values in (ndcg, lm)]
            assert row["bm25_risk_p_vs_lambdamart"] == pytest.approx(
                stats.ttest_rel(*losses).pvalue, abs=1e-6)
            # Against the learned baselines: each query's loss averaged over the baselines.
            macro = [np.array([np.mean([max(0.0, learned.loc[q, name] - v)
                                        for name in learned.columns])
                               for q, v in values.items()]) for values in (ndcg, lm)]
            assert row["learned_risk"] == pytest.approx(macro[0].mean(), abs=1e-6)
            assert row["learned_risk_p_vs_lambdamart"] == pytest.approx(
                stats.ttest_rel(*macro).pvalue, abs=1e-6)
            spread = np.std(macro[0] - macro[1], ddof=1) / np.sqrt(len(macro[0]))
            # Power 0.8 at level 0.05: about (1.96 + 0.84) standard errors.
            assert row["learned_risk_detectable"] == pytest.approx(2.8 * spread, rel=0.02)
            # The queries the observed difference needs, after a correction over the m
            # learner rows (Bonferroni's level): the first n whose noncentral-t power, from
            # scipy here, reaches 0.8.
            d, m = macro[0] - macro[1], len(report) - 1
            sd, mean = np.std(d, ddof=1), np.mean(d)

            def power_at(n, m=m, mean=mean, sd=sd):
                c = stats.t.ppf(1 - 0.05 / m / 2, n - 1)
                shift = abs(mean) * np.sqrt(n) / sd
                return stats.nct.sf(c, n - 1, shift) + stats.nct.sf(c, n - 1, -shift)

            needed = row["learned_risk_needed"]
            # not determined (empty, its interval unbounded) where the difference changes sign
            # in more than 2.5% of the queries' 2,000 bootstrap resamples, redrawn here
            draws = np.random.default_rng(0).integers(0, d.size, (2000, d.size))
            flips = np.mean(np.sign(d[draws].mean(axis=1)) != np.sign(mean))
            assert np.isnan(needed) == (flips > 0.025)
            if np.isnan(needed):
                assert row["learned_risk_needed_high"] == np.inf
            else:
                assert power_at(needed) >= 0.8 and (needed == 2 or power_at(needed - 1) < 0.8)
                assert (row["learned_risk_needed_low"] <= needed
                        <= row["learned_risk_needed_high"])
        x = np.where(ndcg >= b, ndcg - b, 6 * (ndcg - b))  # report α = 5
        assert row["urisk"] == pytest.approx(x.mean(), abs=1e-6)
    assert (out / "report.md").read_text().count("| U-CRO | 2 |") == 2


@pytest.mark.slow
def test_the_report_draws_its_figures_without_touching_the_callers_matplotlib(small_run):
    """A notebook's backend and pyplot's figures stay as they were: the figures are built on
    their own and written as PNG."""
    pytest.importorskip("matplotlib")
    import json

    config, out = small_run
    code = (
        "import json, sys, matplotlib\n"
        "matplotlib.use('svg')\n"
        "from lgb_risk.experiment.config import validate\n"
        "from lgb_risk.experiment.report import write_report\n"
        "write_report(validate(json.loads(sys.argv[1])), sys.argv[2])\n"
        "print(matplotlib.get_backend(), 'matplotlib.pyplot' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(config.to_dict()), str(out)],
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["svg", "False"]
    for name in ("georisk_vs_alpha.png", "tr_tj_per_query.png"):
        assert (out / name).read_bytes().startswith(b"\x89PNG")


@pytest.mark.slow
def test_the_report_writes_its_figures_as_pdf_for_a_paper(small_run, tmp_path):
    """``[report] figure_format = "pdf"``: each figure a PDF page 7 in wide (an ACM figure*)
    with its fonts embedded as TrueType, linked from report.md; the run's units are reused."""
    pytest.importorskip("matplotlib")
    import dataclasses
    import shutil

    from lgb_risk.experiment.report import write_report
    from tests.conftest import pdf_facts

    config, out = small_run
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    for old in copy.glob("*.png"):
        old.unlink()
    write_report(dataclasses.replace(
        config, report=dataclasses.replace(config.report, figure_format="pdf")), copy)
    pdfs = sorted(path.name for path in copy.glob("*.pdf"))
    assert pdfs and "georisk_vs_alpha.pdf" in pdfs and not list(copy.glob("*.png"))
    for name in pdfs:
        width, fonts = pdf_facts(copy / name)
        assert width == pytest.approx(7.0 * 72, abs=0.01) and fonts, name
        assert not any("Type 3" in font for font in fonts), (name, fonts)
    report = (copy / "report.md").read_text()
    assert all(f"[{name}]({name})" in report for name in pdfs)


def test_split_and_baselines_stages_alone(tmp_path):
    from lgb_risk import cli

    config_path = _config_file(tmp_path)
    out = tmp_path / "staged"
    assert cli.main(["split", str(config_path), "--out", str(out)]) == 0
    assert (out / "split.json").exists()
    assert not (out / "baselines" / "feature__ndcg_10.csv").exists()
    assert cli.main(["baselines", str(config_path), "--out", str(out)]) == 0
    learned = (out / "baselines" / "learned__ndcg_10.csv").read_text().splitlines()
    assert learned[0] == "query_id,ridge,coordinate_ascent"
    assert not any((out / "units").iterdir())


def test_objective_parameters_reach_every_learner_that_takes_them():
    config = validate({
        "learners": {"LambdaMART": [0], "UCRO": [1], "TFARO": [1], "GeoRisk": [1]},
        "objective": {"lambdarank_norm": False, "norm_includes_risk": True,
                      "se_update": "iteration", "delta": "exact", "sigmoid": 2.0}})
    from lgb_risk.experiment.measuring import RunMeasures

    stores = ("feature store", "learned store")
    built = {name: make_objective(Unit(0, name, 1.0), config, ["q1"], stores,
                                  RunMeasures(config, 4))
             for name in config.learners}
    assert all(obj.target().label == "NDCG@10" for obj in built.values())
    assert all(obj.lambdarank_norm is False and obj.sigmoid == 2.0 for obj in built.values())
    assert not hasattr(built["LambdaMART"], "norm_includes_risk")
    assert built["UCRO"].norm_includes_risk and built["UCRO"].baseline == "feature store"
    assert built["TFARO"].se_update == "iteration" and not hasattr(built["UCRO"], "se_update")
    assert built["GeoRisk"].delta == "exact" and built["GeoRisk"].baselines == "learned store"
    assert built["GeoRisk"].alpha == 1.0 and built["GeoRisk"].query_ids == ["q1"]


def test_a_run_folder_is_plain_and_only_the_runners_own_temporaries_are_removed(tmp_path):
    with pytest.raises(ValueError, match=r"name: expected a plain folder name"):
        validate({"name": ".."})
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / ".notes.tmp").write_text("my notes")
    config = load_config(_config_file(tmp_path))
    with pytest.raises(ValueError, match=r"a folder with other files and no run in it"):
        run_experiment(config, foreign, stop_after="split")
    assert (foreign / ".notes.tmp").read_text() == "my notes"
    out = tmp_path / "run"
    run_experiment(config, out, stop_after="split")
    (out / ".notes.tmp").write_text("kept")
    (out / ".split.json.abcd1234.lgb_risk.tmp").write_text("cut short")
    run_experiment(config, out, stop_after="split")
    assert (out / ".notes.tmp").read_text() == "kept"
    assert not (out / ".split.json.abcd1234.lgb_risk.tmp").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match=r"is a file; an experiment writes a folder"):
        run_experiment(config, tmp_path / "file", stop_after="split")


@pytest.mark.slow
def test_adding_alphas_or_learners_resumes_with_only_the_new_units(tmp_path):
    small = SMALL.replace("GeoRisk = [2]\n", "")
    out = tmp_path / "run"
    first = _cli("run", "--jobs", "1", _config_file(tmp_path, small), "--out", out, cwd=tmp_path)
    assert first.wait(timeout=600) == 0, first.stderr.read()
    more = small.replace("UCRO = [2]\n", "UCRO = [2, 5]\nTSARO = [5]\n")
    second = _cli("run", "--jobs", "1", _config_file(tmp_path, more, "more.toml"), "--out", out,
                  cwd=tmp_path)
    _, err = second.communicate(timeout=600)
    assert second.returncode == 0, err
    assert "6 unit(s) to run" in err  # UCRO a=5 and TSARO a=5, three folds each
    changed = more.replace("rounds = 40", "rounds = 41")
    third = _cli("run", "--jobs", "1", _config_file(tmp_path, changed, "changed.toml"), "--out",
                 out, cwd=tmp_path)
    _, err = third.communicate(timeout=600)
    assert third.returncode == 2 and "differs in training" in err
    # What the report shows changes without training anything: the report is rewritten.
    before = (out / "report.md").read_text()
    reported = more + "[report]\ncorrection = 'bonferroni'\nalpha = 1\n"
    fourth = _cli("run", "--jobs", "1", _config_file(tmp_path, reported, "reported.toml"),
                  "--out", out, cwd=tmp_path)
    _, err = fourth.communicate(timeout=600)
    assert fourth.returncode == 0, err
    assert "0 unit(s) to run" in err or "unit(s) to run" not in err
    after = (out / "report.md").read_text()
    assert "Holm" in before and "Bonferroni" in after and "α = 1." in after


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (local workers are forked from a server the driver
    started, so they are its grandchildren)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, below = [], [pid]
    while below:
        kids = children.get(below.pop(), [])
        found += kids
        below += kids
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads process parents from /proc")
@pytest.mark.slow
def test_workers_end_when_the_driver_is_killed_and_ctrl_c_says_how_to_resume(tmp_path):
    config_path = _config_file(tmp_path)
    driver = _cli("run", config_path, "--out", tmp_path / "a", "--jobs", "2", cwd=tmp_path)
    units = tmp_path / "a" / "units"
    wait_for_a_unit_file(units, driver)
    workers = [p for p in _descendants(driver.pid)
               if "multiprocessing" in open(f"/proc/{p}/cmdline").read()]
    assert workers, "the run should have worker processes"
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    deadline = time.time() + 20
    while time.time() < deadline and any(os.path.exists(f"/proc/{p}") and
                                         open(f"/proc/{p}/stat").read().split()[2] != "Z"
                                         for p in workers):
        time.sleep(0.2)
    alive = [p for p in workers if os.path.exists(f"/proc/{p}")
             and open(f"/proc/{p}/stat").read().split()[2] != "Z"]
    assert alive == [], "workers outlived the driver"

    interrupted = _cli("run", config_path, "--out", tmp_path / "b", "--jobs", "2", cwd=tmp_path)
    units = tmp_path / "b" / "units"
    wait_for_a_unit_file(units, interrupted)
    interrupted.send_signal(signal.SIGINT)
    _, err = interrupted.communicate(timeout=60)
    assert interrupted.returncode == 130, err
    assert "interrupted (what is done is kept: run the same command again to resume)" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("lightgbm, message", [
    ("num_leaves = -3", r"LightGBM refuses the parameters .* Check failed: \(num_leaves\) > \(1\)"),
    ("min_data_in_leaf = 100000", r"min_data_in_leaf = 100000: the smallest training part has"),
])
def test_lightgbm_parameters_are_judged_before_anything_is_written(tmp_path, lightgbm, message):
    text = SMALL.replace("num_leaves = 7\nmin_data_in_leaf = 10", lightgbm)
    config = load_config(_config_file(tmp_path, text))
    with pytest.raises(ValueError, match=message):
        run_experiment(config, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    fixed = load_config(_config_file(tmp_path, SMALL, "fixed.toml"))
    run_experiment(fixed, tmp_path / "out", stop_after="split")  # the same --out works after


def test_a_truncated_unit_file_is_named(tmp_path):
    config = load_config(_config_file(tmp_path))
    out = tmp_path / "out"
    run_experiment(config, out, stop_after="baselines")
    unit = Unit(0, "LambdaMART", 0.0)
    (out / "units" / unit.filename).write_text("query_id,NDCG@10,best_iteration\nq1,0.5,3\nq2,")
    from lgb_risk.experiment.report import collect_results

    with pytest.raises(ValueError, match=r"fold0__LambdaMART__a0.csv:3: column 'NDCG@10' holds ''"):
        collect_results(config, out)


@pytest.mark.slow
def test_report_names_the_feature_baseline_and_states_the_settings_with_progress(tmp_path):
    import io

    text = SMALL.replace('learned = ["ridge", "coordinate_ascent"]',
                         'learned = ["ridge", "coordinate_ascent"]\nfeature_name = "tfidf"')
    text = text.replace("GeoRisk = [2]\n", "")
    config = load_config(_config_file(tmp_path, text))
    stream = io.StringIO()
    run_experiment(config, tmp_path / "out", stream=stream)
    log = stream.getvalue()
    assert "learned baseline 1/2 ridge trained" in log and "learned baseline 2/2" in log
    assert "to go]" in log  # an estimate once units have finished
    header = (tmp_path / "out" / "report.csv").read_text().splitlines()[0].split(",")
    assert "tfidf_reward" in header and not any(c.startswith("bm25_") for c in header)
    report = (tmp_path / "out" / "report.md").read_text()
    assert ("Training: every objective toward NDCG@10; at most 40 trees, early stopping after "
            "5 rounds without gain in validation NDCG@10") in report
    assert "LightGBM parameters: num_leaves = 7, min_data_in_leaf = 10" in report


@pytest.mark.slow
def test_repeats_average_each_query_over_the_repeats_that_tested_it(tmp_path):
    """[split] repeats = 2: two splits with derived seeds, units keyed by repeat, resumable; the
    report's per-query NDCG is the mean over the repeats that tested the query."""
    from lgb_risk.experiment.layout import RunFolder
    from lgb_risk.experiment.report import collect_results, tested_counts

    text = SMALL.replace("folds = 3", "folds = 3\nrepeats = 2").replace("GeoRisk = [2]\n", "")
    config = load_config(_config_file(tmp_path, text))
    out = tmp_path / "out"
    run_experiment(config, out)
    first, second = RunFolder(out).repeats(config)
    assert first.read_split()["seed"] == config.split.seed
    assert second.read_split()["seed"] != first.read_split()["seed"]
    assert len(list((out / "repeat1" / "units").glob("*.csv"))) == 9
    results = collect_results(config, out)
    counts = tested_counts(config, out)
    unit = Unit(0, "UCRO", 2.0, 1)
    per_query = {}
    for folder in (first, second):
        for u in [Unit(f, "UCRO", 2.0, folder.repeat) for f in range(3)]:
            frame = folder.read_unit(u)
            for q, v in zip(frame["query_id"], frame["NDCG@10"]):
                per_query.setdefault(q, []).append(v)
    for q, values in per_query.items():
        assert results.loc[q, ("UCRO", 2.0)] == pytest.approx(sum(values) / len(values),
                                                              abs=1e-15)
        assert counts[q] == len(values)
    assert str(unit) == "repeat 1 fold 0 UCRO α=2"
    report = (out / "report.md").read_text()
    assert "The protocol repeated 2 times" in report and "Repeats per query:" in report
    again = _cli("run", "--jobs", "1", _config_file(tmp_path, text), "--out", out, cwd=tmp_path)
    _, err = again.communicate(timeout=600)
    assert again.returncode == 0 and "0 unit(s) to run" in err


@pytest.mark.slow
def test_local_dask_cluster_gives_the_same_files_as_one_process(tmp_path):
    """Without --jobs, `lgb-risk run` trains on a LocalCluster of one worker process per usable
    core (two on CI's machines), and writes byte-identical units and report to --jobs 1."""
    pytest.importorskip("distributed")
    from lgb_risk._runtime.machine import usable_cores

    config_path = _config_file(tmp_path)
    logs = {}
    for jobs in ("1", "default"):
        given = ["--jobs", jobs] if jobs != "default" else []
        run = _cli("run", config_path, "--out", tmp_path / f"jobs{jobs}", *given, cwd=tmp_path)
        _, logs[jobs] = run.communicate(timeout=600)
        assert run.returncode == 0, logs[jobs]
    units = len(all_units(load_config(config_path)))
    assert f"{units} unit(s) to run with {min(usable_cores(), units)} job(s)" in logs["default"]
    one, two = tmp_path / "jobs1", tmp_path / "jobsdefault"
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
    for name in files:
        if name.suffix != ".png":
            assert (one / name).read_bytes() == (two / name).read_bytes(), name


@pytest.mark.slow
def test_a_failing_unit_fails_alone_on_a_dask_scheduler(tmp_path, monkeypatch):
    """On the cluster at --scheduler, a unit that raises is reported by name; the other units
    are written, and running again retries only the failed one."""
    distributed = pytest.importorskip("distributed")
    from lgb_risk.experiment import runner

    config = load_config(_config_file(tmp_path))
    real = runner.compute_unit

    def broken(unit, *args):
        if (unit.learner, unit.fold) == ("UCRO", 1):
            raise RuntimeError("disk full")
        return real(unit, *args)

    monkeypatch.setattr(runner, "compute_unit", broken)
    # The workers are threads of this process (so that the patch reaches them): one worker,
    # and the baselines written first, so that no two threads run numba's parallel kernels or
    # LightGBM's OpenMP regions at once (an in-process cluster is a test device; real workers
    # are processes).
    run_experiment(config, tmp_path / "out", stop_after="baselines", stream=open(os.devnull,
                                                                                  "w"))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        with pytest.raises(ValueError, match=r"1 unit\(s\) failed.*fold 1 UCRO α=2: "
                                             r"RuntimeError: disk full"):
            run_experiment(config, tmp_path / "out", scheduler=cluster.scheduler_address,
                           stream=open(os.devnull, "w"))
    units = tmp_path / "out" / "units"
    assert len(list(units.glob("*.csv"))) == 11 and not (units / "fold1__UCRO__a2.csv").exists()
    monkeypatch.setattr(runner, "compute_unit", real)
    import io

    stream = io.StringIO()
    run_experiment(config, tmp_path / "out", stream=stream)
    assert "1 unit(s) to run" in stream.getvalue()


def test_jobs_without_dask_names_the_extra(tmp_path, monkeypatch):
    import builtins

    from lgb_risk.experiment import runner

    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name.startswith("distributed"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    config = load_config(_config_file(tmp_path))
    run_experiment(config, tmp_path / "out", stop_after="baselines")
    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(ValueError, match=r"pip install 'lgb_risk\[dask\]'"):
        runner.run_experiment(config, tmp_path / "out", jobs=2, stream=open(os.devnull, "w"))
    with pytest.raises(ValueError, match=r"pip install 'lgb_risk\[dask\]'"):
        runner.run_experiment(config, tmp_path / "fresh", jobs=2, stream=open(os.devnull, "w"))
    assert not (tmp_path / "fresh").exists()  # refused before anything is written


@pytest.mark.slow
def test_a_cluster_started_in_the_background_is_closed_whatever_fails():
    """The runner loads the data and writes the first stages while its cluster starts in a
    thread: an error there still waits for the start and closes the client and the local
    cluster; work given to ``then`` runs on the started client, whose local workers let idle
    OpenMP threads sleep; an error in starting is raised by the future the runner waits on."""
    pytest.importorskip("distributed")
    import dask

    from lgb_risk._runtime.dask_client import dask_client_in_background

    with pytest.raises(RuntimeError, match="loading the data failed"):
        with dask_client_in_background(1, needed_for="a test") as start:
            raise RuntimeError("loading the data failed")
    client = start.result()
    assert client.status == "closed" and client.cluster.status.name == "closed"

    with dask_client_in_background(1, needed_for="a test") as start:
        policy = start.then(lambda client: client.submit(os.getenv, "OMP_WAIT_POLICY",
                                                         pure=False).result())
        # set up in the server the local workers are forked from, unless the user set it
        assert policy.result() == os.environ.get("OMP_WAIT_POLICY", "PASSIVE")

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        with dask_client_in_background(1, "tcp://127.0.0.1:9", needed_for="a test") as start:
            with pytest.raises(OSError, match="127.0.0.1:9"):
                start.result()


def test_a_worker_reads_the_learned_baselines_written_after_its_first_units(tmp_path):
    """On a cluster, units that take only the feature baseline start before the learned
    baselines exist; a worker that ran one must still give the next GeoRisk unit the learned
    baselines, read from the run folder once written."""
    from lgb_risk.experiment import runner
    from lgb_risk.experiment.layout import RunFolder

    config = load_config(_config_file(tmp_path))
    out = tmp_path / "out"
    run_experiment(config, out, stop_after="baselines", stream=open(os.devnull, "w"))
    folder = RunFolder(out)
    measures = folder.measures(config)
    learned_path = folder.learned_path(measures.target)
    learned_csv = learned_path.read_bytes()
    learned_path.unlink()  # as when the first units start: not written yet
    state = {"out": out, "repeats": {}, "measures": measures}
    _, (feature, learned) = runner._unit_inputs(state, Unit(0, "UCRO", 2))
    assert feature is not None and learned is None
    learned_path.write_bytes(learned_csv)
    _, (_, learned) = runner._unit_inputs(state, Unit(0, "GeoRisk", 2))
    assert learned is not None and learned.names == ["ridge", "coordinate_ascent"]


def _units_config(selection, early_stopping=0, rounds=25):
    config = load_config(None).to_dict()
    config["data"].update(queries=90, mean_docs=15, features=8)
    config["split"]["folds"] = 3
    config["baselines"]["learned"] = ["ridge", "coordinate_ascent"]
    config["training"].update(rounds=rounds, early_stopping=early_stopping, selection=selection)
    config["lightgbm"].update(num_leaves=7, min_data_in_leaf=10)
    return validate(config)


@pytest.mark.parametrize("learner, alpha", [("UCRO", 5.0), ("TFARO", 5.0), ("GeoRisk", 5.0),
                                            ("LambdaMART", 0.0)])
def test_fixed_trees_and_risk_selection_follow_the_papers_protocol(tmp_path, learner, alpha):
    """``selection = "last"`` keeps all ``rounds`` trees; ``"risk"`` keeps the iteration whose
    validation value of the learner's own measure (URisk, TRisk, GeoRisk; NDCG@k for
    LambdaMART) is highest, recomputed here by hand for every iteration of the same model."""
    import numpy as np

    from lgb_risk import metrics
    from lgb_risk.experiment import runner, training
    from lgb_risk.experiment.layout import RunFolder
    from tests.naive_objectives import georisk_row, risk_x, sample_sd

    last = _units_config("last")
    run_experiment(last, tmp_path / "last", stop_after="baselines", stream=open(os.devnull, "w"))
    folder = RunFolder(tmp_path / "last")
    data = runner.load_dataset(last)
    measures = folder.measures(last)
    split, stores = folder.read_split(), folder.read_baselines(measures.target)
    unit = Unit(0, learner, alpha)
    frame, _ = runner.compute_unit(unit, last, data, split, stores, measures)
    assert set(frame["best_iteration"]) == {25}

    chosen = _units_config("risk")
    train_ids, valid_ids, _ = fold_queries(split, 0)
    subsets = runner.Subsets(data)
    booster, _ = training.train_booster(make_objective(unit, chosen, train_ids, stores, measures),
                                        subsets.take(train_ids), subsets.take(valid_ids), last,
                                        None)
    Xv, yv, gv = subsets.take(valid_ids)
    feature, learned = (store.align(valid_ids) for store in stores)
    values = []
    for trees in range(1, 26):
        m = metrics.ndcg(yv, booster.predict(Xv, num_iteration=trees), gv, 10)
        if learner == "UCRO":
            values.append(np.mean(risk_x(m, feature[:, 0], alpha)))
        elif learner == "TFARO":
            x = risk_x(m, feature[:, 0], alpha)
            values.append(np.mean(x) / (sample_sd(x) / np.sqrt(len(x))))
        elif learner == "GeoRisk":
            values.append(georisk_row([list(m)] + learned.T.tolist(), alpha))
        else:
            values.append(m.mean())
    selected, _ = runner.compute_unit(unit, chosen, data, split, stores,
                                      runner.RunMeasures(chosen, measures.max_label))
    assert set(selected["best_iteration"]) == {int(np.argmax(values)) + 1}


@pytest.mark.slow
def test_loss_repeatability_pairs_each_query_across_repeats(tmp_path):
    """The report's r: LambdaMART's per-query loss in repeat 0 against repeat 1, over the
    queries both repeats tested, recomputed from the unit and baseline files."""
    import json

    import numpy as np
    import pandas as pd

    from lgb_risk.experiment.report import loss_repeatability

    config = load_config(_config_file(tmp_path, SMALL.replace("[split]\nfolds = 3",
                                                              "[split]\nfolds = 3\nrepeats = 2")))
    out = tmp_path / "two"
    run_experiment(config, out, stream=open(os.devnull, "w"))
    losses = []
    for folder in (out, out / "repeat1"):
        model = pd.concat(pd.read_csv(p, dtype={"query_id": str})
                          for p in (folder / "units").glob("*LambdaMART*.csv")
                          ).set_index("query_id")["NDCG@10"]
        read = {name: pd.read_csv(folder / "baselines" / f"{name}__ndcg_10.csv",
                                  dtype={"query_id": str}
                                  ).set_index("query_id") for name in ("feature", "learned")}
        losses.append({
            "feature": (read["feature"]["bm25"] - model).clip(lower=0),
            "learned": read["learned"].sub(model, axis=0).clip(lower=0).mean(axis=1)})
        assert sorted(model.index) == sorted(
            q for part in json.loads((folder / "split.json").read_text())["parts"] for q in part)
    got = loss_repeatability(config, out)
    for kind in ("feature", "learned"):
        both = losses[0][kind].index.intersection(losses[1][kind].index)
        x, y = losses[0][kind].loc[both], losses[1][kind].loc[both]
        assert got[kind][2] == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
        assert got[kind][0].size == both.size
    report = (out / "report.md").read_text()
    assert "Do a query's losses repeat across splits?" in report
    assert (out / "loss_repeatability.png").read_bytes().startswith(b"\x89PNG")


def test_data_from_the_command_line_replaces_the_configurations_before_validation(tmp_path,
                                                                                   monkeypatch):
    """``--data`` makes the data LETOR files at that path (resolved against the current folder)
    and is validated as such: a synthetic table it replaces is not judged, the file's
    ``n_features`` still is."""
    monkeypatch.chdir(tmp_path)
    synthetic = _config_file(tmp_path, SMALL.replace("queries = 70", "queries = 0"))
    with pytest.raises(ValueError, match="data.queries"):
        load_config(synthetic)
    config = load_config(synthetic, data="letor_here")
    assert config.data.source == "letor"
    assert config.data.path == str(tmp_path / "letor_here")
    demo = load_config(None, data="x")
    assert demo.data.source == "letor" and demo.data.path == str(tmp_path / "x")
    wide = _config_file(tmp_path, SMALL.replace("features = 8", "features = 8\nn_features = 0"),
                        name="wide.toml")
    with pytest.raises(ValueError, match="data.n_features"):
        load_config(wide, data="letor_here")


def test_the_time_left_leaves_out_what_came_before_the_first_unit(monkeypatch):
    """The first unit's time (data, baselines, compiling) is not a rate: no estimate until two
    units have finished, then the rate since the first one, times the units not finished."""
    import io

    from lgb_risk.experiment import runner

    clock = iter([0.0, 400.0, 410.0, 430.0])  # start, then three lines
    monkeypatch.setattr(runner.time, "perf_counter", lambda: next(clock))
    stream = io.StringIO()
    progress = runner._Progress(total=12, done=0, stream=stream)
    progress.done = 1
    progress.line(2, "first finished after 400 s")  # 9 left, 2 running
    progress.done = 2
    progress.line(2, "second 10 s later")  # 8 left: 10 units unfinished at 10 s each
    progress.done = 3
    progress.line(2, "third 20 s later")  # 15 s a unit since the first, 9 unfinished
    lines = stream.getvalue().splitlines()
    assert "to go" not in lines[0]
    assert "about 01:40 to go" in lines[1] and "about 02:15 to go" in lines[2]


def _holm_by_hand(p):
    """Holm's step-down adjustment by a loop over the sorted p-values (NaN: not tested)."""
    import numpy as np

    out = np.full(len(p), np.nan)
    tested = [i for i in range(len(p)) if not np.isnan(p[i])]
    order = sorted(tested, key=lambda i: p[i])
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * p[i]))
        out[i] = running
    return out


def test_report_corrects_its_p_values_over_the_learner_alpha_grid(small_run):
    import numpy as np
    import pandas as pd

    config, out = small_run
    assert config.report.correction == "holm"  # the default
    report = pd.read_csv(out / "report.csv")
    columns = [c for c in report.columns if c.endswith("_p_vs_lambdamart")] + ["trisk_p"]
    assert len(columns) >= 5
    for column in columns:
        np.testing.assert_allclose(report[f"{column}_holm"], _holm_by_hand(report[column]),
                                   atol=4e-6)  # report.csv keeps 6 decimals
    assert np.isnan(report.loc[0, "ndcg_p_vs_lambdamart_holm"])  # LambdaMART against itself
    text = (out / "report.md").read_text()
    assert "| p vs LambdaMART | Holm |" in text
    assert (f"corrected (Holm) for the comparisons of the learner × α grid: the "
            f"{len(report) - 1} rows compared with plain LambdaMART") in text


def test_report_tex_marks_the_corrected_tests_and_compiles(small_run, tmp_path):
    import shutil
    import subprocess

    import pandas as pd

    config, out = small_run
    report = pd.read_csv(out / "report.csv")
    text = (out / "report.tex").read_text()
    tables = re.split(r"\\begin\{table\*?\}", text)[1:]  # one column or the page, by width
    assert len(tables) == (2 if "georisk" in report else 1)
    first = tables[0]
    header = first.split("\\toprule\n")[1].split(" \\\\")[0].split(" & ")
    assert header == ["learner", "$\\alpha$", "NDCG@10", "Reward", "Risk", "Wins", "Losses",
                      "URisk($\\alpha=5$)", "TRisk"]
    body = first.split("\\midrule\n")[1].split("\\bottomrule")[0].strip().splitlines()
    rows = [line.removesuffix(" \\\\").split(" & ") for line in body]
    assert [r[0] for r in rows] == list(report["learner"])
    for column, p_column, symbol in [("ndcg", "ndcg_p_vs_lambdamart_holm", "\\ddagger"),
                                     ("bm25_risk", "bm25_risk_p_vs_lambdamart_holm", "\\S"),
                                     ("trisk", "trisk_p_holm", "\\P")]:
        mark = "\\rlap{$^{" + symbol + "}$}"
        at = header.index({"ndcg": "NDCG@10", "bm25_risk": "Risk", "trisk": "TRisk"}[column])
        marked = {i for i, r in enumerate(rows) if r[at].endswith(mark)}
        assert marked == set(report.index[report[p_column] < 0.05]), column
    best = report["bm25_risk"].min()
    assert {i for i, r in enumerate(rows) if r[4].startswith("\\textbf")} == set(
        report.index[report["bm25_risk"] == best])
    assert "Holm-corrected over the" in first
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (Debian's texlive-latex-base): structure only")
    (tmp_path / "report.tex").write_text(text)
    (tmp_path / "t.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n"
                                    "\\usepackage[landscape,margin=1cm]{geometry}\n"
                                    "\\begin{document}\n\\input{report.tex}\n\\end{document}\n")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]


def test_on_a_terminal_the_progress_is_one_bar_redrawn_in_place(monkeypatch):
    """The same counts and estimate as the lines, on one bar; notes printed above it."""
    import io

    from lgb_risk.experiment import runner

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("TERM", raising=False)
    clock = iter([0.0, 1.0, 400.0, 410.0, 430.0])
    monkeypatch.setattr(runner.time, "perf_counter", lambda: next(clock))
    stream = Terminal()
    with runner._Progress(total=12, done=0, stream=stream) as progress:
        progress.line(0, "12 unit(s) to run with 2 job(s)", note=True)
        for done, message in ((1, "first"), (2, "second"), (3, "third")):
            progress.done = done
            progress.line(2, f"{message} finished")
    text = stream.getvalue()
    assert "[3/12 done" not in text  # no line per event
    assert "\r" in text  # redrawn in place
    assert "12 unit(s) to run with 2 job(s)\n" in text  # the note, on its own line
    last = text.rstrip("\n").split("\r")[-1]
    assert "units:" in last and "3/12" in last and "2 running, 7 left, about 02:15 to go" in last


def _letor_file(path, documents_per_query, n_queries=40):
    """A LETOR file whose queries hold copies of one document each (features 1-3 and a label
    drawn per query): every ranking of a query has the same NDCG."""
    rng = np.random.default_rng(5)
    lines = []
    for q in range(n_queries):
        label, features = rng.integers(0, 3), rng.uniform(size=3)
        line = f"{label} qid:{q + 1} " + " ".join(f"{i + 1}:{v:.4f}"
                                                  for i, v in enumerate(features))
        lines += [line] * documents_per_query
    path.write_text("\n".join(lines) + "\n")
    return path


RANKING_FREE = """name = "ties"
[data]
source = "letor"
path = "{data}"
n_features = 3
[split]
seed = 1
[baselines]
column = 0
learned = ["ridge"]
[learners]
LambdaMART = [0]
UCRO = [1]
[training]
rounds = 5
early_stopping = 0
selection = "last"
num_threads = 1
[lightgbm]
min_data_in_leaf = 2
[report]
learner = "UCRO"
"""


def test_single_document_queries_are_refused_and_undefined_trisk_gives_a_whole_report(
        tmp_path):
    """Queries of one document leave nothing to rank: refused before any training. Queries
    whose every ranking scores alike make TRisk undefined: the report is written whole, TRisk
    shown as undefined, and no TR/TJ figure is drawn."""
    import pandas as pd

    single = _letor_file(tmp_path / "single.txt", 1)
    with pytest.raises(ValueError, match="every query of the dataset has a single document"):
        run_experiment(load_config(_config_file(tmp_path, RANKING_FREE.format(data=single))),
                       tmp_path / "out1", stream=open(os.devnull, "w"))
    assert not (tmp_path / "out1" / "units").exists()
    pairs = _letor_file(tmp_path / "pairs.txt", 2)
    out = tmp_path / "out2"
    run_experiment(load_config(_config_file(tmp_path, RANKING_FREE.format(data=pairs))), out,
                   stream=open(os.devnull, "w"))
    report = pd.read_csv(out / "report.csv")
    assert report["trisk"].isna().all() and (report["bm25_risk"] == 0).all()
    assert (out / "report.md").exists() and (out / "report.tex").exists()
    assert "TRisk where every query has the same" in (out / "report.md").read_text()
    assert not (out / "tr_tj_per_query.png").exists()


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="sends Ctrl-C to a process group")
@pytest.mark.slow
def test_ctrl_c_to_the_whole_process_group_prints_one_line(tmp_path):
    """A terminal's Ctrl-C reaches the driver and every local worker: the workers leave it to
    the driver, which closes the cluster and says how to resume, without the workers' Dask
    tracebacks."""
    pytest.importorskip("distributed")
    driver = subprocess.Popen(
        [sys.executable, "-m", "lgb_risk.cli", "run", str(_config_file(tmp_path)), "--out",
         str(tmp_path / "run"), "--jobs", "2"], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        start_new_session=True, preexec_fn=_restore_sigint)
    wait_for_a_unit_file(tmp_path / "run" / "units", driver)
    os.killpg(driver.pid, signal.SIGINT)
    _, err = driver.communicate(timeout=120)
    assert driver.returncode == 130, err
    messages = [line for line in err.splitlines()
                if line.strip() and not line.startswith(("[", "  learned", "training the"))]
    assert messages == ["lgb-risk run: interrupted (what is done is kept: run the same command "
                        "again to resume)"], err


def test_the_documented_sample_names_every_declared_key_and_is_a_valid_configuration():
    """Each table's keys are declared once (type, default, check, doc); the sample written from
    them (the module docstring's, which users copy) names every key, parses as TOML and gives
    the defaults."""
    import lgb_risk.experiment.config as config_module
    from lgb_risk._inputs.parameters import declared

    sample = config_module.sample()
    indented = "\n".join(("    " + line).rstrip() for line in sample.splitlines())
    assert indented in config_module.__doc__
    for table, record in config_module._TABLES.items():
        assert f"[{table}]" in sample, table
        for key in declared(record):
            assert re.search(rf"^(# )?{key.name} = ", sample, re.MULTILINE), key.name
            assert key.doc.split()[0] in sample, f"{table}.{key.name}"
    parsed = validate(config_module.tomllib.loads(sample))
    defaults = config_module.ExperimentConfig()
    for table in config_module._TABLES:
        assert getattr(parsed, table) == getattr(defaults, table), table
    assert parsed.learners == {"LambdaMART": (0.0,), "UCRO": (1.0, 5.0)}


def _naive_err(labels, scores, group, k, max_label):
    """ERR@k per query by its definition, written for the test (tests/naive.py's loop)."""
    from tests import naive
    from tests.conftest import split_queries

    return [naive.err(y, s, k, max_label)
            for y, s in split_queries(list(labels), list(scores), list(group))]


@pytest.mark.slow
def test_every_reported_measure_and_one_added_later_without_training_again(tmp_path):
    """``measures = ["ndcg@10"]`` then ``["ndcg@10", "err@5"]`` on the same folder: the second
    run trains nothing, gives every unit ERR@5 from its kept test scores (checked against ERR's
    definition on the unit's own test queries), writes the ERR report beside the unchanged
    NDCG one, and the ERR baselines of the feature baseline equal a loop over BM25's ranking."""
    import pandas as pd

    from lgb_risk.experiment.layout import RunFolder
    from lgb_risk.experiment.protocol import Subsets, load_dataset

    one = _config_file(tmp_path, SMALL.replace("[split]", "[evaluation]\nmeasures = "
                                               "['ndcg@10']\n[split]"), "one.toml")
    out = tmp_path / "out"
    run_experiment(load_config(one), out, stream=open(os.devnull, "w"))
    units = sorted((out / "units").glob("*.csv"))
    before = {p.name: (out / "units" / p.name.replace(".csv", ".scores.npy")).read_bytes()
              for p in units}
    first_report = (out / "report.csv").read_bytes()

    two_path = _config_file(tmp_path, SMALL.replace("[split]", "[evaluation]\nmeasures = "
                                                    "['ndcg@10', 'err@5']\n[split]"), "two.toml")
    two = load_config(two_path)
    log = subprocess.run([sys.executable, "-m", "lgb_risk", "run", "--jobs", "1", str(two_path),
                          "--out", str(out)], capture_output=True, text=True, check=True).stderr
    assert "started" not in log and "training the learned" not in log
    assert "computing the added measure(s) for 12 finished unit(s)" in log
    assert (out / "report.csv").read_bytes() == first_report

    data = load_dataset(two)
    top = int(data.y.max())
    label = f"ERR(max_label={top})@5"
    subsets = Subsets(data)
    folder = RunFolder(out)
    split = folder.read_split()
    for path in units:
        assert (out / "units" / path.name.replace(".csv", ".scores.npy")).read_bytes() \
            == before[path.name]
        unit = Unit(int(path.stem.split("__")[0][4:]), path.stem.split("__")[1],
                    float(path.stem.split("__a")[1]))
        frame = folder.read_unit(unit)
        test_ids = fold_queries(split, unit.fold)[2]
        _, y, g = subsets.take(test_ids)
        want = _naive_err(y.tolist(), folder.read_unit_scores(unit).tolist(), g.tolist(), 5, top)
        np.testing.assert_allclose(frame[label], want, rtol=0, atol=1e-12)
        assert list(frame.columns) == ["query_id", "NDCG@10", label, "best_iteration"]

    slug = f"err_max_label_{top}_5"
    report = pd.read_csv(out / f"report__{slug}.csv")
    ucro = pd.concat(folder.read_unit(Unit(f, "UCRO", 2.0)) for f in range(3))
    assert report.loc[report["learner"] == "U-CRO", "err"].iloc[0] == pytest.approx(
        ucro[label].mean(), abs=1e-6)
    main = folder.main_queries()
    X, y, g = subsets.take(main)
    bm25 = np.asarray(X[:, two.baselines.column].todense()).ravel() if hasattr(
        X, "todense") else X[:, two.baselines.column]
    stored = pd.read_csv(out / "baselines" / f"feature__{slug}.csv", dtype={"query_id": str})
    np.testing.assert_allclose(stored["bm25"], _naive_err(y.tolist(), bm25.tolist(), g.tolist(),
                                                          5, top), rtol=0, atol=1e-12)
    text = (out / "report.md").read_text()
    assert f"## {label}: Against the feature baseline (bm25)" in text
    assert f"ERR(max\\_label={top})@5 over" in (out / "report.tex").read_text()


@pytest.mark.slow
def test_an_err_target_trains_every_learner_toward_err_and_selects_on_it(tmp_path):
    """``[objective] measure = "err@5"``: each unit's objective targets ERR@5 (written out with
    the data's highest label) against baselines in ERR@5, early stopping on validation ERR@5;
    the LambdaMART unit's model differs from the NDCG run's."""
    from lgb_risk.experiment import training
    from lgb_risk.experiment.layout import RunFolder

    text = SMALL.replace("[split]", "[evaluation]\nmeasures = ['ndcg@10', 'err@5']\n[split]")
    err_run = load_config(_config_file(tmp_path, text + "[objective]\nmeasure = 'err@5'\n",
                                       "err.toml"))
    run_experiment(err_run, tmp_path / "err", stream=open(os.devnull, "w"))
    ndcg_run = load_config(_config_file(tmp_path, text, "ndcg.toml"))
    run_experiment(ndcg_run, tmp_path / "ndcg", stream=open(os.devnull, "w"))
    folder = RunFolder(tmp_path / "err")
    measures = folder.measures(err_run)
    top = measures.max_label
    assert measures.target.label == f"ERR(max_label={top})@5"
    stores = folder.read_baselines(measures.target)
    assert stores[0].label == measures.target.label
    split = folder.read_split()
    objective = training.make_objective(Unit(0, "GeoRisk", 2.0), err_run,
                                        fold_queries(split, 0)[0], stores, measures)
    assert objective.target().label == measures.target.label
    feval = training.selection_feval(Unit(0, "UCRO", 2.0), err_run, None, stores, measures)
    assert feval.name.startswith(f"ERR(max_label={top})@5")
    assert f"every objective toward ERR(max_label={top})@5" in (
        tmp_path / "err" / "report.md").read_text()
    lm = Unit(0, "LambdaMART", 0.0)
    assert not np.array_equal(folder.read_unit_scores(lm),
                              RunFolder(tmp_path / "ndcg").read_unit_scores(lm))


@pytest.mark.parametrize("text, message", [
    ("[evaluation]\nk = 5\nmeasures = ['ndcg@5']\n", "give measures or k"),
    ("[evaluation]\nmeasures = ['ndcg@5', 'NDCG@5']\n", "listed twice"),
    ("[evaluation]\nmeasures = []\n", "non-empty list of measures"),
    ("[evaluation]\nmeasures = ['ndgc@5']\n", "unknown measure 'ndgc@5'"),
    ("[evaluation]\nmeasures = ['ap@10']\n", "target must be ndcg@k or err@k; 'ap@10'"),
    ("[objective]\nmeasure = 'ap@10'\n", "target is ndcg@k or err@k"),
])
def test_a_measure_the_run_cannot_use_is_refused_before_training(text, message):
    import tomllib

    with pytest.raises(ValueError, match=message):
        validate(tomllib.loads(text))


def test_a_run_recorded_with_the_former_letor_feature_key_resumes(tmp_path):
    """A run folder written before features were named by column records LETOR's number as
    ``feature``: the same baseline (column = number - 1) continues it; another is refused."""
    from lgb_risk.experiment.layout import RunFolder

    config = validate({"baselines": {"letor_feature": 3}})
    assert config.baselines.column == 2
    recorded = config.to_dict()
    del recorded["baselines"]["column"]
    for number, refused in ((3, False), (4, True)):
        recorded["baselines"]["feature"] = number
        (tmp_path / "config.json").write_text(json.dumps(recorded))
        if refused:
            with pytest.raises(ValueError, match="differs in baselines"):
                RunFolder(tmp_path).check_config(config)
        else:
            RunFolder(tmp_path).check_config(config)
