"""The API reference (docs/, generated from the docstrings) builds without a single warning."""

import subprocess
import sys
from pathlib import Path

import pytest

#: Every test here starts processes, clusters or tools: outside the quick loop.
pytestmark = pytest.mark.slow

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


def test_the_guides_examples_run_and_the_cli_reference_is_the_parsers(tmp_path):
    """The user guide's examples run (Sphinx's doctest builder: every one passes), and the
    command-line reference holds each command's help as the parser prints it."""
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "doctest", str(ROOT / "docs"), str(tmp_path / "doctest")],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    report = (tmp_path / "doctest" / "output.txt").read_text()
    assert "0 failures in tests" in report and " passed and 0 failed" in report
    done = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "text",
                           str(ROOT / "docs"), str(tmp_path / "text")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    reference = (tmp_path / "text" / "cli.txt").read_text()
    from lgb_risk.cli import build_parser

    commands = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices)
    for command, parser in commands.choices.items():
        first = parser.format_help().splitlines()[0]
        assert first in reference, command
