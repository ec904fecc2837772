"""The dependency direction of DESIGN.md: _flags/dtypes/shapes < hlo < passes < backends <
compile < frontend. A module may import only its own layer and the layers before it."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "lazyarr"

LAYERS = ["base", "hlo", "passes", "backends", "compile", "frontend"]
BASE_MODULES = {"_files", "_flags", "_profiler", "dtypes", "shapes"}


def layer_of(module: str) -> str | None:
    """Layer of a dotted module inside lazyarr ('lazyarr.hlo.ops.layout' -> 'hlo')."""
    parts = module.split(".")
    if parts[0] != "lazyarr" or len(parts) == 1:
        return None
    head = parts[1]
    if head in BASE_MODULES:
        return "base"
    if head in ("introspection", "symbolic_sizes"):
        return "compile"  # the driver's reports: sees passes and backends
    if head in ("linalg", "fft", "__main__", "aot", "run_hlo"):
        return "frontend"  # public namespace modules sit on top
    return head if head in LAYERS else None


def imported_modules(path: pathlib.Path):
    module = "lazyarr." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    module = module.removesuffix(".__init__")
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield module, alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module is None and node.level:
                for alias in node.names:
                    yield module, f"{target}.{alias.name}", node.lineno
            else:
                yield module, target, node.lineno


def test_every_import_points_down_the_layers():
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for module, target, line in imported_modules(path):
            source, destination = layer_of(module), layer_of(target)
            if path == PACKAGE / "__init__.py" or source is None or destination is None:
                continue
            if LAYERS.index(destination) > LAYERS.index(source):
                where = f"{path.relative_to(PACKAGE.parent)}:{line}"
                violations.append(f"{where} ({source}) imports {target} ({destination})")
    assert not violations, "imports against the layering:\n" + "\n".join(violations)


def test_the_checker_sees_a_violation():
    assert layer_of("lazyarr.hlo.ops.layout") == "hlo"
    assert layer_of("lazyarr.frontend.array") == "frontend"
    assert LAYERS.index(layer_of("lazyarr.frontend.array")) > LAYERS.index(layer_of("lazyarr.hlo"))
