"""``lgb-risk evaluate``, ``risk``, ``power`` and ``demo``: TREC runs evaluated with their risk
measures against a baseline, their figures and tables, and the topics a comparison needs."""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path

from lgb_risk import data, trec
from lgb_risk._files.atomic import atomic_write_text, writable_folder
from lgb_risk._runtime.progress import on_terminal
from lgb_risk.cli._figure import refuse_figure_options_alone, require_matplotlib
from lgb_risk.cli._output import headers_given, note_placement, refuse_unknown_headers, write_output
from lgb_risk.cli._parser import build_parser
from lgb_risk.conventions import resolve


def _refuse_ignored_options(args) -> None:
    """Refuse, before any work, an option that the others given would make do nothing."""
    refuse_figure_options_alone(args, "--figure DIR")
    if args.test == "randomisation":
        if args.baseline is None:
            raise ValueError("--test randomisation tests each run against --baseline: give one")
        if getattr(args, "per_topic", False):
            raise ValueError("--per-topic prints each topic's values, without tests: --test "
                             "randomisation would be ignored; drop it, or drop --per-topic")
    if getattr(args, "table_alpha", None) is not None:
        paper_table = (args.format == "latex" and args.layout is None and not args.columns
                       and not args.per_topic)
        if not paper_table and args.figure is None:
            raise ValueError("--table-alpha sets the α of the paper's LaTeX table (--format "
                             "latex) and of the TR/TJ figures (--figure): with neither it would "
                             "be ignored; add one, or drop it")
        if args.baseline is None:
            raise ValueError("--table-alpha sets the α of the comparisons with --baseline: "
                             "give one")
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


def _evaluate(args) -> tuple[dict, str | None, str]:
    """The runs of ``lgb-risk evaluate`` evaluated, ``({run: TopicValues}, baseline, rule)``
    with ``rule`` what the summary does with runs that lack topics
    (:func:`lgb_risk.trec.partial_runs_rule`), its figures written; notes on standard error."""
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
    rule = trec.partial_runs_rule(conv)
    if args.per_topic:
        return results, baseline, rule
    if len(results) < 2:
        print("note: risk measures need at least two runs; printing means only", file=sys.stderr)
    else:
        for m in args.measures:
            if not trec.risk_measures_of(m):
                print(f"note: no risk measures for {m}: its values can be negative, and ZRisk "
                      "and GeoRisk are defined for effectiveness >= 0", file=sys.stderr)
    if args.correction is not None and baseline is None:
        raise ValueError("--correction corrects the TRisk p-values against --baseline: give one")
    if rule == "gdeval" and baseline is not None and len(results) > 1:
        for note in trec.partial_run_notes(results, baseline):
            print(f"note: {note}", file=sys.stderr)
    if args.figure is not None:
        _write_figures({m: trec.per_topic_frame(results, m) for m in args.measures
                        if trec.risk_measures_of(m)}, args, baseline)
    return results, baseline, rule


def _figure_folder(directory) -> None:
    """Refuse, before any work, a ``--figure`` folder that cannot take the figures."""
    writable_folder(directory, "--figure")


def _write_figures(scores: dict, args, baseline) -> None:
    """``--figure DIR``: the runs against the baseline
    (:func:`lgb_risk.plots.write_run_figures`)."""
    if baseline is None:
        raise ValueError("--figure draws the runs against --baseline: give one")
    require_matplotlib()
    import time

    from lgb_risk.plots import write_run_figures

    started = time.monotonic()
    shown = on_terminal(sys.stderr)

    def progress(done: int, total: int) -> None:
        if shown and time.monotonic() - started > 1.0:  # a line only where it takes a while
            print(f"\rwriting figures to {args.figure}: {done}/{total}", end="",
                  file=sys.stderr, flush=True)

    table_alpha = getattr(args, "table_alpha", None)
    alpha = args.alpha[-1] if table_alpha is None else table_alpha
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        paths = write_run_figures(scores, baseline, args.figure, alphas=args.alpha, alpha=alpha,
                                  figure_format=args.figure_format or "png",
                                  figure_size=args.figure_size or "page",
                                  correction=args.correction, titles=args.figure_titles,
                                  progress=progress)
    if shown and time.monotonic() - started > 1.0:
        print(file=sys.stderr)
    for warning in caught:
        print(f"note: {warning.message}", file=sys.stderr)
    which = ("the last --alpha, as the LaTeX table's" if table_alpha is None
             else "--table-alpha, as the LaTeX table's")
    print(f"wrote {len(paths)} figure(s) to {args.figure} (TR/TJ at α = {alpha:g}, {which})",
          file=sys.stderr)


def _shown(topics) -> str:
    return ", ".join(topics[:10]) + (", ..." if len(topics) > 10 else "")


def evaluate_command(args) -> None:
    from lgb_risk.latex import escape, measures_named

    results, baseline, rule = _evaluate(args)
    headers = headers_given(args.header)
    caption = None if args.caption is None else escape(args.caption)
    if args.per_topic:
        if args.decimals is None and args.format in ("csv", "json"):
            args.decimals = 17  # every bit: `lgb-risk risk` reads it back to evaluate's values
        table = trec.per_topic_table(results, args.measures, baseline=baseline,
                                     alphas=args.alpha if baseline is not None else ())
        _write(table, args, headers,
               caption or f"{measures_named(args.measures)} of each run on each topic" + (
                   f", and its risk-weighted difference to {escape(baseline)}"
                   if baseline is not None else "") + ".")
        return
    if args.format == "latex" and args.layout is None and not args.columns:
        # The paper's table: a row per run, per measure its mean and, against the baseline,
        # TRisk (one column) or URisk and TRisk (the page) at the last --alpha.
        refuse_unknown_headers(headers, args.measures, "measure")
        summary = trec.RunSummary(results, args.measures, baseline=baseline, alphas=args.alpha,
                                  correction=args.correction,
                                  loss_fraction=args.loss_fraction, test=args.test,
                                  partial_runs=rule)
        text = summary.latex(span=args.span or "column", labels=headers,
                             alpha=args.table_alpha,
                             decimals=3 if args.decimals is None else args.decimals,
                             caption=caption, label=args.label)
        note_placement(text, args.span)
        if args.output is None:
            sys.stdout.write(text)
        else:
            atomic_write_text(args.output, text)
        return
    layout = args.layout or ("long" if args.format == "table" or (
        args.columns and {"measure", "alpha"} & set(args.columns)) else "wide")
    table = trec.summary_table(results, args.measures, alphas=args.alpha, baseline=baseline,
                               layout=layout, correction=args.correction,
                               loss_fraction=args.loss_fraction, test=args.test,
                               partial_runs=rule)
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


def _write(table: dict, args, headers: dict, caption: str | None,
           baseline: str | None = None) -> None:
    """Write ``evaluate``'s table in ``--format`` (LaTeX with its headers and caption)."""
    refuse_unknown_headers(headers, list(table), "column")
    latex = None
    if args.format == "latex":
        from lgb_risk.latex import plain_text

        headers = {c: plain_text(text, f"--header {c}=") for c, text in headers.items()}
        latex = {"headers": headers, "caption": caption, "label": args.label,
                 "test": args.test, "baseline": baseline, "placement": args.span or "auto"}
    write_output(table, args.format, args.output, decimals=args.decimals, latex=latex,
                 placed=lambda text: note_placement(text, args.span))


def risk_command(args) -> None:
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


def power_command(args) -> None:
    from lgb_risk.power import power_table

    if args.draws is not None and not args.simulate:
        raise ValueError("--draws sets the simulations' draws: give --simulate too, or leave "
                         "--draws out")
    if args.power <= args.level:
        raise ValueError(f"--power {args.power:g} must be above --level {args.level:g}: with no "
                         "difference at all the test already rejects in a share --level of "
                         "samples (usual: --power 0.8 --level 0.05)")
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
    source = args.inputs[0] if args.qrels is None else "the runs"
    for run, row in scores.iterrows():
        if row.isna().any():
            missing = ", ".join(map(str, row.index[row.isna()]))
            raise ValueError(f"{source}: run {run!r} has no score for topic(s) {missing}, which "
                             "other runs have: the tests pair every topic (give each run every "
                             "topic, or leave the topic out of every run)")
    if args.baseline not in scores.index:
        raise ValueError(f"--baseline {args.baseline!r} is not among the runs "
                         f"{', '.join(map(str, scores.index))}")
    table = power_table(scores, args.baseline, args.alpha, difference=args.difference,
                        power=args.power, level=args.level, correction=args.correction,
                        confidence=args.confidence, pilot_resamples=args.pilot_resamples,
                        simulate=args.simulate,
                        draws=200 if args.draws is None else args.draws)
    write_output(table, args.format, args.output, decimals=args.decimals)


def demo_command(args) -> None:
    from lgb_risk.experiment import synthetic

    directory = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="lgb_risk_demo_"))
    qrels_path, run_paths = synthetic.write_trec_collection(directory, seed=args.seed)
    print(f"wrote a synthetic collection to {directory}; evaluating it as\n"
          f"  lgb-risk evaluate {qrels_path} {' '.join(map(str, run_paths))} "
          f"--measures ndcg@20 err@20 --baseline run1 --alpha 1 5\n", file=sys.stderr)
    args = build_parser().parse_args(["evaluate", str(qrels_path), *map(str, run_paths),
                                      "--measures", "ndcg@20", "err@20", "--baseline", "run1",
                                      "--alpha", "1", "5", "--decimals", "4"])
    evaluate_command(args)
