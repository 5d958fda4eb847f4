"""Figures of active-evaluation simulations (``plot`` extra: matplotlib)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["plot_errors"]

#: Each method's marker and line style, so that lines on top of each other stay apart.
_STYLES = {"passive": ("o", "-"), "active": ("s", "--"), "active uniD": ("^", "-."),
           "active uniC": ("v", ":")}


#: On the log axis, a budget's label is left off (its tick kept) where it would sit closer than
#: this factor to the last one labelled: 75 beside 100 crowds a third of a page.
_LABEL_SPACING = 1.4


def _spread_labels(budgets: list) -> list[str]:
    """The budgets' labels from the largest down, each closer than :data:`_LABEL_SPACING` to the
    last one labelled left empty."""
    labels, kept = [""] * len(budgets), None
    for position in reversed(range(len(budgets))):
        if kept is None or budgets[position] * _LABEL_SPACING <= kept:
            labels[position], kept = f"{budgets[position]:g}", budgets[position]
    return labels


def plot_errors(ax: Any, frame: pd.DataFrame, *, title: str | None = None) -> Any:
    """Mean absolute error (± standard error) against budget, one line per method, log-log,
    each method with its own marker and line style, the budgets marked on the x axis.

    ``frame`` is :func:`lgb_risk.active.simulate`'s table, or any with the columns ``method``,
    ``budget``, ``mean_abs_error`` and ``se``; without ``se`` the standard error is
    ``abs_error_sd / sqrt(repetitions)``. ``title`` (the measure, the task) goes above. The text
    takes matplotlib's current sizes: drawn through :func:`lgb_risk.plots.print_figure`, a
    paper's (:func:`lgb_risk.plots.print_style`). Returns ``ax``.

    Examples
    --------
    >>> import pandas as pd
    >>> from lgb_risk.plots import print_figure
    >>> frame = pd.DataFrame({"method": ["passive", "passive", "active", "active"],
    ...                       "budget": [10, 50, 10, 50], "mean_abs_error": [0.3, 0.14, 0.25, 0.1],
    ...                       "se": [0.01, 0.01, 0.01, 0.01]})
    >>> figure = print_figure(lambda ax: plot_errors(ax, frame), "column")
    >>> [line.get_label() for line in figure.axes[0].containers]
    ['passive', 'active']
    """
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

    needed = {"method", "budget", "mean_abs_error"} | (
        {"se"} if "se" in frame else {"abs_error_sd", "repetitions"})
    missing = sorted(needed - set(frame.columns))
    if missing:
        raise ValueError(f"frame has no column {', '.join(map(repr, missing))}: plot_errors draws "
                         "lgb_risk.active.simulate's table (method, budget, mean_abs_error, "
                         "and se or abs_error_sd with repetitions)")
    if "se" not in frame:
        frame = frame.assign(se=frame["abs_error_sd"] / np.sqrt(frame["repetitions"]))
    for method, rows in frame.groupby("method", sort=False):
        marker, line = _STYLES.get(method, ("o", "-"))
        ax.errorbar(rows["budget"], rows["mean_abs_error"], yerr=rows["se"], marker=marker,
                    linestyle=line, markersize=4, markerfacecolor="none", label=method)
    budgets = sorted(frame["budget"].unique())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(budgets)
    ax.set_xticklabels(_spread_labels(budgets))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_tick_params(which="minor", length=0)
    # Errors labelled at 1, 2 and 5 of each decade in plain numbers; no minor labels to collide.
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("budget (mean-query costs)")
    ax.set_ylabel("mean absolute error")
    if title:
        ax.set_title(title)
    return ax
