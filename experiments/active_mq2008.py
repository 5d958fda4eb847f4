"""[AE]'s protocol restated on LETOR 4.0 MQ2008: active against passive estimation.

All 784 queries of MQ2008 Fold 1 (train, vali and test pooled) are split into five seeded query
folds. In each rotation the rankers and the relevance model are trained on one fold (half to
train, half for early stopping) and the other four folds are the unlabelled pool, whose known
labels play the oracle. Estimated per rotation, budget and method, over ``--repetitions`` runs
of the sampler:

- absolute: the mean DCG@10 / ERR@10 over the pool of a LightGBM multiclass ranker (documents
  sorted by expected gain, the analogue of [AE]'s RF_class) whose grade probabilities are θ;
- comparisons: LambdaMART against BM25 (feature 25), and an index update (LambdaMART's lists
  against the same lists with 10% of each query's documents removed at random), with θ from the
  multiclass model.

Methods: passive (uniform sampling, [AE] Eq. 5), active (q* of Eqs. 16/17, self-normalised
Eq. 6), active with a uniform relevance model ("uniD") and active with costs left out of q
("uniC"). Costs: the number of documents to label (the top 10 of the ranking, or the union of
both rankings' top 10), normalised to mean 1 over the pool; MQ2008's length features are
normalised per query, so [AE]'s log-length costs cannot be rebuilt. Repeated queries are free.

Writes ``active_mq2008.csv`` (one row per task, measure, method, budget and rotation),
``active_mq2008_tables.md`` (the tables, over rotations) and ``active_mq2008.png`` (error against
budget) next to ``--out``; the reading, ``active_mq2008.md``, is written by hand from them.

    python experiments/active_mq2008.py [--data ../shared/data/mq2008] [--repetitions 1000]
        [--out experiments/results/active_mq2008.csv]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pandas as pd
import scipy.sparse as sp

from lgb_risk.active import METHODS, relevance_probabilities, simulate
from lgb_risk.active.figures import plot_errors
from lgb_risk.data import atomic_write_text, load_letor

BUDGETS = (5, 10, 20, 30, 50, 75, 100)
MEASURES = ("dcg", "err")
K = 10
N_GRADES = 3
SEED = 2013


def load_pool(folder: Path):
    parts = [load_letor(folder / "Fold1" / f"{name}.txt", n_features=46)
             for name in ("train", "vali", "test")]
    X = sp.vstack([p.X for p in parts]).tocsr()
    y = np.concatenate([p.y for p in parts])
    group = np.concatenate([p.group for p in parts])
    return X, y, group


def rows_of(group, queries):
    offsets = np.concatenate(([0], np.cumsum(group)))
    return np.concatenate([np.arange(offsets[q], offsets[q + 1]) for q in queries])


def train_rankers(X, y, group, train_queries, X_pool, rng):
    """θ of the pool (multiclass grade probabilities) and LambdaMART, trained on one fold: half
    of its queries to fit, half for early stopping."""
    half = rng.permutation(train_queries)
    fit_q, stop_q = np.sort(half[: half.size // 2]), np.sort(half[half.size // 2:])
    fit_rows, stop_rows = rows_of(group, fit_q), rows_of(group, stop_q)
    params = {"verbose": -1, "num_threads": 2, "deterministic": True, "seed": 0,
              "learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20}
    train = lgb.Dataset(X[fit_rows], y[fit_rows], group=group[fit_q])
    valid = lgb.Dataset(X[stop_rows], y[stop_rows], group=group[stop_q], reference=train)
    lambdamart = lgb.train({**params, "objective": "lambdarank", "metric": "ndcg",
                            "eval_at": [10]}, train, 500, valid_sets=[valid],
                           callbacks=[lgb.early_stopping(20, verbose=False)])
    P = relevance_probabilities(X[fit_rows], y[fit_rows], X_pool, N_GRADES, params=params,
                                num_boost_round=500, X_valid=X[stop_rows], y_valid=y[stop_rows])
    return P, lambdamart.predict(X_pool, num_iteration=lambdamart.best_iteration)


def run_task(task, measure, P, scores1, scores2, labels, group, rotation, repetitions, rng):
    """Errors of every method and budget for one task, measure and rotation."""
    frame = simulate(P, scores1, group, labels, BUDGETS, repetitions=repetitions,
                     measure=measure, k=K, scores2=scores2, seed=rng)
    frame.insert(0, "task", task)
    frame.insert(1, "measure", measure)
    frame.insert(2, "rotation", rotation)
    return frame.to_dict("records")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parents[1]
    parser.add_argument("--data", default=str(root.parent / "shared" / "data" / "mq2008"))
    parser.add_argument("--repetitions", type=int, default=1000)
    parser.add_argument("--out", default=str(root / "experiments" / "results"
                                             / "active_mq2008.csv"))
    args = parser.parse_args()

    X, y, group = load_pool(Path(args.data))
    rng = np.random.default_rng(SEED)
    folds = np.array_split(rng.permutation(group.size), 5)
    rows = []
    start = time.perf_counter()
    for rotation, train_queries in enumerate(folds):
        pool_q = np.sort(np.concatenate([f for i, f in enumerate(folds) if i != rotation]))
        pool_rows = rows_of(group, pool_q)
        Xp, yp, gp = X[pool_rows], y[pool_rows], group[pool_q]
        P, lm = train_rankers(X, y, group, np.sort(train_queries), Xp, rng)
        expected_gain = sum(P[:, grade] * (2.0 ** grade - 1.0) for grade in range(N_GRADES))
        bm25 = Xp[:, 24].toarray().ravel()
        updated = lm.copy()
        updated[rng.random(lm.size) < 0.1] = np.nan  # the index update removes 10%
        tasks = (("absolute (multiclass ranker)", expected_gain, None),
                 ("LambdaMART vs BM25", lm, bm25),
                 ("index update (LambdaMART, 10% removed)", lm, updated))
        for task, s1, s2 in tasks:
            for measure in MEASURES:
                rows += run_task(task, measure, P, s1, s2, yp, gp, rotation, args.repetitions,
                                 rng)
        print(f"rotation {rotation}: pool {gp.size} queries, {time.perf_counter() - start:.0f} s",
              flush=True)
    frame = pd.DataFrame(rows)
    out = Path(args.out)
    atomic_write_text(out, frame.to_csv(index=False, float_format="%.6g"))
    tables = out.with_name(out.stem + "_tables.md")
    atomic_write_text(tables, f"# Active against passive estimation on MQ2008: tables\n\n"
                      f"Written by `python experiments/active_mq2008.py --repetitions "
                      f"{args.repetitions}`: mean absolute error ± standard error over 5 "
                      f"rotations × {args.repetitions} repetitions, by budget in mean-query "
                      f"costs.\n" + summary_tables(frame) + "\n")
    figure(frame, out.with_suffix(".png"))
    print(f"wrote {out}, {tables} and {out.with_suffix('.png')}")


def aggregate(frame):
    """Over rotations: mean absolute error with its standard error, RMSE, wrong-sign rate."""
    def one(rows):
        n = rows["repetitions"].sum()
        pooled_sd = np.sqrt(np.average(rows["abs_error_sd"] ** 2, weights=rows["repetitions"]))
        return pd.Series({"mean_abs_error": rows["mean_abs_error"].mean(),
                          "se": pooled_sd / np.sqrt(n),
                          "rmse": np.sqrt(rows["sq_error"].mean()),
                          "wrong_sign": rows["wrong_sign"].mean(), "draws": rows["draws"].mean(),
                          "predicted": rows["predicted_ratio"].mean()})
    return frame.groupby(["task", "measure", "method", "budget"], sort=False).apply(one)


def budget_for(errors: pd.Series, target: float) -> float:
    """Budget at which a (decreasing) error curve reaches ``target``, interpolated log-log; NaN
    if it does not within the budgets tried, the smallest budget if it does from the start."""
    values = errors.to_numpy()
    budgets = errors.index.to_numpy(dtype=float)
    if target < values.min():
        return float("nan")
    if target >= values.max():
        return float(budgets.min())
    order = np.argsort(values)
    return float(np.exp(np.interp(np.log(target), np.log(values[order]),
                                  np.log(budgets[order]))))


def summary_tables(frame) -> str:
    table = aggregate(frame)
    lines = []
    for (task, measure), block in table.groupby(level=["task", "measure"], sort=False):
        block = block.droplevel(["task", "measure"])
        comparison = not task.startswith("absolute")
        lines += ["", f"### {task}, {measure.upper()}@{K}", "",
                  "| budget | " + " | ".join(f"{m} MAE ± SE" for m in METHODS)
                  + " | RMSE passive | RMSE active"
                  + (" | wrong sign passive | wrong sign active |" if comparison else " |"),
                  "|---" * (len(METHODS) + 3 + (2 if comparison else 0)) + "|"]
        for budget in BUDGETS:
            cells = [f"{block.loc[(m, budget), 'mean_abs_error']:.4g} ± "
                     f"{block.loc[(m, budget), 'se']:.2g}" for m in METHODS]
            cells += [f"{block.loc[(m, budget), 'rmse']:.4g}" for m in ("passive", "active")]
            if comparison:
                cells += [f"{block.loc[(m, budget), 'wrong_sign']:.3f}"
                          for m in ("passive", "active")]
            lines.append(f"| {budget} | " + " | ".join(cells) + " |")
        top = max(BUDGETS)
        passive, active = block.loc["passive"], block.loc["active"]
        needed = budget_for(active["mean_abs_error"], passive.loc[top, "mean_abs_error"])
        saved = (f"{1 - needed / top:.0%} (active reaches it at budget {needed:.0f})"
                 if np.isfinite(needed) else f"none (active does not reach it by {top})")
        mse_ratio = (active.loc[top, "rmse"] / passive.loc[top, "rmse"]) ** 2
        lines += ["", f"Labelling saved at passive's error at budget {top}: {saved}; "
                  f"1 − MSE ratio at budget {top}: {1 - mse_ratio:.0%}; predicted "
                  f"1 − (E√(vλ))²/(E v E λ): {1 - active.loc[top, 'predicted']:.0%}."]
        # Equal savings in the two figures above need both errors to fall like 1/√Λ.
        steep = [b for b in BUDGETS if b >= 30]
        slopes = {m: np.polyfit(np.log(steep), np.log(block.loc[m].loc[steep,
                                                                      "mean_abs_error"]), 1)[0]
                  for m in ("passive", "active")}
        lines += ["", f"Mean absolute error ∝ Λ^s over budgets {steep[0]}–{top}: s = "
                  f"{slopes['passive']:.2f} passive, {slopes['active']:.2f} active. Queries "
                  f"drawn at budget {top} (repeats are free): {passive.loc[top, 'draws']:.1f} "
                  f"passive, {active.loc[top, 'draws']:.1f} active."]
        if comparison:
            cells = []
            for budget in (20, 50):
                target = passive.loc[budget, "wrong_sign"]
                reached = active["wrong_sign"][active["wrong_sign"] > 0]
                needed = budget_for(reached, target) if target > 0 else float("nan")
                cells.append(f"at budget {budget} ({target:.3f}) "
                             + (f"{1 - needed / budget:.0%}" if np.isfinite(needed) else "–"))
            lines += ["", "Labelling saved at passive's model-selection error (the rate of "
                      "the wrong sign of Δ̂; [AE]'s 30–55% for pairs of models is this "
                      "quantity, at Λ = 300): " + "; ".join(cells) + "."]
    return "\n".join(lines)


def figure(frame, path: Path) -> None:
    """Each task's errors against budget (a column per task, a row per measure), at the width
    of a paper's page in its print style; nothing without matplotlib."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    from lgb_risk.plots import print_panels, save_figure

    table = aggregate(frame)
    tasks = list(dict.fromkeys(frame["task"]))

    def draw(axes) -> None:
        for col, task in enumerate(tasks):
            for row, measure in enumerate(MEASURES):
                ax = axes[row, col]
                plot_errors(ax, table.loc[(task, measure)].reset_index())
                if row == 0:  # the task above its column, at the text's size: a third of a page
                    ax.set_title(task.replace(" (", "\n("), fontsize="medium")
                ax.set_ylabel(f"{measure.upper()}@{K}: mean absolute error" if col == 0 else "")
                if row < len(MEASURES) - 1:
                    ax.set_xlabel("")
        axes[0, 0].legend(loc="lower left")  # errors fall with the budget: that corner is empty

    save_figure(print_panels(draw, len(MEASURES), len(tasks), "page",
                             height=2.2 * len(MEASURES)), path, "png", "page")


if __name__ == "__main__":
    main()
