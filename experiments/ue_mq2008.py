"""[UE]'s significance claim restated on LETOR 4.0 MQ2008.

Feng & Karmaker ([UE], 2023) report on MQ2007 and MSLR-WEB30K that pairs of learners
significantly different under NDCG@k or MAP@k often stop being so under the upper/expected (UE)
normalised versions DCG^UE and MSP^UE (V1, V2), and the reverse, above all on "uninformative"
queries (where the learners barely beat a random ranking). Here, on all 784 MQ2008 queries (five
rotations, every query tested once; ``mq2008_rankers.py``), seven systems — LambdaMART, GBRT,
random forest, coordinate ascent, ridge, L2 logistic regression and BM25 — give 21 pairs, each
compared at k = 5, 10, 15, 20, 30 (105 comparisons per measure) with a paired t-test at 0.05, on:

- All: every query;
- Uninformative / Ideal: of the queries with a relevant document (the others score 0 for every
  system and measure), the share whose mean NDCG over the systems and cut-offs exceeds the mean
  expected NDCG (under a random ranking) least / most. [UE] §6.3.2 takes "the top 1000 queries
  among the 10,000 MSLR-WEB30K pool (500 in case of MQ-2007)": 10% on MSLR; on MQ2007 500 of
  its 1,700 queries (29%), or 50% if its pool was 1,000 as on MSLR it was a sample, which the
  paper does not say. Each set is computed at the three shares, 10%, 29% and 50%.

MAP@k is [UE]'s: SP@k / min(R_q, k) (``ap_denominator="capped"``), so that MSP^UE normalises the
same sum with the same ideal.

Writes ``ue_mq2008.csv`` (mean of every measure per system, k and query set) and
``ue_mq2008_tables.md`` next to ``--out``; the reading, ``ue_mq2008.md``, is written by hand.

    python experiments/ue_mq2008.py [--data ../shared/data/mq2008]
        [--out experiments/results/ue_mq2008.csv]
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd
from mq2008_rankers import Pool, test_scores
from scipy import stats

from lgb_risk import measures, metrics
from lgb_risk.data import atomic_write_text

SYSTEMS = ("LambdaMART", "GBRT", "RandomForest", "CoordAscent", "Ridge", "LogReg", "BM25")
CUTOFFS = (5, 10, 15, 20, 30)
FAMILIES = {"NDCG": ("ndcg", "dcg_ue1", "dcg_ue2"), "MAP": ("ap", "ap_ue1", "ap_ue2")}
LABELS = {"ndcg": "nDCG", "dcg_ue1": "DCG^UE V1", "dcg_ue2": "DCG^UE V2", "ap": "MAP",
          "ap_ue1": "MSP^UE V1", "ap_ue2": "MSP^UE V2"}
#: Shares of the informative queries in each of [UE]'s Uninformative and Ideal sets (see above).
SHARES = (0.10, 500 / 1700, 0.50)
ALPHA = 0.05


def per_query(pool, scores):
    """{(measure, k): per-query values} for every measure of FAMILIES."""
    judged = measures.Judged(pool.y, scores, pool.group)
    return {(name, k): measures.parse(f"{name}@{k}").compute(judged, None,
                                                             ap_denominator="capped")
            for names in FAMILIES.values() for name in names for k in CUTOFFS}


def query_sets(pool, values) -> dict:
    query = np.repeat(np.arange(pool.group.size), pool.group)
    informative = np.flatnonzero(np.bincount(query, weights=pool.y > 0) > 0)
    expected = np.mean([metrics.expected_dcg(pool.y, pool.group, k)
                        / np.maximum(metrics.ideal_dcg(pool.y, pool.group, k), 1e-300)
                        for k in CUTOFFS], axis=0)
    real = np.mean([values[s][("ndcg", k)] for s in SYSTEMS for k in CUTOFFS], axis=0)
    margin = (real - expected)[informative]
    order = informative[np.argsort(margin, kind="stable")]
    sets = {"All": np.arange(pool.group.size)}
    for share in SHARES:
        size = int(round(share * informative.size))
        sets[f"Uninformative {share:.0%}"] = np.sort(order[:size])
        sets[f"Ideal {share:.0%}"] = np.sort(order[-size:])
    return sets


def significant(values, subset, name, k) -> dict:
    """{pair: p < ALPHA} for the 21 pairs of systems."""
    out = {}
    for a, b in itertools.combinations(SYSTEMS, 2):
        x, y = values[a][(name, k)][subset], values[b][(name, k)][subset]
        p = stats.ttest_rel(x, y).pvalue if np.any(x != y) else 1.0
        out[(a, b)] = bool(p < ALPHA)
    return out


def tables(values, sets) -> str:
    n = len(list(itertools.combinations(SYSTEMS, 2))) * len(CUTOFFS)
    lines = [f"{len(SYSTEMS)} systems, {n // len(CUTOFFS)} pairs x {len(CUTOFFS)} cut-offs "
             f"({', '.join(map(str, CUTOFFS))}) = {n} comparisons per measure; paired t-test, "
             f"p < {ALPHA}. Query sets: " + ", ".join(f"{s} {idx.size}"
                                                      for s, idx in sets.items()) + ".", ""]
    for family, names in FAMILIES.items():
        counts = {(name, s): {} for name in names for s in sets}
        for name in names:
            for s, subset in sets.items():
                for k in CUTOFFS:
                    for pair, sig in significant(values, subset, name, k).items():
                        counts[(name, s)][(pair, k)] = sig
        lines += [f"## {family}: significant differences (of {n})", "",
                  "| measure | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
        for name in names:
            lines.append(f"| {LABELS[name]} | " + " | ".join(
                str(sum(counts[(name, s)].values())) for s in sets) + " |")
        lines += ["", f"## {family}: disagreements with {LABELS[names[0]]} (significant under "
                  "one, not the other)", "", "| versus | " + " | ".join(sets) + " |",
                  "|---|" + "---|" * len(sets)]
        for name in names[1:]:
            lines.append(f"| {LABELS[names[0]]} vs {LABELS[name]} | " + " | ".join(
                str(sum(counts[(name, s)][c] != counts[(names[0], s)][c]
                        for c in counts[(name, s)])) for s in sets) + " |")
        lines.append("")
    lines += ["## Means at k = 10 (all queries)", "",
              "| system | " + " | ".join(LABELS[m] for ms in FAMILIES.values() for m in ms) + " |",
              "|---|" + "---|" * 6]
    for system in SYSTEMS:
        lines.append(f"| {system} | " + " | ".join(
            f"{values[system][(m, 10)].mean():.4f}" for ms in FAMILIES.values() for m in ms)
            + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/mq2008")
    parser.add_argument("--out", default="experiments/results/ue_mq2008.csv")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    pool = Pool(Path(args.data))
    values = {system: per_query(pool, test_scores(pool, system, "ranklib"))
              for system in SYSTEMS}
    sets = query_sets(pool, values)
    rows = [{"system": system, "measure": name, "k": k, "query_set": s,
             "mean": values[system][(name, k)][subset].mean()}
            for system in SYSTEMS for (name, k) in values[system] for s, subset in sets.items()]
    out = Path(args.out)
    atomic_write_text(out, pd.DataFrame(rows).to_csv(index=False, float_format="%.6f"))
    atomic_write_text(out.with_name(out.stem + "_tables.md"), tables(values, sets))
    print(f"wrote {out} and {out.stem}_tables.md in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
