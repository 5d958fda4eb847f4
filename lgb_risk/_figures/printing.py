"""Figures as a paper prints them: the sizes of an ACM column and page, the print style
(fonts embedded as text, no text below 6 pt), one Axes drawn at exactly such a size, and files
written whole with bytes set by their content only. :mod:`lgb_risk.plots` lists these names
and draws its figures through them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# What lgb_risk.plots lists; new_axes and check_format are its helpers.
__all__ = ["FIGURE_FORMATS", "FIGURE_SIZES", "PRINT_STYLE", "print_style", "print_figure",
           "print_panels", "save_figure", "save_figures"]


#: The file formats of the figures, as matplotlib writes them.
FIGURE_FORMATS = ("pdf", "svg", "png")


#: Figure sizes in inches, by where the figure goes: ACM sigconf's one column (``figure``,
#: 241 pt) and the text width (``figure*``, 506 pt), a little narrower, so that the file's page
#: is exactly this wide and fits.
FIGURE_SIZES = {"column": (3.3, 2.6), "page": (7.0, 3.0)}

#: matplotlib's settings for the figures as a paper prints them, by size: fonts embedded as
#: TrueType (Type 42) in PDF and kept as text in SVG (some submission systems refuse Type 3
#: fonts), no text below 6 pt at print size, true minus signs.
PRINT_STYLE: dict[str, dict[str, Any]] = {
    "column": {"font.size": 7, "axes.labelsize": 7, "xtick.labelsize": 6.5,
               "ytick.labelsize": 6.5, "legend.fontsize": 6.5, "legend.title_fontsize": 6.5},
    "page": {"font.size": 8, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
             "legend.fontsize": 7, "legend.title_fontsize": 7},
}
_EMBEDDED_TEXT: dict[str, Any] = {"pdf.fonttype": 42, "ps.fonttype": 42, "svg.fonttype": "none",
                  "axes.unicode_minus": True, "svg.hashsalt": "lgb_risk"}  # SVG ids not random


def print_style(figure_size: str = "page") -> dict:
    """The matplotlib settings of a figure of ``figure_size`` (:data:`FIGURE_SIZES`), for
    ``matplotlib.rc_context``: :data:`PRINT_STYLE` and the fonts embedded as text."""
    if figure_size not in FIGURE_SIZES:
        raise ValueError(f"figure_size must be one of {', '.join(FIGURE_SIZES)}, got "
                         f"{figure_size!r}")
    from lgb_risk._figures.print_font import font_family

    return {**PRINT_STYLE[figure_size], **_EMBEDDED_TEXT, "font.family": font_family()}


def new_figure(size: tuple[float, float]) -> Any:
    """A new Figure of ``size`` inches, built without pyplot (the caller's backend and pyplot's
    figures are left alone) and shown where it is made: in a notebook its PNG, through
    IPython's ``_repr_png_``, which needs no pyplot (a Figure alone has no view of its own until
    pyplot registers one)."""
    from lgb_risk._figures.shown_figure import ShownFigure

    return ShownFigure(figsize=size)


def new_axes(size: tuple[float, float]) -> Any:
    """The Axes of a :func:`new_figure` of ``size`` inches, shown in a notebook as it too."""
    from lgb_risk._figures.shown_figure import ShownAxes

    return new_figure(size).add_subplot(axes_class=ShownAxes)


def print_figure(draw: Any, figure_size: str = "page") -> Any:
    """A matplotlib Figure of ``figure_size`` (:data:`FIGURE_SIZES`) whose one Axes
    ``draw(ax)`` draws, in :func:`print_style`, laid out to fill exactly that size: a figure a
    paper's ``figure`` (``"column"``) or ``figure*`` (``"page"``) takes as it is. Save it with
    :func:`save_figure` at the same ``figure_size``.

    >>> figure = print_figure(lambda ax: ax.plot([1, 2, 3], [0.2, 0.5, 0.4]), "column")
    >>> [float(inches) for inches in figure.get_size_inches()]
    [3.3, 2.6]
    """
    import matplotlib

    style = print_style(figure_size)  # refuses a size it does not know
    size = FIGURE_SIZES[figure_size]
    with matplotlib.rc_context(style):
        ax = new_axes(size)
        draw(ax)
        return _laid_out(ax, size)


def print_panels(draw: Any, rows: int, cols: int, figure_size: str = "page", *,
                 height: float | None = None, sharey: bool = False) -> Any:
    """A matplotlib Figure of ``figure_size``'s width (:data:`FIGURE_SIZES`; ``height`` inches
    high, or the size's height) holding ``rows`` × ``cols`` Axes, which ``draw(axes)`` draws
    (``axes`` a ``rows`` × ``cols`` array; ``sharey``: one y axis per row), in
    :func:`print_style`, laid out within it. Save it with :func:`save_figure` at the same
    ``figure_size``.

    >>> figure = print_panels(lambda axes: [ax.plot([1, 2], [1, 0]) for ax in axes.flat], 1, 3)
    >>> len(figure.axes), [float(inches) for inches in figure.get_size_inches()]
    (3, [7.0, 3.0])
    """
    import matplotlib

    style = print_style(figure_size)  # refuses a size it does not know
    width, size_height = FIGURE_SIZES[figure_size]
    with matplotlib.rc_context(style):
        figure = new_figure((width, size_height if height is None else height))
        draw(figure.subplots(rows, cols, squeeze=False, sharey=sharey))
        figure.tight_layout(pad=0.3)
    return figure


def _laid_out(ax: Any, size: tuple) -> Any:
    """The Axes' Figure at ``size`` inches, its parts laid out within it."""
    figure = ax.figure
    figure.set_size_inches(*size)
    legend = ax.get_legend()
    if legend is not None and size[0] < 4 and len(legend.get_texts()) > 4:
        # One column is too narrow for a legend beside the axes: under the figure, two
        # entries a row, with room kept for it.
        handles, labels = ax.get_legend_handles_labels()
        legend.remove()
        figure.legend(handles, labels, loc="lower center", ncol=2, frameon=False)
        rows = -(-len(labels) // 2) + sum(label.count("\n") for label in labels)
        figure.tight_layout(pad=0.3, rect=(0, 0.02 + 0.045 * rows * 3.0 / size[1], 1, 1))
    else:
        figure.tight_layout(pad=0.3)
    # Laid out once: no layout engine left for savefig to run again (it would render the
    # figure twice, and embed its fonts twice in a PDF).
    figure.set_layout_engine(None)
    return figure


#: File metadata left out, so that a figure's bytes depend on its content only.
_FIXED_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                   "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


def save_figure(figure: Any, path: Any, figure_format: str = "png",
                figure_size: str | None = None) -> Any:
    """Write ``figure`` to ``path`` in ``figure_format`` whole or not at all, its bytes set by its
    content only (no date or program in the file): PNG at 200 dpi, PDF and SVG at 150. A figure
    drawn in :func:`print_style` is saved in it too (``figure_size``: the fonts embedded as text,
    the tick labels, which matplotlib makes as it saves, in the style's sizes); None saves it
    in matplotlib's current settings. Returns the path (a ``pathlib.Path``).

    >>> import tempfile, pathlib
    >>> figure = print_figure(lambda ax: ax.plot([1, 2, 3], [0.2, 0.5, 0.4]), "column")
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> save_figure(figure, folder / "line.pdf", "pdf", "column").name
    'line.pdf'
    """
    from contextlib import nullcontext
    from pathlib import Path

    import matplotlib

    from lgb_risk._files.atomic import atomic_write

    check_format(figure_format)
    style = (nullcontext() if figure_size is None
             else matplotlib.rc_context(print_style(figure_size)))
    with style:
        atomic_write(path, lambda tmp: figure.savefig(
            tmp, format=figure_format, dpi=200 if figure_format == "png" else 150,
            metadata=_FIXED_METADATA[figure_format]))
    return Path(path)


def check_format(figure_format: str) -> None:
    """Refuse a file format matplotlib is not asked to write here (:data:`FIGURE_FORMATS`)."""
    if figure_format not in FIGURE_FORMATS:
        raise ValueError(f"figure_format must be one of {', '.join(FIGURE_FORMATS)}, got "
                         f"{figure_format!r}")


def save_figures(figures: Mapping[str, Any], directory: Any, figure_format: str = "png",
                 figure_size: str = "page", *, progress: Any = None) -> list:
    """Write ``{name: Figure}`` (:func:`lgb_risk.plots.run_figures`) as
    ``directory/NAME.FORMAT``, each whole or not at all, in :func:`print_style` (fonts embedded
    as text), the page exactly the figure's size; ``progress(done, total)`` after each. Returns
    the paths."""
    from lgb_risk._files.atomic import writable_folder

    check_format(figure_format)
    print_style(figure_size)  # a bad size is refused before any file is written
    folder = writable_folder(directory, "directory")
    paths = []
    for name, figure in figures.items():
        paths.append(save_figure(figure, folder / f"{name}.{figure_format}", figure_format,
                                 figure_size))
        if progress is not None:
            progress(len(paths), len(figures))
    return paths
