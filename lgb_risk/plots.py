"""Figures of risk-sensitive evaluation, each drawn on a matplotlib ``Axes`` (``plot`` extra).

Every function draws on the ``ax`` it is given, or on a new Figure's axes (built without pyplot,
so the caller's backend and pyplot's figures are left alone), and returns that ``Axes``; the
labels name the measure, the baseline and α. Per-query values are arrays in one query order,
or keyed by topic (:mod:`lgb_risk.risk` aligns them).

- :func:`win_loss_histogram`: per-query changes against a baseline, binned, for one or several
  runs — the TREC 2013-2014 Web track risk-sensitive figures' histogram of per-topic wins and
  losses against the baseline.
- :func:`trisk_by_alpha`: TRisk against the evaluation α with the ±2 band within which a
  difference is not significant — [TR] Fig. 1.
- :func:`georisk_by_alpha`: GeoRisk against the evaluation α — the trade-off [GEO] §5 draws.
- :func:`tr_tj_per_query`: every query's TR_q and TJ_q with the ±2 thresholds — [TR] §5's
  per-query scores.
- :func:`risk_reward`: Risk against Reward of a risk-sensitive learner, one point per training
  α, LambdaMART marked — the trade-off of [TR] Table 3 and [GEO] Table 7, drawn.

:func:`run_figures` draws them for several runs against a baseline, each as a paper prints it;
:func:`print_figure` draws any one Axes that way (:func:`print_panels` a grid of them) and
:func:`save_figure` writes it whole (the sizes, the style and the files: :data:`FIGURE_SIZES`,
:func:`print_style`).

References: [TR], [GEO] (:mod:`lgb_risk.references`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lgb_risk import measures as registry
from lgb_risk import risk
from lgb_risk._figures import printing
from lgb_risk._figures.printing import *  # noqa: F403 (its __all__ is this module's too)
from lgb_risk._figures.printing import (
    check_format,
    new_axes,
    print_figure,
    print_style,
    save_figures,
)
from lgb_risk._measuring.per_query_input import aligned

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import PerQuery

__all__ = ["win_loss_histogram", "trisk_by_alpha", "georisk_by_alpha", "tr_tj_per_query",
           "risk_reward", "run_figures", "write_run_figures", "RELATIVE_BINS"]
__all__ += printing.__all__  # the print style

#: Bins of the relative change (M − M_b) / M_b, in %: losses and wins of more than 10%, 25% and
#: 50% (a change within ±10% in the middle); the outer edges close the two end bins.
RELATIVE_BINS = (-100.0, -50.0, -25.0, -10.0, 10.0, 25.0, 50.0, 100.0)


def _axes(ax: Any, size: tuple[float, float]) -> Any:
    return ax if ax is not None else new_axes(size)


def _runs(systems: Mapping[str, PerQuery] | PerQuery) -> dict:
    """The runs drawn, by name: a mapping of them, or one run's values (named ``run``)."""
    if isinstance(systems, Mapping) and not systems:
        raise ValueError("systems is an empty mapping: give at least one run's per-query "
                         "values, {name: values}")
    if isinstance(systems, Mapping) and all(
            not isinstance(v, (int, float)) for v in systems.values()):
        return dict(systems)
    return {"run": systems}


def win_loss_histogram(systems: Mapping[str, PerQuery] | PerQuery, baseline: PerQuery, *,
                       ax: Any = None, relative: bool = True, bins: Sequence[float] | None = None,
                       measure: str = "NDCG@20", baseline_name: str = "the baseline",
                       title: bool = False) -> Any:
    """How many queries each run wins or loses against the baseline, by how much.

    ``relative``: the change (M − M_b) / M_b in %, binned by :data:`RELATIVE_BINS` (queries
    where M_b = 0 counted at +100% when M > 0, in the middle bin when M = 0 too; the middle bin,
    within ±10%, is the dotted line's). Otherwise the change M − M_b, binned by ``bins``
    (default: 5 equal bins of losses and 5 of wins up to the largest change), with the ties
    (M = M_b) in a bar of their own at 0, where the dotted line is: no bar mixes wins and
    losses, so ``bins`` must have 0 as an edge. Changes beyond the outer edges count in the end
    bins. Several runs (a mapping name -> per-query values) are drawn side by side in each bin;
    a single run is named in the legend. Each run's bars have their own hatching besides their
    colour (they stay apart in greyscale); bins are written with minus signs. ``title``: a
    title naming the measure and the baseline (a paper's caption says it instead).

    >>> ax = win_loss_histogram({"run": [0.5, 0.2, 0.9]}, [0.4, 0.3, 0.3])
    >>> [int(p.get_height()) for p in ax.patches if p.get_height()]
    [1, 1, 1]
    """
    ax = _axes(ax, (7, 4))
    runs = _runs(systems)
    changes = {}
    for name, values in runs.items():
        s, b = aligned("raise", system=values, baseline=baseline)
        delta = s[0] - b[0]
        if relative:
            changes[name] = np.where(b[0] > 0, 100.0 * delta / np.where(b[0] > 0, b[0], 1.0),
                                     np.where(delta > 0, 100.0, 0.0))
        else:
            changes[name] = delta
    if relative:
        edges = np.array([-np.inf, *(bins or RELATIVE_BINS)[1:-1], np.inf])
        labels = _relative_labels(np.asarray(bins or RELATIVE_BINS))
        count = _relative_counts(edges)
        zero = (len(edges) - 2) / 2
    else:
        losses, wins = _signed_edges(np.concatenate(list(changes.values())), bins)
        labels = [_minus(f"{a:+.3g}…{b:+.3g}") for a, b in zip(losses[:-1], losses[1:])] + [
            "0"] + [_minus(f"{a:+.3g}…{b:+.3g}") for a, b in zip(wins[:-1], wins[1:])]
        count = _signed_counts(losses, wins)
        zero = len(losses) - 1
    width = 0.8 / len(changes)
    positions = np.arange(len(labels))
    for i, (name, change) in enumerate(changes.items()):
        ax.bar(positions - 0.4 + width * (i + 0.5), count(change), width, label=name,
               hatch=_HATCHES[i % len(_HATCHES)], edgecolor="black", linewidth=0.4)
    ax.set_xticks(positions)
    ax.set_xticklabels(labels, rotation=30, ha="right")
    ax.axvline(zero, color="grey", linestyle=":", linewidth=0.8)
    what = "relative change of" if relative else "change of"
    ax.set_xlabel(f"{what} {measure} against {baseline_name}" + (" (%)" if relative else ""))
    ax.set_ylabel("queries")
    if title:
        ax.set_title(f"Wins and losses against {baseline_name} ({measure})")
    _legend(ax)
    return ax


#: Hatching of each run's bars, in turn (the first plain): bars stay apart in greyscale.
_HATCHES = ("", "////", "....", "xxxx", "\\\\", "oo", "++", "--")


def _minus(text: str) -> str:
    """``text`` with its hyphen-minus signs as true minus signs (U+2212)."""
    return text.replace("-", "\u2212")


def _relative_counts(edges: np.ndarray):
    """Counts per bin of relative changes, the outer bins open-ended."""
    return lambda change: np.histogram(np.clip(change, edges[1] - 1, edges[-2] + 1), edges)[0]


def _signed_edges(everything: np.ndarray, bins) -> tuple[np.ndarray, np.ndarray]:
    """The edges of the loss bins (ending at 0) and of the win bins (starting at 0)."""
    if bins is None:
        largest = float(np.max(np.abs(everything))) if everything.size else 0.0
        largest = largest or 1.0
        return np.linspace(-largest, 0.0, 6), np.linspace(0.0, largest, 6)
    edges = np.asarray(bins, dtype=float)
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0) or 0.0 not in edges:
        raise ValueError(f"bins must be increasing edges with 0 among them (a bin across 0 "
                         f"would mix wins and losses), got {list(bins)}")
    at = int(np.flatnonzero(edges == 0.0)[0])
    return edges[:at + 1], edges[at:]


def _signed_counts(losses: np.ndarray, wins: np.ndarray):
    """Counts per bar: the loss bins, the ties, the win bins; changes beyond the outer edges
    in the end bins."""
    def count(change):
        below, above = change[change < 0], change[change > 0]
        lost = np.histogram(np.clip(below, losses[0], 0.0), losses)[0] if losses.size > 1 else []
        won = np.histogram(np.clip(above, 0.0, wins[-1]), wins)[0] if wins.size > 1 else []
        return np.concatenate([lost, [np.sum(change == 0)], won])

    return count


def _file_stem(name: str) -> str:
    """``name`` as part of a file name: letters, digits, ``.``, ``-`` and ``_`` kept, ``@``
    dropped (ndcg@20 -> ndcg20), anything else (``/``, spaces, brackets) made ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name.replace("@", "")).strip("_") or "_"


def _relative_labels(edges: np.ndarray) -> list[str]:
    inner = edges[1:-1]
    labels = [f"< {inner[0]:g}"]
    labels += [f"{a:g}…{b:g}" for a, b in zip(inner[:-1], inner[1:])]
    labels.append(f"> {inner[-1]:g}")
    return [_minus(label) for label in labels]


def trisk_by_alpha(systems: Mapping[str, PerQuery] | PerQuery, baseline: PerQuery,
                   alphas: Sequence[float] = (0, 1, 2, 5, 10), *, ax: Any = None,
                   measure: str = "NDCG@20", baseline_name: str = "the baseline",
                   correction: str | None = None, title: bool = False) -> Any:
    """TRisk of each run against the baseline at each evaluation α, with the band
    −2 < TRisk < 2 in which the difference is not significant at about 0.05, uncorrected
    ([TR] Fig. 1). With ``correction`` (the method a table's marks use) the figure says that
    the band is uncorrected and the table's significance is not.

    >>> ax = trisk_by_alpha({"a": [0.5, 0.2, 0.9, 0.4]}, [0.4, 0.3, 0.6, 0.4], [0, 5])
    >>> [round(float(v), 4) for v in ax.lines[0].get_ydata()]
    [0.8783, -0.2582]
    """
    from lgb_risk.significance import CORRECTIONS

    ax = _by_alpha(ax, systems, baseline, alphas, risk.trisk_against)
    band = "|TRisk| < 2: p > 0.05, uncorrected"
    if correction is not None:
        band += f"\n(the table's tests: {CORRECTIONS.get(correction, correction)}-corrected)"
    ax.axhspan(-2, 2, color="grey", alpha=0.15, linewidth=0, label=band)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_ylabel(f"TRisk ({measure})\nagainst {baseline_name}")
    if title:
        ax.set_title(f"TRisk against {baseline_name} by α ({measure})")
    _legend(ax)
    return ax


#: Each run's marker and line style besides its colour (overlapping lines stay apart in
#: print and for colour-blind readers).
LINE_STYLES: list[dict[str, Any]] = [{"marker": marker, "linestyle": style, "markersize": 4}
               for marker, style in zip("osD^vPX*<>", ["-", "--", "-.", ":"] * 3)]


def _legend(ax: Any) -> None:
    """The legend beside the axes when the runs are many (it would sit on the lines), else in
    the axes' emptiest corner."""
    if len(ax.get_legend_handles_labels()[0]) > 4:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    else:
        ax.legend()


def _by_alpha(ax: Any, systems: Any, baseline: PerQuery, alphas: Sequence[float],
              against: Any) -> Any:
    """A line per run of ``against(run, baseline, α)`` over the evaluation α."""
    ax = _axes(ax, (6, 4))
    alphas = [float(a) for a in alphas]
    for name, values in _runs(systems).items():
        line = [float(against(values, baseline, a)[0]) for a in alphas]
        if np.all(np.isnan(line)):
            raise ValueError(f"run {name!r}: {against.__name__.removesuffix('_against')} is "
                             "undefined at every α (e.g. TRisk where every query has the same "
                             "risk-weighted difference, as when the run equals the baseline): "
                             "there is no line to draw")
        style = LINE_STYLES[len(ax.lines) % len(LINE_STYLES)]
        ax.plot(alphas, line, label=name, **style)
    ax.set_xticks(alphas)
    ax.set_xticklabels([f"{a:g}" for a in alphas])
    ax.set_xlabel("evaluation α")
    return ax


def georisk_by_alpha(systems: Mapping[str, PerQuery] | PerQuery, baseline: PerQuery,
                     alphas: Sequence[float] = (0, 1, 2, 5, 10), *, ax: Any = None,
                     measure: str = "NDCG@20", baseline_name: str = "the baseline",
                     title: bool = False) -> Any:
    """GeoRisk of each run against the baseline (the run's row of the matrix [run; baseline],
    [GEO] Eq. 7) at each evaluation α.

    >>> ax = georisk_by_alpha({"a": [0.5, 0.2, 0.9]}, [0.4, 0.3, 0.6], [1, 5])
    >>> [round(float(v), 4) for v in ax.lines[0].get_ydata()]
    [0.5022, 0.4602]
    """
    ax = _by_alpha(ax, systems, baseline, alphas, risk.georisk_against)
    ax.set_ylabel(f"GeoRisk ({measure}) against\n{baseline_name} (higher is better)")
    if title:
        ax.set_title(f"GeoRisk against {baseline_name} by α ({measure})")
    _legend(ax)
    return ax


def tr_tj_per_query(system: PerQuery, baseline: PerQuery, alpha: float = 5.0, *,
                    ax: Any = None, measure: str = "NDCG@10", name: str = "the system",
                    baseline_name: str = "the baseline", title: bool = False) -> Any:
    """Every query's TR_q (bars; hatched and red below −2, a significant loss) and TJ_q (an
    orange dashed line, with markers up to 100 queries, apart from the bars' edge), sorted by
    TR_q, against the baseline
    at α, with the ±2 thresholds ([TR] §5); the legend gives the run's TRisk. Where the values
    carry topic ids (pandas Series), the axis names the topics: every one up to
    fit one per :data:`TOPIC_LABEL_PITCH` points of the axes' width, else some of those below −2,
    spaced so that their labels do not touch.

    >>> ax = tr_tj_per_query([0.5, 0.2, 0.9, 0.4], [0.4, 0.3, 0.6, 0.4], 1)
    >>> len(ax.lines[0].get_ydata())  # TJ_q of the four queries
    4
    """
    ax = _axes(ax, (8, 4))
    t = risk.trisk(system, baseline, alpha)
    order = np.argsort(t.tr, kind="stable")
    x = np.arange(order.size)
    tr_sorted = t.tr[order]
    below = tr_sorted < -2
    # Bars of full width, touching, drawn as one filled step each: red (the first, TR_q < −2)
    # and blue (the rest).
    edges = np.arange(order.size + 1) - 0.5
    n_below = int(below.sum())
    for part, colour, hatch, label in ((slice(n_below, None), "tab:blue", "", "TR"),
                                       (slice(0, n_below), "tab:red", "////", "TR < −2")):
        if tr_sorted[part].size:
            ax.stairs(tr_sorted[part], edges[part.start:(part.stop or order.size) + 1],
                      baseline=0, fill=True, color=colour, hatch=hatch,
                      edgecolor="white" if hatch else colour, linewidth=0, label=label)
    ax.plot(x, t.tj[order], color="tab:orange", linewidth=1.0, linestyle="--",
            marker="o" if order.size <= 100 else None, markersize=2.5, label="TJ")
    for level in (-2, 2):
        ax.axhline(level, color="grey", linestyle=":")
    ax.set_xlim(-0.5, order.size - 0.5)
    topics: Any = getattr(system, "index", None) if hasattr(system, "iloc") else None
    if topics is not None and len(topics) == order.size:  # a pandas Series's topic ids
        width_pt = ax.get_window_extent().width * 72 / ax.figure.dpi
        bars_per_label = TOPIC_LABEL_PITCH * order.size / width_pt
        shown = list(x) if bars_per_label <= 1 else _spaced(x[below], bars_per_label)
        _topic_labels(ax, shown, [str(topics[order[i]]) for i in shown])
        ax.set_xlabel("topics, sorted by TR" + ("" if bars_per_label <= 1 else
                                                " (some below −2 named)"))
    else:
        ax.set_xlabel("queries, sorted by TR")
    ax.set_ylabel(f"TR and TJ ({measure}, α = {alpha:g})")
    trisk_text = _minus(f"{t.trisk:.2f}")
    if title:
        ax.set_title(f"{name} against {baseline_name}: TRisk {trisk_text}")
    ax.legend(title=f"{name}: TRisk {trisk_text}", loc=_empty_corner(tr_sorted, t.tj[order]))
    return ax


def _empty_corner(*sorted_by_tr: np.ndarray) -> str:
    """Where the legend of the TR/TJ figure covers nothing: TR_q rises from left to right, so
    below the axis on the right where no value of the last 40% of queries is negative, else
    above it on the left where none of the first 40% is positive; else matplotlib's choice
    (TJ_q's sign can differ from TR_q's)."""
    part = max(1, int(np.ceil(0.4 * sorted_by_tr[0].size)))
    if all(values[-part:].min() >= 0 for values in sorted_by_tr):
        return "lower right"
    if all(values[:part].max() <= 0 for values in sorted_by_tr):
        return "upper left"
    return "best"


def _spaced(positions: np.ndarray, gap: float) -> list:
    """``positions`` (increasing) thinned from the left so that any two kept are ``gap`` apart."""
    kept: list = []
    for position in positions:
        if not kept or position - kept[-1] >= gap:
            kept.append(position)
    return kept


def _topic_labels(ax: Any, positions: Sequence, labels: list[str]) -> None:
    """Name the bars at ``positions`` under the x axis, rotated, in 6 pt: as text, not as tick
    labels (a tick is five artists: fifty of them are half a figure's drawing time)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path
    from matplotlib.transforms import ScaledTranslation

    ax.set_xticks([])
    # x in data, y 2 pt under the axes' bottom
    under_axis = ax.get_xaxis_transform() + ScaledTranslation(0, -2 / 72,
                                                              ax.figure.dpi_scale_trans)
    for position, label in zip(positions, labels):
        ax.text(position, 0, label, transform=under_axis, rotation=90, fontsize=6,
                ha="center", va="top", clip_on=False)
    if labels:  # the axis label under the longest (its outline's width, in points)
        font = FontProperties(size=6)
        ax.xaxis.labelpad = 4 + max(text_to_path.get_text_width_height_descent(
            label, font, ismath=False)[0] for label in labels)


#: Points of the axes' width per topic a TR/TJ figure names: rotated 6-pt labels side by side,
#: 50 on a page-wide figure, 24 on a column-wide one.
TOPIC_LABEL_PITCH = 7.5


def risk_reward(points: Mapping[str, Sequence[tuple[float, float, float]]], *,
                reference: tuple[float, float] | None = None, ax: Any = None,
                measure: str = "NDCG@10", baseline_name: str = "the baseline",
                reference_name: str = "LambdaMART", title: bool = False) -> Any:
    """Risk (x) against Reward (y) of each learner, one point per training α, labelled with it,
    and ``reference``'s (Risk, Reward) marked: left is a learner that loses less to the
    baseline, up one that gains more over it (up and left is better on both; down and left,
    the usual move of a risk-sensitive learner, trades gains for fewer losses).

    ``points`` maps a learner to its ``(alpha, risk, reward)`` triples, drawn as markers and
    not joined (nothing was measured between two α). Each α label sits beside its point where it
    covers no other label or marker at the figure's present size: draw on an Axes of the final
    size (:func:`print_figure`) for that to hold in the file.

    >>> ax = risk_reward({"U-CRO": [(1, 0.02, 0.12), (5, 0.015, 0.11)]}, reference=(0.024, 0.13))
    >>> ax.lines[0].get_xdata().tolist()
    [0.02, 0.015]
    """
    if not points and reference is None:
        raise ValueError("risk_reward has nothing to draw: give points, {learner: [(alpha, "
                         "risk, reward), ...]}, or a reference")
    ax = _axes(ax, (6, 4.5))
    labels = []  # (risk, reward, text, colour) of every point
    for learner, triples in points.items():
        ordered = sorted(triples)
        style = {**LINE_STYLES[len(ax.lines) % len(LINE_STYLES)], "linestyle": "none",
                 "markersize": 5}
        line = ax.plot([r for _, r, _ in ordered], [w for _, _, w in ordered], label=learner,
                       **style)[0]
        labels += [(r, w, f"α={a:g}", line.get_color()) for a, r, w in ordered]
    if reference is not None:
        ax.plot([reference[0]], [reference[1]], marker="*", markersize=12, color="black",
                linestyle="none", label=reference_name)
    ax.set_xlabel(f"Risk: mean loss max(0, M_b − M) to {baseline_name} ({measure})")
    ax.set_ylabel(f"Reward: mean gain max(0, M − M_b)\n({measure})")
    if title:
        ax.set_title(f"Risk and reward against {baseline_name} by training α")
    ax.margins(x=0.12, y=0.08)  # room for the α labels inside the axes
    _legend(ax)
    _label_apart(ax, labels, [(x, y, 3) for x, y, _, _ in labels]
                 + ([] if reference is None else [(*reference, 6)]))
    return ax


#: Where an α label may sit beside its point, in order: the side it starts from (4 points to
#: the right or left of the point, or centred on it) and its height, in points from the point.
_LABEL_PLACES = (("right", 3), ("right", -9), ("left", 3), ("left", -9), ("centre", 6),
                 ("centre", -12))
_LABEL_SIZE = 6  # points


def _label_apart(ax: Any, labels: list, markers: list) -> None:
    """Write each ``(x, y, text, colour)`` beside its point, at the first of
    :data:`_LABEL_PLACES` where it overlaps neither a label already written nor a marker
    (``(x, y, radius in points)``), or where it covers the least of them.

    The boxes are estimated at the figure's present size (a character about 0.6 of the font
    size wide) with a point of room around them, which absorbs most of the axes' change of size
    when the figure is laid out."""
    ax.autoscale_view()
    to_points = ax.transData + ax.figure.dpi_scale_trans.inverted()  # then inches: × 72

    def at(x: float, y: float) -> np.ndarray:
        return to_points.transform((x, y)) * 72

    boxes = [(cx - r, cy - r, cx + r, cy + r) for (cx, cy), r in
             ((at(x, y), radius) for x, y, radius in markers)]

    def overlap(box: tuple) -> float:
        return sum(max(0.0, min(box[2], b[2]) - max(box[0], b[0]))
                   * max(0.0, min(box[3], b[3]) - max(box[1], b[1])) for b in boxes)

    for x, y, text, colour in labels:
        px, py = at(x, y)
        width = 0.6 * _LABEL_SIZE * len(text)
        places: list[tuple[float, int, float, int, tuple]] = []
        for side, dy in _LABEL_PLACES:
            shift = {"right": 4.0, "left": -4.0 - width, "centre": -width / 2}[side]
            box = (px + shift - 1, py + dy - 1, px + shift + width + 1, py + dy + _LABEL_SIZE + 1)
            places.append((overlap(box), len(places), shift, dy, box))
            if places[-1][0] == 0:
                break
        _, _, shift, dy, box = min(places)  # the first free place, else the least covered
        boxes.append(box)
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(shift, dy),
                    fontsize=_LABEL_SIZE, color=colour)


def run_figures(scores: Mapping[str, Any], baseline: str, *,
                alphas: Sequence[float] = (0, 1, 5, 10), alpha: float | None = None,
                figure_size: str = "page", correction: str | None = None,
                titles: bool = False) -> dict:
    """The figures of several runs against one of them, drawn at ``figure_size``
    (:data:`FIGURE_SIZES`) in :func:`print_style`: for each measure (``scores`` maps it to a
    DataFrame, a row per run and a column per topic) the win/loss histogram of the other runs,
    TRisk and GeoRisk over ``alphas`` (saying, with ``correction``, that the band is
    uncorrected), and each run's TR_q/TJ_q at ``alpha`` — by default the last of ``alphas``,
    the α of ``lgb-risk evaluate``'s LaTeX table, so that a figure and its table agree.
    ``titles``: a title on each (a paper's caption says it instead).

    Returns ``{file name without its extension: matplotlib Figure}``.
    """
    drawers = _run_figure_drawers(scores, baseline, alphas, alpha, correction, titles)
    return {name: print_figure(draw, figure_size) for name, draw in drawers.items()}


def write_run_figures(scores: Mapping[str, Any], baseline: str, directory: Any, *,
                      alphas: Sequence[float] = (0, 1, 5, 10), alpha: float | None = None,
                      figure_format: str = "png", figure_size: str = "page",
                      correction: str | None = None, titles: bool = False,
                      progress: Any = None) -> list:
    """:func:`run_figures` written as files of ``figure_format`` (pdf, svg or png) in
    ``directory`` (:func:`save_figures`: each whole or not at all, the page exactly the
    figure's size), the figures shared between this process and forked copies of it, one per
    usable core. ``progress(done, total)`` is called as files are written. Returns the paths.
    """
    from lgb_risk._files.atomic import writable_folder

    check_format(figure_format)
    print_style(figure_size)  # a bad size is refused before anything is drawn
    writable_folder(directory, "directory")  # and a folder that cannot take the files
    drawers = _run_figure_drawers(scores, baseline, alphas, alpha, correction, titles)
    return _in_forks(list(drawers), lambda share, report: save_figures(
        {name: print_figure(drawers[name], figure_size) for name in share}, directory,
        figure_format, figure_size, progress=report), progress)


def _in_forks(names: list, work: Any, progress: Any) -> list:
    """``work(share, report)`` over shares of ``names`` in this process and forked copies of
    it, one per usable core (drawing a figure and embedding its fonts is most of the time:
    BENCHMARKS.md);
    the results in ``names``' order. ``report(done, total)`` of this process's share stands
    for every share's."""
    from lgb_risk._runtime.forked import map_in_forks
    from lgb_risk._runtime.machine import usable_cores

    n_shares = max(1, min(usable_cores(), len(names) // 4))
    shares = [names[i::n_shares] for i in range(n_shares)]

    def report(done: int, _total: int) -> None:
        if progress is not None:
            progress(min(len(names), done * n_shares), len(names))

    def run(share: list) -> list:
        return work(share, report if share is shares[0] else None)

    results = [r for share_results in map_in_forks(run, shares) for r in share_results]
    by_name = dict(zip((name for share in shares for name in share), results))
    if progress is not None:
        progress(len(names), len(names))
    return [by_name[name] for name in names]


def _run_figure_drawers(scores, baseline, alphas, alpha, correction, titles) -> dict:
    """The figures of :func:`run_figures`, each as a function that draws it on the Axes it is
    given: ``{file name: draw}``, checked before any is drawn."""
    alphas = [float(a) for a in alphas]
    if not alphas:
        raise ValueError("alphas: give at least one α")
    alpha = alphas[-1] if alpha is None else float(alpha)
    if len(set(alphas)) < 2:
        warnings.warn(f"the TRisk-by-α and GeoRisk-by-α figures need two α or more, got "
                      f"{alphas[0]:g} only: left out (give several, e.g. 0 1 2 5 10, and the "
                      "table's α apart: --table-alpha, or alpha=)", UserWarning, stacklevel=3)
    drawers: dict = {}

    def add(name: str, draw: Any) -> None:
        if name in drawers:
            raise ValueError(f"two figures would both be written to {name}: give the runs "
                             "names that differ in more than their punctuation")
        drawers[name] = draw

    for measure, table in scores.items():
        if baseline not in table.index:
            raise ValueError(f"baseline {baseline!r} is not among the runs "
                             f"{', '.join(map(str, table.index))}")
        base = table.loc[baseline]
        others = {str(run): table.loc[run] for run in table.index if run != baseline}
        if not others:
            raise ValueError(f"the figures draw runs against the baseline {baseline!r}, the "
                             "only run given: give at least one other run")
        try:
            label = registry.parse(measure).label  # NDCG@20
        except ValueError:  # a per-topic table's single score column
            label = measure
        named = {"measure": label, "baseline_name": baseline, "title": titles}
        stem = _file_stem(measure)
        add(f"win_loss_{stem}", lambda ax, o=others, b=base, n=named: win_loss_histogram(
            o, b, ax=ax, **n))
        if len(set(alphas)) > 1:
            add(f"trisk_by_alpha_{stem}", lambda ax, o=others, b=base, n=named: trisk_by_alpha(
                o, b, alphas, correction=correction, ax=ax, **n))
            add(f"georisk_by_alpha_{stem}", lambda ax, o=others, b=base, n=named:
                georisk_by_alpha(o, b, alphas, ax=ax, **n))
        for run, values in others.items():
            add(f"tr_tj_{_file_stem(run)}_{stem}", lambda ax, v=values, b=base, r=run, n=named:
                tr_tj_per_query(v, b, alpha, name=r, ax=ax, **n))
    return drawers
