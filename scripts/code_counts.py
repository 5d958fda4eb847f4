"""The package's shape at a commit, counted from its files: what a restructuring is judged by.

Modules of ``lgb_risk`` over 600 lines, ``objectives.py``'s length and its ``LambdaMART`` class's,
the pair loop's (``_query_lambdas``, with its decorator and docstring, and its code alone), the
circles of the package's import graph (imports under ``if TYPE_CHECKING`` left out, since they
never run), private scikit-learn imports, experiments importing private modules, circles
between the scripts; the package's root (its modules, the private ones among them) and the
package drawn as rooms (a root module or a sub-package each) on floors, with the arrows between
them; the files and definitions GeoRisk's gradient call names, followed through the imports;
the ways a parameter is declared and the places one more ``RiskRanker`` parameter is written;
the longest functions. Run it at two commits to compare them:

    python scripts/code_counts.py e8caa20
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


class _Module:
    """A module's top-level definitions (functions and classes, with their methods), the
    names its imports bind (to a module, or to a name of a module), and the functions that
    numba's ``@overload(NAME)`` compiles in place of a function NAME (the code a call of NAME
    runs)."""

    def __init__(self, name: str, source: str, modules: set[str]):
        self.name = name
        self.definitions: dict[str, ast.AST] = {}
        self.overloads: dict[str, list[str]] = {}
        self.bound: dict[str, tuple[str, str | None]] = {}
        package = name if name in {m.rsplit(".", 1)[0] for m in modules} else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        self.bound[alias.asname or alias.name.split(".")[0]] = (alias.name, None)
            elif isinstance(node, ast.ImportFrom) and node.module:
                base = node.module if node.level == 0 else ".".join(
                    [*package.split(".")[:len(package.split(".")) - node.level + 1], node.module])
                for alias in node.names:
                    whole = f"{base}.{alias.name}"
                    self.bound[alias.asname or alias.name] = ((whole, None) if whole in modules
                                                              else (base, alias.name))
        for node in ast.parse(source).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.definitions[node.name] = node
            for decorator in getattr(node, "decorator_list", []):
                if (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name)
                        and decorator.func.id == "overload" and decorator.args
                        and isinstance(decorator.args[0], ast.Name)):
                    self.overloads.setdefault(decorator.args[0].id, []).append(node.name)


def _gradient_path(package: dict[str, str], objective: str = "GeoRisk",
                   first_call: bool = True) -> tuple[set, set]:
    """The files and definitions a fix of ``objective``'s gradient reads: from the gradient
    call (``gradients``, found on the objective's classes) every function, method and class it
    names, followed through the imports (``self.NAME`` on the objective's classes) and from a
    function to numba's ``@overload`` of it, within the package. ``first_call=False`` leaves
    out what only the first call runs, the training set's setup (``self._setup``, made then and
    kept): the path of every later call, the gradient's formula. Returns (files, definitions)."""
    modules = {path[:-3].replace("/", ".").removesuffix(".__init__"): path for path in package}
    parsed = {name: _Module(name, package[path], set(modules)) for name, path in modules.items()}

    def resolve(module: str, name: str) -> tuple[str, str] | None:
        for _ in range(5):  # re-exports: follow a name bound by an import
            if module not in parsed:
                return None
            if name in parsed[module].definitions:
                return module, name
            target = parsed[module].bound.get(name)
            if target is None or target[1] is None:
                return None
            module, name = target
        return None

    def bases(found: tuple[str, str]) -> list[tuple[str, str]]:
        node = parsed[found[0]].definitions[found[1]]
        out = [found]
        for base in getattr(node, "bases", []):
            if isinstance(base, ast.Name) and (up := resolve(found[0], base.id)):
                out += bases(up)
        return out

    start = resolve("lgb_risk.objectives", objective)
    assert start is not None
    classes = bases(start)
    methods = {item.name: (module, cls, item) for module, cls in reversed(classes)
               for item in parsed[module].definitions[cls].body
               if isinstance(item, ast.FunctionDef)}
    seen: set = set()
    todo = [methods["gradients"]]
    while todo:
        module, owner, node = todo.pop()
        key = (module, f"{owner}.{node.name}" if owner else node.name)
        if key in seen:
            continue
        seen.add(key)
        for inner in ast.walk(node):
            found = None
            if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name):
                if inner.value.id == "self" and inner.attr in methods:
                    if first_call or inner.attr != "_setup":
                        todo.append(methods[inner.attr])
                    continue
                target = parsed[module].bound.get(inner.value.id)
                if target and target[1] is None:
                    found = resolve(target[0], inner.attr)
            elif isinstance(inner, ast.Name):
                found = resolve(module, inner.id)
            if found and found != (module, getattr(node, "name", None)):
                for name in [found[1], *parsed[found[0]].overloads.get(found[1], [])]:
                    todo.append((found[0], None, parsed[found[0]].definitions[name]))
    return {module for module, _ in seen}, seen


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
    out += _house(package, graph)
    path_files, path_definitions = _gradient_path(package)
    later_files, later_definitions = _gradient_path(package, first_call=False)
    out.append(f"GeoRisk's gradient path (the definitions named from its gradients call, "
               f"followed through the imports): {len(path_files)} files, "
               f"{len(path_definitions)} definitions; every call after the first (the "
               f"training set's setup left out): {len(later_files)} files, "
               f"{len(later_definitions)} definitions")
    out += _parameter_sites(package)
    longest = sorted(((n, f"{path}: {name}") for path, text in package.items()
                      for name, (n, _) in _lengths(text).items()), reverse=True)[:5]
    out.append("longest functions and classes: " + "; ".join(f"{where} {n}"
                                                             for n, where in longest))
    functions = sorted(((n, f"{path}: {name}") for path, text in package.items()
                        for name, (n, _) in _function_lengths(text).items()), reverse=True)
    out.append("longest functions: " + "; ".join(f"{where} {n}" for n, where in functions[:5]))
    return out


def _function_lengths(source: str) -> dict[str, tuple[int, int]]:
    """``_lengths`` of the functions and methods alone (a class's length is its methods')."""
    functions = {node.name for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.FunctionDef)}
    return {name: n for name, n in _lengths(source).items() if name in functions}


def _house(package: dict[str, str], graph: dict[str, set[str]]) -> list[str]:
    """The package drawn as rooms: each module at the root one room, each sub-package one room
    (its modules inside); an arrow where a room imports another; a room's floor is one above
    the highest floor it imports (floor 1 imports no other room)."""
    paths = {path[:-3].replace("/", ".").removesuffix(".__init__"): path for path in package}

    def room(module: str) -> str:
        parts = paths[module].split("/")
        return "/".join(parts[:2]) + ("/" if len(parts) > 2 else "")

    root = sorted(path for path in package if path.count("/") == 1)
    private = [path for path in root if Path(path).name.startswith("_")
               and Path(path).name not in ("__init__.py", "__main__.py")]
    rooms = {room(module) for module in graph}
    arrows = {(room(a), room(b)) for a, targets in graph.items() for b in targets
              if room(a) != room(b)}
    floors: dict[str, int] = {}

    def floor(name: str, trail: tuple = ()) -> int:
        if name in trail:
            return 0  # a circle: counted apart
        if name not in floors:
            below = [floor(b, (*trail, name)) for a, b in arrows if a == name]
            floors[name] = 1 + max(below, default=0)
        return floors[name]

    for name in rooms:
        floor(name)
    return [f"root of lgb_risk: {len(root)} modules, {len(private)} of them private",
            f"rooms (a root module or a sub-package): {len(rooms)}, on "
            f"{max(floors.values(), default=0)} floors, {len(arrows)} arrows between them"]


def _parameter_sites(package: dict[str, str]) -> list[str]:
    """How parameters are declared: the dialects found (records, tables of bounds, argparse
    types written by hand), and the places one more parameter of RiskRanker is written."""
    sklearn = package.get("lgb_risk/sklearn.py", "")
    cli = "".join(text for path, text in package.items() if path.startswith("lgb_risk/cli/"))
    hand_types = len(re.findall(r"^def _\w+\(text: str\)|^def _non_negative", cli, re.M))
    dialects = ["Parameter records"] + (["RiskRanker's tables of bounds and types"]
                                        if "_BOUNDS" in sklearn else []) + (
        [f"{hand_types} argparse types written by hand"] if hand_types else [])
    name = "early_stopping_rounds"  # a parameter of the estimator's own, as any other
    sites = [bool(re.search(rf"^\s+.*\b{name}: int \| None = None", sklearn, re.M)),
             f"self.{name} = {name}" in sklearn,
             bool(re.search(rf'"{name}": \(', sklearn)) or f'Parameter("{name}"' in sklearn,
             bool(re.search(rf"^    {name} : ", sklearn, re.M)),
             "inspect.signature" in sklearn]
    return [f"parameter dialects: {len(dialects)} ({'; '.join(dialects)})",
            f"places written to add a RiskRanker parameter: {sum(sites)} (signature, stored, "
            "declared, docstring entry, read from the signature: "
            f"{', '.join('yes' if site else 'no' for site in sites)})"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", nargs="?", default="HEAD")
    print("\n".join(counts(parser.parse_args().commit)))


if __name__ == "__main__":
    main()
