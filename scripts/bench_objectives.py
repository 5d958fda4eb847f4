"""Benchmark every objective against LightGBM's native ``lambdarank`` in one run.

Synthetic data shaped like MSLR-WEB10K: 10,000 queries, documents per query log-normal around 120
(max 1,000), 136 features, labels 0-4, feature 110 a BM25-like score. Each measurement trains 50
rounds with 2 threads in a fresh process (so peak memory is that run's own); native and ours
alternate (A/B, A/B, ...) to spread machine noise evenly. Prints wall-time and peak-memory ratios
against native. Targets: LambdaMART <= 1.1x native, every risk objective <= 1.2x, peak memory
<= 1.1x. Risk objectives use α = 5 and their defaults (multiplier outside the per-query
normaliser, ``se_update="first"``, GeoRisk's local update).

    python scripts/bench_objectives.py [--queries 10000] [--rounds 50] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from mslr_shaped import BM25_COLUMN, mslr_shaped  # scripts/, beside this file

from lgb_risk.objectives import OBJECTIVES


def worker(name: str, data_dir: Path, rounds: int) -> dict:
    import lightgbm as lgb

    from lgb_risk import metrics

    X = np.load(data_dir / "X.npy")
    labels = np.load(data_dir / "y.npy")
    group = np.load(data_dir / "group.npy")
    bm25 = metrics.ndcg(labels, X[:, BM25_COLUMN].astype(np.float64), group, 10)
    others = np.clip(bm25[:, None] + np.random.default_rng(1).normal(0, 0.15, (group.size, 3)),
                     0, 1)
    if name == "native":
        objective = "lambdarank"
    else:
        cls = OBJECTIVES[name]
        given = {None: {}, "baseline": {"alpha": 5, "baseline": bm25},
                 "baselines": {"alpha": 5, "baselines": others}}[cls.baseline_parameter]
        objective = cls(**given)
    train_set = lgb.Dataset(X, labels, group=group, params={"verbose": -1, "max_bin": 255})
    train_set.construct()
    params = {"objective": objective, "num_threads": 2, "verbose": -1, "learning_rate": 0.1,
              "num_leaves": 50, "min_data_in_leaf": 1500}
    start = time.perf_counter()
    lgb.train(params, train_set, num_boost_round=rounds)
    seconds = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"objective": name, "seconds": seconds, "peak_mib": peak_mib}


def run_worker(name, data_dir, rounds) -> dict:
    out = subprocess.run([sys.executable, __file__, "--worker", name, "--data", str(data_dir),
                          "--rounds", str(rounds)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--objectives", nargs="+", default=list(OBJECTIVES),
                        choices=list(OBJECTIVES))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, Path(args.data), args.rounds)))
        return

    with tempfile.TemporaryDirectory(prefix="lgb_risk_bench_") as tmp:
        data_dir = Path(tmp)
        X, labels, group = mslr_shaped(args.queries)
        np.save(data_dir / "X.npy", X)
        np.save(data_dir / "y.npy", labels)
        np.save(data_dir / "group.npy", group)
        mean_docs = labels.size / group.size
        print(f"data: {group.size} queries, {labels.size} documents (mean {mean_docs:.0f}, "
              f"max {group.max()}), 136 features; {args.rounds} rounds, 2 threads")
        del X
        run_worker("LambdaMART", data_dir, 1)  # compile the numba kernels into the cache
        print(f"{'objective':<11} {'native s':>9} {'ours s':>9} {'time ratio':>10} "
              f"{'native MiB':>10} {'ours MiB':>9} {'mem ratio':>9}")
        for name in args.objectives:
            native, ours = [], []
            for _ in range(args.repeats):
                native.append(run_worker("native", data_dir, args.rounds))
                ours.append(run_worker(name, data_dir, args.rounds))
            t_native = np.median([r["seconds"] for r in native])
            t_ours = np.median([r["seconds"] for r in ours])
            m_native = max(r["peak_mib"] for r in native)
            m_ours = max(r["peak_mib"] for r in ours)
            print(f"{name:<11} {t_native:9.2f} {t_ours:9.2f} {t_ours / t_native:10.3f} "
                  f"{m_native:10.0f} {m_ours:9.0f} {m_ours / m_native:9.3f}", flush=True)


if __name__ == "__main__":
    main()
