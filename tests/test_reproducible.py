"""The same bits whatever BLAS kernel, SIMD level or thread count the machine gives.

Each case runs the protocol's learned baselines (LambdaMART, GBRT, coordinate ascent, ridge) and
a GeoRisk learner trained against them, on small synthetic data, in a fresh process whose
environment makes OpenBLAS load another kernel (``OPENBLAS_CORETYPE``: Prescott is generic SSE,
SkylakeX AVX-512 where the CPU has it), numpy dispatch fewer SIMD extensions, or numba run another
number of threads; the hashes of every prediction, baseline table and model must agree.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

#: Every test here starts processes under other BLAS kernels: outside the quick loop.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import dataclasses, hashlib, json
import numpy as np
from threadpoolctl import threadpool_info
from lgb_risk import GeoRisk, TStarFARO
from lgb_risk.experiment.config import load_config
from lgb_risk.experiment.protocol import Subsets, fold_queries, load_dataset, make_split
from lgb_risk.experiment.measuring import RunMeasures
from lgb_risk.experiment.protocol_baselines import (baseline_store, learned_baseline_scorer,
                                                    learned_baseline_scores)
from lgb_risk.experiment.training import train_booster

config = load_config(None)
config = dataclasses.replace(
    config, data=dataclasses.replace(config.data, queries=120),
    training=dataclasses.replace(config.training, rounds=15, early_stopping=0,
                                 selection="last"))
data = load_dataset(config)
measures = RunMeasures(config, int(data.y.max()))
split = make_split(data.query_ids, config)
subsets = Subsets(data)
main = [q for part in split["parts"] for q in part]
X = subsets.take(main)[0]
digest = lambda data: hashlib.sha256(data).hexdigest()[:16]
out = {name: digest(np.ascontiguousarray(
           learned_baseline_scorer(name, subsets, split, config, measures)(X),
           dtype=np.float64).tobytes()) for name in config.baselines.learned}
store = baseline_store(learned_baseline_scores(subsets, split, config, measures),
                       config.baselines.learned, subsets, split, measures, measures.target, {})
out["baseline table"] = digest(store.table.to_numpy().tobytes())
train_ids, valid_ids, _ = fold_queries(split, 0)
for learner in (GeoRisk, TStarFARO):
    booster, _ = train_booster(learner(alpha=5, baselines=store, query_ids=train_ids),
                               subsets.take(train_ids), subsets.take(valid_ids), config, None)
    out[learner.__name__] = digest(booster.model_to_string().encode())
out["blas kernels"] = sorted({str(p.get("architecture")) for p in threadpool_info()
                              if p["user_api"] == "blas"})
print(json.dumps(out))
"""


def _cpu_flags() -> set:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def _dispatched_simd() -> list:
    features = np._core._multiarray_umath.__cpu_features__
    return [f for f in np._core._multiarray_umath.__cpu_dispatch__ if features.get(f)]


def _cases() -> dict:
    cases = {"Prescott": {"OPENBLAS_CORETYPE": "Prescott"},
             "Haswell": {"OPENBLAS_CORETYPE": "Haswell"}}
    if "avx512f" in _cpu_flags():
        cases["SkylakeX"] = {"OPENBLAS_CORETYPE": "SkylakeX"}
    if _dispatched_simd():
        cases["numpy baseline SIMD, one numba thread"] = {
            "OPENBLAS_CORETYPE": "Haswell", "NUMBA_NUM_THREADS": "1",
            "NPY_DISABLE_CPU_FEATURES": " ".join(_dispatched_simd())}
    return cases


def _probe(setting: dict) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "NUMBA_NUM_THREADS")}
    env.update(setting)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64",
                    reason="OpenBLAS's kernels are chosen by name on x86-64 Linux")
def test_learned_baselines_and_multi_baseline_learners_are_the_same_bits_on_any_kernel():
    results = {name: _probe(setting) for name, setting in _cases().items()}
    kernels = {name: result.pop("blas kernels") for name, result in results.items()}
    # The environment did choose other kernels (Prescott is reported as Katmai, its alias).
    assert kernels["Prescott"] != kernels["Haswell"], kernels
    reference = results["Haswell"]
    for name, result in results.items():
        differing = [key for key in reference if result[key] != reference[key]]
        assert not differing, f"{name} differs from Haswell in {differing}"
