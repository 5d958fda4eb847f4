"""Distributed risk-sensitive training: one worker against two on a local Dask cluster.

MSLR-WEB10K-shaped synthetic data (documents per query log-normal around 120, 136 features,
labels 0-4; ``mslr_shaped.py``, the benchmarks' one generator), T-SARO against one baseline and
GeoRisk against three, ``--rounds`` boosting rounds with ``lgb_risk.distributed.train`` on 1 and
then 2 workers of one local cluster (one thread each). Prints, per run, the seconds per iteration
(after the first) and the all-gathers' share of it (their time over iterations × seconds per
iteration, the slowest rank's), with their count and mean cost; an all-gather's time includes
waiting for the slower rank to reach it. On a 2-core machine the point is the overhead's share,
not a speed-up: both workers share the cores with the scheduler and the actor.

    python scripts/bench_distributed.py [--queries 2000] [--rounds 30]
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mslr_shaped import mslr_shaped  # noqa: E402

from lgb_risk import TSARO, GeoRisk, distributed  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    X, y, group = mslr_shaped(args.queries)
    baselines = np.random.default_rng(1).uniform(0, 1, (group.size, 3))
    params = {"learning_rate": 0.1, "num_leaves": 31, "verbose": -1, "deterministic": True}
    print(f"{group.size} queries, {y.size} documents, 136 features, {args.rounds} rounds")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        for name, make in (("T-SARO", lambda: TSARO(alpha=5, baseline=baselines[:, 0])),
                           ("GeoRisk", lambda: GeoRisk(alpha=5, baselines=baselines))):
            for n_workers in (1, 2):
                timings = []
                distributed.train(params, X, y, group, objective=make(),
                                  num_boost_round=args.rounds, client=client,
                                  n_workers=n_workers, timings=timings)
                per_iteration = max(t["seconds_per_iteration"] for t in timings)
                share = max(t["gather_seconds"] / (t["seconds_per_iteration"] * t["iterations"])
                            for t in timings)
                gathers = timings[0]["gathers"]
                mean_ms = 1000 * np.mean([t["gather_seconds"] / t["gathers"] for t in timings])
                print(f"{name:8s} {n_workers} worker(s): {per_iteration:.3f} s per iteration; "
                      f"all-gathers {share:.1%} of it ({gathers} of them, "
                      f"{mean_ms:.1f} ms each, {8 * group.size / 1024:.0f} KB gathered per "
                      "round)")


if __name__ == "__main__":
    main()
