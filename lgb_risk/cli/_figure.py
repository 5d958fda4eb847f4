"""The checks of ``--figure`` and the options that shape it, made before any work: an option
that would be ignored, a file matplotlib cannot write."""

from __future__ import annotations

from pathlib import Path


def refuse_figure_options_alone(args, figure: str) -> None:
    """Refuse ``--figure-format``, ``--figure-size`` or ``--figure-titles`` without ``--figure``
    (``figure`` is how the command's help writes that option, ``--figure DIR``)."""
    if getattr(args, "figure", None) is not None:
        return
    given = [flag for flag, value in (("--figure-format", getattr(args, "figure_format", None)),
                                      ("--figure-size", args.figure_size),
                                      ("--figure-titles", args.figure_titles or None))
             if value is not None]
    if given:
        raise ValueError(f"{' and '.join(given)} {'shape' if len(given) > 1 else 'shapes'} "
                         f"the figures of {figure}, which is not given: add {figure}, or drop "
                         f"{'them' if len(given) > 1 else 'it'}")


def require_matplotlib() -> None:
    """Refuse ``--figure`` where matplotlib (the ``plot`` extra) is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ValueError("--figure needs matplotlib: pip install 'lgb_risk[plot]'") from None


def figure_file_format(path: str) -> str:
    """The format of ``--figure FILE`` (``png``, ``pdf`` or ``svg``), read from its suffix;
    refused where matplotlib is missing or the file could not be written."""
    from lgb_risk.plots import FIGURE_FORMATS

    require_matplotlib()
    file = Path(path)
    figure_format = file.suffix[1:].lower()
    if figure_format not in FIGURE_FORMATS:
        raise ValueError(f"--figure {path}: the file name should end in "
                         f"{', '.join('.' + f for f in FIGURE_FORMATS)}, the format to write; "
                         f"got {file.suffix or 'no suffix'!r}")
    if file.is_dir():
        raise ValueError(f"--figure {path}: is a folder; give a file name")
    if not file.parent.is_dir():
        raise ValueError(f"--figure {path}: the folder {file.parent} does not exist")
    return figure_format
