"""The ``lgb-risk`` command line.

``lgb-risk evaluate QRELS RUN [RUN ...]``  TREC runs against qrels, gdeval.pl conventions, with
                                          risk measures across the runs.
``lgb-risk risk SCORES.csv``              risk measures from a per-topic table.
``lgb-risk run [CONFIG]``                  run (or resume) an experiment: split, baselines,
                                          learners x alpha x folds, report.
``lgb-risk split CONFIG`` / ``baselines``  run an experiment's first stages only.
``lgb-risk active POOL --scores FILE``     estimate a ranker's DCG/ERR on a labelling budget
                                          ([AE]), or simulate active against passive.
``lgb-risk demo``                         evaluate a small synthetic TREC collection.

Run ``lgb-risk COMMAND --help`` for the options.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from lgb_risk import data, trec
from lgb_risk import measures as registry
from lgb_risk._io import atomic_write_text
from lgb_risk.conventions import CONVENTIONS, resolve
from lgb_risk.risk import risk_rows

FORMATS = ("table", "csv", "json")
DEFAULT_ALPHAS = (0.0, 1.0, 5.0, 10.0)


def _alpha_label(alpha: float) -> str:
    return f"{alpha:g}"


def _nonnegative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"alpha must be a number >= 0, got {text!r}") from None
    if not np.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"alpha must be a finite number >= 0, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _cell(value, decimals: int, missing: str) -> str:
    """One printed cell: floats with ``decimals`` digits, NaN as ``missing``."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        return missing if np.isnan(value) else f"{value:.{decimals}f}"
    return str(value)


def _json_value(value, decimals: int):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if np.isnan(value) else round(float(value), min(decimals, 15))
    return value


def write_output(table, fmt: str, out: str | None, decimals: int = 6) -> None:
    """Print or write a result table; a file is written whole or not at all (atomic rename).

    ``table`` is a mapping of column name to values (all of one length), or a DataFrame.
    ``table``: columns right-aligned, NaN as ``-``; ``csv``: NaN empty; ``json``: a list of
    records, NaN as null.
    """
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
        writer.writerows([_cell(v, decimals, "") for v in row] for row in rows)
        text = buffer.getvalue()
    elif fmt == "json":
        import json

        text = json.dumps([{n: _json_value(v, decimals) for n, v in zip(names, row)}
                           for row in rows], indent=1) + "\n"
    else:
        cells = [[_cell(v, decimals, "-") for v in row] for row in rows]
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


def _per_topic_matrix(results: dict, measure: str) -> np.ndarray:
    """Runs × topics values of one measure (topics in natural order); every run must cover the
    same topics."""
    topic_sets = {name: set(r.topics) for name, r in results.items()}
    union = set().union(*topic_sets.values())
    for name, topics in topic_sets.items():
        missing = union - topics
        if missing:
            shown = ", ".join(trec.natural_topic_order(missing)[:10])
            raise ValueError(
                f"run {name!r} has no ranking for topic(s) {shown} that other runs have; risk "
                "measures compare runs topic by topic, so every run must cover the same topics "
                "(--missing-topics zero scores a missing topic 0)"
            )
    order = trec.natural_topic_order(union)
    rows = []
    for r in results.values():
        position = {t: i for i, t in enumerate(r.topics)}
        rows.append(r.values[measure][[position[t] for t in order]])
    return np.vstack(rows)


_TASK = None


def _set_task(task) -> None:
    """The judgments and options every run is evaluated with (set once per worker process)."""
    global _TASK
    _TASK = task


def _evaluate_path(path):
    judged, measures, conv, max_label = _TASK
    return trec.evaluate_columns(judged, data.read_run_columns(path), measures, convention=conv,
                                 max_label=max_label)


def evaluate_runs(qrels_path, run_paths, measures, *, baseline=None, alphas=DEFAULT_ALPHAS,
                  per_topic=False, max_label=4, convention="gdeval", missing_topics=None,
                  gain=None, jobs=1, layout="wide") -> dict:
    """What ``lgb-risk evaluate`` prints, as a mapping of column name to values (see the
    command's help): per topic, or a summary in the ``wide`` layout (one row per run) or the
    ``long`` one (one row per run, measure and α)."""
    for m in measures:
        registry.parse(m)
    conv = resolve(convention, missing_topics=missing_topics, label_gain=gain)
    paths = [Path(p) for p in run_paths]
    names = [data.run_name(p) for p in paths]
    if baseline is not None and baseline not in names:
        if not Path(baseline).is_file():
            raise ValueError(f"--baseline {baseline!r} is neither one of the runs "
                             f"({', '.join(names)}) nor a run file")
        paths.append(Path(baseline))
        names.append(data.run_name(baseline))
        baseline = names[-1]
    duplicated = {n for n in names if names.count(n) > 1}
    if duplicated:
        raise ValueError(f"two runs share the name {sorted(duplicated)[0]!r} (runs are named by "
                         "file name without extension); rename one")
    judged = trec.judgments(data.read_qrels_columns(qrels_path))
    task = (judged, measures, conv, max_label)
    if jobs > 1 and len(paths) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        with ProcessPoolExecutor(min(jobs, len(paths)), mp_context=context,
                                 initializer=_set_task, initargs=(task,)) as pool:
            evaluated = list(pool.map(_evaluate_path, paths))
    else:
        _set_task(task)
        evaluated = [_evaluate_path(path) for path in paths]
    results = dict(zip(names, evaluated))
    for name, result in results.items():
        if result.unscored:
            shown = ", ".join(result.unscored[:10]) + (", ..." if len(result.unscored) > 10
                                                        else "")
            print(f"note: run {name!r} ranks {len(result.unscored)} topic(s) the qrels do not "
                  f"score under --convention {conv.name} ({shown}): not evaluated",
                  file=sys.stderr)
        if result.missing:
            done = ("scored 0 and counted in the means" if conv.missing_topics == "zero" else
                    "left out of its means (--missing-topics zero counts them as 0)")
            shown = ", ".join(result.missing[:10]) + (", ..." if len(result.missing) > 10 else "")
            print(f"note: run {name!r} has no ranking for {len(result.missing)} topic(s) the "
                  f"qrels score ({shown}): {done}", file=sys.stderr)
    if per_topic:
        columns = {"run": [n for n, r in results.items() for _ in r.topics],
                   "topic": [t for r in results.values() for t in r.topics]}
        for m in measures:
            columns[m] = np.concatenate([r.values[m] for r in results.values()])
        return columns

    counts = {"topics": [len(results[n].topics) for n in names],
              "missing": [len(results[n].missing) for n in names]}
    means = {m: [results[n].values[m].mean() for n in names] for m in measures}
    risks = {}
    if len(names) < 2:
        print("note: risk measures need at least two runs; printing means only", file=sys.stderr)
    for m in (measures if len(names) > 1 else []):
        low = registry.parse(m).measure.bounds[0]
        if low is None or low < 0:
            print(f"note: no risk measures for {m}: its values can be negative, and ZRisk and "
                  "GeoRisk are defined for effectiveness >= 0", file=sys.stderr)
            continue
        risks[m] = risk_rows(_per_topic_matrix(results, m), names, alphas, baseline)
    if layout == "long":
        return _long_summary(names, counts, means, risks)
    columns = {"run": names, **counts, **means}
    for m, rows in risks.items():
        for alpha in dict.fromkeys(row["alpha"] for row in rows):
            block = {row["system"]: row for row in rows if row["alpha"] == alpha}
            for field in rows[0]:
                if field not in ("system", "alpha", "mean"):
                    columns[f"{m}_{field}_a{_alpha_label(alpha)}"] = [block[n][field]
                                                                      for n in names]
    return columns


def _long_summary(names, counts, means, risks) -> dict:
    """One row per run and measure (and α, with risk measures): a table that fits a terminal."""
    rows = []
    for m, values in means.items():
        for i, name in enumerate(names):
            base = {"run": name, "measure": m, "topics": counts["topics"][i],
                    "missing": counts["missing"][i], "mean": values[i]}
            if m not in risks:
                rows.append(base)
                continue
            for row in risks[m]:
                if row["system"] == name:
                    rows.append({**base, **{k: v for k, v in row.items()
                                            if k not in ("system", "mean")},
                                 "alpha": _alpha_label(row["alpha"])})
    fields = list(dict.fromkeys(field for row in rows for field in row))
    return {f: [row.get(f, np.nan) for row in rows] for f in fields}


def risk_from_table(path, *, alphas=DEFAULT_ALPHAS, baseline=None, measure=None):
    """What ``lgb-risk risk`` prints: risk measures from a per-topic CSV, either long
    ``system,topic,score`` or ``lgb-risk evaluate --per-topic`` output (``run,topic,MEASURE...``,
    one measure chosen by ``measure`` where there are several)."""
    import pandas as pd

    from lgb_risk.risk import risk_table

    if not Path(path).is_file():
        raise FileNotFoundError(f"no such file: {path}")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a CSV table ({exc})") from None
    columns = [str(c) for c in frame.columns]
    if columns == ["system", "topic", "score"]:
        score_column = "score"
    elif columns[:2] == ["run", "topic"] and len(columns) > 2:
        measures = columns[2:]
        if measure is None and len(measures) > 1:
            raise ValueError(f"{path} holds several measures ({', '.join(measures)}); choose "
                             "one with --measure")
        score_column = measure or measures[0]
        if score_column not in measures:
            raise ValueError(f"{path} has no measure {score_column!r}; it has "
                             f"{', '.join(measures)}")
        frame = frame.rename(columns={"run": "system"})
    else:
        raise ValueError(f"{path}: header must be 'system,topic,score' or 'run,topic,MEASURE,...' "
                         f"(lgb-risk evaluate --per-topic), got {','.join(columns)!r}")
    if frame.empty:
        raise ValueError(f"{path}: no score row after the header")
    values = np.empty(len(frame))
    for i, (system, topic, text) in enumerate(zip(frame["system"], frame["topic"],
                                                  frame[score_column])):
        where = f"{path}:{i + 2}: system {system!r}, topic {topic!r}"
        if not text.strip():
            raise ValueError(f"{where}: the score is empty")
        try:
            values[i] = float(text)
        except ValueError:
            raise ValueError(f"{where}: the score must be a number, got {text!r}") from None
        if not np.isfinite(values[i]):
            raise ValueError(f"{where}: the score must be finite, got {text!r}")
        if values[i] < 0:
            raise ValueError(f"{where}: the score {text} is negative; ZRisk and GeoRisk are "
                             "defined for effectiveness scores >= 0")
    dup = frame.duplicated(["system", "topic"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(f"{path}:{i + 2}: system {frame['system'].iloc[i]!r} has a second score "
                         f"for topic {frame['topic'].iloc[i]!r}")
    systems = list(dict.fromkeys(frame["system"]))
    topics = list(dict.fromkeys(frame["topic"]))
    matrix = frame.assign(score=values).pivot(index="system", columns="topic", values="score")
    return risk_table(matrix.loc[systems, topics], alphas, baseline)


def _cmd_evaluate(args) -> None:
    table = evaluate_runs(args.qrels, args.runs, args.measures, baseline=args.baseline,
                          alphas=args.alpha, per_topic=args.per_topic, max_label=args.max_label,
                          convention=args.convention, missing_topics=args.missing_topics,
                          gain=args.gain, jobs=args.jobs,
                          layout=args.layout or ("long" if args.format == "table" else "wide"))
    if args.columns:
        unknown = [c for c in args.columns if c not in table]
        if unknown:
            raise ValueError(f"--columns: no column {unknown[0]!r}; the table has "
                             f"{', '.join(table)}")
        table = {c: table[c] for c in args.columns}
    write_output(table, args.format, args.output, decimals=args.decimals)


def _cmd_risk(args) -> None:
    write_output(risk_from_table(args.scores, alphas=args.alpha, baseline=args.baseline,
                                 measure=args.measure),
                 args.format, args.output, decimals=args.decimals)


def _cmd_demo(args) -> None:
    from lgb_risk import synthetic

    directory = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lgb_risk_demo_"))
    qrels_path, run_paths = synthetic.write_trec_collection(directory, seed=args.seed)
    print(f"wrote a synthetic collection to {directory}; evaluating it as\n"
          f"  lgb-risk evaluate {qrels_path} {' '.join(map(str, run_paths))} "
          f"--measures ndcg@20 err@20 --baseline run1 --alpha 1 5\n", file=sys.stderr)
    table = evaluate_runs(qrels_path, run_paths, ["ndcg@20", "err@20"], baseline="run1",
                          alphas=(1.0, 5.0))
    write_output(table, "table", None, decimals=4)


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

    pool, scores, scores2, P, doc_cost = _active_inputs(args)
    options = {"measure": args.measure, "k": args.k, "scores2": scores2, "doc_cost": doc_cost}
    if args.simulate:
        frame = active.simulate(P, scores, pool.group, pool.y, args.budget,
                                repetitions=args.repetitions, seed=args.seed, **options)
        frame["se"] = frame["abs_error_sd"] / np.sqrt(frame["repetitions"])
        frame = frame[["method", "budget", "truth", "mean_abs_error", "se", "sq_error",
                       "wrong_sign", "draws", "predicted_ratio"]]
        if args.figure:
            _active_figure(frame, args.figure)
    else:
        starts = np.concatenate(([0], np.cumsum(pool.group)))
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


def _active_figure(frame, path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("--figure needs matplotlib (pip install 'lgb_risk[plot]')") from None
    from lgb_risk.active.figures import plot_errors

    fig, ax = plt.subplots(figsize=(5, 3.6))
    plot_errors(ax, frame)
    ax.legend(fontsize=8)
    fig.tight_layout()
    from lgb_risk._io import atomic_write

    atomic_write(Path(path), lambda tmp: fig.savefig(tmp, format="png", dpi=100))
    plt.close(fig)


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
    from lgb_risk.config import load_config

    config = load_config(args.config)
    if args.data is not None:
        config["data"]["source"] = "letor"
        config["data"]["path"] = str(Path(args.data).resolve())
    return config


def _cmd_run(args, stop_after=None) -> None:
    from lgb_risk.experiment import run_experiment

    config = _experiment_config(args)
    out = Path(args.out) if args.out else Path("runs") / config["name"]
    result = run_experiment(config, out, jobs=getattr(args, "jobs", 1), stop_after=stop_after)
    print(f"wrote {result}")
    if stop_after is None:
        print(result.read_text())


def _add_output_options(parser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="table (aligned text, default), csv or json (a list of records)")
    parser.add_argument("--decimals", type=_decimals, default=6,
                        help="digits after the decimal point (default 6; 17 keeps every double)")
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")


def build_parser() -> argparse.ArgumentParser:
    from lgb_risk import __version__

    parser = argparse.ArgumentParser(prog="lgb-risk", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"lgb-risk {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

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
    ev.add_argument("--convention", choices=list(CONVENTIONS), default="gdeval",
                    help="the tool whose conventions to follow (default gdeval): gain, "
                    "discount, ties, empty and short queries, AP's denominator, which topics "
                    "count; see the README's table")
    ev.add_argument("--gain", choices=("exponential", "linear"),
                    help="override the convention's gain of a grade g: 2**g - 1 or g")
    ev.add_argument("--missing-topics", choices=("skip", "zero"),
                    help="a topic the qrels score but a run lacks: left out of the run's means "
                    "(skip, the tools' default) or scored 0 (zero, their -c)")
    ev.add_argument("--baseline", help="one of the runs (by name or path) or another run file")
    ev.add_argument("--alpha", nargs="+", type=_nonnegative_float, default=list(DEFAULT_ALPHAS),
                    help="risk sensitivities alpha >= 0 (default 0 1 5 10)")
    ev.add_argument("--per-topic", action="store_true", help="one row per run and topic")
    ev.add_argument("--columns", nargs="+", metavar="COLUMN",
                    help="print only these columns, in this order (e.g. run measure alpha mean "
                    "georisk trisk_p)")
    ev.add_argument("--layout", choices=("long", "wide"),
                    help="summary layout: long, one row per run, measure and alpha (default for "
                    "--format table), or wide, one row per run with MEASURE_RISK_aALPHA columns "
                    "(default for csv and json)")
    ev.add_argument("--max-label", type=int, default=4, help="ERR's highest grade (default 4)")
    ev.add_argument("--jobs", type=_positive_int, default=1,
                    help="runs read and evaluated in parallel processes (default 1)")
    _add_output_options(ev)
    ev.set_defaults(func=_cmd_evaluate)

    rk = sub.add_parser(
        "risk", help="risk measures from a per-topic table (CSV: system,topic,score)",
        description="Risk measures of every system of a per-topic table: in long format with "
        "header system,topic,score, or the output of lgb-risk evaluate --per-topic --format csv "
        "(header run,topic,MEASURE...; --measure chooses one). One row per system and alpha: "
        "mean, ZRisk and GeoRisk within "
        "the population of all systems ([GEO] Table 5), T*Risk against the per-topic mean, and "
        "with --baseline URisk, TRisk, its p-value, and ZRisk/GeoRisk against that single "
        "baseline ([GEO] Table 4).")
    rk.add_argument("scores", help="the per-topic CSV")
    rk.add_argument("--alpha", nargs="+", type=_nonnegative_float, default=list(DEFAULT_ALPHAS),
                    help="risk sensitivities alpha >= 0 (default 0 1 5 10)")
    rk.add_argument("--baseline", help="a system of the table")
    rk.add_argument("--measure", help="with evaluate --per-topic output: the measure column")
    _add_output_options(rk)
    rk.set_defaults(func=_cmd_risk)

    for name, stage, text in (
            ("run", None, "run or resume an experiment (the papers' protocol), write its report"),
            ("split", "split", "write an experiment's query split only"),
            ("baselines", "baselines", "write an experiment's split and baselines only")):
        cmd = sub.add_parser(name, help=text, description=text + ". A finished stage or unit of "
                             "work is never redone: re-running resumes.")
        cmd.add_argument("config", nargs="?" if name == "run" else None,
                         help="TOML configuration (run: default is the built-in demo)")
        cmd.add_argument("--data", help="data path overriding the configuration's (a folder of "
                         "Fold*/ or a LETOR file)")
        cmd.add_argument("--out", help="output folder (default: runs/NAME)")
        if name == "run":
            cmd.add_argument("--jobs", type=_positive_int, default=1,
                             help="units of work trained in parallel processes (default 1)")
        cmd.set_defaults(func=lambda args, stage=stage: _cmd_run(args, stage))

    ac = sub.add_parser(
        "active", help="estimate a ranker's DCG/ERR on a labelling budget ([AE])",
        description="Active evaluation (Sawade et al., Machine Learning 2013): estimate the mean "
        "DCG@k or ERR@k of a ranker over a pool of queries (or the difference of two rankers) "
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
    ac.add_argument("--measure", choices=("dcg", "err"), default="dcg",
                    help="the measure to estimate (default dcg)")
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


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"lgb-risk {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
