"""Tables and figures of an experiment run ([GEO] Table 7 layout, [GEO] Fig. 3, [TR] Fig. 2).

For each reported measure M (``[evaluation] measures``; NDCG@k by default), every learner and α,
over all main queries (the folds' test parts together): mean M and the median number of trees
kept; the risk-reward summary (:func:`lgb_risk.risk.summary`)
against the feature baseline and, macro-averaged, against the learned baselines; URisk and
TRisk against the feature baseline, and GeoRisk and T*Risk against the learned baselines, at the
report's α. Each comparison with plain LambdaMART has a paired test (:mod:`lgb_risk.significance`:
t-tests of per-query M, of the per-query losses whose means are Risk, of the per-query x_q
behind T*Risk; a randomisation test of GeoRisk, its p-value's Monte Carlo error stated and
enough sign flips drawn that the error cannot move the decision at 0.05 or 0.05 / m) and states
the smallest difference the test can detect with these queries (power 0.8, level 0.05,
``*_detectable``) and the queries that would detect the observed difference with power 0.8
after the report's correction, bounded by Bonferroni's 0.05 / m over the m learners compared
(``*_needed``, NaN where not determined; ``*_needed_low`` and ``*_needed_high``, its 95%
bootstrap interval; for the t-tests ``*_needed_resampled``, the t-test's answer on queries drawn
from the observed differences: :mod:`lgb_risk.power` says why). With several repeats, how far a
query's loss repeats from one split to another. Written as ``report.md`` (a part per measure),
``report.csv`` (the first measure; ``report__MEASURE.csv`` for each other), ``report.tex``;
figures (``plot`` extra) as PNG files (``[report] figure_format``: or PDF, SVG), suffixed
``__MEASURE`` for the measures after the first.

References: [GEO], [TR] (:mod:`lgb_risk.references`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lgb_risk import power, risk, significance
from lgb_risk._files.atomic import atomic_write_text
from lgb_risk._runtime.machine import environment
from lgb_risk.experiment.figures import write_figures
from lgb_risk.experiment.layout import RunFolder, all_units
from lgb_risk.experiment.measuring import RunMeasures
from lgb_risk.latex import escape, latex_table
from lgb_risk.objectives import OBJECTIVES

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

    from lgb_risk.experiment.config import ExperimentConfig
    from lgb_risk.measures import MeasureSpec

__all__ = ["per_repeat_results", "collect_results", "tree_counts", "tested_counts",
           "per_repeat_baselines", "averaged_baselines", "loss_repeatability", "results_table",
           "write_report"]


def _averaged(per_repeat: list) -> pd.DataFrame:
    """Mean over repeats of per-query tables (rows: queries), rows in order of first
    appearance: a query counts once, whatever the number of repeats that tested it."""
    stacked = pd.concat(per_repeat)
    order = list(dict.fromkeys(stacked.index))
    return stacked.groupby(level=0, sort=False).mean().loc[order]


def _first_measure(config: ExperimentConfig, out, measure: MeasureSpec | None) -> MeasureSpec:
    """``measure``, or the run's first reported measure."""
    return RunFolder(out).measures(config).reported[0] if measure is None else measure


def per_repeat_results(config: ExperimentConfig, out: str | os.PathLike,
                       measure: MeasureSpec | None = None) -> list[pd.DataFrame]:
    """Per-query test values of ``measure`` (default: the first reported) of every
    (learner, α) in each repeat: rows = that repeat's main queries, columns = (learner, α)."""
    measure = _first_measure(config, out, measure)
    tables = []
    for folder in RunFolder(out).repeats(config):
        columns: dict = {}
        for unit in all_units(config):
            if unit.repeat != folder.repeat:
                continue
            if not folder.unit_path(unit).exists():
                raise FileNotFoundError(f"unit {unit} has no results ({folder.unit_path(unit)}); "
                                        "run the experiment again to finish it")
            columns.setdefault((unit.learner, unit.alpha), []).append(folder.read_unit(unit))
        table = pd.DataFrame({key: pd.concat(parts).set_index("query_id")[measure.label]
                              for key, parts in columns.items()})
        result = table.loc[folder.main_queries()]
        if result.isna().any().any():
            raise ValueError("the units' test parts do not cover every main query once")
        tables.append(result)
    return tables


def collect_results(config: ExperimentConfig, out: str | os.PathLike,
                    measure: MeasureSpec | None = None) -> pd.DataFrame:
    """Per-query test values of ``measure`` (default: the first reported) of every
    (learner, α), averaged over the repeats that tested the query: rows = queries, columns =
    (learner, α)."""
    return _averaged(per_repeat_results(config, out, measure))


def tree_counts(config: ExperimentConfig, out: str | os.PathLike) -> dict:
    """Median number of trees of the models kept, over every fold and repeat, per (learner, α)."""
    trees: dict = {}
    for folder in RunFolder(out).repeats(config):
        for unit in all_units(config):
            if unit.repeat == folder.repeat:
                trees.setdefault((unit.learner, unit.alpha), []).append(
                    int(folder.read_unit(unit)["best_iteration"].iloc[0]))
    return {key: float(np.median(values)) for key, values in trees.items()}


def tested_counts(config: ExperimentConfig, out: str | os.PathLike) -> pd.Series:
    """How many repeats tested each query (its number of repeats as a main query)."""
    queries = [q for folder in RunFolder(out).repeats(config) for q in folder.main_queries()]
    return pd.Series(queries).value_counts(sort=False)


def per_repeat_baselines(config: ExperimentConfig, out: str | os.PathLike,
                         measure: MeasureSpec | None = None,
                         ) -> list[tuple[pd.DataFrame, pd.DataFrame | None]]:
    """Per repeat: per-query values of ``measure`` (default: the first reported) of the
    feature baseline (one column) and of the learned baselines (a column each, or None), rows
    = that repeat's main queries."""
    measure = _first_measure(config, out, measure)
    tables = []
    for folder in RunFolder(out).repeats(config):
        main = folder.main_queries()
        feature_store, learned_store = folder.read_baselines(measure)
        tables.append((pd.DataFrame(feature_store.align(main), index=main),
                       None if learned_store is None
                       else pd.DataFrame(learned_store.align(main), index=main)))
    return tables


def averaged_baselines(config: ExperimentConfig, out: str | os.PathLike,
                       queries: Sequence[str], measure: MeasureSpec | None = None,
                       ) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-query values of ``measure`` (default: the first reported) of the feature baseline
    and (baselines × queries) of the learned ones, averaged over the repeats that tested each
    query, aligned to ``queries``."""
    per_repeat = per_repeat_baselines(config, out, measure)
    feature = _averaged([f for f, _ in per_repeat]).loc[queries].to_numpy()[:, 0]
    learned = [tab for _, tab in per_repeat if tab is not None]
    return feature, (_averaged(learned).loc[queries].to_numpy().T if learned else None)


def loss_repeatability(config: ExperimentConfig, out: str | os.PathLike,
                       measure: MeasureSpec | None = None) -> dict:
    """How far a query's loss to the baselines repeats from one split to another, in
    ``measure`` (default: the first reported).

    For plain LambdaMART in each repeat, every main query's loss max(0, M_b − M) to the feature
    baseline and its mean loss to the learned baselines; for every pair of repeats, the queries
    both tested. Returns, per baseline kind ("feature", "learned"), the pooled pairs (loss in
    the first repeat, loss in the second) and their Pearson r. Empty with one repeat.
    """
    reference = ("LambdaMART", config.learners["LambdaMART"][0])
    losses: dict[str, list] = {"feature": [], "learned": []}
    for result, (feature, learned) in zip(per_repeat_results(config, out, measure),
                                          per_repeat_baselines(config, out, measure)):
        model = result[reference]
        losses["feature"].append(np.maximum(feature.iloc[:, 0] - model, 0))
        if learned is not None:
            losses["learned"].append(np.maximum(learned.sub(model, axis=0), 0).mean(axis=1))
    out_pairs = {}
    for kind, per_repeat in losses.items():
        first, second = [], []
        for i in range(len(per_repeat)):
            for j in range(i + 1, len(per_repeat)):
                both = per_repeat[i].index.intersection(per_repeat[j].index)
                first.append(per_repeat[i].loc[both].to_numpy())
                second.append(per_repeat[j].loc[both].to_numpy())
        if first:
            x, y = np.concatenate(first), np.concatenate(second)
            # Pearson's r from elementwise products and numpy's sums (np.corrcoef goes
            # through BLAS, whose last bits depend on the CPU's kernel).
            dx, dy = x - x.mean(), y - y.mean()
            r = float(np.sum(dx * dy) / np.sqrt(np.sum(dx * dx) * np.sum(dy * dy)))
            out_pairs[kind] = (x, y, r)
    return out_pairs


def _tests(measure: MeasureSpec) -> dict:
    """The report's paired tests against plain LambdaMART: column stem -> (the statistic, the
    per-query values compared and the test); the measure's own column is its name (``ndcg``,
    ``err``)."""
    name = measure.measure.label or measure.measure.name
    return {measure.measure.name: (f"mean {name}", f"{name} (paired t-test)"), **_RISK_TESTS}


_RISK_TESTS = {
    "feature_risk": ("Risk", "loss max(0, M_b − M) (paired t-test)"),
    "learned_risk": ("Risk, learned baselines", "loss averaged over the baselines "
                                                "(paired t-test)"),
    "tstar_urisk": ("URisk against their mean (T*Risk's numerator)",
                    "x_q at the report's α (paired t-test)"),
    "georisk": ("GeoRisk, learned baselines", "GeoRisk at the report's α (paired "
                                              "randomisation test, 4,000 sign flips, more "
                                              "where their error could move the decision)"),
}


def _record(row: dict, stem: str, test, answers: dict | None,
            keys=("needed", "needed_low", "needed_high", "needed_resampled")) -> None:
    """A paired test's p-value and detectable difference, and ``answers``: the queries that
    would detect the observed difference with power 0.8 after the report's correction
    (:mod:`lgb_risk.power`), with their 95% bootstrap interval; None for plain LambdaMART's
    own row."""
    row[f"{stem}_p_vs_lambdamart"] = np.nan if answers is None else test.p_value
    row[f"{stem}_detectable"] = test.detectable
    for key in keys:
        row[f"{stem}_{key}"] = np.nan if answers is None else answers[key]


def results_table(config: ExperimentConfig, out: str | os.PathLike,
                  results: pd.DataFrame | None = None,
                  measure: MeasureSpec | None = None) -> pd.DataFrame:
    """The report's numbers in ``measure`` (default: the first reported), one row per learner
    and α (see the module docstring); the measure's mean is the column of its name (``ndcg``,
    ``err``).

    ``results`` is :func:`collect_results`'s table, read here when not given.
    """
    measure = _first_measure(config, out, measure)
    own = measure.measure.name  # the column of the measure's mean
    results = collect_results(config, out, measure) if results is None else results
    feature, learned = averaged_baselines(config, out, list(results.index), measure)
    trees = tree_counts(config, out)
    alpha = config.report.alpha
    prefix = config.baselines.feature_name  # the feature baseline's columns: PREFIX_reward
    reference = results[("LambdaMART", config.learners["LambdaMART"][0])].to_numpy()
    learned_mean = None if learned is None else learned.mean(axis=0)
    urisk_against = risk.RISK_MEASURES["urisk"].against  # the risk measures' registry
    georisk_against = risk.RISK_MEASURES["georisk"].against

    def compared(m):
        """Per-query values of each tested quantity (by column stem) for the model with
        per-query values m of the measure."""
        values = {own: m, f"{prefix}_risk": np.maximum(feature - m, 0)}
        if learned is not None:
            values["learned_risk"] = np.maximum(learned - m, 0).mean(axis=0)
            values["tstar_urisk"] = risk.risk_deltas(m, learned_mean, alpha)
        return values

    reference_values = compared(reference)
    comparisons = max(1, len(results.columns) - 1)  # every learner row against LambdaMART
    rows = []
    for (learner, a), values in results.items():
        m = values.to_numpy()
        same = np.array_equal(m, reference)
        row = {"learner": OBJECTIVES[learner].paper_name, "alpha": a, own: m.mean(),
               "trees": trees[(learner, a)]}
        row.update({f"{prefix}_{k}": v for k, v in risk.summary(m, feature).items()
                    if k != "mean"})
        if learned is not None:
            row.update({f"learned_{k}": v for k, v in risk.summary(m, learned).items()
                        if k != "mean"})
        tested = compared(m)
        for stem, quantity in tested.items():
            differences = quantity - reference_values[stem]
            _record(row, stem, significance.paired_t_test(quantity, reference_values[stem]),
                    None if same else power.topic_set_answers(differences,
                                                              comparisons=comparisons))
        row["urisk"] = urisk_against(m, feature, alpha)[0]
        t = risk.trisk_if_defined(m, feature, alpha)
        row["trisk"], row["trisk_p"] = (np.nan, np.nan) if t is None else (t.trisk, t.p_value)
        if learned is not None:
            row["georisk"] = georisk_against(m, learned, alpha)[0]
            test = significance.paired_randomisation_test(
                lambda rows: georisk_against(rows, learned, alpha), m, reference,
                resamples=4000, decide_at=(0.05, 0.05 / comparisons))

            def georisk_difference(queries, m=m):
                """The learner's GeoRisk minus LambdaMART's on these queries."""
                both = np.vstack([m[queries], reference[queries]])
                return float(np.subtract(*georisk_against(both, learned[:, queries], alpha)))

            _record(row, "georisk", test, None if same else power.randomisation_test_answers(
                georisk_difference, test, comparisons=comparisons),
                    keys=("needed", "needed_low", "needed_high"))
            row["georisk_p_error"] = np.nan if same else test.p_error
            row["tstar_urisk"] = float(tested["tstar_urisk"].mean())
            assert learned_mean is not None  # as learned is not None
            t_star = risk.trisk_if_defined(m, learned_mean, alpha)
            row["tstar_risk"] = np.nan if t_star is None else t_star.trisk
        rows.append(row)
    return _with_corrections(pd.DataFrame(rows), config.report.correction)


def _with_corrections(table: pd.DataFrame, method: str) -> pd.DataFrame:
    """Each p-value column with a ``_METHOD`` companion: corrected over the rows of the learner
    × α grid that were tested (every row but plain LambdaMART's for the tests against it; every
    row for TRisk's test against the feature baseline)."""
    tested = [c for c in table.columns if c.endswith("_p_vs_lambdamart") or c == "trisk_p"]
    corrected = {f"{c}_{method}": significance.corrected_p_values(table[c].to_numpy(), method)
                 for c in tested}
    return table.assign(**corrected)


def _fmt(value, digits=4):
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "–"
        if np.isinf(value):
            return "∞"
        if digits == 1 and float(value).is_integer():
            return f"{int(value)}"
        return f"{value:.{digits}f}"
    return str(value)


def _markdown(frame: pd.DataFrame, columns: dict) -> str:
    """A Markdown table of ``columns`` (name -> (header, digits))."""
    header = "| " + " | ".join(h for h, _ in columns.values()) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    lines = [header, rule]
    for _, row in frame.iterrows():
        lines.append("| " + " | ".join(_fmt(row[c], d) for c, (_, d) in columns.items()) + " |")
    return "\n".join(lines)


def write_report(config: ExperimentConfig, out: str | os.PathLike) -> Path:
    """Write report.md, report.csv (and report__MEASURE.csv for each reported measure after the
    first), report.tex, environment.json (the versions and machine facts that produced them,
    :func:`lgb_risk._runtime.machine.environment`) and (with matplotlib) the figures; returns
    report.md's path."""
    folder = RunFolder(out)
    measures = folder.measures(config)
    reported = measures.reported
    several = len(reported) > 1
    alpha = config.report.alpha
    split = folder.read_split()
    first = collect_results(config, out, reported[0])
    queries = list(first.index)
    repeats = config.split.repeats
    if repeats == 1:
        tested = (f"{len(queries)} main queries (test parts of all folds), "
                  f"{len(split['heldout_train']) + len(split['heldout_valid'])} held out for the "
                  "learned baselines.")
    else:
        counts = tested_counts(config, out).value_counts().sort_index()
        tested = (f"The protocol repeated {repeats} times with derived seeds (split, learned "
                  f"baselines, folds); {len(queries)} queries tested at least once, each query's "
                  f"{'values' if several else reported[0].measure.label or 'value'} averaged "
                  "over the repeats that tested it before any statistic (n = queries). Repeats "
                  "per query: " + ", ".join(f"{n} queries in {times}"
                                            for times, n in counts.items()) + ".")
    lines = [
        f"# {config.name}: risk-sensitive LambdaMART, {len(split['parts'])} folds",
        "",
        f"{tested} {', '.join(m.label for m in reported)}. Risk measures at α = {alpha:g}.",
        "",
        "Training: " + _settings(config, measures) + ".",
    ]
    csvs, latex, figures = {}, [], []
    for i, measure in enumerate(reported):
        suffix = f"__{RunMeasures.slug(measure)}" if i else ""
        results = first if i == 0 else collect_results(config, out, measure)
        table = results_table(config, out, results, measure)
        part, part_figures = _measure_part(config, folder, measure, table, results,
                                           len(queries), suffix, several)
        lines += part
        figures += part_figures
        csvs[folder.out / f"report{suffix}.csv"] = table.to_csv(index=False,
                                                                 float_format="%.6f")
        latex.append(_report_latex(config, table, len(queries), measure))
    if figures:
        # A Markdown viewer shows PNG and SVG in the page; a PDF is a link.
        lines += ["", "## Figures", ""] + [
            f"[{f.name}]({f.name})" if f.suffix == ".pdf" else f"![{f.stem}]({f.name})"
            for f in figures]
    named = significance.CORRECTIONS[config.report.correction]
    n_rows = len(table)
    lines += ["", "A dash (–) marks a value that is undefined: a p-value with nothing to test, "
              "a ratio over 0, or TRisk where every query has the same risk-weighted difference "
              "(as when a learner ties the baseline on every query).",
              "", "trees: median number of trees of the models kept (over folds and repeats). "
              "p vs LambdaMART: paired t-test of the per-query measure against plain LambdaMART; "
              "p(Risk) vs LambdaMART: the same for the per-query loss max(0, M_b − M) whose mean "
              "is Risk (against the learned baselines: the loss averaged over them). "
              "p(GeoRisk) vs LambdaMART: paired randomisation test of the GeoRisk difference "
              "(each query's two values swapped at random, 4,000 times, seeded). "
              "p(x*) vs LambdaMART: paired t-test of the per-query risk-weighted differences "
              "x_q against the learned baselines' mean, whose mean is T*Risk's numerator. "
              f"A column headed {named} holds the p-value to its left corrected ({named}) "
              f"for the comparisons of the learner × α grid: the {n_rows - 1} rows "
              f"compared with plain LambdaMART, and all {n_rows} rows for p(TRisk) "
              "(each tested against the feature baseline)"
              + (", within each measure" if several else "") + ". "
              "Wins/Losses count queries above/below the baseline; Loss>20%: queries more than "
              "20% below a baseline whose value is > 0. Against the learned baselines, Reward to "
              "Loss>20% are means over the baselines; GeoRisk is the model's row within the "
              "matrix of the model and every learned baseline, and T*Risk is TRisk against their "
              "per-query mean.", ""]
    # Written once everything is computed, so that a failure leaves no partial report.
    for path, text in csvs.items():
        atomic_write_text(path, text)
    atomic_write_text(folder.environment_path, json.dumps(environment(), indent=1) + "\n")
    atomic_write_text(folder.report_path, "\n".join(lines))
    atomic_write_text(folder.report_tex_path,
                      "\n".join([f"% {escape(config.name)}: the tables of report.md, written by "
                                 "lgb-risk run", "", *latex]))
    return folder.report_path


def _measure_part(config: ExperimentConfig, folder: RunFolder, measure: MeasureSpec,
                  table: pd.DataFrame, results: pd.DataFrame, n_queries: int, suffix: str,
                  several: bool) -> tuple[list[str], list[Path]]:
    """report.md's part for one measure (its tables, tests, repeatability) and its figures."""
    out = folder.out
    stem = measure.measure.name
    label = measure.label
    heading = f"{label}: " if several else ""
    alpha = config.report.alpha
    base = config.baselines.feature_name
    large_losses = risk.loss_field()  # risk.summary's count, at its default fraction
    large_losses_label = f"{large_losses.removeprefix('loss_gt_')}%"
    feature, learned = averaged_baselines(config, out, list(results.index), measure)
    lines = ["", f"Baselines, mean {label}: {base} {feature.mean():.4f}"]
    if learned is not None:
        names = folder.read_learned_baselines(measure).names  # type: ignore[union-attr]
        lines[-1] += "; " + "; ".join(f"{n} {v:.4f}" for n, v in zip(names, learned.mean(axis=1)))
    method = config.report.correction
    named = significance.CORRECTIONS[method]
    lines += ["", f"## {heading}Against the feature baseline ({base})", "", _markdown(table, {
        "learner": ("learner", 0), "alpha": ("α", 1), "trees": ("trees", 1),
        stem: (label, 4), f"{stem}_p_vs_lambdamart": ("p vs LambdaMART", 4),
        f"{stem}_p_vs_lambdamart_{method}": (named, 4),
        f"{base}_reward": ("Reward", 4), f"{base}_risk": ("Risk", 4),
        f"{base}_risk_p_vs_lambdamart": ("p(Risk) vs LambdaMART", 4),
        f"{base}_risk_p_vs_lambdamart_{method}": (named, 4),
        f"{base}_reward_risk": ("Reward/Risk", 2), f"{base}_wins": ("Wins", 1),
        f"{base}_losses": ("Losses", 1), f"{base}_wins_losses": ("W/L", 2),
        f"{base}_{large_losses}": (f"Loss>{large_losses_label}", 1),
        "urisk": (f"URisk(α={alpha:g})", 4),
        "trisk": ("TRisk", 2), "trisk_p": ("p(TRisk)", 4), f"trisk_p_{method}": (named, 4)})]
    if "georisk" in table:
        lines += ["", f"## {heading}Against the learned baselines (macro-averaged)", "",
                  _markdown(table, {
            "learner": ("learner", 0), "alpha": ("α", 1), stem: (label, 4),
            "learned_reward": ("Reward", 4), "learned_risk": ("Risk", 4),
            "learned_risk_p_vs_lambdamart": ("p(Risk) vs LambdaMART", 4),
            f"learned_risk_p_vs_lambdamart_{method}": (named, 4),
            "learned_reward_risk": ("Reward/Risk", 2), "learned_wins": ("Wins", 1),
            "learned_losses": ("Losses", 1), "learned_wins_losses": ("W/L", 2),
            f"learned_{large_losses}": (f"Loss>{large_losses_label}", 1),
            "georisk": (f"GeoRisk(α={alpha:g})", 4),
            "georisk_p_vs_lambdamart": ("p(GeoRisk) vs LambdaMART", 4),
            f"georisk_p_vs_lambdamart_{method}": (named, 4),
            "tstar_risk": ("T*Risk", 2),
            "tstar_urisk_p_vs_lambdamart": ("p(x*) vs LambdaMART", 4),
            f"tstar_urisk_p_vs_lambdamart_{method}": (named, 4)})]
    lines += ["", f"## {heading}What the tests can detect", "",
              _detectable_table(table, base, n_queries, measure),
              "", "Smallest true difference from plain LambdaMART that each paired test finds "
              "with probability 0.8 at a two-sided level of 0.05 with these queries (the range "
              "over the learners; in % of LambdaMART's own value). A p-value above 0.05 says "
              "nothing about differences below this size. The last column: the queries at "
              "which each learner's observed difference would be found with probability 0.8 "
              "after the report's correction (Bonferroni's level, which bounds it; the range "
              "over the learners; the per-learner numbers, with their 95% bootstrap intervals, "
              "are report.csv's *_needed, *_needed_low and *_needed_high). Not determined: the "
              "observed difference changes sign in more than 2.5% of the queries' bootstrap "
              "resamples, so no number of queries is sure to show it."]
    repeatability = (loss_repeatability(config, out, measure) if config.split.repeats > 1
                     else {})
    if repeatability:
        described = {"feature": f"to {base}",
                     "learned": "to the learned baselines (mean over them)"}
        lines += ["", f"## {heading}Do a query's losses repeat across splits?", "",
                  "Plain LambdaMART's per-query loss max(0, M_b − M) in one repeat against the "
                  "same query's in another (every pair of repeats, queries tested in both): "
                  + "; ".join(f"{described[kind]} r = {r:.2f} over {x.size} pairs"
                              for kind, (x, _, r) in repeatability.items()) + ". "
                  "A learner can only aim at losses that persist from its training queries to "
                  "unseen ones; where r is near 0, which queries are lost is mostly the split's "
                  "doing (the learned baselines are retrained on each repeat's held-out queries)."]
    figures = write_figures(config, out, table, results, feature, repeatability, measure,
                            suffix)
    return lines, figures


def _report_latex(config: ExperimentConfig, table: pd.DataFrame, n_queries: int,
                 measure: MeasureSpec) -> str:
    """The report's two tables of one measure as LaTeX (booktabs): the best value of each
    column in bold, and a mark where the corrected test against plain LambdaMART (for TRisk:
    against the feature baseline) finds p < 0.05, each test and the correction named in the
    caption. Needs ``\\usepackage{booktabs}``."""
    stem, label = measure.measure.name, escape(measure.label)
    alpha = config.report.alpha
    base = config.baselines.feature_name
    shown_base, name = escape(base), escape(config.name)
    method = config.report.correction
    corrected = f"{significance.CORRECTIONS[method]}-corrected over the {len(table) - 1} rows"
    against = f"paired $t$-test against plain LambdaMART over the {n_queries} queries"
    common = {"learner": ("learner", None), "training_alpha": (r"$\alpha$", None),
              stem: (label, "higher")}
    shown = table.assign(training_alpha=[f"{a:g}" for a in table["alpha"]])
    tables = [(f"Against the feature baseline ({shown_base})", {
        **common, f"{base}_reward": ("Reward", "higher"), f"{base}_risk": ("Risk", "lower"),
        f"{base}_wins": ("Wins", "higher"), f"{base}_losses": ("Losses", "lower"),
        "urisk": (f"URisk($\\alpha={alpha:g}$)", "higher"), "trisk": ("TRisk", "higher")}, {
        stem: (f"{stem}_p_vs_lambdamart", f"{label}, {against}, {corrected}"),
        f"{base}_risk": (f"{base}_risk_p_vs_lambdamart",
                         f"Risk, the same test of the per-query loss, {corrected}"),
        "trisk": ("trisk_p", f"TRisk's $t$-test of the risk-weighted differences against "
                             f"{shown_base}, {significance.CORRECTIONS[method]}-corrected over the "
                             f"{len(table)} rows")})]
    if "georisk" in table:
        tables.append(("Against the learned baselines (means over them; GeoRisk and T*Risk "
                       "against all of them)", {
            **common, "learned_reward": ("Reward", "higher"), "learned_risk": ("Risk", "lower"),
            "learned_wins": ("Wins", "higher"), "learned_losses": ("Losses", "lower"),
            "georisk": (f"GeoRisk($\\alpha={alpha:g}$)", "higher"),
            "tstar_risk": ("T*Risk", "higher")}, {
            stem: (f"{stem}_p_vs_lambdamart", f"{label}, {against}, {corrected}"),
            "learned_risk": ("learned_risk_p_vs_lambdamart",
                             f"Risk, the same test of the per-query loss, {corrected}"),
            "georisk": ("georisk_p_vs_lambdamart", "GeoRisk, paired randomisation test against "
                                                   f"plain LambdaMART, {corrected}"),
            "tstar_risk": ("tstar_urisk_p_vs_lambdamart", "T*Risk, paired $t$-test of the "
                           f"risk-weighted differences against plain LambdaMART, {corrected}")}))
    out = []
    for title, columns, marks in tables:
        out.append(latex_table(
            {c: shown[c].tolist() for c in columns},
            digits={c: 0 if c.startswith(base) else 1 for c in columns
                    if c.endswith(("_wins", "_losses"))},
            headers={c: header for c, (header, _) in columns.items()},
            better={c: way for c, (_, way) in columns.items() if way},
            marks={c: (table[f"{p}_{method}"].tolist(), meaning)
                   for c, (p, meaning) in marks.items()},
            caption=f"{name}: {title}, {label} over {n_queries} queries."))
    return "\n".join(out)


def _detectable_table(table: pd.DataFrame, base: str, n: int, measure: MeasureSpec) -> str:
    """Markdown: each paired test's minimal detectable difference, over the learners."""
    reference = table.iloc[0]
    others = table.iloc[1:]
    own = measure.measure.name
    columns = {own: own, "feature_risk": f"{base}_risk", "learned_risk": "learned_risk",
               "tstar_urisk": "tstar_urisk", "georisk": "georisk"}
    lines = ["| statistic | per-query values compared | n | detectable difference | "
             "in % of LambdaMART's value | queries needed for the observed differences |",
             "|---|---|---|---|---|---|"]
    for stem, (statistic, compared) in _tests(measure).items():
        column = columns[stem]
        if f"{column}_detectable" not in table or others.empty:
            continue
        low, high = (others[f"{column}_detectable"].min(), others[f"{column}_detectable"].max())
        own = abs(reference[column])
        relative = "–" if own == 0 else "–".join(
            f"{100 * v / own:.{1 if 100 * v / own < 10 else 0}f}" for v in (low, high)) + "%"
        name = f"{statistic} ({base})" if stem == "feature_risk" else statistic
        needed = others[f"{column}_needed"].dropna()
        queries = ("–" if needed.empty else f"{needed.min():,.0f}" if needed.min() == needed.max()
                   else f"{needed.min():,.0f}–{needed.max():,.0f}")
        undetermined = int(others[f"{column}_needed_high"].eq(np.inf).sum())
        if undetermined:
            queries += f" ({undetermined} of {len(others)} not determined)"
        lines.append(f"| {name} | {compared} | {n} | {low:.4f}–{high:.4f} | {relative} | "
                     f"{queries} |")
    return "\n".join(lines)


def _settings(config: ExperimentConfig, measures: RunMeasures) -> str:
    """The training settings, as the report states them."""
    training = config.training
    target = measures.target.label
    if training.selection == "risk":
        selected = (f"validation value of the learner's own risk measure at its α in {target} "
                    f"({target} itself for LambdaMART)")
    elif measures.selection is not None:
        selected = f"validation {measures.selection.label}"
    if training.selection == "last":
        protocol = f"{training.rounds} trees, every tree kept"
    elif training.early_stopping:
        protocol = (f"at most {training.rounds} trees, early stopping after "
                    f"{training.early_stopping} rounds without gain in {selected}")
    else:
        protocol = (f"{training.rounds} trees, the model kept at the iteration with the best "
                    f"{selected}")
    parts = [f"every objective toward {target}", protocol,
             "the learned baselines trained the same way" + (
                 f", selected on {target}" if training.selection == "risk" else ""),
             f"{training.num_threads} thread(s) per unit",
             "LightGBM parameters: " + (", ".join(f"{key} = {value!r}" for key, value in
                                                  config.lightgbm.items()) or "its defaults"),
             "objective parameters: " + (", ".join(f"{key} = {value!r}" for key, value in
                                                   config.objective.items())
                                         or "the objectives' defaults"),
             f"split seed {config.split.seed}, {config.split.folds} folds, "
             f"{config.split.heldout:g} of the queries held out, "
             f"{config.split.repeats} repeat(s)"]
    return "; ".join(parts)
