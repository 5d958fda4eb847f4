"""Benchmark the gradient call alone, this checkout against another, side by side.

One MSLR-shaped training set (``scripts/mslr_shaped.py``, 3,000 queries, about 420,000
documents; ``--queries``), the scores BM25's column. Each measurement is a fresh process on one
thread that imports lgb_risk from its checkout, makes the objective, calls
``objective.gradients`` once to build its training set (and load its kernel), then times
``--calls`` further calls and keeps the fastest. Processes alternate between the two checkouts,
``--repeats`` times, so that both meet the same load. Each line gives the two medians, their
ranges and the ratio of the medians (this / other).

Each side's kernels are compiled first, for each case, into a new numba cache of its own, by
that case's first call (on 50 queries): neither side runs code that an earlier process left in
its checkout's cache (compiled for another processor, for one), and a case's figures do not
depend on which cases ran before it (GeoRisk's call counted 1.6% more instructions where
LambdaMART's first call had compiled the pair kernel: BENCHMARKS.md).

The objectives: LambdaMART, U-CRO, T-FARO and GeoRisk (α = 5, baselines from the BM25 column's
NDCG@10 and two noisy copies of it), and LambdaMART and U-CRO toward ERR@10.

``--count``: instead of seconds, what valgrind's callgrind counts over two gradient calls after
a warm one (``--queries`` 300 by default here), which the machine's load does not move: the
instructions executed, the branches its simulated predictor mispredicts, the simulated first-level
and last-level cache misses, and a cycle estimate, instructions + 10 (branch mispredictions + L1
misses) + 100 LL misses (rough costs in cycles), for work done at the same instruction count but
slower. One process per side and case. The kernels are compiled outside valgrind, as above,
for the processor valgrind presents (``NUMBA_CPU_NAME``, ``NUMBA_CPU_FEATURES``). That can be
an older one than the machine's (Haswell without AVX-512, on one machine with AVX-512), and then
the code counted is not the code timed: a difference in counts says where to look rather than
how much slower. Counted so, the counts repeat to 0.01%. Needs ``valgrind`` and
``callgrind_control`` on the PATH.

    git worktree add /tmp/other COMMIT
    python scripts/bench_gradient_call.py --against /tmp/other [--repeats 4] [--calls 15]
    python scripts/bench_gradient_call.py --against /tmp/other --count
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))


class Side(NamedTuple):
    """One side of the comparison: lgb_risk's checkout (None: the one installed) and the new
    numba cache its kernels are compiled into."""

    checkout: str | None
    cache: str


CASES = ("LambdaMART", "UCRO", "TFARO", "GeoRisk", "LambdaMART err@10", "UCRO err@10")


def _called_once(case: str, queries: int):
    """In this process: ``case``'s objective and its arguments, called once (its training set
    built, its kernel compiled or loaded); returns ``(call, arguments)``."""
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
    return objective.gradients, (scores, labels, group)


def worker(case: str, queries: int, calls: int) -> float:
    """In this process: the fastest of ``calls`` gradient calls of ``case``, in milliseconds."""
    call, arguments = _called_once(case, queries)
    fastest = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        call(*arguments)
        fastest = min(fastest, time.perf_counter() - start)
    return 1000 * fastest


def count_worker(case: str, queries: int) -> None:
    """In this process, under callgrind: two gradient calls between the parent's lines on
    stdin. It waits in a blocking read, so that no instruction of the waiting is counted; the
    garbage collector is off in between, since whether a collection of the whole heap falls
    inside the calls depends on what the process allocated before them, not on the calls."""
    call, arguments = _called_once(case, queries)
    gc.collect()
    gc.disable()
    print("ready", flush=True)
    sys.stdin.readline()  # the parent has switched the counting on
    for _ in range(2):
        call(*arguments)
    print("done", flush=True)
    sys.stdin.readline()  # the parent has switched it off


#: callgrind's events summed into the reported counts (``--cache-sim`` and ``--branch-sim``).
_COUNTED = {"instructions": ("Ir",), "branch mispredictions": ("Bcm", "Bim"),
            "L1 misses": ("I1mr", "D1mr", "D1mw"), "LL misses": ("ILmr", "DLmr", "DLmw")}


def _valgrind_processor() -> dict[str, str]:
    """numba's settings for the processor valgrind presents to the programs it runs (on some
    machines an older one than theirs, without AVX-512). A kernel compiled for a processor that
    valgrind does not present cannot run under it, and numba would compile it again inside
    the counted process, under valgrind, where the same source came out differently from one
    process to the next (BENCHMARKS.md, "The gradient call counted")."""
    out = subprocess.run(
        ["valgrind", "-q", "--tool=none", sys.executable, "-c",
         "import llvmlite.binding as ll; print(ll.get_host_cpu_name()); "
         "print(ll.get_host_cpu_features().flatten())"],
        check=True, capture_output=True, text=True).stdout.split()
    return {"NUMBA_CPU_NAME": out[0], "NUMBA_CPU_FEATURES": out[1]}


def _env(side: Side) -> dict[str, str]:
    """A worker's environment: lgb_risk from the side's checkout, its own kernel cache, one
    thread."""
    env = dict(os.environ, NUMBA_NUM_THREADS="1", NUMBA_CACHE_DIR=side.cache)
    if side.checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [side.checkout, env.get("PYTHONPATH")]))
    return env


def run_count(side: Side, case: str, queries: int) -> dict[str, int]:
    """callgrind's counts (``_COUNTED``, and the cycle estimate) of two gradient calls of
    ``case`` on ``side``, in a fresh process on one thread."""
    env = _env(side)
    with tempfile.TemporaryDirectory() as folder:
        out, log = Path(folder) / "callgrind.out", Path(folder) / "valgrind.log"
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--cache-sim=yes",
                   "--branch-sim=yes", f"--callgrind-out-file={out}", f"--log-file={log}",
                   sys.executable, __file__, "--count-worker", case, str(queries)]
        with subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True) as process:
            assert process.stdin is not None and process.stdout is not None
            for said, switch in (("ready", "on"), ("done", "off")):
                line = process.stdout.readline().strip()
                if line != said:
                    process.kill()
                    raise RuntimeError(f"the counted process said {line!r}, not {said!r}: "
                                       f"{log.read_text() if log.exists() else ''}")
                subprocess.run(["callgrind_control", "-i", switch, str(process.pid)],
                               check=True, capture_output=True)
                process.stdin.write("go\n")
                process.stdin.flush()
        if process.returncode:
            raise RuntimeError(f"the counted process failed: {log.read_text()}")
        text = out.read_text()
    events = next(line for line in text.splitlines() if line.startswith("events:")).split()[1:]
    totals = next(line for line in text.splitlines() if line.startswith("totals:")).split()[1:]
    event = dict(zip(events, map(int, totals)))
    counts = {name: sum(event.get(e, 0) for e in names) for name, names in _COUNTED.items()}
    counts["cycle estimate"] = (counts["instructions"] + 10 * (
        counts["branch mispredictions"] + counts["L1 misses"]) + 100 * counts["LL misses"])
    return counts


def run_worker(side: Side, case: str, queries: int, calls: int) -> float:
    out = subprocess.run([sys.executable, __file__, "--worker", case, str(queries), str(calls)],
                         check=True, capture_output=True, text=True, env=_env(side))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if "--worker" in sys.argv:
        case, queries, calls = sys.argv[sys.argv.index("--worker") + 1:]
        print(json.dumps(worker(case, int(queries), int(calls))))
        return
    if "--count-worker" in sys.argv:
        case, queries = sys.argv[sys.argv.index("--count-worker") + 1:]
        count_worker(case, int(queries))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="CHECKOUT", required=True,
                        help="the other checkout (git worktree add DIR COMMIT)")
    parser.add_argument("--queries", type=int, help="3,000 (300 with --count)")
    parser.add_argument("--calls", type=int, default=15, help="timed calls per process")
    parser.add_argument("--repeats", type=int, default=4, help="alternations per case")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--count", action="store_true",
                        help="callgrind's counts instead of seconds (module docstring)")
    args = parser.parse_args()
    if args.count:  # both sides' kernels compiled here, for the processor valgrind presents
        os.environ.update(_valgrind_processor())
    with tempfile.TemporaryDirectory() as caches:
        sides = {case: {"this": Side(None, tempfile.mkdtemp(dir=caches)),
                        "other": Side(args.against, tempfile.mkdtemp(dir=caches))}
                 for case in args.cases}
        for case, pair in sides.items():  # each case's kernels compiled by its own first call
            for side in pair.values():
                run_worker(side, case, 50, 1)
        if args.count:
            report_counts(sides, args.queries or 300)
        else:
            report_times(sides, args, args.queries or 3000)


def report_times(sides: dict[str, dict[str, Side]], args: argparse.Namespace,
                 queries: int) -> None:
    """Print each case's fastest call on both sides, alternating processes."""
    print(f"gradient call, fastest of {args.calls} in a process, one thread, {queries} "
          f"MSLR-shaped queries; median [min, max] of {args.repeats} alternations, in ms; "
          f"other = {args.against}")
    for case, pair in sides.items():
        times: dict[str, list[float]] = {side: [] for side in pair}
        for _ in range(args.repeats):
            for name, side in pair.items():
                times[name].append(run_worker(side, case, queries, args.calls))
        this, other = (statistics.median(times[side]) for side in pair)
        print(f"  {case:<18} this {this:7.1f} [{min(times['this']):.1f}, "
              f"{max(times['this']):.1f}]  other {other:7.1f} [{min(times['other']):.1f}, "
              f"{max(times['other']):.1f}]  this/other {this / other:.3f}")


def report_counts(sides: dict[str, dict[str, Side]], queries: int) -> None:
    """Print callgrind's counts of each case on both sides, with their ratio (this / other)."""
    print(f"gradient call, two calls after a warm one under callgrind, one thread, {queries} "
          f"MSLR-shaped queries; other = {next(iter(sides.values()))['other'].checkout}")
    for case, pair in sides.items():
        this, other = (run_count(side, case, queries) for side in pair.values())
        print(f"  {case}")
        for name in this:
            print(f"    {name:<22} this {this[name]:>14,}  other {other[name]:>14,}  "
                  f"this/other {this[name] / max(other[name], 1):.4f}")


if __name__ == "__main__":
    main()
