"""The package type-checks: mypy, configured in pyproject.toml, finds no error in lgb_risk/."""

import subprocess
import sys
from pathlib import Path

import pytest

#: Every test here starts processes, clusters or tools: outside the quick loop.
pytestmark = pytest.mark.slow

pytest.importorskip("mypy")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory) -> Path:
    """One mypy cache for this module's runs: the second reads the package from the first's."""
    return tmp_path_factory.mktemp("mypy_cache")


def test_mypy_finds_no_error(mypy_cache):
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(mypy_cache)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert done.stdout.startswith("Success: no issues found")


PUBLIC_MODULES = ["metrics", "measures", "conventions", "risk", "significance", "objectives",
                  "baselines", "data", "trec", "feval", "sklearn", "distributed",
                  "active.moments", "active.sampling", "active.relevance", "experiment.config",
                  "experiment.runner", "experiment.report"]


def test_every_public_function_is_annotated():
    """Every function and public method a module exports (``__all__``) annotates each
    parameter and its return value, so that mypy checks the calls users write."""
    import importlib
    import inspect

    bare = []
    for name in PUBLIC_MODULES:
        module = importlib.import_module(f"lgb_risk.{name}")
        for exported in module.__all__:
            obj = getattr(module, exported)
            if inspect.isfunction(obj):
                functions = [(exported, obj)]
            elif inspect.isclass(obj):
                functions = [(f"{exported}.{n}", f) for n, f in vars(obj).items()
                             if inspect.isfunction(f) and (not n.startswith("_")
                                                           or n == "__init__")]
            else:
                continue
            for qualified, function in functions:
                defined_in = function.__module__
                if defined_in != module.__name__ and not defined_in.split(".")[-1].startswith("_"):
                    continue  # exported from the public module that defines it, checked there
                signature = inspect.signature(function)
                missing = [p.name for p in signature.parameters.values()
                           if p.name not in ("self", "cls") and p.annotation is p.empty]
                if signature.return_annotation is signature.empty and \
                        function.__name__ != "__init__":
                    missing.append("return")
                if missing:
                    bare.append(f"lgb_risk.{name}.{qualified}: {', '.join(missing)}")
    assert not bare, bare


def test_the_top_level_names_are_typed_for_a_type_checker(tmp_path, mypy_cache):
    """``from lgb_risk import UCRO`` is the class to mypy, not ``Any`` (the package loads its
    names on first use): a misspelt keyword and a wrong type are found."""
    script = tmp_path / "uses.py"
    script.write_text("from lgb_risk import UCRO, RiskRanker\n"
                      "UCRO(alpha='five', baselin=None)\n"
                      "RiskRanker(objectiv='UCRO')\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(mypy_cache),
                           str(script)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert 'Unexpected keyword argument "baselin" for "UCRO"' in done.stdout, done.stdout
    assert 'Argument "alpha" to "UCRO" has incompatible type "str"' in done.stdout
    assert 'Unexpected keyword argument "objectiv" for "RiskRanker"' in done.stdout
