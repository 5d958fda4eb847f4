"""Benchmark the vectorised metrics against a per-query Python loop.

MSLR-WEB10K's shape: 10,000 queries, documents per query log-normal around 120 (max 1,000),
labels 0-4. Prints documents per second for NDCG@10 and ERR@10 and the speed-up over a per-query
loop (numpy inside the loop, as one would write it by hand). The target is >= 50 million
documents per second for NDCG@10 and ERR@10 on a 2-core machine. Where ranx is installed, its
numba kernel for the same NDCG@10 (``ranx.metrics.ndcg_burges``: gain 2^l - 1) is timed on the
same queries, handed the ranked lists and relevant documents it takes (built beforehand, not
timed; ours sorts by score within the timing), on this shape and on 10^6 queries of 10
documents. The command line against gdeval.pl is ``scripts/bench_cli.py``.

    python scripts/bench_metrics.py
"""

import time

import numpy as np
from mslr_shaped import mslr_shaped  # scripts/, beside this file

from lgb_risk import metrics


def ranked_by_noisy_labels(seed=0, n_queries=10_000):
    """MSLR-shaped queries and labels, scored by the label plus Gaussian noise."""
    _, labels, group = mslr_shaped(n_queries, n_features=0, seed=seed)
    scores = labels + np.random.default_rng(seed + 1).normal(scale=2.0, size=labels.size)
    return labels, scores, group


def loop_ndcg(labels, scores, group, k=10):
    out, start = np.empty(group.size), 0
    disc = 1 / np.log2(np.arange(2, k + 2))
    for q, size in enumerate(group):
        y, s = labels[start:start + size], scores[start:start + size]
        start += size
        ranked = y[np.argsort(-s, kind="stable")][:k]
        ideal = np.sort(y)[::-1][:k]
        idcg = ((2.0 ** ideal - 1) * disc[:ideal.size]).sum()
        out[q] = ((2.0 ** ranked - 1) * disc[:ranked.size]).sum() / idcg if idcg > 0 else 0.0
    return out


def loop_err(labels, scores, group, k=10, max_label=4):
    out, start = np.empty(group.size), 0
    for q, size in enumerate(group):
        y, s = labels[start:start + size], scores[start:start + size]
        start += size
        stop = (2.0 ** y[np.argsort(-s, kind="stable")][:k] - 1) / 2 ** max_label
        reach = np.concatenate(([1.0], np.cumprod(1 - stop)[:-1]))
        out[q] = (stop * reach / np.arange(1, stop.size + 1)).sum()
    return out


def best_of(fn, repeats=5):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main():
    labels, scores, group = ranked_by_noisy_labels()
    n = labels.size
    metrics.ndcg(labels[:1000], scores[:1000], [1000])  # compile the numba kernel first
    print(f"data: {group.size} queries, {n} documents (mean {n / group.size:.0f}, "
          f"max {group.max()} per query)")
    for name, fast, slow in [("NDCG@10", lambda: metrics.ndcg(labels, scores, group, 10),
                              lambda: loop_ndcg(labels, scores, group)),
                             ("ERR@10", lambda: metrics.err(labels, scores, group, 10),
                              lambda: loop_err(labels, scores, group))]:
        t_fast, a = best_of(fast)
        t_slow, b = best_of(slow, repeats=1)
        assert np.allclose(a, b, atol=1e-12), f"{name}: vectorised and loop disagree"
        print(f"{name}: {n / t_fast / 1e6:6.2f} M docs/s ({t_fast * 1e3:7.1f} ms); per-query loop "
              f"{t_slow * 1e3:7.1f} ms; speed-up x{t_slow / t_fast:.1f}")
    try:
        import ranx  # noqa: F401
    except ImportError:
        print("ranx is not installed: not compared")
        return
    print("NDCG@10 against ranx (ndcg_burges):")
    against_ranx(labels, scores, group)
    rng = np.random.default_rng(2)
    many = np.full(1_000_000, 10)
    many_labels = rng.choice(5, size=many.sum(), p=[0.52, 0.32, 0.13, 0.02, 0.01])
    against_ranx(many_labels, many_labels + rng.normal(scale=2.0, size=many.sum()), many)



def against_ranx(labels, scores, group) -> None:
    """NDCG@10 of ours and of ranx's kernel on the same queries (each the fastest of 15 calls,
    the two alternating); they must agree."""
    import numba
    from ranx.metrics import ndcg_burges

    qrels, run = numba.typed.List(), numba.typed.List()
    start = 0
    for size in group:
        y, s = labels[start:start + size], scores[start:start + size]
        ids = np.arange(size, dtype=np.float64)
        order = np.argsort(-s, kind="stable")
        run.append(np.column_stack([ids[order], s[order]]))
        relevant = np.flatnonzero(y > 0)
        relevant = relevant[np.argsort(-y[relevant], kind="stable")]  # ranx: by grade, descending
        qrels.append(np.column_stack([ids[relevant], y[relevant].astype(np.float64)]))
        start += size
    ndcg_burges(qrels, run, 10)  # compile
    ranx_times, ours_times = [], []
    for _ in range(15):  # alternating, so that a slow minute of the machine hits both
        t_ranx, theirs = best_of(lambda: ndcg_burges(qrels, run, 10), repeats=1)
        t_ours, ours = best_of(lambda: metrics.ndcg(labels, scores, group, 10), repeats=1)
        ranx_times.append(t_ranx)
        ours_times.append(t_ours)
    t_ranx, t_ours = min(ranx_times), min(ours_times)
    assert np.allclose(ours, theirs, atol=1e-9), "ours and ranx's NDCG@10 disagree"
    n = labels.size
    print(f"  {group.size} queries of mean {n / group.size:.0f}: ours {n / t_ours / 1e6:6.2f} M "
          f"docs/s, ranx's kernel {n / t_ranx / 1e6:6.2f} M docs/s: ours x{t_ranx / t_ours:.2f} "
          "ranx's throughput")


if __name__ == "__main__":
    main()
