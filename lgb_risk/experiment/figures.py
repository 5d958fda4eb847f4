"""The figures of an experiment's report, one set per reported measure: GeoRisk (or URisk)
against the training α per learner ([GEO] Fig. 3), the per-query TR/TJ of one learner ([TR]
Fig. 2), Risk against Reward by training α and, with repeats, how far plain LambdaMART's
per-query losses repeat across splits. Drawn in the print style of :mod:`lgb_risk.plots`.

References: [GEO], [TR] (:mod:`lgb_risk.references`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lgb_risk import risk
from lgb_risk.objectives import OBJECTIVES
from lgb_risk.plots import (
    LINE_STYLES,
    print_figure,
    print_panels,
    risk_reward,
    save_figure,
    tr_tj_per_query,
)

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from lgb_risk.experiment.config import ExperimentConfig
    from lgb_risk.measures import MeasureSpec

__all__ = ["write_figures"]


def write_figures(config: ExperimentConfig, out: Path, table: pd.DataFrame, results: pd.DataFrame,
                  feature: np.ndarray, repeatability: dict, measure: MeasureSpec,
                  suffix: str) -> list[Path]:
    """GeoRisk against α per learner, per-query TR/TJ (:func:`lgb_risk.plots.tr_tj_per_query`),
    Risk against Reward by training α (:func:`lgb_risk.plots.risk_reward`) and, with repeats,
    the repeatability of per-query losses, each as wide as a paper's page (``figure*``,
    :data:`lgb_risk.plots.FIGURE_SIZES`) in the figures' print style
    (:func:`lgb_risk.plots.print_style`: no text below 6 pt); none without matplotlib.

    ``table`` is the report's table of one measure (a row per learner and α), ``results`` the
    per-query values of every learner and α, ``feature`` the feature baseline's per-query values
    in the same query order, ``repeatability`` the pairs of
    :func:`~lgb_risk.experiment.report.loss_repeatability`; the files are written into ``out``,
    their names ending in ``suffix``, in ``[report] figure_format``. Returns their paths."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return []
    figure_format = config.report.figure_format

    def saved(figure, name: str) -> Path:
        return save_figure(figure, out / f"{name}{suffix}.{figure_format}", figure_format,
                           "page")

    paths = [saved(print_figure(lambda ax: _by_training_alpha(ax, config, table), "page"),
                   "georisk_vs_alpha")]
    learner = config.report.learner or next(
        (n for n in reversed(list(config.learners)) if n != "LambdaMART"), "LambdaMART")
    key = (learner, max(config.learners[learner]))
    alpha, base = config.report.alpha, config.baselines.feature_name
    if risk.trisk_if_defined(results[key].to_numpy(), feature, alpha) is not None:
        paths.append(saved(print_figure(lambda ax: tr_tj_per_query(
            results[key].to_numpy(), feature, alpha, measure=measure.label,
            name=f"{OBJECTIVES[key[0]].paper_name} α={key[1]:g}", baseline_name=base, ax=ax),
            "page"), "tr_tj_per_query"))
    # else: TR_q is undefined (every query the same x_q, as where the learner ties the
    # baseline everywhere); the table says TRisk is undefined (–), and no figure is drawn.

    points: dict = {}
    for (name, trained), rows in table.groupby(["learner", "alpha"], sort=False):
        points.setdefault(name, []).append((trained, rows[f"{base}_risk"].iloc[0],
                                            rows[f"{base}_reward"].iloc[0]))
    reference = points.pop(OBJECTIVES["LambdaMART"].paper_name)[0][1:]
    paths.append(saved(print_figure(lambda ax: risk_reward(
        points, reference=reference, measure=measure.label, baseline_name=base, ax=ax),
        "page"), "risk_reward"))
    if repeatability:
        paths.append(saved(_repeatability_figure(config, repeatability, measure),
                           "loss_repeatability"))
    return paths


def _by_training_alpha(ax, config: ExperimentConfig, table: pd.DataFrame) -> None:
    """GeoRisk against the learned baselines (URisk against the feature baseline where there
    are none) of each learner by training α, LambdaMART's as a line ([GEO] Fig. 3)."""
    column = "georisk" if "georisk" in table else "urisk"
    against = "the learned baselines" if column == "georisk" else config.baselines.feature_name
    for learner, rows in table.groupby("learner", sort=False):
        if learner == OBJECTIVES["LambdaMART"].paper_name:
            ax.axhline(rows[column].iloc[0], color="black", linestyle="--", label=learner)
        else:
            ax.plot(rows["alpha"], rows[column], label=learner,
                    **LINE_STYLES[(len(ax.lines) - 1) % len(LINE_STYLES)])
    trained = sorted({a for a in table["alpha"] if a > 0})
    if trained and trained[-1] > 10 * trained[0]:
        ax.set_xscale("log")
    ax.set_xticks(trained)
    ax.set_xticklabels([f"{a:g}" for a in trained])
    ax.minorticks_off()
    ax.set_xlabel("training α")
    ax.set_ylabel(f"{'GeoRisk' if column == 'georisk' else 'URisk'} against {against}\n"
                  f"(evaluation α = {config.report.alpha:g}; higher is better)")
    # An honest scale: at least 0.05 of the measure around the values, stated on the figure.
    low, high = table[column].min(), table[column].max()
    middle, span = (low + high) / 2, max(high - low, 0.05)
    ax.set_ylim(middle - 0.6 * span, middle + 0.6 * span)
    ax.text(0.01, 0.01, f"values range over {high - low:.4f}", transform=ax.transAxes,
            va="bottom")
    # Beside the axes: the learners' lines lie close together across the whole width.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _repeatability_figure(config: ExperimentConfig, repeatability: dict, measure: MeasureSpec):
    """How far plain LambdaMART's per-query losses repeat across splits: one panel per kind
    of baseline, a query's loss in one repeat against another's, page wide."""
    described = {"feature": f"loss to {config.baselines.feature_name}",
                 "learned": "mean loss to the learned baselines"}

    def draw(axes) -> None:
        for ax, (kind, (first, second, r)) in zip(axes[0], repeatability.items()):
            ax.scatter(first, second, s=4, alpha=0.3, color="tab:blue", linewidths=0)
            top = max(first.max(), second.max(), 1e-6) * 1.05
            ax.plot([0, top], [0, top], color="grey", linestyle=":", linewidth=0.8)
            ax.set_xlim(0, top)
            ax.set_ylim(0, top)
            ax.set_xlabel(f"{described[kind]}, one repeat")
            ax.set_ylabel("the same query, another repeat")
            ax.set_title(f"{described[kind]} ({measure.label}): r = {r:.2f}",
                         fontsize="medium")

    return print_panels(draw, 1, len(repeatability), "page")
