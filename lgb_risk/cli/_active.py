"""``lgb-risk active``: a ranker's effectiveness (or two rankers' difference) estimated on a
labelling budget, or the estimators' errors simulated on a fully labelled pool."""

from __future__ import annotations

import sys

import numpy as np

from lgb_risk import data
from lgb_risk._measuring.segments import offsets_from_group
from lgb_risk._runtime.progress import on_terminal
from lgb_risk.cli._figure import figure_file_format, refuse_figure_options_alone
from lgb_risk.cli._output import write_output


def _active_inputs(args):
    """Pool, scores, relevance model and per-document costs from the files named on the line."""
    from lgb_risk import active

    pool = data.load_letor(args.pool, n_features=args.n_features)
    scores = data.read_pool_scores(args.scores, pool)
    scores2 = None if args.scores2 is None else data.read_pool_scores(args.scores2, pool)
    highest = int(pool.y.max())
    if args.grades is not None and args.grades < max(2, highest + 1):
        raise ValueError(f"--grades {args.grades}: the pool's labels go up to {highest}, so the "
                         f"relevance model needs at least {max(2, highest + 1)} grades")
    if args.probabilities:
        P = data.read_number_rows(args.probabilities, "one document's grade probabilities")
        if P.shape[0] != pool.y.size:
            raise ValueError(f"{args.probabilities} has {P.shape[0]} rows but the pool "
                             f"{args.pool} has {pool.y.size} documents; one row of grade "
                             "probabilities each, in the pool's order")
        sums = P.sum(axis=1)
        off = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
        if off.size:
            raise ValueError(f"{args.probabilities}:{int(off[0]) + 1}: the grade "
                             f"probabilities sum to {float(sums[off[0]])!r}, not 1")
        if P.shape[1] < highest + 1:
            raise ValueError(f"{args.probabilities} describes {P.shape[1]} grades, but the "
                             f"pool's labels go up to {highest}")
    elif args.relevance_data:
        labelled = data.load_letor(args.relevance_data, n_features=pool.X.shape[1])
        grades = int(max(labelled.y.max(), highest)) + 1 if args.grades is None \
            else args.grades
        P = active.relevance_probabilities(labelled.X, labelled.y, pool.X, grades,
                                           kind=args.relevance_model)
    else:
        grades = highest + 1 if args.grades is None else args.grades
        P = active.uniform_relevance(pool.y.size, max(grades, 2))
    doc_cost = None
    if args.doc_cost is not None:
        doc_cost = data.read_number_rows(args.doc_cost, "one document's labelling cost",
                                         columns=1, positive=True)[:, 0]
        if doc_cost.size != pool.y.size:
            raise ValueError(f"{args.doc_cost} has {doc_cost.size} costs but the pool "
                             f"{args.pool} has {pool.y.size} documents; one cost per "
                             "document, in the pool's order")
    return pool, scores, scores2, P, doc_cost


def active_command(args) -> None:
    import pandas as pd

    from lgb_risk import active

    if args.figure and not args.simulate:
        raise ValueError("--figure draws the simulation's errors: it needs --simulate")
    refuse_figure_options_alone(args, "--figure FILE")
    figure_format = None if args.figure is None else figure_file_format(args.figure)
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
    if figure_format is not None:  # the table first: a figure that fails loses no result
        what = "difference of two rankers" if scores2 is not None else "one ranker"
        title = (f"{options['measure'].label}, {what}\nerror by budget, "
                 f"{args.repetitions} repetitions" if args.figure_titles else None)
        _write_active_figure(frame, args.figure, figure_format, args.figure_size or "page",
                             title)


def _write_active_figure(frame, path: str, figure_format: str, figure_size: str,
                         title: str | None) -> None:
    """``--figure FILE``: each method's error against budget
    (:func:`lgb_risk.active.figures.plot_errors`) as a paper prints it."""
    from lgb_risk.active.figures import plot_errors
    from lgb_risk.plots import print_figure, save_figure

    def draw(ax) -> None:
        plot_errors(ax, frame, title=title)
        ax.legend(loc="lower left")  # errors fall with the budget: that corner is empty

    figure = print_figure(draw, figure_size)
    save_figure(figure, path, figure_format, figure_size)
