"""The Figures (and the Axes of one-panel figures) the library returns: built without pyplot,
and shown by a notebook where they are made. IPython shows an object through its
``_repr_png_``; a plain Figure has none until pyplot registers a view for Figures, which the
caller may never import. Imported only where a figure is made (matplotlib is the ``plot``
extra)."""

from __future__ import annotations

import io

from matplotlib.axes import Axes
from matplotlib.figure import Figure


class ShownFigure(Figure):
    """A matplotlib Figure that a notebook shows as a PNG image (150 dpi)."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=150)
        return buffer.getvalue()


class ShownAxes(Axes):
    """The Axes of a one-panel figure the library made, which a notebook shows as its
    figure's PNG (the plotting functions return the Axes, as matplotlib's own do)."""

    def _repr_png_(self) -> bytes:
        return self.figure._repr_png_()  # type: ignore[union-attr]
