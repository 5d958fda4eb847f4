"""Training toward NDCG@10 or toward ERR@20 on LETOR 4.0 MQ2008, each model evaluated on both.

Reads two finished runs of the papers' protocol (five repeats of a 5-fold split of all 784
queries, BM25 and four learned baselines), which differ only in the objectives' target:

- ``experiments/mq2008_targets_ndcg.toml`` — every objective toward NDCG@10 (native
  ``lambdarank``'s pair weights; its NDCG@10 report is ``mq2008.csv``);
- ``experiments/mq2008_targets_err.toml`` — every objective toward ERR@20 (each pair weighed by
  the exact change of ERR@20 if its documents swapped; risk state, baselines and early stopping in
  ERR@20);

and trains CatBoost's ``LambdaMart:metric=NDCG;top=10`` and ``LambdaMart:metric=ERR;top=20`` on
the same repeats and folds (same training, validation and test queries; early stopping on the
fold's validation part with its own metric, at most 500 trees, learning rate 0.05, one thread,
seeded), as an outside reference. CatBoost's ERR reads labels as probabilities, so it is given
(2^g − 1)/2^2 for grade g (MQ2008's highest grade is 2), ERR's own stopping probability.

For every system, α and target: mean NDCG@10 and ERR@20 over the 627–784 queries tested (each
query's value averaged over the repeats that tested it, as the runner's report does), URisk and
Risk (mean loss) against BM25 and GeoRisk against the learned baselines at α = 5, each in both
measures; and for each learner and α the paired t-test of the ERR@20-target model against the
NDCG@10-target model on each measure, Holm-corrected over the 18 learner × α pairs and CatBoost's,
with the difference the test detects (power 0.8, level 0.05). The baselines are the NDCG run's
(BM25's values are the same in both runs; the learned baselines' coordinate-ascent ranker is fitted
on each run's target, so the ERR run's differ a little).

Writes ``mq2008_targets.csv`` and ``mq2008_targets_tables.md`` next to ``--out``; the reading,
``mq2008_targets.md``, is written by hand.

    lgb-risk run experiments/mq2008_targets_ndcg.toml --out experiments/runs/mq2008_targets_ndcg
    lgb-risk run experiments/mq2008_targets_err.toml --out experiments/runs/mq2008_targets_err
    python experiments/mq2008_targets.py [--out experiments/results/mq2008_targets.csv]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from lgb_risk import risk, significance
from lgb_risk.data import atomic_write_text
from lgb_risk.experiment import RunFolder
from lgb_risk.experiment.config import load_config
from lgb_risk.experiment.protocol import Subsets, fold_queries, load_dataset
from lgb_risk.experiment.report import averaged_baselines, collect_results
from lgb_risk.objectives import OBJECTIVES

HERE = Path(__file__).resolve().parent
RUNS = {"NDCG@10": ("mq2008_targets_ndcg.toml", "runs/mq2008_targets_ndcg"),
        "ERR@20": ("mq2008_targets_err.toml", "runs/mq2008_targets_err")}
CATBOOST = {"NDCG@10": ("LambdaMart:metric=NDCG;top=10", "NDCG:top=10"),
            "ERR@20": ("LambdaMart:metric=ERR;top=20", "ERR:top=20")}
ALPHA = 5.0


def catboost_scores(config, data, folder: RunFolder, target: str, max_label: int) -> tuple:
    """CatBoost LambdaMart toward ``target`` on every fold of one repeat: the test queries in
    fold order and their documents' scores."""
    from catboost import CatBoost, Pool

    subsets = Subsets(data)
    loss, metric = CATBOOST[target]
    split = folder.read_split()

    def pool(ids):
        X, y, g = subsets.take(ids)
        label = ((2.0 ** y - 1.0) / 2.0 ** max_label if target.startswith("ERR")
                 else y.astype(np.float64))
        return Pool(X.toarray(), label, group_id=np.repeat(np.arange(g.size), g))

    test_ids, scores = [], []
    for fold in range(config.split.folds):
        train, valid, test = fold_queries(split, fold)
        model = CatBoost({"loss_function": loss, "eval_metric": metric, "iterations": 500,
                          "learning_rate": 0.05, "od_type": "Iter", "od_wait": 20,
                          "use_best_model": True, "random_seed": config.split.seed,
                          "thread_count": 1, "verbose": False,
                          "allow_writing_files": False})
        model.fit(pool(train), eval_set=pool(valid))
        test_ids += test
        scores.append(model.predict(pool(test)))
    return test_ids, np.concatenate(scores)


def catboost_results(config, data, out: Path, measures, target: str) -> dict:
    """{measure label: per-query values averaged over the repeats} of CatBoost toward
    ``target``."""
    subsets = Subsets(data)
    per_repeat: dict = {m.label: [] for m in measures.reported}
    for folder in RunFolder(out).repeats(config):
        ids, scores = catboost_scores(config, data, folder, target, measures.max_label)
        _, y, g = subsets.take(ids)
        for m in measures.reported:
            per_repeat[m.label].append(pd.Series(measures.compute(m, y, scores, g), index=ids))
    return {label: pd.concat(parts).groupby(level=0, sort=False).mean()
            for label, parts in per_repeat.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "results" / "mq2008_targets.csv"))
    args = parser.parse_args()
    start = time.perf_counter()
    configs = {t: load_config(HERE / c) for t, (c, _) in RUNS.items()}
    outs = {t: HERE / o for t, (_, o) in RUNS.items()}
    reference = configs["NDCG@10"]
    data = load_dataset(reference)
    measures = RunFolder(outs["NDCG@10"]).measures(reference)
    labels = [m.label for m in measures.reported]

    # per measure: {(system, α, target): per-query Series}, and the baselines
    values: dict = {label: {} for label in labels}
    baselines: dict = {}
    for target, config in configs.items():
        for m in measures.reported:
            table = collect_results(config, outs[target], m)
            for (learner, a), column in table.items():
                values[m.label][(OBJECTIVES[learner].paper_name, a, target)] = column
    queries = list(values[labels[0]][("LambdaMART", 0.0, "NDCG@10")].index)
    for m in measures.reported:
        feature, learned = averaged_baselines(reference, outs["NDCG@10"], queries, m)
        baselines[m.label] = (feature, learned)
    for target in RUNS:
        for label, column in catboost_results(reference, data, outs["NDCG@10"], measures,
                                              target).items():
            values[label][("CatBoost LambdaMart", 0.0, target)] = column
    rows = []
    for system, a, target in values[labels[0]]:
        row = {"system": system, "alpha": a, "target": target}
        for label in labels:
            m = values[label][(system, a, target)].loc[queries].to_numpy()
            feature, learned = baselines[label]
            row[f"{label} mean"] = m.mean()
            row[f"{label} URisk bm25"] = risk.urisk(m, feature, ALPHA)
            row[f"{label} Risk bm25"] = float(np.maximum(feature - m, 0).mean())
            row[f"{label} GeoRisk learned"] = float(risk.georisk_against(m, learned, ALPHA)[0])
            if target == "ERR@20":
                other = values[label][(system, a, "NDCG@10")].loc[queries].to_numpy()
                test = significance.paired_t_test(m, other)
                row[f"{label} diff vs NDCG target"] = float((m - other).mean())
                row[f"{label} p vs NDCG target"] = test.p_value
                row[f"{label} detectable"] = test.detectable
        rows.append(row)
    table = pd.DataFrame(rows)
    err_rows = table["target"] == "ERR@20"
    for label in labels:
        p = table.loc[err_rows, f"{label} p vs NDCG target"].to_numpy()
        table.loc[err_rows, f"{label} p holm"] = significance.corrected_p_values(p, "holm")
    out = Path(args.out)
    atomic_write_text(out, table.to_csv(index=False, float_format="%.6f"))
    atomic_write_text(out.with_name(out.stem + "_tables.md"), tables_markdown(table, labels,
                                                                               len(queries)))
    print(f"wrote {out} ({time.perf_counter() - start:.0f} s)")


def tables_markdown(table: pd.DataFrame, labels: list, n: int) -> str:
    def fmt(v, digits=4):
        return "–" if isinstance(v, float) and np.isnan(v) else f"{v:.{digits}f}"

    lines = [f"# MQ2008: toward NDCG@10 or toward ERR@20, evaluated on both ({n} queries)", ""]
    header = ["system", "α", "target"] + [f"{label} {what}" for label in labels
                                          for what in ("mean", "URisk bm25", "Risk bm25",
                                                       "GeoRisk learned")]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in table.iterrows():
        cells = [row["system"], f"{row['alpha']:g}", row["target"]] + [
            fmt(row[f"{label} {what}"]) for label in labels
            for what in ("mean", "URisk bm25", "Risk bm25", "GeoRisk learned")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## The ERR@20 target against the NDCG@10 target, per system and α", ""]
    header = ["system", "α"] + [f"{label} {what}" for label in labels
                                for what in ("diff", "p", "Holm", "detectable")]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in table[table["target"] == "ERR@20"].iterrows():
        cells = [row["system"], f"{row['alpha']:g}"] + [
            fmt(row[f"{label} {what}"]) for label in labels
            for what in ("diff vs NDCG target", "p vs NDCG target", "p holm", "detectable")]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "diff: mean of the ERR@20-target model's per-query value minus the NDCG@10-"
              "target model's; p: paired t-test over the queries; Holm: corrected over the "
              f"{int((table['target'] == 'ERR@20').sum())} systems × α; detectable: the "
              "smallest true mean difference the test finds with probability 0.8 at level 0.05. "
              f"URisk and GeoRisk at α = {ALPHA:g}; Risk is the mean loss max(0, M_b − M) "
              "against BM25.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
