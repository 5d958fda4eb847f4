"""Multipliers registered from outside the library: an edit is always seen, and the library's
on-disk kernel cache never records another module's types (which would make every later process
that trains, from any folder, fail to import that module)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

#: Every test here starts processes that compile kernels: outside the quick loop.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

USER_MODULE = '''
from typing import NamedTuple

import numpy as np

from lgb_risk import UCRO, LambdaMART
from lgb_risk._training import lambda_kernel as kernel


class Scaled(NamedTuple):
    """Every pair weighted alike."""


@kernel.multiplier_of(Scaled)
def scaled(state, q, delta_m, misordered):
    return FACTOR


class ScaledUCRO(UCRO):
    def risk_state(self, model_values, initial):
        return Scaled()


def ratio():
    rng = np.random.default_rng(0)
    labels, scores, group = rng.integers(0, 3, 60), rng.normal(size=60), [20, 20, 20]
    plain = LambdaMART(exact_sigmoid=True).gradients(scores, labels, group)[0]
    grad = ScaledUCRO(baseline=np.zeros(3), exact_sigmoid=True).gradients(scores, labels, group)[0]
    moved = plain != 0
    return float(np.median(grad[moved] / plain[moved]))
'''


def _python(code, cwd, cache):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_an_edited_multiplier_is_seen_and_the_library_cache_stays_clean(tmp_path):
    project, elsewhere, cache = tmp_path / "project", tmp_path / "elsewhere", tmp_path / "cache"
    project.mkdir()
    elsewhere.mkdir()
    module = project / "user_f.py"
    run = "import user_f; print(user_f.ratio())"
    module.write_text(USER_MODULE.replace("FACTOR", "2.0"))
    assert float(_python(run, project, cache)) == 2.0
    # A fresh process elsewhere, where user_f cannot be imported, trains with the same cache.
    trained = _python("""
        import numpy as np
        from lgb_risk import UCRO
        rng = np.random.default_rng(1)
        grad, _ = UCRO(alpha=5, baseline=np.full(3, 0.5)).gradients(
            rng.normal(size=30), rng.integers(0, 3, 30), [10, 10, 10])
        print(np.isfinite(grad).all())
    """, elsewhere, cache)
    assert trained == "True"
    assert not any("user_f" in p.read_bytes().decode("latin-1")
                   for p in cache.rglob("*lambda_kernel*"))
    module.write_text(USER_MODULE.replace("FACTOR", "3.0"))  # edited, as in a notebook
    assert float(_python(run, project, cache)) == 3.0


def test_registering_again_in_the_same_process_replaces_the_multiplier():
    from typing import NamedTuple

    from lgb_risk import UCRO, LambdaMART
    from lgb_risk._training import lambda_kernel as kernel

    class Constant(NamedTuple):
        """Every pair weighted alike."""

    class ConstantUCRO(UCRO):
        def risk_state(self, model_values, initial):
            return Constant()

    rng = np.random.default_rng(0)
    labels, scores, group = rng.integers(0, 3, 40), rng.normal(size=40), [20, 20]
    plain = LambdaMART().gradients(scores, labels, group)[0]
    moved = plain != 0
    for factor in (2.0, 5.0):
        kernel.multiplier_of(Constant)(lambda state, q, delta_m, misordered, f=factor: f)
        grad = ConstantUCRO(baseline=np.zeros(2)).gradients(scores, labels, group)[0]
        np.testing.assert_allclose(grad[moved] / plain[moved], factor, rtol=1e-6)


def test_a_multiplier_declared_per_query_gives_the_per_pair_results():
    """``per_query=True`` makes the kernel call the multiplier once per query instead of once
    per pair: for a multiplier that reads only q, the gradients are bit for bit the same, and
    each query's λs are its LambdaMART λs times that query's factor (lambdarank_norm off)."""
    from typing import NamedTuple

    from lgb_risk import UCRO, LambdaMART
    from lgb_risk._training import lambda_kernel as kernel

    class ByQuery(NamedTuple):
        """Query q's pairs weighted by factor[q]."""

        factor: np.ndarray

    class ByQueryUCRO(UCRO):
        def risk_state(self, model_values, initial):
            return ByQuery(factor=np.arange(1.0, model_values.size + 1))

    rng = np.random.default_rng(3)
    group = rng.integers(2, 40, 25)
    labels, scores = rng.integers(0, 5, group.sum()), rng.normal(size=group.sum())
    query = np.repeat(np.arange(group.size), group)
    got = {}
    for per_query in (False, True):
        kernel.multiplier_of(ByQuery, per_query=per_query)(
            lambda state, q, delta_m, misordered: state.factor[q])
        got[per_query] = ByQueryUCRO(baseline=np.zeros(group.size), lambdarank_norm=False,
                                     ).gradients(scores, labels, group)
    for per_pair, once in zip(got[False], got[True]):
        np.testing.assert_array_equal(per_pair, once)
    plain = LambdaMART(lambdarank_norm=False).gradients(scores, labels, group)[0]
    # float32 sums: a document whose terms cancel carries rounding of the terms' size
    np.testing.assert_allclose(got[True][0], plain * (query + 1.0), rtol=1e-5,
                               atol=1e-6 * np.abs(got[True][0]).max())


def test_training_compiles_each_kernel_once_with_an_empty_cache(tmp_path):
    """What a new install compiles for its first trainings. The parallel loop's body sees the
    query index as uint64 where the kernel's own typing has int64: passed as it is, the pair
    loop would be compiled for both (3 s). IDCG is measured on the ideal ranking by the sort
    and the DCG kernel that rank and measure the model (labels and order of the same types as
    U-CRO's), so that no top-k kernel is compiled for training (0.6 s)."""
    compiled = _python("""
        import numpy as np
        from lgb_risk import UCRO, LambdaMART
        from lgb_risk._training import lambda_kernel as kernel
        from lgb_risk._measuring import ranking
        rng = np.random.default_rng(1)
        args = rng.normal(size=30), rng.integers(0, 3, 30), [10, 10, 10]
        LambdaMART().gradients(*args)
        UCRO(baseline=np.full(3, 0.5), measure="ndcg@5").gradients(*args)
        for kernel in (kernel._query_lambdas, ranking._rerank_segments,
                       ranking._dcg_at_k_of_order, ranking._top_k_segments,
                       ranking._argsort_segments):
            print(kernel.__name__, len(kernel.signatures),
                  [str(signature[0]) for signature in kernel.signatures][:1])
    """, tmp_path, tmp_path / "cache")
    assert compiled.splitlines() == [
        "_query_lambdas 1 ['int64']",
        "_rerank_segments 1 ['array(float64, 1d, C)']",
        "_dcg_at_k_of_order 1 ['array(int32, 1d, C)']",
        "_top_k_segments 0 []",
        "_argsort_segments 0 []",
    ]
