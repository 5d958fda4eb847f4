"""One digest of every objective's gradients and hessians, to show that a change moved no bit.

Every objective of :data:`lgb_risk.objectives.OBJECTIVES` at α in {0, 1, 5}, toward NDCG@10
and ERR@10, with LightGBM's normalisation on and off and with the exact sigmoid, on seeded
random training sets (ties, queries without a relevant document, single documents), over three
iterations of moving scores (T-SARO's s_x is frozen after the first): the SHA-256 of all the
float32 bytes, in that order. Run it before and after a change to the objectives or the kernel:
the two lines must be equal.

    python scripts/gradient_digest.py
"""

from __future__ import annotations

import hashlib

import numpy as np

from lgb_risk.objectives import OBJECTIVES


def _problem(rng: np.random.Generator, n_queries: int = 60):
    group = rng.integers(1, 40, size=n_queries)
    n = int(group.sum())
    labels = rng.integers(0, 5, size=n)
    labels[: int(group[0])] = 0  # a query without a relevant document
    scores = np.round(rng.normal(size=n), 1)  # rounded: ties
    return labels, scores, group


def _objective(name: str, cls, alpha: float, measure: str, **options):
    if cls.baseline_parameter is None:
        return cls(measure=measure, **options)
    rng = np.random.default_rng(7)
    extra = {"alpha": alpha, "measure": measure, **options}
    if cls.baseline_parameter == "baseline":
        return cls(baseline=rng.uniform(0, 1, size=60), **extra)
    return cls(baselines=rng.uniform(0, 1, size=(60, 3)), **extra)


def digest() -> str:
    sha = hashlib.sha256()
    for seed in (0, 1, 2):
        labels, scores, group = _problem(np.random.default_rng(seed))
        for name, cls in OBJECTIVES.items():
            for alpha in (0.0, 1.0, 5.0):
                for measure in ("ndcg@10", "err@10"):
                    for options in ({}, {"lambdarank_norm": False}, {"exact_sigmoid": True}):
                        objective = _objective(name, cls, alpha, measure, **options)
                        moving = scores.copy()
                        for _ in range(3):
                            grad, hess = objective.gradients(moving, labels, group)
                            sha.update(grad.tobytes())
                            sha.update(hess.tobytes())
                            moving = moving - 0.1 * grad.astype(np.float64)
    return sha.hexdigest()


if __name__ == "__main__":
    print(digest())
