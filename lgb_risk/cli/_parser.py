"""The ``lgb-risk`` argument parser: every command's options, help and examples, and the
argument types that check a value where it is given. Building it imports nothing heavy (the
commands' modules are imported when one runs), so ``--help`` and ``evaluate`` start fast."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable

from lgb_risk import measures as registry
from lgb_risk import trec
from lgb_risk._inputs.parameters import Bounds, from_text
from lgb_risk.cli._output import FORMATS
from lgb_risk.conventions import CONVENTIONS
from lgb_risk.risk import DEFAULT_ALPHAS
from lgb_risk.significance import CORRECTIONS

#: The command line's description (``lgb-risk --help``).
DESCRIPTION = ("The lgb-risk command line: risk-sensitive evaluation of TREC runs, topic-set "
               "sizes, active evaluation, and the papers' risk-sensitive LambdaMART experiments. "
               "lgb-risk COMMAND --help gives a command's options and examples.")

#: Set to 1 to see the traceback of an unexpected error (as ``--debug``).
DEBUG_VARIABLE = "LGB_RISK_DEBUG"


#: The argument types, each reading a number its check accepts and saying what it expected.
_FRACTION = from_text(Bounds(minimum=0, maximum=1, above=True, below=True, what="a fraction"))
_NON_NEGATIVE = from_text(Bounds(minimum=0))
_POSITIVE = from_text(Bounds(minimum=0, above=True))
_POSITIVE_INT = from_text(Bounds(integer=True, minimum=1))
_CUTOFF = from_text(Bounds(integer=True, minimum=1), also={"all": None})
_DECIMALS = from_text(Bounds(integer=True, minimum=0, maximum=17, what="a whole number of digits"))


def _add_output_options(parser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (aligned text, default), csv, json (a list of records) or "
                        "latex (a booktabs table: the best value of each column in bold, "
                        "significant TRisk marked, a legend naming the test and correction)")
    parser.add_argument("--decimals", type=_DECIMALS,
                        help="digits after the decimal point (default 6, or 3 for latex; 17 "
                        "keeps every double)")
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")


def _add_figure_look_options(parser) -> None:
    """How ``--figure`` looks: its size on a paper's page and whether it has a title."""
    parser.add_argument("--figure-titles", action="store_true",
                        help="with --figure: a title on each figure (by default none: a "
                        "paper's caption says what a figure shows)")
    parser.add_argument("--figure-size", choices=("page", "column"),
                        help="the figures' size: page (7 in wide, ACM's figure*, default) or "
                        "column (3.3 in, within ACM's 241-pt column)")


def _add_baseline_options(parser) -> None:
    """The options of ``evaluate`` and ``risk`` that compare the runs to ``--baseline``."""
    parser.add_argument("--figure", metavar="DIR",
                        help="with --baseline: write figures of the runs against it into DIR "
                        "(per measure: win/loss histogram, TRisk and GeoRisk by alpha, each "
                        "run's per-topic TR/TJ at the last alpha, the LaTeX table's; matplotlib, "
                        "the plot extra)")
    parser.add_argument("--figure-format", choices=("pdf", "svg", "png"),
                        help="the figures' file format (default png; pdf or svg for a paper)")
    _add_figure_look_options(parser)
    parser.add_argument("--loss-fraction", type=_FRACTION, default=0.2,
                        help="with --baseline: count the topics more than this fraction below "
                        "the baseline's value, beside wins, losses and ties (default 0.2: "
                        "loss_gt_20)")
    parser.add_argument("--correction", choices=list(CORRECTIONS),
                        help="with --baseline: the TRisk p-values of the runs compared to it, "
                        "corrected per measure and alpha for their number (bonferroni, holm, or "
                        "bh: Benjamini-Hochberg), in a column trisk_p_METHOD")
    parser.add_argument("--test", choices=("t", "randomisation"), default="t",
                        help="with --baseline: the test whose p-values trisk_p holds: t, "
                        "TRisk's t-test of the risk-weighted differences (default), or "
                        "randomisation, a paired randomisation test of their mean, URisk (9,999 "
                        "sign flips, seeded)")


#: Examples of each command, shown by its ``--help`` and the manual: (what it does, the command).
#: Those of evaluate, risk and power read the collection ``lgb-risk demo --out demo`` writes.
EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "evaluate": [
        ("every run's NDCG@20 and ERR@20 with its risk measures against run1 at alpha 1 and 5",
         "lgb-risk evaluate demo/qrels.txt demo/runs/*.txt --baseline run1 --alpha 1 5"),
        ("a paper's table (one ACM column) with Holm-corrected marks, and its figures as PDF",
         "lgb-risk evaluate demo/qrels.txt demo/runs/*.txt --baseline run1 --alpha 1 5 "
         "--correction holm --format latex -o table.tex --figure figures --figure-format pdf"),
        ("each run's per-topic values, under trec_eval's conventions",
         "lgb-risk evaluate demo/qrels.txt demo/runs/*.txt --convention trec_eval --per-topic "
         "--format csv -o per_topic.csv"),
    ],
    "risk": [
        ("risk measures from a per-topic table (here evaluate --per-topic's)",
         "lgb-risk risk per_topic.csv --measure ndcg@20 --baseline run1 --alpha 0 1 5"),
    ],
    "power": [
        ("how many topics each run's difference from run1 needs, t-test and simulated tests",
         "lgb-risk power demo/runs/*.txt --qrels demo/qrels.txt --baseline run1 --simulate "
         "--draws 50"),
    ],
    "run": [
        ("the built-in demo experiment (synthetic data), into runs/demo",
         "lgb-risk run"),
        ("an experiment of a configuration on two processes, resumed if it stopped",
         "lgb-risk run experiments/mq2008.toml --out runs/mq2008 --jobs 2"),
    ],
    "split": [("an experiment's query split only", "lgb-risk split experiments/mq2008.toml")],
    "baselines": [("its split and baselines only",
                   "lgb-risk baselines experiments/mq2008.toml")],
    "active": [
        ("simulate active against passive estimation of ERR@10 on a labelled pool",
         "lgb-risk active pool.txt --scores scores.txt --measure err --k 10 --budget 5 10 20 "
         "--simulate --repetitions 200"),
        ("the same errors as a figure for one column of a paper (PDF, fonts embedded)",
         "lgb-risk active pool.txt --scores scores.txt --measure err --k 10 --budget 5 10 20 "
         "--simulate --figure errors.pdf --figure-size column"),
    ],
    "demo": [("write the demo collection into demo/ and evaluate it", "lgb-risk demo --out demo")],
}


def _examples_epilog(command: str) -> str:
    lines = ["examples:"]
    for what, example in EXAMPLES[command]:
        wrapped = textwrap.wrap(example, width=82, initial_indent="  ",
                                subsequent_indent="      ", break_on_hyphens=False)
        lines += [f"  # {what}", *(line + " \\" for line in wrapped[:-1]), wrapped[-1]]
    return "\n".join(lines)


class _ParagraphHelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, but a description or epilog paragraph whose lines are indented is
    kept as written (examples, a list of keys); the others are filled to the width."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        return "\n\n".join(
            "\n".join(indent + line for line in paragraph.splitlines())
            if any(line.startswith(" ") for line in paragraph.splitlines()[1:])
            else super(_ParagraphHelpFormatter, self)._fill_text(paragraph, width, indent)
            for paragraph in paragraphs)


class _LazyHelpParser(argparse.ArgumentParser):
    """An ArgumentParser whose epilog is computed when its help is printed (``epilog_from``), so
    that building the parser imports nothing heavy (``lgb-risk evaluate`` starts without
    LightGBM or numba)."""

    epilog_from: Callable[[], str] | None = None

    def format_help(self) -> str:
        if self.epilog_from is not None:
            self.epilog = self.epilog_from()
        return super().format_help()

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _ParagraphHelpFormatter)
        super().__init__(*args, **kwargs)
        if self.prog.split()[-1] in EXAMPLES:
            self.epilog = _examples_epilog(self.prog.split()[-1])


def _objective_keys_help() -> str:
    """The [objective] keys of a configuration, read from the objectives' declarations."""
    import re

    from lgb_risk._inputs.parameters import parameter_of
    from lgb_risk.experiment.config import objective_parameter_table
    from lgb_risk.objectives import OBJECTIVES

    lines = ["[objective] keys of a configuration (the objectives' parameters;",
             "each learner takes those it declares):"]
    for key, learners in objective_parameter_table().items():
        declaration = parameter_of(OBJECTIVES[learners[0]], key)
        lines += textwrap.wrap(f"{key} = {declaration.default!r}  ({declaration.kind}; "
                               f"{', '.join(learners)})", width=84, initial_indent="  ",
                               subsequent_indent="      ")
        plain = re.sub(r":\w+:`~?([^`]+)`", r"\1", declaration.doc).replace("``", "")
        lines += textwrap.wrap(plain, width=84, initial_indent="      ",
                               subsequent_indent="      ")
    return _examples_epilog("run") + "\n\n" + "\n".join(lines)


def _add_evaluate(sub) -> None:
    """``lgb-risk evaluate``: TREC runs against qrels."""
    ev = sub.add_parser(
        "evaluate", help="evaluate TREC runs against qrels (gdeval.pl's or another tool's "
        "conventions)",
        description="Evaluate TREC runs against qrels with the conventions of a named tool "
        "(--convention; default gdeval.pl's). The summary says per run how many topics were "
        "scored and how many scored topics it lacks (missing). Without "
        "--per-topic: one row per run with the mean of each measure and, per alpha and measure, "
        "ZRisk, GeoRisk and T*Risk of the run within the population of all given runs and, with "
        "--baseline, URisk, TRisk and its p-value and the single-baseline ZRisk and GeoRisk. "
        "Columns are named MEASURE_RISK_aALPHA, e.g. err@20_urisk_a1. Baseline columns are "
        "empty on the baseline's own row.")
    ev.add_argument("qrels", help="TREC qrels file (QID ITERATION DOCNO GRADE)")
    ev.add_argument("runs", nargs="+", metavar="RUN", help="run files, named by file name")
    ev.add_argument("--measures", nargs="+", default=["ndcg@20", "err@20"],
                    help="NAME or NAME@K with NAME in "
                    f"{', '.join([*registry.MEASURES, *registry.ALIASES])}; e.g. ndcg@20 p@10 "
                    "ap rr (default: ndcg@20 err@20)")
    ev.add_argument("--convention", choices=list(CONVENTIONS), default="gdeval", metavar="TOOL",
                    help=f"the tool whose conventions to follow: {', '.join(CONVENTIONS)} "
                    "(default gdeval): gain, discount, ties, empty and short queries, AP's "
                    "denominator, which topics count; the manual's measure catalogue lists "
                    "each tool's choices")
    ev.add_argument("--gain", choices=("exponential", "linear"),
                    help="override the convention's gain of a grade g: 2**g - 1 or g")
    ev.add_argument("--missing-topics", choices=("skip", "zero"),
                    help="a topic the qrels score but a run lacks: left out of the run's means "
                    "(skip, the tools' default) or scored 0 (zero, their -c)")
    ev.add_argument("--baseline", help="one of the runs (by name or path) or another run file")
    ev.add_argument("--alpha", nargs="+", type=_NON_NEGATIVE, default=list(DEFAULT_ALPHAS),
                    help="risk sensitivities alpha >= 0 (default 0 1 5 10): the summary's "
                    "columns and the by-alpha figures")
    ev.add_argument("--table-alpha", type=_NON_NEGATIVE,
                    help="the alpha of the paper's LaTeX table (--format latex) and of the "
                    "TR/TJ figures (--figure), so that one command draws the curves over --alpha "
                    "and sets the table at another (default: the last --alpha)")
    _add_baseline_options(ev)
    ev.add_argument("--per-topic", action="store_true", help="one row per run and topic")
    ev.add_argument("--columns", nargs="+", metavar="COLUMN",
                    help="print only these columns, in this order (e.g. run measure alpha mean "
                    "georisk trisk_p)")
    ev.add_argument("--layout", choices=("long", "wide"),
                    help="summary layout: long, one row per run, measure and alpha (default for "
                    "--format table), or wide, one row per run with MEASURE_RISK_aALPHA columns "
                    "(default for csv and json). With --format latex and no --layout or "
                    "--columns: a paper's table, a row per run and per measure its mean and, "
                    "against --baseline, URisk and TRisk at the last --alpha, significance "
                    "marked after --correction")
    ev.add_argument("--header", nargs="+", metavar="COLUMN=TEXT",
                    help="latex: print a column (or a measure, in the paper's table) under this "
                    "header, e.g. ndcg@20=nDCG@20")
    ev.add_argument("--span", choices=("column", "page"),
                    help="latex: where the table goes: column (default: a table for one column "
                    "of ACM's two, the paper's table showing per measure the mean and TRisk; "
                    "placed as table* where it is wider, saying so) or page (table*; the "
                    "paper's table shows URisk too)")
    ev.add_argument("--caption", help="latex: the table's caption, plain text (LaTeX's special "
                    "characters are escaped; default: says what it shows)")
    ev.add_argument("--label", help="latex: the table's \\label")
    ev.add_argument("--max-label", type=_POSITIVE_INT, default=4,
                    help="ERR's highest grade (default 4)")
    ev.add_argument("--jobs", type=_POSITIVE_INT,
                    help="runs read and evaluated in this many processes (default: one per "
                    "usable CPU core, at most one per run, and one for runs of less than "
                    f"{trec.PARALLEL_FROM_BYTES / 1e6:g} MB in all)")
    _add_output_options(ev)


def _add_risk(sub) -> None:
    """``lgb-risk risk``: risk measures from a per-topic table."""
    rk = sub.add_parser(
        "risk", help="risk measures from a per-topic table (CSV: system,topic,score)",
        description="Risk measures of every system of a per-topic table: in long format with "
        "header system,topic,score, or the output of lgb-risk evaluate --per-topic --format csv "
        "(header run,topic,MEASURE...; --measure chooses one). One row per system and alpha: "
        "mean, ZRisk and GeoRisk within the population of all systems (Dinçer et al., SIGIR "
        "2016, Table 5), T*Risk against the per-topic mean, and "
        "with --baseline URisk, TRisk, its p-value, and ZRisk/GeoRisk against that single "
        "baseline (the same paper's Table 4).")
    rk.add_argument("scores", help="the per-topic CSV")
    rk.add_argument("--alpha", nargs="+", type=_NON_NEGATIVE, default=list(DEFAULT_ALPHAS),
                    help="risk sensitivities alpha >= 0 (default 0 1 5 10)")
    rk.add_argument("--baseline", help="a system of the table")
    rk.add_argument("--measure", help="with evaluate --per-topic output: the measure column")
    _add_baseline_options(rk)
    _add_output_options(rk)


def _add_power(sub) -> None:
    """``lgb-risk power``: topic-set size and power."""
    pw = sub.add_parser(
        "power", help="how many topics a comparison needs (topic-set size, power)",
        description="For each run against --baseline and each alpha: the mean of the per-topic "
        "risk-weighted differences x_q (alpha 0: the mean difference; otherwise URisk, whose "
        "t-test TRisk is), their sd, the smallest difference the paired t-test detects on "
        "these topics with --power, and the topics needed to detect the observed one (and "
        "--difference), exactly by the noncentral t distribution (Sakai's topic-set-size "
        "design), each with its bootstrap interval (the topics resampled, the whole answer "
        "recomputed; not determined where the observed difference's sign is uncertain), and "
        "the topics the t-test needs on topics drawn from these ones (needed_resampled: the "
        "answer to quote where the differences are skewed or tied at 0). --simulate adds "
        "that answer's interval, the sign test of wins against losses and the randomisation "
        "test of URisk. The topics at hand are the pilot: the answers are for a collection "
        "like it.")
    pw.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="a per-topic CSV (what evaluate --per-topic writes), or with --qrels "
                    "TREC run files")
    pw.add_argument("--qrels", help="TREC qrels: the INPUTs are run files, evaluated under "
                    "gdeval.pl's conventions")
    pw.add_argument("--measure", help="the measure: with --qrels evaluated (default ndcg@20); "
                    "with evaluate --per-topic output, its column")
    pw.add_argument("--baseline", required=True, help="the run the others are compared to")
    pw.add_argument("--alpha", nargs="+", type=_NON_NEGATIVE, default=[0.0, 5.0],
                    help="risk sensitivities alpha >= 0 (default 0 5)")
    pw.add_argument("--difference", type=float,
                    help="a difference of interest (in the measure's units, of x_q at each "
                    "alpha): the topics needed to detect it, beside the observed one's")
    pw.add_argument("--power", type=_FRACTION, default=0.8, help="the power (default 0.8)")
    pw.add_argument("--level", type=_FRACTION, default=0.05,
                    help="the two-sided level (default 0.05)")
    pw.add_argument("--correction", choices=("bonferroni", "holm"),
                    help="the level divided by the number of runs compared (Holm bounded by "
                    "Bonferroni, its strictest step)")
    pw.add_argument("--confidence", type=_FRACTION, default=0.95,
                    help="the intervals' confidence (default 0.95)")
    pw.add_argument("--pilot-resamples", type=_POSITIVE_INT, default=2000,
                    help="the topics resampled this many times, seeded: for the intervals and "
                    "for needed_resampled (default 2000)")
    pw.add_argument("--simulate", action="store_true",
                    help="add needed_resampled's interval, the sign test and the "
                    "randomisation test, by simulation")
    pw.add_argument("--draws", type=_POSITIVE_INT,
                    help="with --simulate: seeded draws per size, and bootstrap pilots for "
                    "needed_resampled's interval (default 200)")
    _add_output_options(pw)


def _add_experiment(sub) -> None:
    """``lgb-risk run``, ``split`` and ``baselines``: an experiment's stages."""
    for name, text in (
            ("run", "run or resume an experiment (the papers' protocol), write its report"),
            ("split", "write an experiment's query split only"),
            ("baselines", "write an experiment's split and baselines only")):
        cmd = sub.add_parser(name, help=text, description=text + ". Resumable: every stage and "
                             "unit of work is written whole or not at all, and running the same "
                             "command again (after a crash, Ctrl-C or kill) redoes only what is "
                             "missing; a configuration that only adds learners or alpha values "
                             "continues the same run.")
        cmd.add_argument("config", nargs="?" if name == "run" else None,
                         help="TOML configuration" + (" (default: the built-in demo)"
                                                      if name == "run" else ""))
        cmd.add_argument("--data", help="data path overriding the configuration's (a folder of "
                         "Fold*/ or a LETOR file)")
        cmd.add_argument("--out", help="output folder (default: runs/NAME)")
        if name == "run":
            cmd.epilog_from = _objective_keys_help
            cmd.add_argument("--jobs", type=_POSITIVE_INT,
                             help="units trained in parallel: 1 trains them in this process; "
                             "N > 1 on a local Dask cluster of N single-threaded worker "
                             "processes started for the run, each holding the data (extra: "
                             "pip install 'lgb_risk[dask]'). Default: one per usable CPU core "
                             "where Dask is installed, at most one per unit to run; else 1. "
                             "The results are the same bits for any N")
            cmd.add_argument("--scheduler", metavar="ADDRESS",
                             help="train the units on the Dask cluster at this scheduler "
                             "address (e.g. tcp://10.0.0.5:8786); each worker loads the data "
                             "once, this process writes every unit's file as it arrives")
            cmd.add_argument("--wait-for-workers", type=_NON_NEGATIVE,
                             default=0.0, metavar="SECONDS",
                             help="with --scheduler: wait up to this long for the cluster's "
                             "first worker (default 0: a cluster without workers is refused "
                             "before anything is written)")


def _add_active(sub) -> None:
    """``lgb-risk active``: active evaluation."""
    ac = sub.add_parser(
        "active", help="estimate a ranker's effectiveness on a labelling budget (Sawade et al. "
        "2013)",
        description="Active evaluation (Sawade et al., Machine Learning 2013): estimate the mean "
        f"of a measure ({', '.join(registry.active_measures())}) of a ranker over a pool of "
        "queries (or the difference of two rankers) "
        "from the queries a labelling budget pays for, drawn from the cost-optimal distribution. "
        "The pool file's labels answer for the queries drawn (the oracle). With "
        "--simulate, the labels of the whole pool are known: the sampling is repeated and the "
        "error of active, passive and the variants is reported per budget.")
    ac.add_argument("pool", help="LETOR/SVMlight file of the pool's documents (qid: per line)")
    ac.add_argument("--scores", required=True, help="the ranker's scores: one per line in the "
                    "pool's order (nan: not ranked), or a TREC run matched by document id")
    ac.add_argument("--scores2", help="a second ranker's scores: estimate the difference")
    model = ac.add_mutually_exclusive_group()
    model.add_argument("--probabilities", help="CSV of grade probabilities, one row per pool "
                       "document (columns: grades 0..G-1)")
    model.add_argument("--relevance-data", help="labelled LETOR file (outside the pool) to "
                       "train the relevance model on; default: a uniform model")
    ac.add_argument("--relevance-model", choices=("multiclass", "ordinal"), default="multiclass",
                    help="kind of relevance model trained on --relevance-data")
    ac.add_argument("--grades", type=_POSITIVE_INT, help="number of grades G (default: highest "
                    "label + 1)")
    ac.add_argument("--measure", default="dcg",
                    help=f"the measure to estimate: {', '.join(registry.active_measures())}, "
                         "with its parameters and convention choices as in evaluate's "
                         "--measures, e.g. "
                         "'dcg(label_gain=linear)' or 'rbp(p=0.9)' (default dcg)")
    ac.add_argument("--convention", choices=list(CONVENTIONS), metavar="TOOL",
                    help=f"the measure's conventions (gain, discount, ties), those of "
                         f"{', '.join(CONVENTIONS)}; default: the library's (exponential gain, "
                         "log2 discount)")
    ac.add_argument("--k", type=_CUTOFF, default=10, help="cut-off, or 'all' (default 10)")
    ac.add_argument("--budget", nargs="+", type=_POSITIVE, required=True,
                    help="labelling budget(s) in mean-query costs")
    ac.add_argument("--doc-cost", help="file of per-document labelling costs (one per line; "
                    "default: 1 each)")
    ac.add_argument("--n-features", type=_POSITIVE_INT, help="number of feature columns")
    ac.add_argument("--passive", action="store_true", help="sample uniformly instead")
    ac.add_argument("--simulate", action="store_true",
                    help="repeat the sampling on a fully labelled pool and report errors")
    ac.add_argument("--repetitions", type=_POSITIVE_INT, default=1000,
                    help="repetitions per budget and method with --simulate (default 1000)")
    ac.add_argument("--figure", metavar="FILE",
                    help="with --simulate: write each method's error against budget to FILE, "
                    "a PNG, PDF or SVG by its suffix (matplotlib, the plot extra)")
    _add_figure_look_options(ac)
    ac.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_output_options(ac)


def _add_demo(sub) -> None:
    """``lgb-risk demo``: a synthetic collection, evaluated."""
    dm = sub.add_parser("demo", help="write a small synthetic TREC collection and evaluate it")
    dm.add_argument("--out", help="folder for the collection (default: a new temporary folder)")
    dm.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def build_parser() -> argparse.ArgumentParser:
    """The ``lgb-risk`` parser: every command with its options, help and examples."""
    from lgb_risk import __version__

    parser = argparse.ArgumentParser(prog="lgb-risk", description=DESCRIPTION,
                                     formatter_class=_ParagraphHelpFormatter)
    parser.add_argument("--version", action="version", version=f"lgb-risk {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an unexpected error, show Python's traceback (also with the "
                        f"environment variable {DEBUG_VARIABLE}=1) instead of one line")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_LazyHelpParser)
    for add in (_add_evaluate, _add_risk, _add_power, _add_experiment, _add_active, _add_demo):
        add(sub)
    return parser
