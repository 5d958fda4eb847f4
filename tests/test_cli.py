"""The lgb-risk command line, end to end (in-process through main())."""

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lgb_risk import cli
from lgb_risk.experiment import synthetic
from tests.conftest import SHARED_DATA, shared_file
from tests.test_risk import TABLE4, TABLE5

GEO_TABLE3 = str(Path(__file__).parent / "data" / "geo_table3.csv")


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_risk_command_reproduces_geo_tables_4_and_5():
    code, out, _ = run_cli("risk", GEO_TABLE3, "--alpha", 0, 1, 5, 10, "--baseline", "s1",
                           "--format", "csv")
    assert code == 0
    assert out.startswith("run,alpha,mean,zrisk,georisk")
    table = pd.read_csv(io.StringIO(out))
    for alpha, expected in TABLE5.items():
        rows = table[table["alpha"] == alpha].set_index("run")
        for system, (z, geo) in expected.items():
            assert round(rows.loc[system, "zrisk"], 3) == pytest.approx(z, abs=1e-9)
            assert round(rows.loc[system, "georisk"], 3) == pytest.approx(geo, abs=1e-9)
    at_zero = table[table["alpha"] == 0].set_index("run")
    for system, (_, zrisk_total) in TABLE4.items():
        assert round(at_zero.loc[system, "zrisk_baseline"], 4) == pytest.approx(zrisk_total)
    assert pd.isna(at_zero.loc["s1", "urisk"])  # the baseline's own row has no baseline columns


def test_risk_command_json_and_output_file(tmp_path):
    target = tmp_path / "risk.json"
    code, out, _ = run_cli("risk", GEO_TABLE3, "--alpha", 1, "--format", "json", "-o", target)
    assert code == 0 and out == ""
    records = json.loads(target.read_text())
    assert len(records) == 8 and records[0]["run"] == "s1"
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left behind


@pytest.mark.parametrize("text, message", [
    ("system,topic,value\ns1,t1,0.1\n", "header must be 'system,topic,score'"),
    ("system,topic,score\ns1,t1,0.1\ns1,t1,0.2\ns2,t1,0.3\n", ":3: system 's1' has a second"),
    ("system,topic,score\ns1,t1,0.1\ns1,t2,abc\n",
     ":3: system 's1', topic 't2': the score must be a number"),
    ("system,topic,score\ns1,t1,0.1\ns1,t2,\n", ":3: system 's1', topic 't2': the score is empty"),
    ("system,topic,score\ns1,t1,0.1\ns2,t1,-0.2\n", ":3: system 's2', topic 't1': the score -0.2 "
                                                     "is negative"),
    ("system,topic,score\n", "no score row after the header"),
    ("", "not a CSV table"),
    ("system,topic,score\ns1,t1,0.1\ns1,t2,0.2\ns2,t1,0.3\n", "no score for system 's2' on "
                                                              "query 't2'"),
])
def test_risk_command_refuses_bad_tables(tmp_path, text, message):
    path = tmp_path / "scores.csv"
    path.write_text(text)
    code, out, err = run_cli("risk", path)
    assert code == 2 and out == ""
    assert message in err


def test_risk_command_refuses_negative_alpha():
    with pytest.raises(SystemExit):
        with redirect_stderr(io.StringIO()):
            cli.main(["risk", GEO_TABLE3, "--alpha", "-1"])


@pytest.fixture()
def collection(tmp_path):
    return synthetic.write_trec_collection(tmp_path, n_topics=12, docs_per_topic=30, n_runs=3)


def test_evaluate_per_topic_csv(collection):
    qrels, runs = collection
    code, out, _ = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20", "err@20",
                           "--per-topic", "--format", "csv")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "run,topic,ndcg@20,err@20"
    first = lines[1].split(",")
    assert first[0] == "run1" and len(first[2].split(".")[1]) == 17  # every bit, for `risk`
    assert {line.split(",")[0] for line in lines[1:]} == {"run1", "run2", "run3"}


def test_evaluate_decimals_17_keeps_every_double(collection):
    from lgb_risk import data, trec

    qrels, runs = collection
    code, out, _ = run_cli("evaluate", qrels, runs[0], "--measures", "ndcg@20", "--per-topic",
                           "--format", "csv", "--decimals", "17")
    assert code == 0
    printed = pd.read_csv(io.StringIO(out), dtype={"topic": str}).set_index("topic")["ndcg@20"]
    direct = trec.evaluate_run(data.read_qrels(qrels), data.read_run(runs[0]), ["ndcg@20"])
    assert printed.to_dict() == direct["ndcg@20"].to_dict()
    err = io.StringIO()
    with pytest.raises(SystemExit) as stop, redirect_stderr(err):
        cli.main(["evaluate", str(qrels), str(runs[0]), "--decimals", "18"])
    assert stop.value.code == 2 and "a whole number of digits in [0, 17]" in err.getvalue()


def test_evaluate_summary_has_means_and_risk_columns(collection):
    qrels, runs = collection
    code, out, _ = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20", "--baseline",
                           "run1", "--alpha", 1, 5, "--format", "csv")
    assert code == 0
    table = pd.read_csv(io.StringIO(out))
    assert table["run"].tolist() == ["run1", "run2", "run3"]
    for column in ["ndcg@20", "ndcg@20_zrisk_a1", "ndcg@20_georisk_a5", "ndcg@20_urisk_a1",
                   "ndcg@20_trisk_a5", "ndcg@20_trisk_p_a1", "ndcg@20_tstar_risk_a1"]:
        assert column in table.columns
    code, per_topic, _ = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20",
                                 "--per-topic", "--format", "csv")
    means = pd.read_csv(io.StringIO(per_topic)).groupby("run")["ndcg@20"].mean()
    assert table.set_index("run")["ndcg@20"].to_numpy() == pytest.approx(means.to_numpy(),
                                                                         abs=1e-5)


def test_evaluate_errors_are_reported(tmp_path, collection):
    qrels, runs = collection
    code, _, err = run_cli("evaluate", qrels, runs[0], "--measures", "ndgc@10")
    assert code == 2 and "unknown measure 'ndgc@10'" in err
    code, _, err = run_cli("evaluate", qrels, *runs, "--baseline", "nosuchrun")
    assert code == 2 and "neither one of the runs" in err
    code, _, err = run_cli("evaluate", tmp_path / "absent", runs[0])
    assert code == 2 and "no such file" in err


@pytest.mark.shared_data
def test_evaluate_trec2012_indri_casp(tmp_path):
    qrels = shared_file("trec2012/qrels.adhoc.txt")
    runs = sorted((SHARED_DATA / "trec2012" / "runs").glob("*.txt"))
    code, out, _ = run_cli("evaluate", qrels, *runs, "--measures", "err@20", "--baseline",
                           "rm_cata-filtered", "--format", "csv")
    assert code == 0
    table = pd.read_csv(io.StringIO(out)).set_index("run")
    assert round(table.loc["rm_cata-filtered", "err@20"], 4) == 0.1947
    assert (table["topics"] == 50).all()


def test_demo_command_prints_a_table():
    code, out, err = run_cli("demo")
    header = out.splitlines()[0].split()
    assert code == 0 and "run1" in out and {"measure", "alpha", "georisk"} <= set(header)


def test_evaluate_jobs_and_missing_topics(tmp_path, collection):
    """--jobs 2 prints what --jobs 1 prints; a run lacking a topic is noted, counted in the
    missing column, and scored 0 with --missing-topics zero."""
    qrels, runs = collection
    one = run_cli("evaluate", qrels, *runs, "--format", "csv", "--decimals", "17")
    two = run_cli("evaluate", qrels, *runs, "--format", "csv", "--decimals", "17", "--jobs", 2)
    assert one[0] == two[0] == 0 and one[1] == two[1]
    lines = Path(runs[0]).read_text().splitlines(keepends=True)
    first_topic = lines[0].split()[0]
    short = tmp_path / "short.txt"
    short.write_text("".join(line for line in lines if line.split()[0] != first_topic))
    code, out, err = run_cli("evaluate", qrels, short, "--format", "csv")
    table = pd.read_csv(io.StringIO(out))
    assert code == 0 and table["missing"].tolist() == [1]
    assert f"has no ranking for 1 topic(s) the qrels score ({first_topic})" in err
    assert "left out of its means" in err
    code, out, err = run_cli("evaluate", qrels, short, "--format", "csv", "--per-topic",
                             "--missing-topics", "zero")
    per_topic = pd.read_csv(io.StringIO(out), dtype={"topic": str}).set_index("topic")
    assert code == 0 and per_topic.loc[first_topic, "ndcg@20"] == 0.0
    assert "scored 0 and counted" in err


def test_every_option_has_help_and_version_is_printed():
    parser = cli.build_parser()
    commands = parser._subparsers._group_actions[0].choices
    undocumented = [(name, action.dest) for name, sub in commands.items()
                    for action in sub._actions if action.help is None]
    assert undocumented == []
    import subprocess
    import sys

    for command in ([sys.executable, "-m", "lgb_risk", "--version"],):
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        assert done.stdout.strip().startswith("lgb-risk ")


def test_evaluate_layouts(collection):
    """The terminal table is long (one row per run, measure and alpha); csv is wide by default;
    both hold the same numbers."""
    qrels, runs = collection
    code, table, _ = run_cli("evaluate", qrels, *runs, "--alpha", 1, 5, "--baseline", "run1")
    # a wide terminal's width, with the wins, losses, ties and large losses against the baseline
    assert code == 0 and max(len(line) for line in table.splitlines()) < 170
    _, long_csv, _ = run_cli("evaluate", qrels, *runs, "--alpha", 1, 5, "--baseline", "run1",
                             "--layout", "long", "--format", "csv", "--decimals", 17)
    _, wide_csv, _ = run_cli("evaluate", qrels, *runs, "--alpha", 1, 5, "--baseline", "run1",
                             "--format", "csv", "--decimals", 17)
    long = pd.read_csv(io.StringIO(long_csv), dtype={"alpha": str})
    wide = pd.read_csv(io.StringIO(wide_csv)).set_index("run")
    assert len(long) == len(runs) * 2 * 2  # runs x measures x alphas
    for row in long.itertuples():
        assert row.zrisk == wide.loc[row.run, f"{row.measure}_zrisk_a{row.alpha}"]
        assert row.mean == wide.loc[row.run, row.measure]


def test_per_topic_output_is_accepted_by_risk(tmp_path, collection):
    """evaluate --per-topic --format csv feeds lgb-risk risk, at full precision when asked."""
    qrels, runs = collection
    per_topic = tmp_path / "per_topic.csv"
    assert run_cli("evaluate", qrels, *runs, "--per-topic", "--format", "csv", "--decimals", 17,
                   "-o", per_topic)[0] == 0
    code, out, err = run_cli("risk", per_topic, "--format", "csv", "--alpha", 1)
    assert code == 2 and "choose one with --measure" in err
    code, out, _ = run_cli("risk", per_topic, "--measure", "err@20", "--format", "csv",
                           "--alpha", 1, "--decimals", 17)
    from_risk = pd.read_csv(io.StringIO(out)).set_index("run")
    _, wide_csv, _ = run_cli("evaluate", qrels, *runs, "--alpha", 1, "--format", "csv",
                             "--decimals", 17)
    wide = pd.read_csv(io.StringIO(wide_csv)).set_index("run")
    np.testing.assert_array_equal(from_risk["georisk"],
                                  wide.loc[from_risk.index, "err@20_georisk_a1"])


def test_evaluate_convention_and_gain_override(collection):
    qrels, runs = collection
    code, out, _ = run_cli("evaluate", qrels, runs[0], "--convention", "trec_eval", "--gain",
                           "exponential", "--per-topic", "--format", "csv", "--decimals", 17,
                           "--measures", "ndcg@10", "ap")
    printed = pd.read_csv(io.StringIO(out), dtype={"topic": str}).set_index("topic")
    from lgb_risk import data, trec

    direct = trec.evaluate_run(data.read_qrels(qrels), data.read_run(runs[0]), ["ndcg@10", "ap"],
                               convention="trec_eval", label_gain="exponential")
    assert code == 0 and list(printed.index) == list(direct.index)
    np.testing.assert_array_equal(printed[["ndcg@10", "ap"]].to_numpy(), direct.to_numpy())


def test_evaluate_ue_measures_skip_risk_where_values_can_be_negative(collection):
    qrels, runs = collection
    code, out, err = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@10", "dcg_ue2@10",
                             "ap_ue1@10", "--format", "csv")
    table = pd.read_csv(io.StringIO(out))
    assert code == 0 and "no risk measures for dcg_ue2@10" in err
    assert "ap_ue1@10_zrisk_a1" in table and not any(c.startswith("dcg_ue2@10_")
                                                      for c in table.columns)


def test_evaluate_chosen_columns(collection):
    qrels, runs = collection
    code, out, _ = run_cli("evaluate", qrels, *runs, "--alpha", 5, "--columns", "run", "measure",
                           "mean", "georisk")
    assert code == 0 and out.splitlines()[0].split() == ["run", "measure", "mean", "georisk"]
    code, _, err = run_cli("evaluate", qrels, *runs, "--columns", "run", "geo")
    assert code == 2 and "--columns: no column 'geo'" in err


def test_evaluate_corrects_the_trisk_p_values_against_the_baseline(collection):
    """--correction adds trisk_p_METHOD: the TRisk p-values of the runs compared to the
    baseline, corrected per measure and alpha; refused without a baseline."""
    from lgb_risk.significance import corrected_p_values

    qrels, runs = collection
    code, out, _ = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20", "--baseline",
                           "run1", "--alpha", 1, 5, "--correction", "holm", "--format", "csv",
                           "--decimals", 17)
    assert code == 0
    table = pd.read_csv(io.StringIO(out)).set_index("run")
    for alpha in (1, 5):
        others = table.drop(index="run1")
        np.testing.assert_allclose(others[f"ndcg@20_trisk_p_holm_a{alpha}"], corrected_p_values(
            others[f"ndcg@20_trisk_p_a{alpha}"].to_numpy(), "holm"), rtol=1e-12)
    code, _, err = run_cli("evaluate", qrels, *runs, "--correction", "bh")
    assert code != 0 and "--correction corrects the TRisk p-values against --baseline" in err


def test_options_that_would_be_ignored_are_refused(tmp_path):
    """An option that cannot apply is refused, naming what it needs, not ignored."""
    long_table = tmp_path / "scores.csv"
    long_table.write_text("system,topic,score\na,1,0.5\nb,1,0.4\na,2,0.3\nb,2,0.1\n")
    code, _, err = run_cli("risk", long_table, "--measure", "ndcg@20")
    assert code != 0 and "measure 'ndcg@20' was asked for, but the table has one score" in err
    code, _, err = run_cli("run", "--jobs", 2, "--scheduler", "tcp://127.0.0.1:1")
    assert code != 0 and "--jobs starts a local cluster and --scheduler uses another" in err
    code, _, err = run_cli("active", tmp_path / "pool.txt", "--scores", tmp_path / "s.txt",
                           "--budget", 5, "--figure", tmp_path / "f.png")
    assert code != 0 and "--figure draws the simulation's errors: it needs --simulate" in err


def test_help_texts_are_plain_text():
    """No reStructuredText markup in what the terminal shows."""
    for command in ([], ["evaluate"], ["risk"], ["run"], ["split"], ["active"]):
        parser = cli.build_parser()
        try:
            with redirect_stdout(io.StringIO()) as out:
                parser.parse_args([*command, "--help"])
        except SystemExit:
            pass
        assert "``" not in out.getvalue() and ":func:" not in out.getvalue(), command


def test_inputs_from_a_pipe_and_from_standard_input(collection, tmp_path, monkeypatch):
    """A run given as a named pipe (what <(...) is) or as '-' (standard input) is read as the
    file it holds, named as given; a bad line in standard input is named so."""
    import os
    import threading

    qrels, runs = collection
    _, want, _ = run_cli("evaluate", qrels, runs[0], "--format", "csv", "--decimals", 17)
    fifo = tmp_path / "run1"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(Path(runs[0]).read_bytes()))
    writer.start()
    code, got, _ = run_cli("evaluate", qrels, fifo, "--format", "csv", "--decimals", 17)
    writer.join()
    assert code == 0 and got == want  # the same name (run1) and the same numbers
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(Path(runs[0]).read_bytes())))
    code, got, _ = run_cli("evaluate", qrels, "-", "--format", "csv", "--decimals", 17)
    assert code == 0 and got.splitlines()[1:] == [
        "stdin" + line.removeprefix("run1") for line in want.splitlines()[1:]]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"1 Q0 a 1 x r\n")))
    code, _, err = run_cli("evaluate", qrels, "-")
    assert code != 0 and "<standard input>:1: SCORE must be a finite number, got 'x'" in err


def test_figure_and_run_arguments_that_cannot_work_are_refused_before_any_work(collection,
                                                                             tmp_path):
    """A file or an uncreatable folder as --figure, only the baseline to draw, --per-topic with
    options it would ignore, a folder given as a run: each refused with status 2 and a message
    naming it, nothing written."""
    pytest.importorskip("matplotlib")
    qrels, runs = collection
    a_file = tmp_path / "a_file"
    a_file.write_text("keep me")
    cases = [
        ((*runs, "--baseline", "run1", "--figure", a_file), "exists and is a file, not a folder"),
        ((*runs, "--baseline", "run1", "--figure", a_file / "sub"),
         "is a file, so no folder can be made under it"),
        ((runs[0], "--baseline", "run1", "--figure", tmp_path / "figs"),
         "the only run given: give at least one other run"),
        ((*runs, "--baseline", "run1", "--per-topic", "--figure", tmp_path / "f"),
         "--figure would be ignored"),
        ((*runs, "--baseline", "run1", "--per-topic", "--correction", "holm"),
         "--correction would be ignored"),
        ((runs[0], tmp_path), "is a folder, where a file was expected"),
    ]
    for arguments, message in cases:
        code, out, err = run_cli("evaluate", qrels, *arguments)
        assert code == 2 and message in err and out == "", (arguments, err)
    assert a_file.read_text() == "keep me"
    assert not (tmp_path / "figs").exists() or not any((tmp_path / "figs").iterdir())


@pytest.mark.slow
def test_run_names_that_are_not_file_names_get_figures_all_written(tmp_path):
    """A run named bm25/rm3 (a per-topic table's column) writes its TR/TJ figure as
    tr_tj_bm25_rm3_*.png beside the others, instead of failing halfway."""
    pytest.importorskip("matplotlib")
    table = tmp_path / "scores.csv"
    values = {"bm25": lambda t: 0.1 + t / 20, "bm25/rm3": lambda t: 0.3 - t / 40,
              "dlm": lambda t: 0.2 + (t % 3) / 10}
    table.write_text("system,topic,score\n" + "".join(
        f"{run},{t},{value(t):.3f}\n" for run, value in values.items() for t in range(1, 9)))
    code, _, err = run_cli("risk", table, "--baseline", "bm25", "--figure", tmp_path / "figs")
    assert code == 0, err
    written = sorted(p.name for p in (tmp_path / "figs").iterdir())
    assert "tr_tj_bm25_rm3_score.png" in written and "tr_tj_dlm_score.png" in written
    assert len(written) == 5


def test_run_help_lists_the_objective_keys_from_their_declarations(capsys):
    """lgb-risk run --help reads the [objective] keys, their defaults and docs from the
    objectives' declarations (no second list to keep in step)."""
    from lgb_risk._inputs.parameters import parameter_of
    from lgb_risk.experiment.config import objective_parameter_table
    from lgb_risk.objectives import OBJECTIVES

    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    text = capsys.readouterr().out
    for key, learners in objective_parameter_table().items():
        declaration = parameter_of(OBJECTIVES[learners[0]], key)
        assert f"  {key} = {declaration.default!r}  ({declaration.kind}; " in text, key
        words = [w for w in declaration.doc.split() if w.isalpha() and len(w) > 3]
        assert all(w in text for w in words), key  # its doc, in plain text


@pytest.mark.slow
def test_figures_as_pdf_or_svg_the_same_bytes_every_time(collection, tmp_path):
    """--figure-format pdf (or svg) writes the figures in that format, with no date or
    software version in them: a second run writes the same bytes."""
    pytest.importorskip("matplotlib")
    qrels, runs = collection
    for figure_format, magic in (("pdf", b"%PDF"), ("svg", b"<?xml")):
        written = []
        for attempt in ("a", "b"):
            folder = tmp_path / f"{figure_format}_{attempt}"
            code, _, err = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--figure",
                                   folder, "--figure-format", figure_format)
            assert code == 0, err
            written.append({p.name: p.read_bytes() for p in folder.iterdir()})
        assert written[0] == written[1] and written[0]
        assert all(name.endswith(f".{figure_format}") and content.startswith(magic)
                   for name, content in written[0].items())


def test_the_test_of_the_p_values_is_chosen_on_the_command_line(collection):
    """--test randomisation: trisk_p holds the paired randomisation test of URisk on the
    per-topic values the command prints, and the LaTeX legend names that test."""
    from lgb_risk import risk

    qrels, runs = collection
    common = ["evaluate", qrels, *runs, "--measures", "ndcg@20", "--baseline", "run1",
              "--alpha", "5", "--test", "randomisation"]
    code, out, err = run_cli(*common, "--format", "csv", "--decimals", "12")
    assert code == 0, err
    summary = pd.read_csv(io.StringIO(out)).set_index("run")
    code, out, _ = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20", "--per-topic",
                           "--format", "csv", "--decimals", "17")
    per_topic = pd.read_csv(io.StringIO(out), dtype={"topic": str}).pivot(
        index="topic", columns="run", values="ndcg@20")
    for run in ("run2", "run3"):
        want = risk.urisk_randomisation_p(per_topic[run].to_numpy(),
                                          per_topic["run1"].to_numpy(), 5)
        assert summary.loc[run, "ndcg@20_trisk_p_a5"] == pytest.approx(want, abs=1e-12)
    code, text, _ = run_cli(*common, "--format", "latex")
    assert code == 0 and "randomisation test" in text


def test_run_jobs_default_to_the_cores_and_without_dask_to_one(monkeypatch):
    """`lgb-risk run` without --jobs: one job per usable core where Dask's `distributed` is
    installed; one where it is not, saying which extra would use the other cores."""
    import importlib.util
    import io

    from lgb_risk._runtime import machine
    from lgb_risk.cli._run import default_jobs

    monkeypatch.setattr(machine, "usable_cores", lambda: 3)
    found = importlib.util.find_spec
    stream = io.StringIO()
    if found("distributed") is not None:
        assert default_jobs(stream) == 3 and stream.getvalue() == ""
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "distributed" else found(name, *rest))
    assert default_jobs(stream) == 1
    assert "trains 3 at a time" in stream.getvalue()
    assert "pip install 'lgb_risk[dask]'" in stream.getvalue()
    monkeypatch.setattr(machine, "usable_cores", lambda: 1)
    assert default_jobs(io.StringIO()) == 1


@pytest.mark.slow
def test_run_says_it_compiles_the_kernels_once_and_ends_with_a_short_summary(tmp_path):
    """With numba's cache empty the first training compiles for seconds: one line says so;
    the next process loads the cache and says nothing. The run ends with a narrow table and
    the report's path, not the whole report."""
    import os
    import subprocess
    import sys

    from tests.test_experiment import SMALL

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    code = "from lgb_risk.cli._run import compile_kernels_saying_so as c; c()"
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("compiling the training kernels on first use") == 1
    again = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0 and again.stderr == ""
    (tmp_path / "small.toml").write_text(SMALL.replace("GeoRisk = [2]\n", ""))
    code, out, _ = run_cli("run", "--jobs", 1, tmp_path / "small.toml", "--out", tmp_path / "r")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["learner", "α", "NDCG@10", "Risk", "vs", "bm25", "wins/losses"]
    assert lines[-1] == f"wrote {tmp_path / 'r' / 'report.md'}"
    assert max(len(line) for line in lines[:-1]) <= 80
    assert len(lines) == 1 + 3 + 1  # a row per learner and α (LambdaMART, U-CRO, T-FARO)


def test_risk_and_evaluate_name_runs_alike_count_in_whole_numbers_and_agree_to_1e9(collection,
                                                                                  tmp_path):
    """``evaluate --per-topic`` keeps every bit by default, so that ``risk`` on it gives
    ``evaluate``'s TRisk to 1e-9; both call the run column ``run`` and print counts (and α) as
    whole numbers."""
    qrels, runs = collection
    per_topic = tmp_path / "per_topic.csv"
    assert run_cli("evaluate", qrels, *runs, "--per-topic", "--format", "csv",
                   "-o", per_topic)[0] == 0
    code, out, _ = run_cli("risk", per_topic, "--measure", "ndcg@20", "--baseline", "run1",
                           "--alpha", 5, "--format", "csv")
    assert code == 0
    from_risk = pd.read_csv(io.StringIO(out)).set_index("run")
    code, out, _ = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--alpha", 5,
                           "--format", "csv")
    direct = pd.read_csv(io.StringIO(out)).set_index("run")
    np.testing.assert_allclose(from_risk["trisk"].dropna(),
                               direct.loc[from_risk.index, "ndcg@20_trisk_a5"].dropna(),
                               rtol=0, atol=1e-9 + 1e-6)  # printed with 6 decimals
    code, text, _ = run_cli("risk", per_topic, "--measure", "ndcg@20", "--baseline", "run1",
                            "--alpha", 5, "--format", "csv", "--decimals", 12)
    exact = pd.read_csv(io.StringIO(text)).set_index("run")
    code, text, _ = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--alpha", 5,
                            "--format", "csv", "--decimals", 12)
    both = pd.read_csv(io.StringIO(text)).set_index("run")
    np.testing.assert_allclose(exact["trisk"].dropna(),
                               both.loc[exact.index, "ndcg@20_trisk_a5"].dropna(), rtol=0,
                               atol=1e-9)
    code, table, _ = run_cli("risk", per_topic, "--measure", "ndcg@20", "--baseline", "run1",
                             "--alpha", 5)
    blocks = [block.splitlines() for block in table.split("\n\n")]  # within 100 columns
    assert all(len(line) <= 100 for block in blocks for line in block)
    for header, *rows in blocks:
        assert header.split()[:2] == ["run", "alpha"]  # each block names its rows
        assert all(row.split()[1] == "5" for row in rows)  # α = 5, not 5.000000
    header, *rows = next(block for block in blocks if "wins" in block[0])
    wins = header.split().index("wins")
    assert all("." not in row.split()[wins] for row in rows[1:])  # 17, not 17.000000


def test_the_terminal_table_fits_100_columns_and_says_tiny_p_values_are_tiny(tmp_path):
    """The summary, 19 columns wide, prints in blocks of at most 100 characters a line, each
    led by the columns that name its rows; a p-value below the decimals shown is ``< 1e-6``,
    not ``0.000000``."""
    qrels, runs = synthetic.write_trec_collection(tmp_path)  # 40 topics
    code, out, err = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--alpha", 5,
                             "--correction", "holm")
    assert code == 0, err
    blocks = [block.splitlines() for block in out.split("\n\n")]
    assert len(blocks) >= 2 and all(len(line) <= 100 for b in blocks for line in b)
    assert all(block[0].split()[:3] == ["run", "measure", "alpha"] for block in blocks)
    code, csv_out, _ = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--alpha", 5,
                               "--correction", "holm", "--format", "csv", "--decimals", 17)
    table = pd.read_csv(io.StringIO(csv_out))
    p_values = table["ndcg@20_trisk_p_a5"].dropna()
    printed = [row.split() for block in blocks for row in block[1:]
               if "trisk_p" in block[0].split()]
    assert p_values.min() < 5e-7  # the synthetic runs differ clearly from run1
    assert any("<" in row for row in printed) and not any("0.000000" in row for row in printed)
