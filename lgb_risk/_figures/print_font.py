"""The figures' font: matplotlib's DejaVu Sans cut to the characters a figure of this library
writes, so that embedding it in each PDF is quick.

A PDF with TrueType text carries a subset of its font, which matplotlib makes for every file by
reading the whole font: DejaVu Sans has 6,241 glyphs and OpenType layout tables that figures do
not use (matplotlib kerns from the ``kern`` table), and reading them is most of a figure's time
(BENCHMARKS.md). The cut copy keeps the glyphs of Latin, Greek, punctuation, arrows, mathematical
operators and geometric shapes with their outlines, hinting and kerning, so text is drawn as
before; a character outside it is taken from DejaVu Sans itself (matplotlib's font fallback).
It is made once per matplotlib installation, in matplotlib's cache folder; where that folder
cannot be written the figures use DejaVu Sans as it is (the same figures, written more slowly).
"""

from __future__ import annotations

import functools
from pathlib import Path

#: Unicode blocks the cut font keeps: Basic Latin to Latin Extended-A, Greek, General
#: Punctuation (… – ‘ ’), Arrows, Mathematical Operators (− ≤ ±) and Geometric Shapes (▲ ▼).
BLOCKS = ((0x20, 0x17F), (0x370, 0x3FF), (0x2000, 0x206F), (0x2190, 0x21FF), (0x2200, 0x22FF),
          (0x25A0, 0x25FF))
#: Its family name; the family matplotlib falls back to for other characters.
FAMILY, FALLBACK = "DejaVu Sans lgb_risk", "DejaVu Sans"
_POSTSCRIPT_NAME = "DejaVuSans-lgb_risk"  # what a PDF's list of fonts shows
_VERSION = 1  # change with BLOCKS or the way the copy is made: a new file name in the cache


@functools.cache
def font_family() -> list[str]:
    """The ``font.family`` of the figures: the cut font, registered with matplotlib (made in
    its cache folder on first use), then DejaVu Sans; DejaVu Sans alone if it cannot be made."""
    import matplotlib
    from matplotlib import font_manager

    source = Path(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")
    cut = Path(matplotlib.get_cachedir(),
               f"lgb_risk-DejaVuSans-v{_VERSION}-{source.stat().st_size}.ttf")
    try:
        if not cut.exists():
            _write_cut(source, cut)
        font_manager.fontManager.addfont(str(cut))
    except (OSError, RuntimeError):  # an unwritable cache folder, a damaged file
        return [FALLBACK]
    return [FAMILY, FALLBACK]


def _write_cut(source: Path, target: Path) -> None:
    """Write DejaVu Sans cut to :data:`BLOCKS` as ``target`` (whole or not at all), renamed
    :data:`FAMILY`; the same bytes every time (no timestamp)."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    from lgb_risk._files.atomic import atomic_write

    font = TTFont(source, recalcTimestamp=False)
    options = subset.Options(glyph_names=True, notdef_outline=True, hinting=True,
                             legacy_kern=True, name_IDs=["*"], name_languages=["*"],
                             layout_features=[])
    options.drop_tables += ["GSUB", "GPOS", "GDEF", "MATH", "FFTM"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[c for first, last in BLOCKS for c in range(first, last + 1)])
    subsetter.subset(font)
    for record in font["name"].names:
        if record.nameID in (1, 4, 16):  # family, full name, typographic family
            record.string = FAMILY
        elif record.nameID == 6:
            record.string = _POSTSCRIPT_NAME
    atomic_write(target, lambda tmp: font.save(tmp))
