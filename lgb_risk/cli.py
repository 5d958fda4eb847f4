"""The lgb-risk command line: risk-sensitive evaluation of TREC runs, topic-set sizes, active
evaluation, and the papers' risk-sensitive LambdaMART experiments. ``lgb-risk COMMAND --help``
gives a command's options and examples (:data:`EXAMPLES`).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np

from lgb_risk import data, trec
from lgb_risk import measures as registry
from lgb_risk._interrupt import caused_by_ctrl_c
from lgb_risk._io import atomic_write_text
from lgb_risk._progress import on_terminal
from lgb_risk._segments import offsets_from_group
from lgb_risk.conventions import CONVENTIONS, resolve
from lgb_risk.significance import CORRECTIONS

FORMATS = ("table", "csv", "json", "latex")
DEFAULT_ALPHAS = trec.DEFAULT_ALPHAS


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1), got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction in (0, 1), got {text!r}")
    return value


def _non_negative(what: str):
    """An argparse type: a finite number >= 0, the error naming ``what`` it is."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not np.isfinite(value) or value < 0:
            raise argparse.ArgumentTypeError(f"{what} must be a finite number >= 0, got "
                                             f"{text!r}")
        return value

    return parse


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


#: Columns that count topics (wins, losses, ...; with a measure and α in the wide layout), and
#: α: printed as whole numbers where they are, though a column holding NaN is float.
_COUNT_COLUMN = re.compile(r"((^|_)(wins|losses|ties|topics|missing|loss_gt_[0-9.]+)"
                           r"(_a[0-9.]+)?|^alpha|^needed.*)$")


def _cell(value, decimals: int, missing: str, count: bool = False) -> str:
    """One printed cell: floats with ``decimals`` digits (a ``count`` as a whole number), NaN
    and None as ``missing``."""
    if value is None:
        return missing
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return missing
        return f"{int(value)}" if count and float(value).is_integer() else f"{value:.{decimals}f}"
    return str(value)


def _json_value(value, decimals: int):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else round(float(value), min(decimals, 15))
    return value


def write_output(table, fmt: str, out: str | None, decimals: int | None = None,
                 latex: dict | None = None, placed: Callable | None = None) -> None:
    """Print or write a result table; a file is written whole or not at all (atomic rename).

    ``table`` is a mapping of column name to values (all of one length), or a DataFrame.
    ``table``: columns right-aligned, NaN as ``-``; ``csv``: NaN empty; ``json``: a list of
    records, NaN as null; ``latex``: :func:`lgb_risk.latex.latex_table` with the options
    ``latex`` (headers, caption, label). ``decimals``: 6, or 3 for LaTeX, unless given.
    """
    if decimals is None:
        decimals = 3 if fmt == "latex" else 6
    if hasattr(table, "columns") and hasattr(table, "to_numpy"):  # a DataFrame
        table = {str(c): table[c].to_numpy() for c in table.columns}
    names = list(table)
    rows = list(zip(*(list(table[c]) for c in names)))
    if fmt == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(names)
        counts = [bool(_COUNT_COLUMN.search(n)) for n in names]
        writer.writerows([_cell(v, decimals, "", c) for v, c in zip(row, counts)] for row in rows)
        text = buffer.getvalue()
    elif fmt == "latex":
        from lgb_risk.latex import latex_table

        text = latex_table({n: [row[i] for row in rows] for i, n in enumerate(names)},
                           decimals=decimals, **(latex or {}))
        if placed is not None:
            placed(text)
    elif fmt == "json":
        import json

        text = json.dumps([{n: _json_value(v, decimals) for n, v in zip(names, row)}
                           for row in rows], indent=1) + "\n"
    else:
        counts = [bool(_COUNT_COLUMN.search(n)) for n in names]
        cells = [[_cell(v, decimals, "-", c) for v, c in zip(row, counts)] for row in rows]
        widths = [max([len(n), *(len(r[i]) for r in cells)]) for i, n in enumerate(names)]
        text_column = [all(isinstance(row[i], str) for row in rows) for i in range(len(names))]

        def aligned(values):
            return " ".join(v.ljust(w) if left else v.rjust(w)
                            for v, w, left in zip(values, widths, text_column)).rstrip()

        lines = [aligned(names)] + [aligned(r) for r in cells]
        text = "\n".join(lines) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(out, text)


def _refuse_ignored_options(args) -> None:
    """Refuse, before any work, an option that the others given would make do nothing."""
    if getattr(args, "figure", None) is None:
        given = [flag for flag, value in (("--figure-format", args.figure_format),
                                          ("--figure-size", args.figure_size),
                                          ("--figure-titles", args.figure_titles or None))
                 if value is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} {'shape' if len(given) > 1 else 'shapes'} "
                             "the figures of --figure DIR, which is not given: add --figure "
                             "DIR, or drop them")
    if args.test == "randomisation":
        if args.baseline is None:
            raise ValueError("--test randomisation tests each run against --baseline: give one")
        if getattr(args, "per_topic", False):
            raise ValueError("--per-topic prints each topic's values, without tests: --test "
                             "randomisation would be ignored; drop it, or drop --per-topic")
    if args.format != "latex":
        given = [flag for flag, value in (("--caption", getattr(args, "caption", None)),
                                          ("--label", getattr(args, "label", None)),
                                          ("--header", getattr(args, "header", None)),
                                          ("--span", getattr(args, "span", None)))
                 if value is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} {'shape' if len(given) > 1 else 'shapes'} "
                             f"a LaTeX table: with --format {args.format} "
                             f"{'they' if len(given) > 1 else 'it'} would be ignored; add "
                             "--format latex, or drop "
                             f"{'them' if len(given) > 1 else 'it'}")


def _evaluate(args) -> tuple[dict, str | None]:
    """The runs of ``lgb-risk evaluate`` evaluated, ``({run: TopicValues}, baseline)``, its
    figures written; notes on standard error."""
    _refuse_ignored_options(args)
    paths, baseline = list(args.runs), args.baseline
    if args.per_topic:
        ignored = [flag for flag, value in (("--figure", args.figure),
                                            ("--correction", args.correction))
                   if value is not None]
        if ignored:
            raise ValueError(f"--per-topic prints each topic's values, without risk measures, "
                             f"tests or figures: {' and '.join(ignored)} would be ignored; drop "
                             "it, or drop --per-topic")
    if args.figure is not None:
        _figure_folder(args.figure)
    names = [data.run_name(p) for p in paths]
    if baseline is not None and baseline not in names:
        if not Path(baseline).is_file():
            raise ValueError(f"--baseline {baseline!r} is neither one of the runs "
                             f"({', '.join(names)}) nor a run file")
        paths.append(baseline)
        baseline = data.run_name(baseline)
    conv = resolve(args.convention, missing_topics=args.missing_topics, label_gain=args.gain)
    results = trec.evaluate_files(args.qrels, paths, args.measures, convention=conv,
                                  max_label=args.max_label, jobs=args.jobs)
    for name, result in results.items():
        if result.unscored:
            print(f"note: run {name!r} ranks {len(result.unscored)} topic(s) the qrels do not "
                  f"score under --convention {conv.name} ({_shown(result.unscored)}): not "
                  "evaluated", file=sys.stderr)
        if result.missing:
            done = ("scored 0 and counted in the means" if conv.missing_topics == "zero" else
                    "left out of its means (--missing-topics zero counts them as 0)")
            print(f"note: run {name!r} has no ranking for {len(result.missing)} topic(s) the "
                  f"qrels score ({_shown(result.missing)}): {done}", file=sys.stderr)
    if args.per_topic:
        return results, baseline
    if len(results) < 2:
        print("note: risk measures need at least two runs; printing means only", file=sys.stderr)
    else:
        for m in args.measures:
            if not trec.risk_measures_of(m):
                print(f"note: no risk measures for {m}: its values can be negative, and ZRisk "
                      "and GeoRisk are defined for effectiveness >= 0", file=sys.stderr)
    if args.correction is not None and baseline is None:
        raise ValueError("--correction corrects the TRisk p-values against --baseline: give one")
    if args.figure is not None:
        _write_figures({m: trec.per_topic_frame(results, m) for m in args.measures
                        if trec.risk_measures_of(m)}, args, baseline)
    return results, baseline


def _figure_folder(directory) -> None:
    """Refuse, before any work, a ``--figure`` folder that cannot take the figures."""
    import os

    folder = Path(directory)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--figure {directory}: exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--figure {directory}: cannot create the folder "
                         f"({exc.strerror})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"--figure {directory}: cannot write into the folder (permission "
                         "denied)")


def _write_figures(scores: dict, args, baseline) -> None:
    """``--figure DIR``: the runs against the baseline
    (:func:`lgb_risk.plots.write_run_figures`)."""
    if baseline is None:
        raise ValueError("--figure draws the runs against --baseline: give one")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ValueError("--figure needs matplotlib: pip install 'lgb_risk[plot]'") from None
    import time

    from lgb_risk.plots import write_run_figures

    started = time.monotonic()
    shown = on_terminal(sys.stderr)

    def progress(done: int, total: int) -> None:
        if shown and time.monotonic() - started > 1.0:  # a line only where it takes a while
            print(f"\rwriting figures to {args.figure}: {done}/{total}", end="",
                  file=sys.stderr, flush=True)

    paths = write_run_figures(scores, baseline, args.figure, alphas=args.alpha,
                              figure_format=args.figure_format or "png",
                              figure_size=args.figure_size or "page",
                              correction=args.correction, titles=args.figure_titles,
                              progress=progress)
    if shown and time.monotonic() - started > 1.0:
        print(file=sys.stderr)
    print(f"wrote {len(paths)} figure(s) to {args.figure} (TR/TJ at α = {args.alpha[-1]:g}, "
          "the last --alpha, as the LaTeX table's)", file=sys.stderr)


def _shown(topics) -> str:
    return ", ".join(topics[:10]) + (", ..." if len(topics) > 10 else "")


def _cmd_evaluate(args) -> None:
    from lgb_risk.latex import escape, measures_named

    results, baseline = _evaluate(args)
    headers = _headers(args.header)
    caption = None if args.caption is None else escape(args.caption)
    if args.per_topic:
        if args.decimals is None and args.format in ("csv", "json"):
            args.decimals = 17  # every bit: `lgb-risk risk` reads it back to evaluate's values
        _write(trec.per_topic_table(results, args.measures), args, headers,
               caption or f"{measures_named(args.measures)} of each run on each topic.")
        return
    if args.format == "latex" and args.layout is None and not args.columns:
        # The paper's table: a row per run, per measure its mean and, against the baseline,
        # TRisk (one column) or URisk and TRisk (the page) at the last --alpha.
        _refuse_unknown_headers(headers, args.measures, "measure")
        summary = trec.RunSummary(results, args.measures, baseline=baseline, alphas=args.alpha,
                                  correction=args.correction,
                                  loss_fraction=args.loss_fraction, test=args.test)
        text = summary.latex(span=args.span or "column", labels=headers,
                             decimals=3 if args.decimals is None else args.decimals,
                             caption=caption, label=args.label)
        _note_placement(text, args.span)
        if args.output is None:
            sys.stdout.write(text)
        else:
            atomic_write_text(args.output, text)
        return
    layout = args.layout or ("long" if args.format == "table" or (
        args.columns and {"measure", "alpha"} & set(args.columns)) else "wide")
    table = trec.summary_table(results, args.measures, alphas=args.alpha, baseline=baseline,
                               layout=layout, correction=args.correction,
                               loss_fraction=args.loss_fraction, test=args.test)
    if args.columns:
        unknown = [c for c in args.columns if c not in table]
        if unknown:
            raise ValueError(f"--columns: no column {unknown[0]!r} in the {layout} layout; the "
                             f"table has {', '.join(table)}")
        table = {c: table[c] for c in args.columns}
    if caption is None:
        alphas = ", ".join(f"{a:g}" for a in args.alpha)
        caption = (f"{measures_named(args.measures)} of each run" + (
            f" and its risk measures against {escape(baseline)}" if baseline else
            " and its risk measures against the others" if len(results) > 1 else "")
            + (f", at $\\alpha$ = {alphas}" if len(results) > 1 else "") + ".")
    _write(table, args, headers, caption, baseline)


def _note_placement(text: str, span: str | None) -> None:
    """Say where a LaTeX table placed itself when it could not take one column."""
    lines = text.splitlines()
    if span is None and len(lines) > 1 and lines[1] == r"\begin{table*}":
        width = lines[0].split("about ")[1].split(" pt")[0]
        print(f"note: the table is about {width} pt wide, more than ACM's 241-pt column: "
              "placed as table* across the page (--span page says so; fewer --measures, "
              "--columns or shorter run names fit a column)", file=sys.stderr)


def _write(table: dict, args, headers: dict, caption: str | None,
           baseline: str | None = None) -> None:
    """Write ``evaluate``'s table in ``--format`` (LaTeX with its headers and caption)."""
    _refuse_unknown_headers(headers, list(table), "column")
    latex = None
    if args.format == "latex":
        latex = {"headers": headers, "caption": caption, "label": args.label,
                 "test": args.test, "baseline": baseline, "placement": args.span or "auto"}
    write_output(table, args.format, args.output, decimals=args.decimals, latex=latex,
                 placed=lambda text: _note_placement(text, args.span))


def _refuse_unknown_headers(headers: dict, names: list, what: str) -> None:
    """``--header NAME=TEXT`` names one of the table's measures (paper's table) or columns."""
    unknown = [name for name in headers if name not in names]
    if unknown:
        raise ValueError(f"--header {unknown[0]}=...: the table has no {what} {unknown[0]!r}; "
                         f"its {what}s: {', '.join(names)}")


def _headers(given) -> dict:
    """``--header COLUMN=TEXT ...`` as a mapping."""
    headers = {}
    for item in given or ():
        column, equals, text = item.partition("=")
        if not equals or not column:
            raise ValueError(f"--header: expected COLUMN=TEXT, got {item!r}")
        headers[column] = text
    return headers


def _cmd_risk(args) -> None:
    from lgb_risk.risk import risk_table

    _refuse_ignored_options(args)
    if args.figure is not None:
        _figure_folder(args.figure)
    scores = data.read_per_topic_table(args.scores, measure=args.measure)
    if args.figure is not None:
        _write_figures({args.measure or "score": scores}, args, args.baseline)
    if args.correction is not None and args.baseline is None:
        raise ValueError("--correction corrects the TRisk p-values against --baseline: give one")
    write_output(risk_table(scores, args.alpha, args.baseline, args.correction,
                            args.loss_fraction, args.test), args.format, args.output,
                 decimals=args.decimals, latex={"test": args.test})


def _cmd_power(args) -> None:
    from lgb_risk.power import power_table

    if args.qrels is None:
        if len(args.inputs) != 1:
            raise ValueError(f"without --qrels give one per-topic CSV, got {len(args.inputs)} "
                             "files (with --qrels, they are run files)")
        scores = data.read_per_topic_table(args.inputs[0], measure=args.measure)
    else:
        measure = args.measure or "ndcg@20"
        if not trec.risk_measures_of(measure):
            raise ValueError(f"--measure {measure}: its values can be negative; the risk "
                             "measures need effectiveness >= 0")
        results = trec.evaluate_files(args.qrels, args.inputs, [measure])
        scores = trec.per_topic_frame(results, measure)
        if scores.isna().any().any():
            run = scores.index[scores.isna().any(axis=1)][0]
            raise ValueError(f"run {run!r} has no ranking for some topics the others rank: the "
                             "tests pair every topic")
    if args.baseline not in scores.index:
        raise ValueError(f"--baseline {args.baseline!r} is not among the runs "
                         f"{', '.join(map(str, scores.index))}")
    table = power_table(scores, args.baseline, args.alpha, difference=args.difference,
                        power=args.power, level=args.level, correction=args.correction,
                        simulate=args.simulate, draws=args.draws)
    write_output(table, args.format, args.output, decimals=args.decimals)


def _cmd_demo(args) -> None:
    from lgb_risk.experiment import synthetic

    directory = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lgb_risk_demo_"))
    qrels_path, run_paths = synthetic.write_trec_collection(directory, seed=args.seed)
    print(f"wrote a synthetic collection to {directory}; evaluating it as\n"
          f"  lgb-risk evaluate {qrels_path} {' '.join(map(str, run_paths))} "
          f"--measures ndcg@20 err@20 --baseline run1 --alpha 1 5\n", file=sys.stderr)
    args = build_parser().parse_args(["evaluate", str(qrels_path), *map(str, run_paths),
                                      "--measures", "ndcg@20", "err@20", "--baseline", "run1",
                                      "--alpha", "1", "5", "--decimals", "4"])
    _cmd_evaluate(args)


def _active_inputs(args):
    """Pool, scores, relevance model and per-document costs from the files named on the line."""
    from lgb_risk import active

    pool = data.load_letor(args.pool, n_features=args.n_features)
    scores = data.read_pool_scores(args.scores, pool)
    scores2 = None if args.scores2 is None else data.read_pool_scores(args.scores2, pool)
    if args.probabilities:
        P = np.loadtxt(args.probabilities, delimiter=",", ndmin=2)
        if P.shape[0] != pool.y.size:
            raise ValueError(f"{args.probabilities} has {P.shape[0]} rows but the pool has "
                             f"{pool.y.size} documents; one row of grade probabilities each")
    elif args.relevance_data:
        labelled = data.load_letor(args.relevance_data, n_features=pool.X.shape[1])
        grades = int(max(labelled.y.max(), pool.y.max())) + 1 if args.grades is None \
            else args.grades
        P = active.relevance_probabilities(labelled.X, labelled.y, pool.X, grades,
                                           kind=args.relevance_model)
    else:
        grades = int(pool.y.max()) + 1 if args.grades is None else args.grades
        P = active.uniform_relevance(pool.y.size, max(grades, 2))
    doc_cost = None if args.doc_cost is None else np.loadtxt(args.doc_cost, ndmin=1)
    return pool, scores, scores2, P, doc_cost


def _cmd_active(args) -> None:
    import pandas as pd

    from lgb_risk import active

    if args.figure and not args.simulate:
        raise ValueError("--figure draws the simulation's errors: it needs --simulate")
    pool, scores, scores2, P, doc_cost = _active_inputs(args)
    options = {"measure": active.target_measure(args.measure, args.k,
                                                convention=args.convention),
               "scores2": scores2, "doc_cost": doc_cost}
    if args.simulate:
        frame = active.simulate(P, scores, pool.group, pool.y, args.budget,
                                repetitions=args.repetitions, seed=args.seed,
                                progress=on_terminal(sys.stderr), **options)
        frame["se"] = frame["abs_error_sd"] / np.sqrt(frame["repetitions"])
        frame = frame[["method", "budget", "truth", "mean_abs_error", "se", "sq_error",
                       "wrong_sign", "draws", "predicted_ratio"]]
        if args.figure:
            what = "difference of two rankers" if scores2 is not None else "one ranker"
            _active_figure(frame, args.figure, f"{options['measure'].label}, {what}: error of "
                           f"the estimate by budget ({args.repetitions} repetitions)")
    else:
        starts = offsets_from_group(pool.group)
        index = {str(q): i for i, q in enumerate(pool.query_ids)}

        def oracle(query_id):
            i = index[str(query_id)]
            return pool.y[starts[i]:starts[i + 1]]

        rows = []
        for budget in args.budget:
            result = active.evaluate(P, scores, pool.group, oracle, budget,
                                     query_ids=pool.query_ids, passive=args.passive,
                                     seed=args.seed, **options)
            rows.append({"budget": budget, "estimate": result.estimate,
                         "standard_error": result.standard_error, "draws": result.n_draws,
                         "labelled": result.n_labelled, "spent": result.spent,
                         "exhausted": result.exhausted, "model_target": result.model_target,
                         "predicted_mse_ratio": result.predicted_mse_ratio})
        frame = pd.DataFrame(rows)
    write_output(frame, args.format, args.output, decimals=args.decimals)


def _active_figure(frame, path, title: str) -> None:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ValueError("--figure needs matplotlib (pip install 'lgb_risk[plot]')") from None
    from lgb_risk.active.figures import plot_errors

    fig = Figure(figsize=(5, 3.6))
    ax = fig.subplots()
    plot_errors(ax, frame, title=title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    from lgb_risk._io import atomic_write

    atomic_write(Path(path), lambda tmp: fig.savefig(tmp, format="png", dpi=100))


def _decimals(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 17:
        raise argparse.ArgumentTypeError(f"expected a whole number of digits 0..17, got {text!r}")
    return value


def _cutoff(text: str):
    return None if text == "all" else _positive_int(text)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not np.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def _experiment_config(args):
    from lgb_risk.experiment.config import load_config

    return load_config(args.config, data=args.data)


def _default_jobs(stream=sys.stderr) -> int:
    """``lgb-risk run``'s ``--jobs`` when not given: one job per usable core where Dask is
    installed; otherwise 1, saying which extra would use the others."""
    import importlib.util

    from lgb_risk._machine import usable_cores

    cores = usable_cores()
    if cores > 1 and importlib.util.find_spec("distributed") is None:
        print(f"training one unit at a time: Dask, which trains {cores} at a time on this "
              "machine's cores, is an optional extra (pip install 'lgb_risk[dask]')",
              file=stream)
        return 1
    return cores


def _cmd_run(args, stop_after=None) -> None:
    if getattr(args, "jobs", 1) is None:  # run's default
        args.jobs = 1 if args.scheduler is not None else _default_jobs()
    if getattr(args, "jobs", 1) > 1 and getattr(args, "scheduler", None) is not None:
        raise ValueError("--jobs starts a local cluster and --scheduler uses another: give one")
    if getattr(args, "wait_for_workers", 0.0) and getattr(args, "scheduler", None) is None:
        raise ValueError("--wait-for-workers waits for the workers of --scheduler's cluster: "
                         "give --scheduler")
    if getattr(args, "jobs", 1) > 1 or getattr(args, "scheduler", None) is not None:
        from lgb_risk._dask import require_dask, silence_dask_logs

        # Dask's client logs a lost scheduler or worker with tracebacks; the command says it in
        # one line (and each failed unit in one line as it happens).
        try:
            require_dask(needed_for="--jobs > 1 or --scheduler")
        except ImportError as error:
            raise ValueError(str(error)) from None
        silence_dask_logs()
    if getattr(args, "jobs", 1) > 1 and getattr(args, "scheduler", None) is None:
        from lgb_risk._dask import start_worker_server

        # The local workers' modules are imported there while this process imports its own.
        start_worker_server(preload=("lgb_risk.experiment.runner",))
    from lgb_risk.experiment.runner import run_experiment

    config = _experiment_config(args)
    out = Path(args.out) if args.out else Path("runs") / config.name
    if stop_after is None:
        _compile_kernels_saying_so()
    result = run_experiment(config, out, jobs=getattr(args, "jobs", 1),
                            scheduler=getattr(args, "scheduler", None), stop_after=stop_after,
                            wait_for_workers=getattr(args, "wait_for_workers", 0.0))
    if stop_after is None:
        _print_run_summary(config, result.parent)
    print(f"wrote {result}")


#: How long the objectives' first call may take before the command says that it compiles.
_COMPILE_NOTE_AFTER_S = 2.0


def _compile_kernels_saying_so() -> None:
    """Load the objectives' compiled kernels (LambdaMART's, which the risk objectives share,
    and GeoRisk's) before training; where that takes longer than
    :data:`_COMPILE_NOTE_AFTER_S` — numba compiling them on first use, once per machine and
    Python version, its cache kept after — say so, so that the command is not silent."""
    import threading

    from lgb_risk.objectives import GeoRisk, LambdaMART

    note = threading.Timer(_COMPILE_NOTE_AFTER_S, lambda: print(
        "compiling the training kernels on first use (once per machine and Python version; "
        "a few seconds) ...", file=sys.stderr, flush=True))
    note.daemon = True
    note.start()
    try:
        scores, labels, group = np.array([0.2, 0.1]), np.array([1, 0]), np.array([2])
        LambdaMART().gradients(scores, labels, group)
        GeoRisk(baselines=[[0.5]]).gradients(scores, labels, group)
    finally:
        note.cancel()


def _print_run_summary(config, folder: Path) -> None:
    """A narrow table of the run's learners (the report's first measure: its mean, and the
    feature baseline's Risk, wins and losses), where the whole report is too wide for a
    terminal."""
    import pandas as pd

    from lgb_risk.experiment.layout import RunFolder

    report = pd.read_csv(folder / "report.csv")
    measure = RunFolder(folder).measures(config).reported[0]  # the report's first
    feature = config.baselines.feature_name
    shown = {"learner": report["learner"], "α": report["alpha"].map("{:g}".format),
             measure.label: report[measure.measure.name].map("{:.4f}".format)}
    if f"{feature}_risk" in report:
        shown[f"Risk vs {feature}"] = report[f"{feature}_risk"].map("{:.4f}".format)
        shown["wins/losses"] = [f"{w:.0f}/{lo:.0f}" for w, lo in
                                zip(report[f"{feature}_wins"], report[f"{feature}_losses"])]
    print(pd.DataFrame(shown).to_string(index=False))


def _add_output_options(parser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (aligned text, default), csv, json (a list of records) or "
                        "latex (a booktabs table: the best value of each column in bold, "
                        "significant TRisk marked, a legend naming the test and correction)")
    parser.add_argument("--decimals", type=_decimals,
                        help="digits after the decimal point (default 6, or 3 for latex; 17 "
                        "keeps every double)")
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")


def _add_baseline_options(parser) -> None:
    """The options of ``evaluate`` and ``risk`` that compare the runs to ``--baseline``."""
    parser.add_argument("--figure", metavar="DIR",
                        help="with --baseline: write figures of the runs against it into DIR "
                        "(per measure: win/loss histogram, TRisk and GeoRisk by alpha, each "
                        "run's per-topic TR/TJ at the last alpha, the LaTeX table's; matplotlib, "
                        "the plot extra)")
    parser.add_argument("--figure-format", choices=("pdf", "svg", "png"),
                        help="the figures' file format (default png; pdf or svg for a paper)")
    parser.add_argument("--figure-titles", action="store_true",
                        help="with --figure: a title on each figure (by default none: a "
                        "paper's caption says what a figure shows)")
    parser.add_argument("--figure-size", choices=("page", "column"),
                        help="the figures' size: page (7 in wide, ACM's figure*, default) or "
                        "column (3.3 in, within ACM's 241-pt column)")
    parser.add_argument("--loss-fraction", type=_fraction, default=0.2,
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

    from lgb_risk._parameters import declared
    from lgb_risk.experiment.config import objective_parameter_table
    from lgb_risk.objectives import OBJECTIVES

    lines = ["[objective] keys of a configuration (the objectives' parameters;",
             "each learner takes those it declares):"]
    for key, learners in objective_parameter_table().items():
        field, declaration = next((f, d) for f, d in declared(OBJECTIVES[learners[0]])
                                  if f.name == key)
        lines += textwrap.wrap(f"{key} = {field.default!r}  ({declaration.kind}; "
                               f"{', '.join(learners)})", width=84, initial_indent="  ",
                               subsequent_indent="      ")
        plain = re.sub(r":\w+:`~?([^`]+)`", r"\1", declaration.doc).replace("``", "")
        lines += textwrap.wrap(plain, width=84, initial_indent="      ",
                               subsequent_indent="      ")
    return _examples_epilog("run") + "\n\n" + "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    from lgb_risk import __version__

    parser = argparse.ArgumentParser(prog="lgb-risk", description=__doc__.replace("``", "")
                                     .replace(" (:data:`EXAMPLES`)", ""),
                                     formatter_class=_ParagraphHelpFormatter)
    parser.add_argument("--version", action="version", version=f"lgb-risk {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an unexpected error, show Python's traceback (also with the "
                        f"environment variable {DEBUG_VARIABLE}=1) instead of one line")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_LazyHelpParser)

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
    ev.add_argument("--alpha", nargs="+", type=_non_negative("alpha"), default=list(DEFAULT_ALPHAS),
                    help="risk sensitivities alpha >= 0 (default 0 1 5 10)")
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
    ev.add_argument("--max-label", type=_positive_int, default=4,
                    help="ERR's highest grade (default 4)")
    ev.add_argument("--jobs", type=_positive_int,
                    help="runs read and evaluated in this many processes (default: one per "
                    "usable CPU core, at most one per run, and one for runs of less than "
                    f"{trec.PARALLEL_FROM_BYTES / 1e6:g} MB in all)")
    _add_output_options(ev)
    ev.set_defaults(func=_cmd_evaluate)

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
    rk.add_argument("--alpha", nargs="+", type=_non_negative("alpha"), default=list(DEFAULT_ALPHAS),
                    help="risk sensitivities alpha >= 0 (default 0 1 5 10)")
    rk.add_argument("--baseline", help="a system of the table")
    rk.add_argument("--measure", help="with evaluate --per-topic output: the measure column")
    _add_baseline_options(rk)
    _add_output_options(rk)
    rk.set_defaults(func=_cmd_risk)

    pw = sub.add_parser(
        "power", help="how many topics a comparison needs (topic-set size, power)",
        description="For each run against --baseline and each alpha: the mean of the per-topic "
        "risk-weighted differences x_q (alpha 0: the mean difference; otherwise URisk, whose "
        "t-test TRisk is), their sd, the smallest difference the paired t-test detects on "
        "these topics with --power, and the topics needed to detect the observed one (and "
        "--difference), exactly by the noncentral t distribution (Sakai's topic-set-size "
        "design). --simulate adds, by resampling these topics, the sign test of wins against "
        "losses and the randomisation test of URisk. The topics at hand are the pilot: their "
        "variance stands in for the population's.")
    pw.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="a per-topic CSV (what evaluate --per-topic writes), or with --qrels "
                    "TREC run files")
    pw.add_argument("--qrels", help="TREC qrels: the INPUTs are run files, evaluated under "
                    "gdeval.pl's conventions")
    pw.add_argument("--measure", help="the measure: with --qrels evaluated (default ndcg@20); "
                    "with evaluate --per-topic output, its column")
    pw.add_argument("--baseline", required=True, help="the run the others are compared to")
    pw.add_argument("--alpha", nargs="+", type=_non_negative("alpha"), default=[0.0, 5.0],
                    help="risk sensitivities alpha >= 0 (default 0 5)")
    pw.add_argument("--difference", type=float,
                    help="a difference of interest (in the measure's units, of x_q at each "
                    "alpha): the topics needed to detect it, beside the observed one's")
    pw.add_argument("--power", type=_fraction, default=0.8, help="the power (default 0.8)")
    pw.add_argument("--level", type=_fraction, default=0.05,
                    help="the two-sided level (default 0.05)")
    pw.add_argument("--correction", choices=("bonferroni", "holm"),
                    help="the level divided by the number of runs compared (Holm bounded by "
                    "Bonferroni, its strictest step)")
    pw.add_argument("--simulate", action="store_true",
                    help="add the sign test and the randomisation test, by simulation")
    pw.add_argument("--draws", type=_positive_int, default=200,
                    help="with --simulate: seeded draws per size (default 200)")
    _add_output_options(pw)
    pw.set_defaults(func=_cmd_power)

    for name, stage, text in (
            ("run", None, "run or resume an experiment (the papers' protocol), write its report"),
            ("split", "split", "write an experiment's query split only"),
            ("baselines", "baselines", "write an experiment's split and baselines only")):
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
            cmd.add_argument("--jobs", type=_positive_int,
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
            cmd.add_argument("--wait-for-workers", type=_non_negative("the seconds to wait"),
                             default=0.0, metavar="SECONDS",
                             help="with --scheduler: wait up to this long for the cluster's "
                             "first worker (default 0: a cluster without workers is refused "
                             "before anything is written)")
        cmd.set_defaults(func=lambda args, stage=stage: _cmd_run(args, stage))

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
    ac.add_argument("--grades", type=_positive_int, help="number of grades G (default: highest "
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
    ac.add_argument("--k", type=_cutoff, default=10, help="cut-off, or 'all' (default 10)")
    ac.add_argument("--budget", nargs="+", type=_positive_float, required=True,
                    help="labelling budget(s) in mean-query costs")
    ac.add_argument("--doc-cost", help="file of per-document labelling costs (one per line; "
                    "default: 1 each)")
    ac.add_argument("--n-features", type=_positive_int, help="number of feature columns")
    ac.add_argument("--passive", action="store_true", help="sample uniformly instead")
    ac.add_argument("--simulate", action="store_true",
                    help="repeat the sampling on a fully labelled pool and report errors")
    ac.add_argument("--repetitions", type=_positive_int, default=1000,
                    help="repetitions per budget and method with --simulate (default 1000)")
    ac.add_argument("--figure", help="with --simulate: write error against budget as a PNG")
    ac.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_output_options(ac)
    ac.set_defaults(func=_cmd_active)

    dm = sub.add_parser("demo", help="write a small synthetic TREC collection and evaluate it")
    dm.add_argument("--out", help="folder for the collection (default: a new temporary folder)")
    dm.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    dm.set_defaults(func=_cmd_demo)
    return parser


#: The arguments that name input files: read from a pipe (``<(...)``) or standard input (``-``)
#: too, through :func:`_spooled`.
_INPUT_FILES = ("qrels", "runs", "scores", "pool", "scores2", "probabilities", "relevance_data",
                "doc_cost")


def _spooled(args, folder: Path) -> dict:
    """Copy every input that is a pipe, a device or ``-`` (standard input, at most one) into
    ``folder`` under its own name, so that the readers, which read a file more than once, get
    a regular file; returns {copy: given} to name the given path in messages."""
    given: dict = {}
    for name in _INPUT_FILES:
        value = getattr(args, name, None)
        if value is None:
            continue
        paths = value if isinstance(value, list) else [value]
        copies = []
        for path in paths:
            text = str(path)
            if text != "-" and os.path.isdir(text):
                raise ValueError(f"{text} is a folder, where a file was expected; give the "
                                 f"file(s) in it (e.g. {Path(text) / '*'})")
            if text != "-" and (not os.path.exists(text) or os.path.isfile(text)):
                copies.append(path)
                continue
            if text == "-" and "-" in given.values():
                raise ValueError("standard input (-) can be read once: give it to one input")
            stem = "stdin" if text == "-" else Path(text).name
            copy = folder / f"{len(given)}" / stem
            copy.parent.mkdir()
            with open(copy, "wb") as out:
                if text == "-":
                    shutil.copyfileobj(sys.stdin.buffer, out)
                else:
                    with open(text, "rb") as source:
                        shutil.copyfileobj(source, out)
            given[str(copy)] = text
            copies.append(str(copy))
        setattr(args, name, copies if isinstance(value, list) else copies[0])
    return given


#: Set to 1 to see the traceback of an unexpected error (as ``--debug``).
DEBUG_VARIABLE = "LGB_RISK_DEBUG"


def main(argv=None) -> int:
    """Run the command; return its exit status. Every failure ends in one message on standard
    error: 2 for bad input (a file, an option, a configuration), 1 for anything else (a full
    disk, a lost cluster, an unexpected error, whose traceback ``--debug`` shows), 130 for
    Ctrl-C."""
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = args.debug or os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")
    given: dict = {}
    resumable = args.command in ("run", "split", "baselines")
    again = " (what is done is kept: run the same command again to resume)" if resumable else ""

    def say(message: str) -> None:
        for copy, path in given.items():
            message = message.replace(copy, "<standard input>" if path == "-" else path)
        print(f"lgb-risk {args.command}: {message}", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="lgb-risk-input-") as folder:
        try:
            given = _spooled(args, Path(folder))
            args.func(args)
        except (ValueError, FileNotFoundError) as exc:
            if debug:
                raise
            say(f"error: {exc}")
            return 2
        except KeyboardInterrupt:
            say(f"interrupted{again}")
            return 130
        except OSError as exc:  # the disk, the network: nothing the command line did wrong
            if debug:
                raise
            say(f"error: {_unexpected(exc) if _from_dask(exc) else _os_error(exc)}{again}")
            return 1
        except Exception as exc:
            if caused_by_ctrl_c(exc):
                say(f"interrupted{again}")
                return 130
            if debug:
                raise
            say(f"error: {_unexpected(exc)}{again} (--debug shows the traceback)")
            return 1
    return 0


def _from_dask(exc: BaseException) -> bool:
    return type(exc).__module__.startswith(("distributed", "tornado")) or type(
        exc).__name__ in ("FutureCancelledError", "CancelledError")


def _os_error(exc: OSError) -> str:
    """An OSError as one line: this library's (a sentence naming the file) as it is."""
    return exc.strerror if exc.filename is None and exc.strerror else str(exc)


def _unexpected(exc: BaseException) -> str:
    """One line for an error no check of ours foresaw (a lost Dask scheduler among them)."""
    kind = type(exc).__name__
    text = str(exc).strip().splitlines()
    said = f"{kind}: {text[0]}" if text else kind
    return f"the Dask cluster was lost ({said})" if _from_dask(exc) else said


def console_main() -> None:
    """The ``lgb-risk`` command: :func:`main`, then exit with its status. Objects still alive
    then are left out of Python's last search for reference cycles (``gc.freeze``): over the
    objects of SciPy's and scikit-learn's modules, that search made up most of the exit time of
    an ``lgb-risk run`` (``scripts/bench_jobs.py`` times whole runs). Every file is closed by
    then, and exit handlers still run."""
    status = main()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    console_main()
