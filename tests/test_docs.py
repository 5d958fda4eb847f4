"""The API reference (docs/, generated from the docstrings) builds without a single warning."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
ROOT = Path(__file__).resolve().parents[1]


def test_the_api_reference_builds_without_warnings(tmp_path):
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           str(ROOT / "docs"), str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    reference = (tmp_path / "html" / "api.html").read_text(encoding="utf-8")
    for documented in ("GeoRisk", "risk_state", "paired_randomisation_test", "aligned_baselines",
                       "RiskRanker", "RISK_MEASURES", "ExperimentConfig", "target_measure"):
        assert documented in reference
