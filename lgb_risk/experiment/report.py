"""Tables and figures of an experiment run ([GEO] Table 7 layout, [GEO] Fig. 3, [TR] Fig. 2).

For every learner and α, over all main queries (the folds' test parts together): mean NDCG@k;
the risk-reward summary (:func:`lgb_risk.risk.summary`) against the feature baseline and,
macro-averaged, against the learned baselines; the p-value of a paired t-test against plain
LambdaMART (of NDCG, and of the per-query loss to the feature baseline whose mean is Risk);
URisk and TRisk against the feature baseline, and GeoRisk and T*Risk against the
learned baselines, at the report's α. Written as ``report.md`` and ``report.csv``; figures
(``plot`` extra) as PNG files.

[GEO] Dinçer, Macdonald, Ounis. Risk-sensitive evaluation and learning to rank using multiple
      baselines. SIGIR 2016. [TR] the same authors, Hypothesis testing for the risk-sensitive
      evaluation of retrieval systems. SIGIR 2014.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from lgb_risk import measures as registry
from lgb_risk import risk
from lgb_risk._io import atomic_write, atomic_write_text
from lgb_risk.experiment.layout import RunFolder, all_units
from lgb_risk.objectives import OBJECTIVES

__all__ = ["collect_results", "tested_counts", "averaged_baselines", "results_table",
           "write_report"]

SUMMARY = list(risk.SUMMARY_FIELDS[1:])  # reward ... loss_gt_20


def _averaged(per_repeat: list) -> pd.DataFrame:
    """Mean over repeats of per-query tables (rows: queries), rows in order of first
    appearance: a query counts once, whatever the number of repeats that tested it."""
    stacked = pd.concat(per_repeat)
    order = list(dict.fromkeys(stacked.index))
    return stacked.groupby(level=0, sort=False).mean().loc[order]


def collect_results(config, out) -> pd.DataFrame:
    """Per-query test NDCG of every (learner, α), averaged over the repeats that tested the
    query: rows = queries, columns = (learner, α)."""
    per_repeat = []
    for folder in RunFolder(out).repeats(config):
        columns = {}
        for unit in all_units(config):
            if unit.repeat != folder.repeat:
                continue
            if not folder.unit_done(unit):
                raise FileNotFoundError(f"unit {unit} has no results ({folder.unit_path(unit)}); "
                                        "run the experiment again to finish it")
            columns.setdefault((unit.learner, unit.alpha), []).append(folder.read_unit(unit))
        table = pd.DataFrame({key: pd.concat(parts).set_index("query_id")["ndcg"]
                              for key, parts in columns.items()})
        result = table.loc[folder.main_queries()]
        if result.isna().any().any():
            raise ValueError("the units' test parts do not cover every main query once")
        per_repeat.append(result)
    return _averaged(per_repeat)


def tested_counts(config, out) -> pd.Series:
    """How many repeats tested each query (its number of repeats as a main query)."""
    queries = [q for folder in RunFolder(out).repeats(config) for q in folder.main_queries()]
    return pd.Series(queries).value_counts(sort=False)


def averaged_baselines(config, out, queries) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-query NDCG of the feature baseline and (baselines × queries) of the learned ones,
    averaged over the repeats that tested each query, aligned to ``queries``."""
    features, learned = [], []
    for folder in RunFolder(out).repeats(config):
        main = folder.main_queries()
        feature_store, learned_store = folder.read_baselines()
        features.append(pd.DataFrame(feature_store.align(main), index=main))
        if learned_store is not None:
            learned.append(pd.DataFrame(learned_store.align(main), index=main))
    feature = _averaged(features).loc[queries].to_numpy()[:, 0]
    return feature, (_averaged(learned).loc[queries].to_numpy().T if learned else None)


def results_table(config, out, results: pd.DataFrame | None = None) -> pd.DataFrame:
    """The report's numbers, one row per learner and α (see the module docstring).

    ``results`` is :func:`collect_results`'s table, read here when not given.
    """
    results = collect_results(config, out) if results is None else results
    feature, learned = averaged_baselines(config, out, list(results.index))
    alpha = config["report"]["alpha"]
    prefix = config["baselines"]["feature_name"]  # the feature baseline's columns: PREFIX_reward
    reference = results[("LambdaMART", config["learners"]["LambdaMART"][0])].to_numpy()
    reference_loss = np.maximum(feature - reference, 0)
    rows = []
    for (learner, a), values in results.items():
        m = values.to_numpy()
        row = {"learner": OBJECTIVES[learner].paper_name, "alpha": a, "ndcg": m.mean()}
        row.update({f"{prefix}_{k}": v for k, v in risk.summary(m, feature).items()
                    if k != "mean"})
        if learned is not None:
            row.update({f"learned_{k}": v for k, v in risk.summary(m, learned).items()
                        if k != "mean"})
        row["p_vs_lambdamart"] = (np.nan if np.array_equal(m, reference)
                                  else stats.ttest_rel(m, reference).pvalue)
        loss = np.maximum(feature - m, 0)
        row[f"{prefix}_risk_p_vs_lambdamart"] = (
            np.nan if np.array_equal(loss, reference_loss)
            else stats.ttest_rel(loss, reference_loss).pvalue)
        row["urisk"] = risk.urisk(m, feature, alpha)
        t = risk.trisk_if_defined(m, feature, alpha)
        row["trisk"], row["trisk_p"] = (np.nan, np.nan) if t is None else (t.trisk, t.p_value)
        if learned is not None:
            row["georisk"] = risk.georisk(np.vstack([m, learned]), alpha)[0]
            t_star = risk.trisk_if_defined(m, learned.mean(axis=0), alpha)
            row["tstar_risk"] = np.nan if t_star is None else t_star.trisk
        rows.append(row)
    return pd.DataFrame(rows)


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


def write_report(config, out) -> Path:
    """Write report.md, report.csv and (with matplotlib) the figures; returns report.md's path."""
    folder = RunFolder(out)
    results = collect_results(config, out)
    table = results_table(config, out, results)
    atomic_write_text(folder.report_csv_path, table.to_csv(index=False, float_format="%.6f"))
    k = config["evaluation"]["k"]
    alpha = config["report"]["alpha"]
    base = config["baselines"]["feature_name"]
    split = folder.read_split()
    queries = list(results.index)
    feature, learned = averaged_baselines(config, out, queries)
    repeats = config["split"]["repeats"]
    if repeats == 1:
        tested = (f"{len(queries)} main queries (test parts of all folds), "
                  f"{len(split['heldout_train']) + len(split['heldout_valid'])} held out for the "
                  "learned baselines.")
    else:
        counts = tested_counts(config, out).value_counts().sort_index()
        tested = (f"The protocol repeated {repeats} times with derived seeds (split, learned "
                  f"baselines, folds); {len(queries)} queries tested at least once, each query's "
                  "NDCG averaged over the repeats that tested it before any statistic (n = "
                  "queries). Repeats per query: " + ", ".join(
                      f"{n} queries in {times}" for times, n in counts.items()) + ".")
    lines = [
        f"# {config['name']}: risk-sensitive LambdaMART, {len(split['parts'])} folds",
        "",
        f"{tested} NDCG@{k}. Risk measures at α = {alpha:g}.",
        "",
        "Training: " + _settings(config) + ".",
        "",
        f"Baselines, mean NDCG@{k}: {base} {feature.mean():.4f}",
    ]
    if learned is not None:
        names = RunFolder(out).read_learned_baselines().names
        lines[-1] += "; " + "; ".join(f"{n} {v:.4f}" for n, v in zip(names, learned.mean(axis=1)))
    measure_label = registry.parse(f"ndcg@{k}").label
    lines += ["", f"## Against the feature baseline ({base})", "", _markdown(table, {
        "learner": ("learner", 0), "alpha": ("α", 1), "ndcg": (measure_label, 4),
        "p_vs_lambdamart": ("p vs LambdaMART", 4), f"{base}_reward": ("Reward", 4),
        f"{base}_risk": ("Risk", 4), f"{base}_risk_p_vs_lambdamart": ("p(Risk) vs LambdaMART", 4),
        f"{base}_reward_risk": ("Reward/Risk", 2), f"{base}_wins": ("Wins", 1),
        f"{base}_losses": ("Losses", 1), f"{base}_wins_losses": ("W/L", 2),
        f"{base}_loss_gt_20": ("Loss>20%", 1), "urisk": (f"URisk(α={alpha:g})", 4),
        "trisk": ("TRisk", 2), "trisk_p": ("p(TRisk)", 4)})]
    if "georisk" in table:
        lines += ["", "## Against the learned baselines (macro-averaged)", "", _markdown(table, {
            "learner": ("learner", 0), "alpha": ("α", 1), "ndcg": (measure_label, 4),
            "learned_reward": ("Reward", 4), "learned_risk": ("Risk", 4),
            "learned_reward_risk": ("Reward/Risk", 2), "learned_wins": ("Wins", 1),
            "learned_losses": ("Losses", 1), "learned_wins_losses": ("W/L", 2),
            "learned_loss_gt_20": ("Loss>20%", 1), "georisk": (f"GeoRisk(α={alpha:g})", 4),
            "tstar_risk": ("T*Risk", 2)})]
    figures = _write_figures(config, folder.out, table, results)
    if figures:
        lines += ["", "## Figures", ""] + [f"![{f.stem}]({f.name})" for f in figures]
    lines += ["", "p vs LambdaMART: paired t-test of per-query NDCG against plain LambdaMART; "
              "p(Risk) vs LambdaMART: the same for the per-query loss max(0, M_b − M) whose mean "
              "is Risk. "
              "Wins/Losses count queries above/below the baseline; Loss>20%: queries more than "
              "20% below a baseline with NDCG > 0. Against the learned baselines, Reward to "
              "Loss>20% are means over the baselines; GeoRisk is the model's row within the "
              "matrix of the model and every learned baseline, and T*Risk is TRisk against their "
              "per-query mean.", ""]
    atomic_write_text(folder.report_path, "\n".join(lines))
    return folder.report_path


def _settings(config) -> str:
    """The training settings, as the report states them."""
    training = config["training"]
    parts = [f"at most {training['rounds']} trees, early stopping after "
             f"{training['early_stopping']} rounds without gain in validation NDCG@"
             f"{config['evaluation']['k']}",
             f"{training['num_threads']} thread(s) per unit",
             "LightGBM parameters: " + (", ".join(f"{key} = {value!r}" for key, value in
                                                  config["lightgbm"].items()) or "its defaults"),
             "objective parameters: " + (", ".join(f"{key} = {value!r}" for key, value in
                                                   config["objective"].items())
                                         or "the objectives' defaults"),
             f"split seed {config['split']['seed']}, {config['split']['folds']} folds, "
             f"{config['split']['heldout']:g} of the queries held out, "
             f"{config['split']['repeats']} repeat(s)"]
    return "; ".join(parts)


def _write_figures(config, out: Path, table: pd.DataFrame, results: pd.DataFrame) -> list[Path]:
    """GeoRisk against α per learner, and per-query TR/TJ bars; none without matplotlib."""
    try:
        # Figures built on their own, not through pyplot: the caller's backend and pyplot's
        # figures are left alone, and the import takes half the time.
        from matplotlib.figure import Figure
    except ImportError:
        return []
    alpha = config["report"]["alpha"]
    paths = []
    column = "georisk" if "georisk" in table else "urisk"
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    for learner, rows in table.groupby("learner", sort=False):
        if learner == OBJECTIVES["LambdaMART"].paper_name:
            ax.axhline(rows[column].iloc[0], color="black", linestyle="--", label=learner)
        else:
            ax.plot(rows["alpha"], rows[column], marker="o", label=learner)
    ax.set_xlabel("training α")
    ax.set_ylabel(f"{'GeoRisk' if column == 'georisk' else 'URisk'} (evaluation α = {alpha:g})")
    # An honest scale: at least 0.05 of the measure around the values, stated on the figure.
    low, high = table[column].min(), table[column].max()
    middle, span = (low + high) / 2, max(high - low, 0.05)
    ax.set_ylim(middle - 0.6 * span, middle + 0.6 * span)
    ax.text(0.01, 0.01, f"values range over {high - low:.4f}", transform=ax.transAxes,
            fontsize=8, va="bottom")
    ax.set_title(f"{config['name']}: risk-reward trade-off by learner")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(_save_figure(fig, out / "georisk_vs_alpha.png"))

    learner = config["report"]["learner"] or next(
        (n for n in reversed(list(config["learners"])) if n != "LambdaMART"), "LambdaMART")
    key = (learner, max(config["learners"][learner]))
    feature = averaged_baselines(config, out, list(results.index))[0]
    t = risk.trisk(results[key].to_numpy(), feature, alpha)
    order = np.argsort(t.tr)
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    x = np.arange(order.size)
    # Bars of width 1 drawn as two filled step areas: one artist each, however many queries
    # (800 bar patches took longer than the rest of the report).
    tr_sorted = t.tr[order]
    below = tr_sorted < -2
    for where, colour, label in ((~below, "tab:blue", "TR_q"), (below, "tab:red", "TR_q < -2")):
        if where.any():
            ax.fill_between(x, 0, tr_sorted, where=where, step="mid", color=colour,
                            linewidth=0, label=label)
    ax.plot(x, t.tj[order], color="black", linewidth=0.8, label="TJ_q")
    for level in (-2, 2):
        ax.axhline(level, color="grey", linestyle=":")
    ax.set_xlabel("queries, sorted by TR_q")
    ax.set_ylabel(f"TR_q, TJ_q (α = {alpha:g})")
    ax.set_title(f"{OBJECTIVES[key[0]].paper_name} α={key[1]:g} against "
                 f"{config['baselines']['feature_name']}: TRisk {t.trisk:.2f}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(_save_figure(fig, out / "tr_tj_per_query.png"))
    return paths


def _save_figure(fig, path: Path) -> Path:
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=110,
                                               metadata={"Software": None}))
    return path
