"""The figures' cut copy of DejaVu Sans draws every kept character as DejaVu Sans does, falls
back to it for the others, and is not needed for a figure to be written."""

import importlib
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")

from lgb_risk._figures import print_font  # noqa: E402


def _kept_characters() -> str:
    from fontTools.ttLib import TTFont

    source = TTFont(Path(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf"))
    mapped = source.getBestCmap()
    return "".join(chr(c) for first, last in print_font.BLOCKS
                   for c in range(first, last + 1) if c in mapped and chr(c).isprintable())


def _rendered(family: list, text: str):
    """The pixels and extent of ``text`` drawn by Agg in ``family``."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context({"font.family": family, "font.size": 9}):
        figure = Figure(figsize=(12, 8), dpi=100)
        FigureCanvasAgg(figure)
        lines = [text[i:i + 60] for i in range(0, len(text), 60)]
        artist = figure.text(0.01, 0.99, "\n".join(lines), va="top")
        figure.canvas.draw()
        return np.asarray(figure.canvas.buffer_rgba()).copy(), artist.get_window_extent()


def test_kept_characters_draw_exactly_as_dejavu_sans_does():
    """Every character of the kept blocks in DejaVu Sans, and kerned pairs (AV, To, Wa): the
    same pixels and the same extent from the cut copy as from the font itself."""
    import numpy as np

    text = _kept_characters() + " AVAWATo Wa Ty −0.5…1 ▲▼ α ≤ 2"
    assert len(text) > 500
    cut_pixels, cut_box = _rendered(print_font.font_family(), text)
    full_pixels, full_box = _rendered([print_font.FALLBACK], text)
    assert print_font.font_family()[0] == print_font.FAMILY
    assert cut_box.bounds == full_box.bounds
    assert np.array_equal(cut_pixels, full_pixels)


def test_a_character_outside_the_kept_blocks_comes_from_dejavu_sans(tmp_path):
    """The euro sign and a Cyrillic letter are not kept: the PDF embeds DejaVu Sans beside the
    cut copy, and the text is drawn (no missing-glyph box)."""
    import shutil
    import subprocess

    from matplotlib.figure import Figure

    assert not any(first <= ord(c) <= last for c in "€Ж" for first, last in print_font.BLOCKS)
    with matplotlib.rc_context({"font.family": print_font.font_family(),
                                "pdf.fonttype": 42}):
        figure = Figure()
        figure.text(0.1, 0.5, "run Ж costs 5 €")
        figure.savefig(tmp_path / "f.pdf")
    if shutil.which("pdffonts") is None:
        pytest.skip("pdffonts (poppler-utils) is not installed")
    fonts = subprocess.run(["pdffonts", str(tmp_path / "f.pdf")], capture_output=True,
                           text=True, check=True).stdout
    assert "DejaVuSans-lgb_risk" in fonts and "DejaVuSans " in fonts.replace("\n", " ") + " "


def test_without_a_writable_cache_the_figures_use_dejavu_sans_itself(tmp_path, monkeypatch):
    """matplotlib's cache folder is a file here: nothing can be made in it; the family is DejaVu
    Sans alone, and a figure is still written."""
    from lgb_risk import plots

    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file")
    monkeypatch.setattr(matplotlib, "get_cachedir", lambda: str(not_a_folder))
    module = importlib.reload(print_font)
    try:
        assert module.font_family() == [module.FALLBACK]
        assert not_a_folder.read_text() == "a file"
        import pandas as pd

        table = pd.DataFrame([[0.5, 0.2, 0.9], [0.4, 0.3, 0.6]], index=["mine", "bm25"])
        paths = plots.write_run_figures({"ndcg@10": table}, "bm25", tmp_path / "figures",
                                        figure_format="pdf")
        assert paths and all(path.stat().st_size > 0 for path in paths)
    finally:
        monkeypatch.undo()
        importlib.reload(print_font)


def test_the_cut_copy_is_made_the_same_twice(tmp_path):
    """No timestamp in the file: figures' bytes do not depend on when the copy was made."""
    source = Path(matplotlib.get_data_path(), "fonts", "ttf", "DejaVuSans.ttf")
    print_font._write_cut(source, tmp_path / "a.ttf")
    print_font._write_cut(source, tmp_path / "b.ttf")
    assert (tmp_path / "a.ttf").read_bytes() == (tmp_path / "b.ttf").read_bytes()
    assert (tmp_path / "a.ttf").stat().st_size < source.stat().st_size / 5
