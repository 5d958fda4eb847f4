"""Benchmark the gradient call alone, this checkout against another, side by side.

One MSLR-shaped training set (``scripts/mslr_shaped.py``, 3,000 queries, about 420,000
documents; ``--queries``), the scores BM25's column. Each measurement is a fresh process on one
thread that imports lgb_risk from its checkout, makes the objective, calls
``objective.gradients`` once to build its training set and compile (a warm numba cache: every
checkout's cache is filled first), then times ``--calls`` further calls and keeps the fastest.
Processes alternate between the two checkouts, ``--repeats`` times, so that both meet the same
load. Each line gives the two medians, their ranges and the ratio of the medians (this / other).

The objectives: LambdaMART, U-CRO, T-FARO and GeoRisk (α = 5, baselines from the BM25 column's
NDCG@10 and two noisy copies of it), and LambdaMART and U-CRO toward ERR@10.

    git worktree add /tmp/other COMMIT
    python scripts/bench_gradient_call.py --against /tmp/other [--repeats 4] [--calls 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CASES = ("LambdaMART", "UCRO", "TFARO", "GeoRisk", "LambdaMART err@10", "UCRO err@10")


def worker(case: str, queries: int, calls: int) -> float:
    """In this process: the fastest of ``calls`` gradient calls of ``case``, in milliseconds."""
    import numba
    import numpy as np
    from mslr_shaped import BM25_COLUMN, mslr_shaped

    from lgb_risk import metrics
    from lgb_risk.objectives import OBJECTIVES

    numba.set_num_threads(1)
    X, labels, group = mslr_shaped(queries)
    scores = X[:, BM25_COLUMN].astype(np.float64)
    name, _, measure = case.partition(" ")
    bm25 = metrics.ndcg(labels, scores, group, 10)
    rng = np.random.default_rng(0)
    noisy = np.clip(bm25[:, None] + rng.normal(0, 0.1, (bm25.size, 2)), 0, 1)
    cls = OBJECTIVES[name]
    given = {None: {}, "baseline": {"alpha": 5, "baseline": bm25},
             "baselines": {"alpha": 5, "baselines": np.column_stack([bm25, noisy])}}
    options = given[cls.baseline_parameter] | ({"measure": measure} if measure else {})
    if measure and cls.baseline_parameter is not None:
        # the baseline measured as the target is
        options["baseline"] = cls(measure=measure, baseline=bm25).target_values(scores, labels,
                                                                                group)
    objective = cls(**options)
    objective.gradients(scores, labels, group)
    fastest = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        objective.gradients(scores, labels, group)
        fastest = min(fastest, time.perf_counter() - start)
    return 1000 * fastest


def run_worker(checkout: str | None, case: str, queries: int, calls: int) -> float:
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [checkout, env.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, __file__, "--worker", case, str(queries), str(calls)],
                         check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if "--worker" in sys.argv:
        case, queries, calls = sys.argv[sys.argv.index("--worker") + 1:]
        print(json.dumps(worker(case, int(queries), int(calls))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="CHECKOUT", required=True,
                        help="the other checkout (git worktree add DIR COMMIT)")
    parser.add_argument("--queries", type=int, default=3000)
    parser.add_argument("--calls", type=int, default=15, help="timed calls per process")
    parser.add_argument("--repeats", type=int, default=4, help="alternations per case")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    args = parser.parse_args()
    sides = {"this": None, "other": args.against}
    for checkout in sides.values():  # compile into each checkout's numba cache
        for case in args.cases:
            run_worker(checkout, case, 50, 1)
    print(f"gradient call, fastest of {args.calls} in a process, one thread, {args.queries} "
          f"MSLR-shaped queries; median [min, max] of {args.repeats} alternations, in ms; "
          f"other = {args.against}")
    for case in args.cases:
        times: dict[str, list[float]] = {side: [] for side in sides}
        for _ in range(args.repeats):
            for side, checkout in sides.items():
                times[side].append(run_worker(checkout, case, args.queries, args.calls))
        this, other = (statistics.median(times[side]) for side in sides)
        print(f"  {case:<18} this {this:7.1f} [{min(times['this']):.1f}, "
              f"{max(times['this']):.1f}]  other {other:7.1f} [{min(times['other']):.1f}, "
              f"{max(times['other']):.1f}]  this/other {this / other:.3f}")


if __name__ == "__main__":
    main()
