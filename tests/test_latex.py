"""LaTeX tables: booktabs structure, the best value of each column in bold (by a loop here),
significant TRisk marked with the test and correction named, escaping, and a document that
pdflatex compiles where it is installed."""

import io
import shutil
import subprocess

import pandas as pd
import pytest

from lgb_risk.latex import latex_table
from tests.test_cli import collection, run_cli  # noqa: F401  (the fixture)


def _body_rows(text):
    body = text.split("\\midrule\n")[1].split("\\bottomrule")[0]
    return [line.removesuffix(" \\\\").split(" & ") for line in body.strip().splitlines()]


def test_structure_bold_best_values_and_the_dagger_legend(collection):  # noqa: F811
    qrels, runs = collection
    code, csv_text, _ = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20", "--baseline",
                                "run1", "--alpha", 5, "--correction", "holm", "--format", "csv",
                                "--decimals", 17)
    assert code == 0
    frame = pd.read_csv(io.StringIO(csv_text))
    code, text, _ = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20", "--baseline",
                            "run1", "--alpha", 5, "--correction", "holm", "--format", "latex",
                            "--decimals", 4, "--layout", "wide")
    assert code == 0
    assert text.startswith("\\begin{table}") and "\\toprule" in text and "\\end{tabular}" in text
    header = text.split("\\toprule\n")[1].split(" \\\\")[0].split(" & ")
    assert header == [name.replace("_", "\\_") for name in frame.columns]
    rows = _body_rows(text)
    for column, better in (("ndcg@20", max), ("ndcg@20_georisk_a5", max),
                           ("ndcg@20_losses_a5", min)):
        c = list(frame.columns).index(column)
        values = frame[column].dropna()
        best = {i for i in values.index if values[i] == better(values)}
        assert {i for i, row in enumerate(rows) if row[c].startswith("\\textbf")} == best
    c = list(frame.columns).index("ndcg@20_trisk_a5")
    marked = {i for i, row in enumerate(rows) if row[c].endswith("\\rlap{$^{\\dagger}$}")}
    assert marked == set(frame.index[frame["ndcg@20_trisk_p_holm_a5"] < 0.05])
    if marked:
        assert "Holm-corrected over the runs compared to the baseline" in text
    assert rows[0][c] == "--"  # the baseline's own TRisk


def test_special_characters_are_escaped():
    text = latex_table({"run": ["a_b&c%"], "mean": [0.5]})
    assert "a\\_b\\&c\\%" in text


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex (Debian's "
                    "texlive-latex-base and texlive-latex-recommended)")
def test_the_table_compiles(collection, tmp_path):  # noqa: F811
    qrels, runs = collection
    code, text, _ = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--alpha", 1, 5,
                            "--correction", "bh", "--format", "latex", "--decimals", 3,
                            "--layout", "long")
    assert code == 0
    (tmp_path / "t.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n"
                                    "\\usepackage[landscape,margin=1cm]{geometry}\n"
                                    "\\begin{document}\n\\tiny\n" + text + "\\end{document}\n")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 0


def test_ragged_columns_short_marks_and_a_level_outside_0_1_are_refused():
    """A column shorter than the others would drop rows silently; a marks list shorter than
    the rows would mark the wrong ones; level=2 would mark p = 0.9."""
    with pytest.raises(ValueError, match=r"one value per row; got 'run': 3, 'mean': 2"):
        latex_table({"run": ["a", "b", "c"], "mean": [0.1, 0.2]})
    table = {"run": ["a", "b", "c"], "mean": [0.1, 0.2, 0.3]}
    with pytest.raises(ValueError, match=r"marks\['mean'\] has 2 p-values for 3 rows"):
        latex_table(table, marks={"mean": ([0.01, 0.5], "t-test")})
    with pytest.raises(ValueError, match="marks names column 'ndcg'"):
        latex_table(table, marks={"ndcg": ([0.01, 0.5, 0.2], "t-test")})
    with pytest.raises(ValueError, match=r"level must be a significance level in \(0, 1\)"):
        latex_table(table, level=2)
    marked = latex_table(table, marks={"mean": ([0.01, 0.9, None], "t-test")})
    assert marked.count(r"\rlap{$^{\ddagger}$}") == 1
    assert r"0.1000\rlap{$^{\ddagger}$}" in marked


@pytest.mark.shared_data
def test_the_readmes_latex_command_writes_a_paper_table_that_compiles(tmp_path):
    """The README's command on the eight TREC 2012 runs: at most 12 columns (a run and, per
    measure, mean, URisk and TRisk), the caption above with its label, minus signs, and the
    marks where the corrected tests are significant; pdflatex compiles it where installed."""
    from tests.conftest import shared_file

    qrels = shared_file("trec2012/qrels.adhoc.txt")
    runs = sorted(shared_file("trec2012/runs").glob("*.txt"))
    out = tmp_path / "table.tex"
    code, _, err = run_cli("evaluate", qrels, *runs, "--baseline", "rm_cata-filtered",
                           "--correction", "holm", "--alpha", "5", "--format", "latex",
                           "--label", "tab:risk", "-o", out)
    assert code == 0, err
    text = out.read_text()
    spec = text.split("\\begin{tabular}{")[1].split("}")[0]
    assert len(spec) == 7 <= 12
    caption, label = text.index("\\caption{"), text.index("\\label{tab:risk}")
    assert caption < label < text.index("\\begin{tabular")
    assert "$-$" in text and "-0." not in text
    code, csv_text, _ = run_cli("evaluate", qrels, *runs, "--baseline", "rm_cata-filtered",
                                "--correction", "holm", "--alpha", "0", "5", "--format", "csv")
    summary = pd.read_csv(io.StringIO(csv_text)).set_index("run")
    rows = {row[0].replace("\\_", "_"): row for row in _body_rows(text)}
    for run, row in rows.items():
        mean_marked = row[1].endswith("\\rlap{$^{\\ddagger}$}")
        assert mean_marked == bool(summary.loc[run, "ndcg@20_trisk_p_holm_a0"] < 0.05), run
        trisk_marked = row[3].endswith("\\rlap{$^{\\S}$}")
        assert trisk_marked == bool(summary.loc[run, "ndcg@20_trisk_p_holm_a5"] < 0.05), run
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (Debian's texlive-latex-base): structure only")
    (tmp_path / "t.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n"
                                    "\\begin{document}\n\\input{table.tex}\n\\end{document}\n")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
