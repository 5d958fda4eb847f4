"""How much of each risk objective's per-query emphasis reaches the gradients, per placement.

A risk-sensitive objective multiplies each pair's λ by a risk multiplier m. With LightGBM's
``lambdarank_norm`` each query's λs are also rescaled by log2(1 + Σ)/Σ. The intended gradients
(the default, ``norm_includes_risk=False``) take Σ from LambdaMART's own pairs and multiply each
normalised pair λ by m; version 0.1's placement (``norm_includes_risk=True``) puts m inside Σ.

Per query q, with |g| summed over the query's documents:

    factor_q(placement) = Σ|g_risk(placement)| / Σ|g_LambdaMART|        (1 = no emphasis)
    intended_q          = 1 + α'_q for T-FARO and T*-FARO (computed here from the current NDCG@10
                          and the baseline, independently of the objective); for U-CRO, T-SARO and
                          GeoRisk, whose multipliers vary by pair, factor_q(default) by definition
    share(placement)    = Σ_q (factor_q − 1)(intended_q − 1) / Σ_q (intended_q − 1)²

``share`` is the least-squares slope of the achieved extra weight on the intended one: 1 when the
emphasis arrives whole, 0 when it is cancelled (it also covers GeoRisk's multipliers below 1).
Measured at the scores of a native ``lambdarank`` model after 1, 10 and 50 trees, with α = 5 and
``se_update="iteration"`` (so α'_q depends on the current scores only), on MQ2008 Fold 1's
training queries (BM25, feature 25, as the baseline; BM25 of body, anchor, title and URL,
features 21-24, as the several baselines) and on MSLR-shaped synthetic data (3,000 queries,
about 120 documents each, 136 features; feature 110 BM25-like; three relevance-bearing features
as the several baselines).

    python scripts/bench_emphasis.py [--data ../shared/data] [--queries 3000]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import lightgbm as lgb
import numpy as np
from scipy import stats

from lgb_risk import metrics, risk
from lgb_risk.data import load_letor
from lgb_risk.experiment import synthetic
from lgb_risk.objectives import OBJECTIVES, LambdaMART

ALPHA = 5.0
K = 10
TREES = (1, 10, 50)
FLAT = ("TFARO", "TStarFARO")


def feature_ndcg(data, features):
    """Per-query NDCG@10 of ranking by each 1-based feature: (n_queries, n_features)."""
    return np.column_stack([metrics.ndcg(data.y, data.X[:, f - 1].toarray().ravel(),
                                         data.group, K) for f in features])


def alpha_prime(scores, data, baseline):
    x = risk.risk_deltas(metrics.ndcg(data.y, scores, data.group, K), baseline, ALPHA)
    return ALPHA * (1.0 - stats.norm.cdf(x / x.std(ddof=1)))


def query_mass(grad, query):
    return np.bincount(query, weights=np.abs(grad.astype(np.float64)))


def measure(name, data, single, several):
    """Print the share of intended emphasis per objective, placement and model age."""
    booster = lgb.train({"objective": "lambdarank", "verbose": -1, "num_threads": 2,
                         "learning_rate": 0.1, "num_leaves": 31},
                        lgb.Dataset(data.X, data.y, group=data.group), max(TREES))
    query = np.repeat(np.arange(data.group.size), data.group)
    print(f"\n{name}: {data.group.size} queries, {data.y.size} documents; α = {ALPHA:g}")
    print(f"{'objective':<10} {'trees':>5} {'queries':>7} {'share, default':>15} "
          f"{'share, former':>14} {'median former/default extra':>28}")
    for trees in TREES:
        scores = booster.predict(data.X, num_iteration=trees, raw_score=True)
        plain = query_mass(LambdaMART().gradients(scores, data.y, data.group)[0], query)
        moved = plain > 0
        for objective, cls in OBJECTIVES.items():
            if cls.baseline_parameter is None:
                continue
            baselines = ({"baseline": single} if cls.baseline_parameter == "baseline"
                         else {"baselines": several})
            factor = {}
            for former in (False, True):
                obj = cls(alpha=ALPHA, k=K, norm_includes_risk=former, **baselines,
                          **({"se_update": "iteration"} if objective in ("TSARO", *FLAT)
                             else {}))
                grad = obj.gradients(scores, data.y, data.group)[0]
                factor[former] = query_mass(grad, query)[moved] / plain[moved]
            if objective in FLAT:
                base = several.mean(axis=1) if objective == "TStarFARO" else single
                intended = 1.0 + alpha_prime(scores, data, base)[moved]
            else:
                intended = factor[False]
            extra = intended - 1.0
            share = {former: float(((factor[former] - 1.0) * extra).sum() / (extra ** 2).sum())
                     for former in (False, True)}
            clear = np.abs(extra) > 0.05
            median = float(np.median((factor[True][clear] - 1.0) / extra[clear]))
            print(f"{cls.paper_name:<10} {trees:>5} {int(moved.sum()):>7} "
                  f"{share[False]:>15.3f} {share[True]:>14.3f} {median:>28.3f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent
                                              / "shared" / "data"))
    parser.add_argument("--queries", type=int, default=3000)
    args = parser.parse_args()

    train = Path(args.data) / "mq2008" / "Fold1" / "train.txt"
    if train.is_file():
        mq = load_letor(train, n_features=46)
        measure("MQ2008 Fold 1 train", mq, feature_ndcg(mq, [25])[:, 0],
                feature_ndcg(mq, [21, 22, 23, 24]))
    else:
        print(f"MQ2008 skipped: {train} is missing")
    mslr = synthetic.make_letor(args.queries, mean_docs=120, n_features=136, bm25_column=109,
                                seed=0)
    measure("MSLR-shaped synthetic", mslr, feature_ndcg(mslr, [110])[:, 0],
            feature_ndcg(mslr, [1, 3, 5]))


if __name__ == "__main__":
    main()
