"""The figures draw the values given (read back from the Axes), label measure, baseline and
alpha, leave pyplot alone, and lgb-risk evaluate --figure writes them."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lgb_risk import plots, risk
from tests.conftest import pdf_facts

pytest.importorskip("matplotlib")

SYSTEM = np.array([0.5, 0.2, 0.9, 0.4, 0.0, 0.3])
BASELINE = np.array([0.4, 0.3, 0.3, 0.4, 0.2, 0.0])


def test_win_loss_histogram_counts_each_bin_by_a_loop():
    ax = plots.win_loss_histogram({"a": SYSTEM, "b": BASELINE * 0.5}, BASELINE,
                                  measure="ERR@20", baseline_name="bm25")
    edges = plots.RELATIVE_BINS
    heights = [p.get_height() for p in ax.patches]
    for run, values, offset in (("a", SYSTEM, 0), ("b", BASELINE * 0.5, 7)):
        change = [100 * (s - b) / b if b > 0 else (100.0 if s > 0 else 0.0)
                  for s, b in zip(values, BASELINE)]
        expected = [sum(1 for c in change if (i == 0 or c >= edges[i]) and
                        (i == len(edges) - 2 or c < edges[i + 1]))
                    for i in range(len(edges) - 1)]
        assert heights[offset:offset + 7] == expected, run
    assert "ERR@20" in ax.get_xlabel() and ax.get_title() == ""  # the caption says it
    assert [t.get_text() for t in ax.get_xticklabels()][:3] == ["< −50", "−50…−25", "−25…−10"]
    hatches = {p.get_hatch() for p in ax.patches}
    assert len(hatches) == 2  # each run's bars their own hatching: apart in greyscale
    titled = plots.win_loss_histogram({"a": SYSTEM}, BASELINE, baseline_name="bm25", title=True)
    assert "bm25" in titled.get_title()


def test_absolute_win_loss_bins_never_mix_wins_and_losses():
    """relative=False: losses, then the ties at 0 (the dotted line), then wins, each bar
    counted by a loop; one run named in the legend; bins across 0 refused."""
    ax = plots.win_loss_histogram({"mine": SYSTEM}, BASELINE, relative=False)
    delta = SYSTEM - BASELINE
    largest = max(abs(delta))
    edges = [largest * i / 5 for i in range(-5, 6)]
    heights = [p.get_height() for p in ax.patches]
    losses = [sum(1 for d in delta if d < 0 and a <= d < b or (d == -largest and i == 0))
              for i, (a, b) in enumerate(zip(edges[:5], edges[1:6]))]
    wins = [sum(1 for d in delta if d > 0 and (a < d <= b if i == 4 else a <= d < b))
            for i, (a, b) in enumerate(zip(edges[5:10], edges[6:]))]
    assert heights == losses + [sum(1 for d in delta if d == 0)] + wins
    (line,) = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert line.get_xdata()[0] == 5 and ax.get_xticklabels()[5].get_text() == "0"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["mine"]
    with pytest.raises(ValueError, match="0 among them"):
        plots.win_loss_histogram(SYSTEM, BASELINE, relative=False, bins=[-0.5, -0.05, 0.05, 1])


def test_trisk_and_georisk_by_alpha_draw_the_risk_measures():
    alphas = [0, 1, 5]
    ax = plots.trisk_by_alpha({"a": SYSTEM}, BASELINE, alphas, measure="NDCG@10",
                              baseline_name="bm25")
    np.testing.assert_allclose(ax.lines[0].get_ydata(),
                               [risk.trisk(SYSTEM, BASELINE, a).trisk for a in alphas])
    assert "NDCG@10" in ax.get_ylabel() and "bm25" in ax.get_ylabel()
    ax = plots.georisk_by_alpha(pd.Series(SYSTEM), pd.Series(BASELINE), alphas)
    np.testing.assert_allclose(ax.lines[0].get_ydata(),
                               [risk.georisk(np.vstack([SYSTEM, BASELINE]), a)[0]
                                for a in alphas])


def test_tr_tj_and_risk_reward_draw_their_values():
    ax = plots.tr_tj_per_query(SYSTEM, BASELINE, 5, name="U-CRO")
    t = risk.trisk(SYSTEM, BASELINE, 5)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), t.tj[np.argsort(t.tr)])
    assert f"{t.trisk:.2f}".replace("-", "−") in ax.get_legend().get_title().get_text()
    assert ax.get_title() == ""
    ax = plots.risk_reward({"U-CRO": [(5, 0.015, 0.11), (1, 0.02, 0.12)]},
                           reference=(0.024, 0.13))
    assert ax.lines[0].get_xdata().tolist() == [0.02, 0.015]  # by training alpha
    assert ax.lines[0].get_linestyle() == "None"  # points, not joined: nothing between two α
    assert ax.lines[1].get_xdata().tolist() == [0.024]


def _drawn_extents(figure, artists):
    """The artists' boxes in pixels, as the figure saved now would place them."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    return [artist.get_window_extent(renderer) for artist in artists]


def test_the_alpha_labels_of_the_mq2008_risk_reward_figure_do_not_overlap():
    """The committed MQ2008 report's eighteen points, ten of them in a corner beside
    LambdaMART's star: every α label, measured as drawn after the layout, clear of the
    others."""
    table = pd.read_csv(Path(__file__).parents[1] / "experiments" / "results" / "mq2008.csv")
    points: dict = {}
    for row in table.itertuples():
        points.setdefault(row.learner, []).append((row.alpha, row.bm25_risk, row.bm25_reward))
    reference = points.pop("LambdaMART")[0][1:]
    figure = plots.print_figure(lambda ax: plots.risk_reward(
        points, reference=reference, ax=ax), "page")
    labels = figure.axes[0].texts
    assert len(labels) == sum(map(len, points.values())) >= 15
    boxes = _drawn_extents(figure, labels)
    overlapping = [(labels[i].get_text(), labels[j].get_text()) for i in range(len(boxes))
                   for j in range(i) if boxes[i].overlaps(boxes[j])]
    assert overlapping == []


def _covered(figure, system, baseline) -> int:
    """How many TR bars and TJ points of a TR/TJ figure its legend covers, as drawn."""
    from matplotlib.transforms import Bbox

    ax = figure.axes[0]
    legend, = _drawn_extents(figure, [ax.get_legend()])
    t = risk.trisk(system, baseline, 5)
    tr = np.sort(t.tr, kind="stable")
    bars = [Bbox(ax.transData.transform([(i - 0.5, min(0, v)), (i + 0.5, max(0, v))]))
            for i, v in enumerate(tr) if v != 0]
    tj = ax.transData.transform(np.column_stack(ax.lines[0].get_data()))
    return sum(legend.overlaps(bar) for bar in bars) + sum(legend.contains(*xy) for xy in tj)


def test_the_tr_tj_legend_sits_where_nothing_is_drawn():
    """TR_q sorted rises from left to right: the legend goes below the axis on the right, or
    above it on the left, where no bar and no TJ point is: an MQ2008-like system (a third of
    the queries tied, a few steep losses), one mostly above its baseline, one mostly below."""
    rng = np.random.default_rng(5)
    baseline = rng.uniform(0.1, 0.7, 784)
    change = np.where(rng.random(784) < 0.35, 0.0, rng.normal(0.03, 0.03, 784))
    lost = rng.random(784) < 0.05
    change[lost] = -rng.uniform(0.1, 0.6, lost.sum())
    systems = {"mq2008-like": np.clip(baseline + change, 0, 1)}
    for shift in (0.05, -0.3):  # mostly above the baseline, mostly below
        systems[f"shift {shift}"] = np.clip(baseline + shift + rng.normal(0, 0.08, 784), 0, 1)
    for name, system in systems.items():
        figure = plots.print_figure(lambda ax, s=system: plots.tr_tj_per_query(
            s, baseline, 5, ax=ax), "page")
        assert _covered(figure, system, baseline) == 0, name


@pytest.mark.slow
def test_pyplot_is_left_alone():
    code = ("import matplotlib, sys\nmatplotlib.use('svg')\n"
            "from lgb_risk import plots\n"
            "plots.win_loss_histogram([0.5, 0.2], [0.4, 0.3])\n"
            "print(matplotlib.get_backend(), 'matplotlib.pyplot' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["svg", "False"]


@pytest.mark.slow
def test_evaluate_writes_the_figures(tmp_path):
    from lgb_risk.experiment import synthetic
    from tests.test_cli import run_cli

    qrels, runs = synthetic.write_trec_collection(tmp_path, n_topics=12, docs_per_topic=30,
                                                  n_runs=3)
    code, _, err = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20", "--baseline",
                           "run1", "--figure", tmp_path / "figures")
    assert code == 0 and "wrote 5 figure(s)" in err
    names = sorted(p.name for p in (tmp_path / "figures").iterdir())
    assert names == ["georisk_by_alpha_ndcg20.png", "tr_tj_run2_ndcg20.png",
                     "tr_tj_run3_ndcg20.png", "trisk_by_alpha_ndcg20.png",
                     "win_loss_ndcg20.png"]
    assert all((tmp_path / "figures" / n).read_bytes().startswith(b"\x89PNG") for n in names)
    code, _, err = run_cli("evaluate", qrels, *runs, "--figure", tmp_path / "x")
    assert code != 0 and "--figure draws the runs against --baseline" in err


def test_the_active_evaluation_figure_marks_budgets_and_tells_methods_apart():
    from lgb_risk.active.figures import plot_errors

    frame = pd.DataFrame([(m, b, 1.0 / b, 0.01) for m in ("passive", "active", "active uniD",
                                                          "active uniC")
                          for b in (5, 20, 50)],
                         columns=["method", "budget", "mean_abs_error", "se"])
    ax = plots.print_figure(lambda ax: plot_errors(ax, frame, title="ERR@10, one ranker"),
                            "column").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["5", "20", "50"]
    styles = {(line.get_marker(), line.get_linestyle()) for line in ax.lines if
              len(line.get_xdata()) == 3}
    assert len(styles) == 4  # every method its own marker and line style
    assert ax.get_title() == "ERR@10, one ranker"


def test_the_budget_labels_of_a_panel_a_third_of_a_page_wide_do_not_touch():
    """Seven budgets from 5 to 100 on a log axis in one of three panels across a page, as
    active_mq2008's figure has them: the labels drawn, measured after the layout, are at least
    3 pt apart (about a space at 7 pt; 75 and 100 both labelled were 0.5 pt apart), and the
    largest budget is labelled."""
    from lgb_risk.active.figures import plot_errors

    budgets = [5, 10, 20, 30, 50, 75, 100]
    frame = pd.DataFrame([(m, b, 1.0 / b, 0.01) for m in ("passive", "active") for b in budgets],
                         columns=["method", "budget", "mean_abs_error", "se"])
    figure = plots.print_panels(lambda axes: [plot_errors(ax, frame) for ax in axes.flat], 1, 3)
    labels = [t for t in figure.axes[0].get_xticklabels() if t.get_text()]
    boxes = _drawn_extents(figure, labels)
    assert labels[-1].get_text() == "100" and len(labels) >= 5
    gaps_pt = [(boxes[i].x0 - boxes[i - 1].x1) * 72 / figure.dpi for i in range(1, len(boxes))]
    assert min(gaps_pt) >= 3, gaps_pt


def test_the_active_evaluation_figure_takes_simulates_table_as_it_is():
    """Without ``se`` the bars are abs_error_sd / sqrt(repetitions), computed here by hand from
    the table; a table lacking a column is refused by name."""
    from lgb_risk.active import simulate, uniform_relevance
    from lgb_risk.active.figures import plot_errors

    rng = np.random.default_rng(0)
    group = np.full(40, 8)
    labels = rng.integers(0, 3, group.sum())
    table = simulate(uniform_relevance(labels.size, 3), rng.normal(size=labels.size), group,
                     labels, [10, 20], repetitions=30, seed=0, methods=("passive",))
    ax = plots.print_figure(lambda ax: plot_errors(ax, table), "column").axes[0]
    bars = ax.containers[0][2][0].get_segments()  # each error bar from its lower end up
    expected = table["abs_error_sd"] / np.sqrt(table["repetitions"])
    np.testing.assert_allclose([(top[1] - bottom[1]) / 2 for bottom, top in bars], expected)
    with pytest.raises(ValueError, match="frame has no column 'repetitions'"):
        plot_errors(ax, table.drop(columns="repetitions"))


def test_trisk_by_alpha_refuses_a_run_whose_trisk_is_undefined_everywhere():
    """As tr_tj_per_query refuses it, instead of drawing an empty line."""
    with pytest.raises(ValueError, match="run 'same': trisk is undefined at every α"):
        plots.trisk_by_alpha({"same": BASELINE}, BASELINE, [0, 1, 5])


@pytest.mark.parametrize("size, width", [("column", 3.3 * 72), ("page", 7.0 * 72)])
@pytest.mark.slow
def test_pdf_figures_embed_truetype_fonts_at_exactly_their_width(tmp_path, size, width):
    """No Type 3 font (some submission systems refuse them), and the page exactly as wide as
    the size says: a column figure fits ACM's 241-pt column."""
    table = pd.DataFrame([SYSTEM, BASELINE, BASELINE * 0.9], index=["mine", "bm25", "other"],
                         columns=[f"t{i}" for i in range(SYSTEM.size)])
    paths = plots.write_run_figures({"ndcg@10": table}, "bm25", tmp_path, alphas=[0, 1, 5],
                                    figure_format="pdf", figure_size=size)
    assert len(paths) == 5
    for path in paths:
        got_width, types = pdf_facts(path)
        assert got_width == pytest.approx(width, abs=0.01) and got_width <= 506, path
        assert not any("Type 3" in t for t in types) and types, (path, types)
    assert plots.FIGURE_SIZES["column"][0] * 72 <= 241


def test_svg_figures_keep_text_as_text(tmp_path):
    table = pd.DataFrame([SYSTEM, BASELINE], index=["mine", "bm25"])
    (path, *_) = plots.write_run_figures({"ndcg@10": table}, "bm25", tmp_path,
                                         figure_format="svg")
    text = path.read_text()
    assert "<text" in text and "relative change of NDCG@10" in text


def test_every_text_is_at_least_6_pt_and_the_tr_tj_alpha_is_the_tables(tmp_path):
    """At print size no label is below 6 pt; the per-query figures take the last α (the
    LaTeX table's), as their axis says."""
    topics = [f"t{i}" for i in range(80)]
    rng = np.random.default_rng(1)
    table = pd.DataFrame(rng.uniform(size=(3, 80)), index=["mine", "bm25", "other"],
                         columns=topics)
    for size in ("column", "page"):
        figures = plots.run_figures({"ndcg@10": table}, "bm25", alphas=[0, 5, 1],
                                    figure_size=size)
        for name, figure in figures.items():
            sizes = [t.get_fontsize() for t in figure.findobj(
                lambda artist: hasattr(artist, "get_fontsize") and hasattr(artist, "get_text")
                and artist.get_text() and artist.get_visible())]
            assert sizes and min(sizes) >= 6, (name, size, min(sizes))
    tr_tj = figures["tr_tj_mine_ndcg10"].axes[0]
    assert "α = 1)" in tr_tj.get_ylabel()
    t = risk.trisk(table.loc["mine"], table.loc["bm25"], 1)
    np.testing.assert_allclose(tr_tj.lines[0].get_ydata(), t.tj[np.argsort(t.tr, kind="stable")])


@pytest.mark.parametrize("size", ["column", "page"])
def test_topic_labels_neither_overlap_each_other_nor_the_axis_label(size):
    """Fifty topics: a page-wide figure names them all; a column-wide one some of those below
    −2, spaced; the labels, side by side, sit above the axis label."""
    topics = [f"{i}" for i in range(151, 201)]
    rng = np.random.default_rng(3)
    baseline = rng.uniform(0.2, 0.8, size=50)
    mine = np.clip(baseline + rng.normal(0, 0.05, size=50), 0, 1)
    mine[:30] *= 0.2  # thirty large losses
    table = pd.DataFrame([mine, baseline], index=["mine", "bm25"], columns=topics)
    with pytest.warns(UserWarning, match="need two α or more"):
        figure = plots.run_figures({"ndcg@10": table}, "bm25", alphas=[5],
                                   figure_size=size)["tr_tj_mine_ndcg10"]
    ax = figure.axes[0]
    t = risk.trisk(table.loc["mine"], table.loc["bm25"], 5)
    steps = {patch.get_label(): patch.get_data() for patch in ax.patches}
    drawn = np.concatenate([steps["TR < −2"].values, steps["TR"].values])
    np.testing.assert_array_equal(drawn, np.sort(t.tr))  # the bars: every TR_q, sorted
    assert steps["TR < −2"].values.max() < -2 <= steps["TR"].values.min()
    boxes = sorted((text.get_window_extent() for text in ax.texts), key=lambda box: box.x0)
    if size == "page":
        assert len(boxes) == 50
    else:
        below = {topic for topic, tr in zip(topics, t.tr) if tr < -2}
        assert {text.get_text() for text in ax.texts} < below and ax.texts
        assert "(some below −2 named)" in ax.get_xlabel()
    assert all(left.x1 <= right.x0 for left, right in zip(boxes, boxes[1:]))
    assert ax.xaxis.label.get_window_extent().y1 <= min(box.y0 for box in boxes)


def test_a_figure_shows_in_ipython_without_pyplot():
    """IPython's own display formatter (what a notebook cell's value goes through) finds a PNG
    in the library's figures with pyplot never imported, and pyplot stays unimported."""
    code = ("import sys\n"
            "from IPython.core.interactiveshell import InteractiveShell\n"
            "from lgb_risk import plots\n"
            "shown = InteractiveShell.instance().display_formatter\n"
            "ax = plots.win_loss_histogram([0.5, 0.2], [0.4, 0.3])\n"
            "figure = plots.print_figure(lambda ax: ax.plot([1, 2], [0, 1]), 'column')\n"
            "for value in (ax, figure):\n"
            "    data, _ = shown.format(value)\n"
            "    print(data['image/png'][:4] == b'\\x89PNG')\n"
            "print('matplotlib.pyplot' in sys.modules)\n")
    pytest.importorskip("IPython")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["True", "True", "False"]


@pytest.mark.slow
def test_one_alpha_leaves_the_by_alpha_figures_out_with_a_note_and_the_table_alpha_apart(
        tmp_path):
    from lgb_risk.experiment import synthetic
    from tests.test_cli import run_cli

    qrels, runs = synthetic.write_trec_collection(tmp_path, n_topics=12, docs_per_topic=30,
                                                  n_runs=3)
    code, _, err = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20", "--baseline",
                           "run1", "--alpha", 5, "--figure", tmp_path / "one")
    assert code == 0 and "need two α or more, got 5 only: left out" in err
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == [
        "tr_tj_run2_ndcg20.png", "tr_tj_run3_ndcg20.png", "win_loss_ndcg20.png"]
    code, out, err = run_cli("evaluate", qrels, *runs, "--measures", "ndcg@20", "--baseline",
                             "run1", "--alpha", 0, 1, 2, 5, 10, "--table-alpha", 5, "--figure",
                             tmp_path / "curve", "--format", "latex")
    assert code == 0 and "TR/TJ at α = 5, --table-alpha" in err
    assert "TRisk at $\\alpha = 5$" in out
    assert len(list((tmp_path / "curve").iterdir())) == 5
    code, _, err = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--table-alpha", 5)
    assert code == 2 and "--table-alpha sets the α of the paper's LaTeX table" in err
