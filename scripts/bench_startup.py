"""Benchmark what every process pays first: the first training call of each objective.

Each measurement is a fresh Python process that builds a small ranking Dataset (1,000
documents: 50 queries of 20, 10 features, labels 0-4, seeded) and times, after importing
lightgbm and lgb_risk, the objective's construction plus ``lightgbm.train`` for 2 rounds (2
threads); native ``lambdarank`` is timed the same way in a process that never imports lgb_risk.
Risk objectives use α = 5 against one baseline (per-query values drawn uniformly in [0.2, 0.9])
or, for GeoRisk, three (that baseline plus noise).

- **warm**: numba's cache already holds the kernels (one process fills it first); one process
  per objective, so each line is that objective's first call. Target (issue 36): at most 0.1 s
  above native's, for every objective.
- **cold**: numba's cache is a new empty folder (``NUMBA_CACHE_DIR``), as on a new install, a
  CI machine or a cluster's fresh worker; the six objectives one after the other in one
  process, so each line is what that objective compiles beyond the ones before it. Target: the
  six together at most 6 s.
- ``--demo``: ``lgb-risk run`` on its built-in default experiment, as the README runs it (its
  default ``--jobs``: one job per usable core where Dask is installed), with a warm cache, wall
  time of the whole command (target at most 25 s on 2 cores).

    python scripts/bench_startup.py [--repeats 3] [--demo]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

OBJECTIVE_ORDER = ("LambdaMART", "UCRO", "TSARO", "TFARO", "TStarFARO", "GeoRisk")
PARAMS = {"num_threads": 2, "verbose": -1, "min_data_in_leaf": 5, "force_col_wise": True}


def worker(names: list[str]) -> dict:
    """In this process: each named objective's first training, in order, in seconds."""
    import numpy as np

    rng = np.random.default_rng(36)
    group = np.full(50, 20)
    labels = rng.integers(0, 5, group.sum())
    X = rng.standard_normal((labels.size, 10)) + 0.3 * labels[:, None]
    import lightgbm as lgb

    train_set = lgb.Dataset(X, labels, group=group, params={"verbose": -1, "min_data_in_leaf": 5})
    train_set.construct()
    times = {}
    if names == ["native"]:
        start = time.perf_counter()
        lgb.train({**PARAMS, "objective": "lambdarank"}, train_set, num_boost_round=2)
        return {"native": time.perf_counter() - start}
    start = time.perf_counter()
    from lgb_risk.objectives import OBJECTIVES

    times["import lgb_risk.objectives"] = time.perf_counter() - start
    baseline = rng.uniform(0.2, 0.9, group.size)
    baselines = np.clip(baseline[:, None] + rng.normal(0, 0.1, (group.size, 3)), 0, 1)
    for name in names:
        cls = OBJECTIVES[name]
        given = {None: {}, "baseline": {"alpha": 5, "baseline": baseline},
                 "baselines": {"alpha": 5, "baselines": baselines}}[cls.baseline_parameter]
        start = time.perf_counter()
        lgb.train({**PARAMS, "objective": cls(**given)}, train_set, num_boost_round=2)
        times[name] = time.perf_counter() - start
    return times


def run_worker(names: list[str], env: dict | None = None) -> dict:
    out = subprocess.run([sys.executable, __file__, "--worker", *names], check=True,
                         capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if "--worker" in sys.argv:
        print(json.dumps(worker(sys.argv[sys.argv.index("--worker") + 1:])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="measurements per line (median)")
    parser.add_argument("--demo", action="store_true", help="also time lgb-risk run's demo")
    args = parser.parse_args()

    run_worker(list(OBJECTIVE_ORDER))  # fill numba's cache
    warm: dict[str, list[float]] = {name: [] for name in ("native", *OBJECTIVE_ORDER)}
    imports: list[float] = []
    for _ in range(args.repeats):
        warm["native"].append(run_worker(["native"])["native"])
        for name in OBJECTIVE_ORDER:
            got = run_worker([name])
            warm[name].append(got[name])
            imports.append(got["import lgb_risk.objectives"])
    native = statistics.median(warm["native"])
    print(f"warm cache, a fresh process per objective (median of {args.repeats}); "
          f"import lgb_risk.objectives {statistics.median(imports):.2f} s before it")
    print(f"  {'native lambdarank':<20} {native:6.2f} s")
    for name in OBJECTIVE_ORDER:
        first = statistics.median(warm[name])
        print(f"  {name:<20} {first:6.2f} s  (+{first - native:.2f} s over native; "
              "target <= +0.10)")

    cold: dict[str, list[float]] = {name: [] for name in OBJECTIVE_ORDER}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="lgb_risk_numba_cache_") as cache:
            got = run_worker(list(OBJECTIVE_ORDER), env={**os.environ, "NUMBA_CACHE_DIR": cache})
        for name in OBJECTIVE_ORDER:
            cold[name].append(got[name])
    print(f"empty cache, the six in order in one process (median of {args.repeats})")
    for name in OBJECTIVE_ORDER:
        print(f"  {name:<20} {statistics.median(cold[name]):6.2f} s")
    total = statistics.median([sum(cold[name][r] for name in OBJECTIVE_ORDER)
                               for r in range(args.repeats)])
    print(f"  {'the six together':<20} {total:6.2f} s  (target <= 6)")

    if args.demo:
        lgb_risk = [sys.executable, "-m", "lgb_risk.cli"]
        seconds = []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="lgb_risk_demo_") as out:
                start = time.perf_counter()
                subprocess.run([*lgb_risk, "run", "--out", out], check=True,
                               capture_output=True)
                seconds.append(time.perf_counter() - start)
        print(f"lgb-risk run (built-in default), warm cache: {statistics.median(seconds):.1f} s "
              f"wall, median of {args.repeats} (target <= 25)")


if __name__ == "__main__":
    main()
