"""The dependency direction of DESIGN.md: _flags/dtypes/shapes < hlo < passes < backends <
compile < frontend < integration. A module may import only its own layer and the layers before it.

`integration` holds the modules that tie lazyarr to other libraries (`lazyarr.dask`): they may
import the frontend and the public API (`lazyarr` itself, which is frontend-level), and nothing
in lazyarr's core, `lazyarr/__init__.py` included, may import them, so `import lazyarr` never
needs those libraries. Every module must have a layer: a new top-level module fails
`test_every_module_has_a_layer` until it is placed here.
"""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "lazyarr"

LAYERS = ["base", "hlo", "passes", "backends", "compile", "frontend", "integration"]
BASE_MODULES = {"_files", "_flags", "_profiler", "dtypes", "persistent_cache", "shapes"}
COMPILE_MODULES = {"introspection", "symbolic_sizes", "graph_signature"}  # the driver's reports and keys
FRONTEND_MODULES = {"linalg", "fft", "__main__", "aot", "run_hlo"}  # public namespace modules sit on top
INTEGRATION_MODULES = {"dask"}  # lazyarr inside other libraries; only users import these

# Third-party libraries that only integration modules may import (optional: `import lazyarr`
# must work without them).
INTEGRATION_LIBRARIES = {"dask", "distributed"}


def layer_of(module: str) -> str | None:
    """Layer of a dotted module inside lazyarr ('lazyarr.hlo.ops.layout' -> 'hlo'); None outside."""
    parts = module.split(".")
    if parts[0] != "lazyarr":
        return None
    if len(parts) == 1:
        return "frontend"  # the package itself: the public API, re-exporting the frontend
    head = parts[1]
    if head in BASE_MODULES:
        return "base"
    if head in COMPILE_MODULES:
        return "compile"
    if head in FRONTEND_MODULES:
        return "frontend"
    if head in INTEGRATION_MODULES:
        return "integration"
    return head if head in LAYERS else None


def module_name(path: pathlib.Path) -> str:
    module = "lazyarr." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    return module.removesuffix(".__init__")


def _is_package_module(dotted: str) -> bool:
    """Whether `dotted` ('lazyarr.dask') names a module or package inside lazyarr."""
    relative = PACKAGE.joinpath(*dotted.split(".")[1:])
    return relative.with_suffix(".py").is_file() or (relative / "__init__.py").is_file()


def _dynamic_import(node: ast.Call) -> str | None:
    """The module named by `importlib.import_module("...")` or `__import__("...")` with a literal."""
    function = node.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and not first.value.startswith("."):
        return first.value
    return None


def imported_modules(path: pathlib.Path, source: str | None = None):
    """(module, imported module, line) for every import in `path` (or in `source`, read as if it
    were that file): plain and from-imports anywhere (inside functions too), the submodules a
    from-import names (`from lazyarr import dask`), and literal `importlib.import_module` calls."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text() if source is None else source)
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
            if node.module is not None:
                yield module, target, node.lineno
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if node.module is None or (target.split(".")[0] == "lazyarr" and _is_package_module(submodule)):
                    yield module, submodule, node.lineno
        elif isinstance(node, ast.Call) and (target := _dynamic_import(node)) is not None:
            yield module, target, node.lineno


def violations(path: pathlib.Path, source: str | None = None) -> list[str]:
    """The imports in `path` (or `source`) that point up the layers, as readable lines."""
    found = []
    for module, target, line in imported_modules(path, source):
        source_layer, destination = layer_of(module), layer_of(target)
        where = f"{path.relative_to(PACKAGE.parent)}:{line}"
        if target.split(".")[0] in INTEGRATION_LIBRARIES and source_layer != "integration":
            found.append(f"{where} ({source_layer}) imports {target} (an optional library for integrations)")
        elif source_layer is not None and destination is not None:
            if LAYERS.index(destination) > LAYERS.index(source_layer):
                found.append(f"{where} ({source_layer}) imports {target} ({destination})")
    return found


def test_every_import_points_down_the_layers():
    found = [line for path in sorted(PACKAGE.rglob("*.py")) for line in violations(path)]
    assert not found, "imports against the layering:\n" + "\n".join(found)


def test_every_module_has_a_layer():
    unplaced = [module_name(path) for path in sorted(PACKAGE.rglob("*.py")) if layer_of(module_name(path)) is None]
    assert not unplaced, f"modules in no layer (add them to tests/test_layering.py): {unplaced}"


def test_the_checker_sees_a_violation():
    assert layer_of("lazyarr.hlo.ops.layout") == "hlo"
    assert layer_of("lazyarr.frontend.array") == "frontend"
    assert layer_of("lazyarr.dask") == "integration"
    assert LAYERS.index(layer_of("lazyarr.frontend.array")) > LAYERS.index(layer_of("lazyarr.hlo"))
    assert violations(PACKAGE / "hlo" / "instruction.py", "from ..frontend import array\n")


def test_no_core_module_imports_the_dask_integration():
    """Each way of importing lazyarr.dask, from a core module and from the package itself, fails;
    lazyarr.dask importing the frontend and the public API does not."""
    spellings = [
        "import lazyarr.dask\n",
        "from lazyarr import dask\n",
        "from lazyarr.dask import from_array\n",
        "def later():\n    from .. import dask\n",
        "import importlib\nimportlib.import_module('lazyarr.dask')\n",
        "import dask.array\n",
        "from distributed import Client\n",
    ]
    for path in (PACKAGE / "frontend" / "reductions.py", PACKAGE / "backends" / "cpu.py", PACKAGE / "aot.py"):
        for spelling in spellings:
            relative = spelling.replace("from .. import", "from . import") if path.parent == PACKAGE else spelling
            assert violations(path, relative), (path, spelling)
    for spelling in ("from . import dask\n", "import lazyarr.dask\n"):
        assert violations(PACKAGE / "__init__.py", spelling), spelling
    allowed = "import dask.array\nimport lazyarr\nfrom . import dtypes\nfrom .frontend.array import Array\n"
    assert not violations(PACKAGE / "dask.py", allowed)
