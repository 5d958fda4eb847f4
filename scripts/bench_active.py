"""Speed of active evaluation's per-query computations on a large pool.

A pool shaped like MSLR-WEB30K's (30,000 queries of 120 documents, 5 grades, Dirichlet grade
probabilities): the moments E[L], E[L²] of DCG@10 and ERR@10, the cross moment of two rankings,
and the optimal sampling distribution q* for one ranker and for a comparison, each timed after
one warm-up call (numba compiles on first use). Target: a few seconds each on 2 cores.

    python scripts/bench_active.py [--queries 30000] [--docs 120] [--k 10]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lgb_risk.active import cross_moment, metric_moments, query_costs, sampling_distribution


def timed(function, *args, **kwargs) -> float:
    function(*args, **kwargs)  # compile / warm up
    start = time.perf_counter()
    function(*args, **kwargs)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=30_000)
    parser.add_argument("--docs", type=int, default=120)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    group = np.full(args.queries, args.docs)
    n = int(group.sum())
    P = rng.dirichlet(np.full(5, 0.5), size=n)
    scores1 = rng.normal(size=n)
    scores2 = scores1 + rng.normal(size=n)
    cost1 = query_costs(group, scores=scores1, k=args.k)
    cost2 = query_costs(group, scores=scores1, scores2=scores2, k=args.k)
    print(f"pool: {args.queries} queries x {args.docs} documents ({n} documents), 5 grades, "
          f"k = {args.k}")
    for measure in ("dcg", "err"):
        for k in (args.k, None):
            label = f"{measure}@{k if k else 'all'}"
            moments = timed(metric_moments, P, scores1, group, measure, k)
            cross = timed(cross_moment, P, scores1, scores2, group, measure, k)
            print(f"{label:<8} moments {moments:6.2f} s   cross moment {cross:6.2f} s",
                  flush=True)
        one = timed(sampling_distribution, P, scores1, group, cost1, measure, args.k)
        two = timed(sampling_distribution, P, scores1, group, cost2, measure, args.k,
                    scores2=scores2)
        print(f"{measure}@{args.k}: q* one ranker {one:6.2f} s   q* comparison {two:6.2f} s",
              flush=True)


if __name__ == "__main__":
    main()
