"""The package's shape at a commit, counted from its files: what a restructuring is judged by.

Modules of ``lgb_risk`` over 600 lines, ``objectives.py``'s length and its ``LambdaMART`` class's,
the pair loop's (``_query_lambdas``, with its decorator and docstring, and its code alone), the
circles of the package's import graph (imports under ``if TYPE_CHECKING`` left out, since they
never run), private scikit-learn imports, experiments importing private modules, and circles
between the scripts. Run it at two commits to compare them:

    python scripts/code_counts.py 413c04f
    python scripts/code_counts.py HEAD
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIG = 600


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                          check=True).stdout


def _lengths(source: str) -> dict[str, tuple[int, int]]:
    """Every function's and class's lines, from its first decorator to its end, and its code
    alone (no docstring, comment or blank line), by name."""
    lines = source.splitlines()
    lengths = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            continue
        start = min([node.lineno] + [decorator.lineno for decorator in node.decorator_list])
        span = lines[start - 1:node.end_lineno]
        first = node.body[0]
        docstring = (first.end_lineno - first.lineno + 1
                     if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                     and isinstance(first.value.value, str) else 0)
        code = [line for line in span if line.strip() and not line.strip().startswith("#")]
        lengths[node.name] = (len(span), len(code) - docstring)
    return lengths


def _imports(source: str, modules: set[str]) -> set[str]:
    """The package's modules that ``source`` imports when it runs."""
    tree = ast.parse(source)
    typing_only = {id(inner) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for inner in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(node.module)
    return found & modules


def _private_names(source: str, package: str) -> set[str]:
    """The private modules and names of ``package`` that ``source`` imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            dotted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            dotted = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in dotted if name.split(".")[0] == package
                     and any(part.startswith("_") for part in name.split(".")[1:]))
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def counts(commit: str) -> list[str]:
    files = _git("ls-tree", "-r", "--name-only", commit).split()
    sources = {path: _git("show", f"{commit}:{path}") for path in files if path.endswith(".py")
               and path.split("/")[0] in ("lgb_risk", "experiments", "scripts")}
    package = {path: text for path, text in sources.items() if path.startswith("lgb_risk/")}
    sizes = {path: text.count("\n") for path, text in package.items()}
    big = sorted(((n, path) for path, n in sizes.items() if n > BIG), reverse=True)
    out = [f"lgb_risk: {len(package)} modules, {sum(sizes.values())} lines; "
           f"over {BIG} lines: {len(big)}"]
    out += [f"  {n} {path}" for n, path in big]
    objectives = "lgb_risk/objectives.py"
    out.append(f"{objectives}: {sizes[objectives]} lines; class LambdaMART "
               f"{_lengths(package[objectives])['LambdaMART'][0]} lines")
    for path, text in package.items():
        pair_loop = _lengths(text).get("_query_lambdas")
        if pair_loop:
            out.append(f"{path}: _query_lambdas {pair_loop[0]} lines, {pair_loop[1]} of code")
    names = {path[:-3].replace("/", ".").removesuffix(".__init__"): path for path in package}
    graph = {name: _imports(package[path], set(names)) - {name} for name, path in names.items()}
    out.append(f"import circles in lgb_risk: {_circles(graph) or 'none'}")
    private = sorted({f"{path}: {name}" for path, text in package.items()
                      for name in _private_names(text, "sklearn")})
    out.append(f"private scikit-learn imports: {private or 'none'}")
    experiments = sorted({f"{path}: {name}" for path, text in sources.items()
                          if path.startswith("experiments/")
                          for name in _private_names(text, "lgb_risk")})
    out.append(f"experiments importing private modules: {experiments or 'none'}")
    scripts = {Path(path).stem: set(re.findall(r"^\s*(?:from|import) (\w+)", text, re.M))
               for path, text in sources.items() if path.startswith("scripts/")}
    pairs = sorted({tuple(sorted((a, b))) for a, imported in scripts.items() for b in imported
                    if b in scripts and b != a and a in scripts[b]})
    out.append(f"circles between scripts: {pairs or 'none'}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", nargs="?", default="HEAD")
    print("\n".join(counts(parser.parse_args().commit)))


if __name__ == "__main__":
    main()
