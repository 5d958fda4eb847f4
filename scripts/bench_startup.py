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

- ``--against DIR``: the same measurements of another checkout (``git worktree add DIR
  COMMIT``), each process of this checkout followed by the same one of that, so that both
  meet the same load; every line gives the median and the range of the repeats.

    python scripts/bench_startup.py [--repeats 3] [--demo] [--against DIR]
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


def run_worker(names: list[str], checkout: str | None = None, cache: str | None = None) -> dict:
    """``worker(names)`` in a fresh process, importing lgb_risk from ``checkout`` (this one
    when None) with numba's cache in ``cache`` (its default, beside the sources, when None)."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [checkout, env.get("PYTHONPATH")]))
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    out = subprocess.run([sys.executable, __file__, "--worker", *names], check=True,
                         capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _spread(values: list[float]) -> str:
    return (f"{statistics.median(values):6.2f} s  [{min(values):.2f}, {max(values):.2f}]"
            if len(values) > 1 else f"{values[0]:6.2f} s")


def main() -> None:
    if "--worker" in sys.argv:
        print(json.dumps(worker(sys.argv[sys.argv.index("--worker") + 1:])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="measurements per line (median)")
    parser.add_argument("--demo", action="store_true", help="also time lgb-risk run's demo")
    parser.add_argument("--against", metavar="CHECKOUT",
                        help="another checkout of the project (git worktree add DIR COMMIT): "
                             "every measurement alternates a process of each, side by side")
    args = parser.parse_args()
    sides = {"this": None} if args.against is None else {"this": None, "other": args.against}

    for checkout in sides.values():
        run_worker(list(OBJECTIVE_ORDER), checkout)  # fill numba's cache
    warm = {side: {name: [] for name in ("native", *OBJECTIVE_ORDER)} for side in sides}
    imports: dict[str, list[float]] = {side: [] for side in sides}
    for _ in range(args.repeats):
        for side, checkout in sides.items():
            warm[side]["native"].append(run_worker(["native"], checkout)["native"])
        for name in OBJECTIVE_ORDER:
            for side, checkout in sides.items():
                got = run_worker([name], checkout)
                warm[side][name].append(got[name])
                imports[side].append(got["import lgb_risk.objectives"])
    print(f"warm cache, a fresh process per objective (median [min, max] of {args.repeats})")
    for side in sides:
        native = statistics.median(warm[side]["native"])
        print(f"{side} checkout{'' if side == 'this' else ' (' + args.against + ')'}: "
              f"import lgb_risk.objectives {_spread(imports[side])} before it")
        print(f"  {'native lambdarank':<20} {_spread(warm[side]['native'])}")
        for name in OBJECTIVE_ORDER:
            first = statistics.median(warm[side][name])
            print(f"  {name:<20} {_spread(warm[side][name])}  (+{first - native:.2f} s over "
                  "native; target <= +0.10)")

    cold = {side: {name: [] for name in OBJECTIVE_ORDER} for side in sides}
    for _ in range(args.repeats):
        for side, checkout in sides.items():
            with tempfile.TemporaryDirectory(prefix="lgb_risk_numba_cache_") as cache:
                got = run_worker(list(OBJECTIVE_ORDER), checkout, cache)
            for name in OBJECTIVE_ORDER:
                cold[side][name].append(got[name])
    print(f"empty cache, the six in order in one process (median [min, max] of {args.repeats})")
    for side in sides:
        print(f"{side} checkout")
        for name in OBJECTIVE_ORDER:
            print(f"  {name:<20} {_spread(cold[side][name])}")
        totals = [sum(cold[side][name][r] for name in OBJECTIVE_ORDER)
                  for r in range(args.repeats)]
        print(f"  {'the six together':<20} {_spread(totals)}  (target <= 6)")

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
