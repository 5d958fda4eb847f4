"""The manual (docs/) builds without a single warning, every registered measure, objective,
configuration key, risk measure and public module has its place in it, its worked example
quotes the committed results, and the command-line examples run."""

import glob
import html
import pkgutil
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

#: Every test here starts processes, clusters or tools: outside the quick loop.
pytestmark = pytest.mark.slow

pytest.importorskip("sphinx")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The manual built as HTML with every warning an error."""
    out = tmp_path_factory.mktemp("manual")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b",
                           "html", str(ROOT / "docs"), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _text(page: Path) -> str:
    """A page's text, tags removed, entities read and Sphinx's typographic quotes plain."""
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))
    return text.translate(str.maketrans("‘’“”", "''\"\""))


def _plain(doc: str) -> str:
    """A docstring fragment as its page shows it: roles and literal quotes removed."""
    return re.sub(r":\w+:`~?([^`]+)`", r"\1", doc).replace("``", "").replace("\n", " ")


def test_every_public_module_has_its_api_page(built):
    import lgb_risk

    public = [m.name for m in pkgutil.walk_packages(lgb_risk.__path__, "lgb_risk.")
              if not any(part.startswith("_") for part in m.name.split("."))]
    assert len(public) > 25
    for name in public:
        assert (built / "api" / f"{name}.html").exists(), name
    objectives = _text(built / "api" / "lgb_risk.objectives.html")
    for documented in ("GeoRisk", "risk_state", "make_objective"):
        assert documented in objectives
    for page, documented in (("lgb_risk.significance", "paired_randomisation_test"),
                             ("lgb_risk.baselines", "aligned_baselines"),
                             ("lgb_risk.sklearn", "RiskRanker"),
                             ("lgb_risk.risk", "RISK_MEASURES"),
                             ("lgb_risk.experiment.config", "ExperimentConfig"),
                             ("lgb_risk.active.moments", "target_measure")):
        assert documented in _text(built / "api" / f"{page}.html"), (page, documented)


def test_every_public_name_of_a_module_is_in_its_all():
    """An API page documents its module's ``__all__`` only: every function and class a public
    module defines without an underscore is in the module's ``__all__`` (``bpref`` and
    ``success`` were once left off ``lgb_risk.metrics``', and no page showed them), and every
    name of an ``__all__`` is there (a public module takes a private one's ``__all__`` whole:
    ``lgb_risk.metrics`` the binary-relevance measures')."""
    import importlib
    import inspect

    import lgb_risk

    left_off, absent = [], []
    for found in pkgutil.walk_packages(lgb_risk.__path__, "lgb_risk."):
        if any(part.startswith("_") for part in found.name.split(".")):
            continue
        module = importlib.import_module(found.name)
        exported = set(getattr(module, "__all__", ()))
        left_off += [f"{found.name}.{name}" for name, value in vars(module).items()
                     if not name.startswith("_") and name not in exported
                     and (inspect.isfunction(value) or inspect.isclass(value))
                     and value.__module__ == found.name]
        absent += [f"{found.name}.{name}" for name in exported if not hasattr(module, name)]
    assert not left_off, left_off
    assert not absent, absent
    from lgb_risk import metrics
    from lgb_risk._measuring import binary_measures

    assert set(binary_measures.__all__) <= set(metrics.__all__)


def test_every_measure_convention_objective_key_and_risk_measure_is_on_a_page(built):
    from lgb_risk import measures, objectives, risk
    from lgb_risk._inputs.parameters import declared
    from lgb_risk.conventions import CONVENTIONS
    from lgb_risk.experiment import config

    catalogue = _text(built / "measures.html")
    for name, measure in measures.MEASURES.items():
        assert f"{name} — {measure.label or name}" in catalogue, name
        for parameter in measure.parameters:
            assert _plain(parameter.doc) in catalogue
    for alias in measures.ALIASES:
        assert alias in catalogue
    for name, convention in CONVENTIONS.items():
        assert convention.source in catalogue, name
    page = _text(built / "objectives.html")
    for name, cls in objectives.OBJECTIVES.items():
        assert name in page
        for parameter in declared(cls):
            assert parameter.name in page, (name, parameter.name)
    configuration = _text(built / "configuration.html")
    for table, record in config._TABLES.items():
        assert f"[{table}]" in configuration
        for key in declared(record):
            assert key.name in configuration and _plain(key.doc) in configuration, key.name
    for key in config.objective_parameter_table():
        assert key in configuration, key
    risk_page = _text(built / "risk.html")
    for measure in risk.RISK_MEASURES.values():
        assert f"\n{measure.label}\n" in risk_page or f"{measure.label}¶" in risk_page, \
            measure.label
    assert "T*Risk" in risk_page


def test_the_worked_example_quotes_the_committed_trec_2012_results(built):
    """Every number the risk page gives for ql_cata and rm_catb-filtered is summary.csv's."""
    import pandas as pd

    summary = pd.read_csv(ROOT / "experiments/results/trec2012/summary.csv").set_index("run")
    page = (ROOT / "docs" / "risk.rst").read_text(encoding="utf-8").replace("−", "-")
    quoted = {("ql_cata", "err@20"): 0.1018, ("rm_catb-filtered", "err@20"): 0.1909,
              ("rm_cata-filtered", "err@20"): 0.1947,
              ("ql_cata", "err@20_urisk_a0"): -0.0929, ("ql_cata", "err@20_trisk_a0"): -2.3359,
              ("ql_cata", "err@20_trisk_p_a0"): 0.0236, ("ql_cata", "err@20_urisk_a5"): -0.7173,
              ("ql_cata", "err@20_trisk_a5"): -3.5522, ("ql_cata", "err@20_trisk_p_a5"): 0.0009,
              ("ql_cata", "err@20_trisk_p_holm_a5"): 0.0051,
              ("rm_catb-filtered", "err@20_trisk_a0"): -0.4029,
              ("rm_catb-filtered", "err@20_trisk_p_a0"): 0.6888,
              ("rm_catb-filtered", "err@20_trisk_a5"): -2.1607,
              ("rm_catb-filtered", "err@20_trisk_p_a5"): 0.0356,
              ("rm_catb-filtered", "err@20_trisk_p_holm_a5"): 0.0860,
              ("rm_catb-filtered", "err@20_georisk_a5"): 0.2624,
              ("ql_cata", "err@20_georisk_a5"): 0.1728,
              ("rm_cata-filtered", "err@20_georisk_a5"): 0.2665,
              ("ql_cata", "err@20_wins_a0"): 11, ("ql_cata", "err@20_losses_a0"): 30,
              ("ql_cata", "err@20_loss_gt_20_a0"): 28,
              ("rm_catb-filtered", "err@20_wins_a0"): 19,
              ("rm_catb-filtered", "err@20_losses_a0"): 18}
    for (run, column), value in quoted.items():
        assert summary.loc[run, column] == pytest.approx(value, abs=5e-5), (run, column)
        shown = f"{value:.4f}" if isinstance(value, float) else str(value)
        assert shown in page, (run, column, shown)


def test_the_command_line_examples_run(tmp_path):
    """evaluate's, risk's and power's examples run, in order, on lgb-risk demo's collection;
    the others (which need a configuration or a pool) parse."""
    from lgb_risk.cli import EXAMPLES, build_parser

    def run(command: str) -> None:
        words = [w for word in shlex.split(command)[1:]
                 for w in (sorted(glob.glob(str(tmp_path / word))) and
                           [str(Path(p).relative_to(tmp_path)) for p in
                            sorted(glob.glob(str(tmp_path / word)))] if "*" in word else [word])]
        done = subprocess.run([sys.executable, "-m", "lgb_risk", *words], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (command, done.stderr[-2000:])

    run("lgb-risk demo --out demo")
    for command in ("evaluate", "risk", "power"):
        for _, example in EXAMPLES[command]:
            run(example)
    assert (tmp_path / "table.tex").exists() and list((tmp_path / "figures").glob("*.pdf"))
    parser = build_parser()
    for command in ("run", "split", "baselines", "active", "demo"):
        for _, example in EXAMPLES[command]:
            parser.parse_args(shlex.split(example)[1:])


def test_the_guides_examples_run(tmp_path):
    """The user guide's examples run (Sphinx's doctest builder: every one passes). The
    notebooks are not run again here: the HTML build runs them (see the gallery's test)."""
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "doctest", "-D", "nb_execution_mode=off", str(ROOT / "docs"),
                           str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    report = (tmp_path / "output.txt").read_text()
    assert "0 failures in tests" in report and " passed and 0 failed" in report


def test_the_cli_reference_is_the_parsers(built):
    """The command-line reference holds each command's help as the parser prints it."""
    from lgb_risk.cli import build_parser

    reference = _text(built / "cli.html")
    commands = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices)
    for command, parser in commands.choices.items():
        first = parser.format_help().splitlines()[0]
        assert first in reference, command


#: The gallery's notebooks, and what each must have shown when it ran.
GALLERY = {"trec_runs": ("4 runs, 40 topics", 2), "risk_ranker": ("Reward", 1),
           "own_objective": ("mean loss to BM25", 0)}


def test_the_gallery_ran_at_this_build_and_shows_its_output(built):
    """Each example notebook ran at this build (myst-nb executes it; an error fails the
    build): its page holds its printed output and its figures as images."""
    for name, (printed, images) in GALLERY.items():
        page = built / "examples" / f"{name}.html"
        text = page.read_text(encoding="utf-8")
        outputs = re.findall(r'<div class="cell_output[^"]*">(.*?)</div>\s*</div>', text, re.S)
        assert outputs, name
        assert printed in _text(page) and "Traceback" not in text, name
        assert len(re.findall(r'<img [^>]*src="\.\./_images/', text)) >= images, name
    assert "examples/index.html" in (built / "index.html").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/examples" in readme


def _manual_pages(built: Path) -> list:
    return [page for page in sorted(built.rglob("*.html"))
            if page.relative_to(built).parts[0] not in ("_modules", "_static")
            and page.name not in ("genindex.html", "search.html", "py-modindex.html")]


def test_no_inline_markup_is_broken_on_the_built_pages(built):
    """Single backquotes (reStructuredText's title references, rendered as italics with
    typographic quotes: a ``pip install ".[dask]"`` that fails when pasted) and stray
    backquotes: none left in a page's prose; no typographic quote inside code."""
    for page in _manual_pages(built):
        text = page.read_text(encoding="utf-8")
        assert "<cite>" not in text, (page.name, text[text.find("<cite>"):][:120])
        prose = re.sub(r"<(pre|code|script|style|textarea)[^>]*>.*?</\1>", "", text, flags=re.S)
        prose = html.unescape(re.sub(r"<[^>]+>", "", prose))
        assert "`" not in prose, (page.name, prose[max(0, prose.find("`") - 80):][:160])
        for code in re.findall(r"<(?:code|pre)[^>]*>(.*?)</(?:code|pre)>", text, re.S):
            shown = html.unescape(re.sub(r"<[^>]+>", "", code))
            assert not set("‘’“”") & set(shown), (page.name, shown[:120])


#: The longest line of code the manual's column shows whole (docs/_static/lgb_risk.css).
CODE_COLUMN = 98


def test_the_code_blocks_fit_their_column(built):
    """Every code block of the manual (its pages, the API's examples, the notebooks' cells),
    at most CODE_COLUMN characters a line; a notebook's printed output may scroll."""
    for page in _manual_pages(built):
        text = re.sub(r'<div class="cell_output.*?</div>\s*</div>', "",
                      page.read_text(encoding="utf-8"), flags=re.S)
        for block in re.findall(r"<pre[^>]*>(.*?)</pre>", text, re.S):
            for line in html.unescape(re.sub(r"<[^>]+>", "", block)).splitlines():
                assert len(line) <= CODE_COLUMN, (page.name, line)
    css = (ROOT / "docs" / "_static" / "lgb_risk.css").read_text()
    assert "width: 52em" in css
