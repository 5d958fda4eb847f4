"""LaTeX tables: booktabs structure, human headers, the best value of each column in bold (by a
loop here), significant differences from the baseline marked ▲/▼ with the test and correction
named, escaping, and tables that pdflatex compiles in a page of ACM sigconf's geometry without
an overfull box, each where it places itself."""

import io
import shutil
import subprocess

import pandas as pd
import pytest

from lgb_risk.latex import column_header, latex_table
from tests.test_cli import collection, run_cli  # noqa: F401  (the fixture)

UP, DOWN = r"\rlap{$^{\blacktriangle}$}", r"\rlap{$^{\blacktriangledown}$}"

#: A page with ACM sigconf's geometry: two columns of 241 pt, 9-pt Times.
ACM_PAGE = r"""\documentclass[twocolumn]{article}
\usepackage[paperwidth=8.5in,paperheight=11in,textwidth=506pt,textheight=9.25in,columnsep=24pt]{geometry}
\usepackage{mathptmx}
\usepackage{booktabs,amssymb}
\renewcommand\normalsize{\fontsize{9}{10.8}\selectfont}
\begin{document}
\normalsize
\typeout{COLUMN=\the\columnwidth}
%s
Text.
\end{document}
"""


def compile_in_acm_page(tmp_path, tables, name="page"):
    """Compile ``tables`` (LaTeX) in :data:`ACM_PAGE`; fail on an error or an overfull box.
    Skipped where pdflatex or Times (Debian's texlive-fonts-recommended) is missing."""
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (Debian's texlive-latex-base)")
    if subprocess.run(["kpsewhich", "mathptmx.sty"], capture_output=True).returncode != 0:
        pytest.skip("Times for LaTeX is not installed (Debian's texlive-fonts-recommended)")
    (tmp_path / f"{name}.tex").write_text(ACM_PAGE % "\n".join(tables))
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           f"{name}.tex"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    log = (tmp_path / f"{name}.log").read_text(errors="replace")
    assert done.returncode == 0, done.stdout[-2000:]
    assert "COLUMN=241.0pt" in log
    assert "Overfull" not in log, log[log.index("Overfull"):][:600]
    return log


def _body_rows(text):
    body = text.split("\\midrule\n", 1)[1].split("\\bottomrule")[0]
    return [line.removesuffix(" \\\\").split(" & ") for line in body.strip().splitlines()
            if line != "\\midrule"]


def _width(text):
    return float(text.splitlines()[0].split("about ")[1].split(" pt")[0])


def test_structure_bold_best_values_and_the_directional_legend(collection):  # noqa: F811
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
    assert text.splitlines()[1] == "\\begin{table*}"  # 20 columns: across the page
    assert "\\toprule" in text and "\\end{tabular}" in text
    header = text.split("\\toprule\n")[1].split(" \\\\")[0].split(" & ")
    assert header == [column_header(name) for name in frame.columns]
    assert header[:2] == ["Run", "Topics"] and "NDCG@20 TRisk ($\\alpha$=5)" in header
    rows = _body_rows(text)
    assert rows[0][0] == "run1 (baseline)"
    for column, better in (("ndcg@20", max), ("ndcg@20_georisk_a5", max),
                           ("ndcg@20_losses_a5", min)):
        c = list(frame.columns).index(column)
        values = frame[column][frame["run"] != "run1"].dropna()  # the baseline is no rival
        best = {i for i in values.index if values[i] == better(values)}
        assert {i for i, row in enumerate(rows) if row[c].startswith("\\textbf")} == best
    c = list(frame.columns).index("ndcg@20_trisk_a5")
    for i, row in enumerate(rows):
        significant = bool(frame["ndcg@20_trisk_p_holm_a5"][i] < 0.05)
        up, down = row[c].endswith(UP), row[c].endswith(DOWN)
        assert (up or down) == significant, i
        if significant:
            assert up == bool(frame["ndcg@20_trisk_a5"][i] > 0)
    assert "Holm-corrected over the runs compared to the baseline" in text
    assert rows[0][c] == "--"  # the baseline's own TRisk


def test_bold_takes_the_minus_sign_and_headers_are_human():
    text = latex_table({"run": ["a", "b"], "trisk": [-1.5, -2.5], "trisk_p_holm": [0.2, 0.3],
                        "loss_gt_20": [3, 4]})
    assert "\\textbf{\\boldmath $-$1.5000}" in text
    assert "Run & TRisk & $p$ (Holm) & Losses $>$20\\% \\\\" in text


def test_special_characters_are_escaped():
    text = latex_table({"run": ["a_b&c%"], "mean": [0.5]})
    assert "a\\_b\\&c\\%" in text


def test_every_table_fits_where_it_places_itself(collection, tmp_path):  # noqa: F811
    """The paper's table by default, across the page and of one measure, the long layout
    with chosen columns and the wide one with chosen columns, a caption with LaTeX's special
    characters: compiled in an ACM sigconf page, no overfull box; each claims a column only
    when its estimate fits one, and says so when it takes the page instead."""
    qrels, runs = collection
    tables = []
    for options in ([], ["--span", "page"], ["--measures", "ndcg@20"],
                    ["--layout", "long", "--columns", "run", "measure", "alpha", "mean", "trisk",
                     "trisk_p_holm", "--alpha", 5],
                    ["--measures", "ndcg@20", "--columns", "run", "ndcg@20",
                     "ndcg@20_trisk_a5", "--alpha", 5]):
        code, text, err = run_cli("evaluate", qrels, *runs, "--baseline", "run1",
                                  "--correction", "holm", "--format", "latex", "--caption",
                                  "50% & #1", *options)
        assert code == 0, (options, err)
        placed = text.splitlines()[1]
        wide = "page" in options or _width(text) > 241
        assert placed == ("\\begin{table*}" if wide else "\\begin{table}"), options
        assert ("placed as table*" in err) == (wide and "page" not in options), options
        assert "\\caption{50\\% \\& \\#1" in text
        tables.append(text)
    assert tables[0].splitlines()[1] == "\\begin{table}"  # the default takes one column
    compile_in_acm_page(tmp_path, tables)


def test_the_width_estimate_is_never_below_the_printed_width(collection, tmp_path):  # noqa: F811
    """pdflatex measures each tabular: the estimate that places a table is at least that, and
    at most 5% more."""
    qrels, runs = collection
    boxes, estimates = [], []
    for options in ([], ["--span", "page"], ["--layout", "long", "--alpha", 1]):
        code, text, _ = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--format",
                                "latex", *options)
        assert code == 0
        estimates.append(_width(text))
        body = text.split("\\begin{tabular}")[1].split("\\end{tabular}")[0]
        boxes.append("\\setbox2\\hbox{\\begin{tabular}" + body + "\\end{tabular}}"
                     "\\typeout{WIDTH=\\the\\wd2}")
    log = compile_in_acm_page(tmp_path, ["\\setlength{\\tabcolsep}{4pt}", *boxes], "measure")
    widths = [float(line.split("=")[1].removesuffix("pt")) for line in log.splitlines()
              if line.startswith("WIDTH=")]
    assert len(widths) == len(estimates)
    for estimate, width in zip(estimates, widths):
        assert width <= estimate + 0.5 <= width * 1.05 + 0.5, (estimate, width)


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


def test_the_api_table_is_the_command_lines(collection):  # noqa: F811
    """``summarise(...).latex()`` is the command line's table for the same options: one
    implementation, the marks on the means without α = 0 among the summary's α."""
    from lgb_risk import trec
    from lgb_risk.data import run_name

    qrels, runs = collection
    for options, api in (([], {}), (["--span", "page"], {"span": "page"})):
        code, text, _ = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--alpha", 1, 5,
                                "--correction", "holm", "--format", "latex", *options)
        assert code == 0
        summary = trec.summarise(qrels, {run_name(r): r for r in runs}, baseline="run1",
                                 alphas=[1, 5], correction="holm")
        assert 0.0 not in summary.alphas
        assert summary.latex(**api) == text
    assert UP in text or DOWN in text  # the synthetic runs differ from run1 significantly
    html = summary._repr_html_()
    assert html.startswith("<table") and "ndcg@20_trisk_a5" in html


@pytest.mark.shared_data
def test_the_readmes_latex_command_writes_a_paper_table_that_fits_a_column(tmp_path):
    """The README's command on the eight TREC 2012 runs: one column (a run and, per measure,
    mean and TRisk), the caption above with its label, minus signs, the baseline first and
    not bolded, and the marks where the corrected tests are significant, in their direction;
    compiled in an ACM sigconf page without an overfull box."""
    from tests.conftest import shared_file

    qrels = shared_file("trec2012/qrels.adhoc.txt")
    runs = sorted(shared_file("trec2012/runs").glob("*.txt"))
    out = tmp_path / "table.tex"
    code, _, err = run_cli("evaluate", qrels, *runs, "--baseline", "rm_cata-filtered",
                           "--correction", "holm", "--alpha", "5", "--format", "latex",
                           "--label", "tab:risk", "-o", out)
    assert code == 0, err
    text = out.read_text()
    assert text.splitlines()[1] == "\\begin{table}" and _width(text) <= 241
    spec = text.split("\\begin{tabular}{")[1].split("}")[0]
    assert spec == "lrrrr"
    caption, label = text.index("\\caption{"), text.index("\\label{tab:risk}")
    assert caption < label < text.index("\\begin{tabular")
    # the caption one sentence; the legend of marks and bold a note under the table
    caption_text = text[caption:].split("\n")[0]
    assert caption_text.count(". ") == 0 and "Bold" not in caption_text
    note = text[text.index("\\end{tabular}"):text.index("\\end{table}")]
    assert "Bold: the best value" in note and "\\blacktriangle" in note
    assert "amssymb" not in text.splitlines()[0] or "acmart" in text.splitlines()[0]
    assert "$-$" in text and "-0." not in text
    code, csv_text, _ = run_cli("evaluate", qrels, *runs, "--baseline", "rm_cata-filtered",
                                "--correction", "holm", "--alpha", "0", "5", "--format", "csv")
    summary = pd.read_csv(io.StringIO(csv_text)).set_index("run")
    rows = {row[0].replace("\\_", "_"): row for row in _body_rows(text)}
    assert list(rows)[0] == "rm_cata-filtered (baseline)"
    assert not any(cell.startswith("\\textbf") for cell in rows["rm_cata-filtered (baseline)"])
    base_mean = summary.loc["rm_cata-filtered", "ndcg@20"]
    for run, row in list(rows.items())[1:]:
        p_mean = summary.loc[run, "ndcg@20_trisk_p_holm_a0"]
        assert row[1].endswith((UP, DOWN)) == bool(p_mean < 0.05), run
        if p_mean < 0.05:
            assert row[1].endswith(UP) == bool(summary.loc[run, "ndcg@20"] > base_mean)
        p_trisk = summary.loc[run, "ndcg@20_trisk_p_holm_a5"]
        assert row[2].endswith((UP, DOWN)) == bool(p_trisk < 0.05), run
    compile_in_acm_page(tmp_path, [text])
