"""The package type-checks: mypy, configured in pyproject.toml, finds no error in lgb_risk/."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")
ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert done.stdout.startswith("Success: no issues found")
