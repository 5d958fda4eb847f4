"""[NDCG] Figures 1-2 restated on LETOR 4.0 MQ2008: one ranking, three tools' NDCG@1..10.

Busa-Fekete et al. (2012) evaluate the same models with the RankLib/TREC, Yahoo and LETOR 4.0
NDCG tools and train them with each tool's NDCG@10. Here, on all 784 MQ2008 queries (five
rotations, every query tested once; ``mq2008_rankers.py``):

- evaluation side: LambdaMART, GBRT, coordinate ascent and ridge, trained with the official
  NDCG (``convention="ranklib"``), scored under ``ranklib``, ``yahoo`` and ``letor4`` at k = 1..10;
  the offset queries without a relevant document cause; whether a convention reorders the learners;
- training side: LambdaMART (early stopping on validation NDCG@10) and coordinate ascent (the
  NDCG@10 it ascends) under each convention, all evaluated under the official one.

Writes ``ndcg_conventions_mq2008.csv`` (means and standard errors), ``..._tables.md`` and
``ndcg_conventions_mq2008.png`` next to ``--out``; the reading, ``ndcg_conventions_mq2008.md``, is
written by hand from them.

    python experiments/ndcg_conventions_mq2008.py [--data ../shared/data/mq2008]
        [--out experiments/results/ndcg_conventions_mq2008.csv]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from mq2008_rankers import Pool, test_scores
from scipy import stats

from lgb_risk import metrics
from lgb_risk.data import atomic_write_text

CONVENTIONS = {"ranklib": "RankLib/TREC", "yahoo": "Yahoo", "letor4": "LETOR 4.0"}
LEARNERS = ("LambdaMART", "GBRT", "CoordAscent", "Ridge")
TRAINED_UNDER = ("LambdaMART", "CoordAscent")
CUTOFFS = range(1, 11)


def per_query(pool, scores, convention):
    """(n_queries, 10) NDCG@1..10 under a convention."""
    return np.column_stack([metrics.ndcg(pool.y, scores, pool.group, k, convention=convention)
                            for k in CUTOFFS])


def summary_rows(kind, learner, trained, evaluated, values):
    n = values.shape[0]
    return [{"kind": kind, "learner": learner, "trained_under": trained,
             "evaluated_under": evaluated, "k": k, "mean": values[:, i].mean(),
             "se": values[:, i].std(ddof=1) / np.sqrt(n)} for i, k in enumerate(CUTOFFS)]


def order_of(frame, convention, k):
    block = frame[(frame["evaluated_under"] == convention) & (frame["k"] == k)]
    # Means equal to 10 decimals are ties (a constant shift may change their last bits).
    block = block.assign(rounded=block["mean"].round(10)).sort_values(
        ["rounded", "learner"], ascending=[False, True])
    text = block["learner"].iloc[0]
    for previous, (learner, mean) in zip(block["mean"], block[["learner", "mean"]].iloc[1:]
                                         .itertuples(index=False)):
        text += (" = " if abs(previous - mean) < 1e-10 else " > ") + learner
    return text


def tables(frame, pool, official, trained) -> str:
    empty = float(np.mean(np.bincount(np.repeat(np.arange(pool.group.size), pool.group),
                                      weights=pool.y > 0) == 0))
    short = float(np.mean(pool.group < 10))
    lines = [f"MQ2008, {pool.group.size} queries, each tested once (5 rotations). Queries with no "
             f"relevant document: {empty:.1%}; with fewer than 10 documents: {short:.1%}.", ""]
    evaluation = frame[frame["kind"] == "evaluation"]
    lines += ["## Evaluation side: official training, three tools' NDCG@k (mean ± SE)", "",
              "| learner | tool | " + " | ".join(f"@{k}" for k in CUTOFFS) + " |",
              "|---|---|" + "---|" * len(CUTOFFS)]
    for learner in LEARNERS:
        for convention, label in CONVENTIONS.items():
            block = evaluation[(evaluation["learner"] == learner)
                               & (evaluation["evaluated_under"] == convention)]
            lines.append(f"| {learner} | {label} | " + " | ".join(
                f"{m:.4f}" for m in block["mean"]) + " |")
    lines += ["", "Yahoo − RankLib/TREC (the empty-query offset) and LETOR 4.0 − RankLib/TREC, "
              "mean over the four learners:", "", "| k | Yahoo − official | LETOR − official |",
              "|---|---|---|"]
    for k in CUTOFFS:
        at_k = evaluation[evaluation["k"] == k].pivot(index="learner", columns="evaluated_under",
                                                      values="mean")
        lines.append(f"| {k} | {(at_k['yahoo'] - at_k['ranklib']).mean():+.4f} | "
                     f"{(at_k['letor4'] - at_k['ranklib']).mean():+.4f} |")
    lines += ["", "Order of the learners by mean NDCG@k under each tool (a row differs from the "
              "official one where marked *):", "", "| k | RankLib/TREC | Yahoo | LETOR 4.0 |",
              "|---|---|---|---|"]
    for k in CUTOFFS:
        orders = [order_of(evaluation, c, k) for c in CONVENTIONS]
        lines.append(f"| {k} | " + " | ".join(
            o + (" *" if o != orders[0] else "") for o in orders) + " |")
    lines += ["", "## Training side: trained under each tool, evaluated under the official one",
              "", "Mean NDCG@k (official); p: paired t-test on the 784 per-query NDCG@10 "
              "against the same learner trained under the official convention.", "",
              "| learner | trained under | @1 | @3 | @5 | @10 | Δ@10 | p |",
              "|---|---|---|---|---|---|---|---|"]
    for learner in TRAINED_UNDER:
        base = trained[(learner, "ranklib")][:, 9]
        for convention, label in CONVENTIONS.items():
            values = trained[(learner, convention)]
            if convention == "ranklib":
                p = "—"
            elif np.array_equal(values, trained[(learner, "ranklib")]):
                p = "same rankings"
            else:
                p = f"{stats.ttest_rel(values[:, 9], base).pvalue:.3f}"
            lines.append(f"| {learner} | {label} | {values[:, 0].mean():.4f} | "
                         f"{values[:, 2].mean():.4f} | {values[:, 4].mean():.4f} | "
                         f"{values[:, 9].mean():.4f} | {values[:, 9].mean() - base.mean():+.4f} | "
                         + p + " |")
    return "\n".join(lines) + "\n"


def figure(frame, path: Path) -> None:
    """Mean NDCG@k (± standard error) of each learner by k under each tool's NDCG, at the width
    of a paper's page in its print style."""
    from lgb_risk.plots import print_panels, save_figure

    evaluation = frame[frame["kind"] == "evaluation"]

    def draw(axes) -> None:
        for ax, (convention, label) in zip(axes[0], CONVENTIONS.items()):
            for learner in LEARNERS:
                block = evaluation[(evaluation["learner"] == learner)
                                   & (evaluation["evaluated_under"] == convention)]
                ax.errorbar(block["k"], block["mean"], yerr=block["se"], marker="o", ms=3,
                            capsize=2, label=learner)
            ax.set_title(f"{label}'s NDCG")
            ax.set_xlabel("k")
            ax.set_xticks(list(CUTOFFS))
        axes[0, 0].set_ylabel("mean NDCG@k (784 queries)")
        axes[0, 0].legend(loc="upper left")  # the curves rise with k: that corner is empty

    save_figure(print_panels(draw, 1, len(CONVENTIONS), "page", sharey=True), path, "png",
                "page")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/mq2008")
    parser.add_argument("--out", default="experiments/results/ndcg_conventions_mq2008.csv")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    pool = Pool(Path(args.data))
    rows, official, trained = [], {}, {}
    for learner in LEARNERS:
        scores = test_scores(pool, learner, "ranklib")
        official[learner] = scores
        for convention in CONVENTIONS:
            rows += summary_rows("evaluation", learner, "ranklib", convention,
                                 per_query(pool, scores, convention))
    for learner in TRAINED_UNDER:
        for convention in CONVENTIONS:
            scores = official[learner] if convention == "ranklib" else test_scores(
                pool, learner, convention)
            trained[(learner, convention)] = per_query(pool, scores, "ranklib")
            rows += summary_rows("training", learner, convention, "ranklib",
                                 trained[(learner, convention)])
    frame = pd.DataFrame(rows)
    out = Path(args.out)
    atomic_write_text(out, frame.to_csv(index=False, float_format="%.6f"))
    atomic_write_text(out.with_name(out.stem + "_tables.md"),
                      tables(frame, pool, official, trained))
    figure(frame, out.with_suffix(".png"))
    print(f"wrote {out}, {out.stem}_tables.md and {out.stem}.png in "
          f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
