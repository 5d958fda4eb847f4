"""Multipliers registered from outside the library: an edit is always seen, and the library's
on-disk kernel cache never records another module's types (which would make every later process
that trains, from any folder, fail to import that module)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

USER_MODULE = '''
from typing import NamedTuple

import numpy as np

from lgb_risk import UCRO, LambdaMART
from lgb_risk import _lambda_kernel as kernel


class Scaled(NamedTuple):
    """Every pair weighted alike."""


@kernel.multiplier_of(Scaled)
def scaled(state, q, delta_m, misordered):
    return FACTOR


class ScaledUCRO(UCRO):
    def risk_state(self, model_ndcg, initial):
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
    from lgb_risk import _lambda_kernel as kernel

    class Constant(NamedTuple):
        """Every pair weighted alike."""

    class ConstantUCRO(UCRO):
        def risk_state(self, model_ndcg, initial):
            return Constant()

    rng = np.random.default_rng(0)
    labels, scores, group = rng.integers(0, 3, 40), rng.normal(size=40), [20, 20]
    plain = LambdaMART().gradients(scores, labels, group)[0]
    moved = plain != 0
    for factor in (2.0, 5.0):
        kernel.multiplier_of(Constant)(lambda state, q, delta_m, misordered, f=factor: f)
        grad = ConstantUCRO(baseline=np.zeros(2)).gradients(scores, labels, group)[0]
        np.testing.assert_allclose(grad[moved] / plain[moved], factor, rtol=1e-6)
