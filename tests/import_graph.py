"""The import graph of the segmenter package, read from the source with `ast` (nothing is imported).

Every `import` / `from … import` anywhere in a file counts, those inside functions included (a
lazy import still runs, just later) and those under `if TYPE_CHECKING:` too: an annotation-only
import is still a dependency a reader follows, and a cycle through one means two modules that
cannot be read apart. Relative imports are resolved to module names. An edge goes to the module named
and, for `from M import name`, to M.name too when that is a module; importing a.b.c also runs
the packages a.b and a, so those get an edge unless they are packages of the importer itself
(already being imported when the importer runs).
"""
from __future__ import annotations

import ast
from pathlib import Path


def module_names(package_dir: Path) -> dict[str, Path]:
    """{dotted module name: file} of every .py file of the package (a package is its __init__.py)."""
    names = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _import_nodes(node: ast.AST):
    """Import and ImportFrom nodes under `node`, at any depth, in the order of the source."""
    found = [child for child in ast.walk(node) if isinstance(child, (ast.Import, ast.ImportFrom))]
    return sorted(found, key=lambda child: (child.lineno, child.col_offset))


def imported_names(module: str, path: Path) -> list[tuple[str, int]]:
    """(absolute dotted name, line) of everything `module` imports: modules, and M.name for
    each `from M import name` (which may be a module or an attribute)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            if node.level - 1 >= len(parts):
                raise ValueError(f"{path}:{node.lineno}: relative import goes above the top package")
            anchor = ".".join(parts[: len(parts) - (node.level - 1)])
            base = f"{anchor}.{base}" if base else anchor
        found.append((base, node.lineno))
        found += [(f"{base}.{alias.name}", node.lineno) for alias in node.names if alias.name != "*"]
    return found


def import_graph(package_dir: Path) -> dict[str, dict[str, int]]:
    """{module: {imported module of the package: line of the first import}}."""
    modules = module_names(package_dir)
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        ancestors = {".".join(module.split(".")[:k]) for k in range(1, module.count(".") + 1)}
        if path.name == "__init__.py":
            ancestors.add(module)
        edges: dict[str, int] = {}
        for name, line in imported_names(module, path):
            parts = name.split(".")
            targets = [name] + [".".join(parts[:k]) for k in range(1, len(parts))]
            for target in targets:
                implicit = target != name  # a package above the name: run first, not named
                if target not in modules or target == module or (implicit and target in ancestors):
                    continue
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def find_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One path per cycle found by a depth-first search: [a, b, …, a]."""
    cycles, state, stack = [], {}, []  # state: 1 on the stack, 2 done

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles
