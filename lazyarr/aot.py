"""Ahead-of-time compilation (XLA's tfcompile): a computation -> an object file and a C header.

The object holds native code for fixed argument shapes and dtypes; a C or C++ program links it
(`cc main.c model.o -lm`) and needs neither Python nor lazyarr at run time. It is built with the
CPU backend's passes and kernels (`lazyarr.backends.llvm.aot_plan` says how each op is compiled
and which are not, `aot_entry` the entry ABI), for this machine's LLVM triple or another
('aarch64-unknown-linux-gnu').

    import numpy as np, lazyarr as la
    def model(x, w):
        return la.tanh(x @ w).sum(axis=1)
    result = la.aot.compile(model, la.ShapeDtypeStruct((8, 3), np.float32),
                            la.ShapeDtypeStruct((3, 4), np.float32), name="model", output_dir="build")
    result.entry_signature
    # 'int32_t model(const float* x, const float* w, float* out0, void* scratch)'

From the shell: `python -m lazyarr aot model.py:model --arg f32[8,3] --arg f32[3,4] -o build`.
The object calls libm for some math functions and libc's malloc/free when given no scratch
memory: link with `-lm`.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import inspect
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import _files, dtypes
from .hlo import Module
from .persistent_cache import code_version, disk_cache

if TYPE_CHECKING:  # the code generator loads LLVM: imported on first compilation, not with lazyarr
    from .backends.llvm.aot_entry import AotProgram

# Element types as C spells them; float16 has no portable C type, so its bits travel as uint16_t.
_C_TYPES = {
    dtypes.bool_: "uint8_t", dtypes.int8: "int8_t", dtypes.int16: "int16_t", dtypes.int32: "int32_t",
    dtypes.int64: "int64_t", dtypes.uint8: "uint8_t", dtypes.uint16: "uint16_t", dtypes.uint32: "uint32_t",
    dtypes.uint64: "uint64_t", dtypes.float16: "uint16_t", dtypes.float32: "float", dtypes.float64: "double",
}
_C_TYPE_NOTES = {dtypes.bool_: " (one byte each, 0 or 1)", dtypes.float16: " (IEEE binary16 bits)"}

# Words a C or C++ compiler would reject as names, and the C library symbols the object calls.
_RESERVED_NAMES = frozenset("""
    alignas alignof and asm auto bool break case catch char class const constexpr continue default delete do
    double else enum explicit export extern false float for free friend goto if inline int long main malloc
    memcpy memset mutable namespace new noexcept not nullptr operator or private protected public register
    restrict return short signed sizeof static struct switch template this throw true try typedef typename
    union unsigned using virtual void volatile wchar_t while xor scratch
""".split())
# The C math library's functions (and their float and long double forms): kernels may call them,
# so an entry point must not take their names.
_LIBM_NAMES = frozenset(
    base + suffix
    for base in """acos acosh asin asinh atan atan2 atanh cbrt ceil copysign cos cosh erf erfc exp exp2 expm1
        fabs floor fma fmax fmin fmod frexp hypot ldexp lgamma log log10 log1p log2 modf nearbyint nextafter pow
        rint round roundeven sin sincos sinh sqrt tan tanh tgamma trunc""".split()
    for suffix in ("", "f", "l")
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z", re.ASCII)
_SPEC = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[\s*([0-9,\s]*)\]\s*\Z", re.ASCII)
_DTYPE_ALIASES = {
    **{dtypes.short_name(dtype): dtype for dtype in _C_TYPES},
    **{dtype.name: dtype for dtype in _C_TYPES},
    "i8": dtypes.int8, "i16": dtypes.int16, "i32": dtypes.int32, "i64": dtypes.int64,
}


@dataclass(frozen=True)
class AotResult:
    """What `compile` and `compile_module` wrote, and how to call it.

    `entry_signature` is the C prototype of the entry point; `arguments` and `results` are
    (C name, shape, dtype) in call order; `scratch_bytes` is what `<name>_scratch_bytes()` returns.
    """

    name: str
    object_path: str
    header_path: str
    entry_signature: str
    triple: str
    arguments: tuple[tuple[str, tuple[int, ...], np.dtype], ...]
    results: tuple[tuple[str, tuple[int, ...], np.dtype], ...]
    scratch_bytes: int


def _object_code(program, target_machine, emit_object, cpu_and_features: str) -> bytes:
    """`emit_object(program, target_machine)`, through the persistent compile cache: the object
    is a function of the program's LLVM IR text, the target machine (triple, CPU and features)
    and LLVM's pipeline (llvmlite's and LLVM's versions, llvm/target.py), so a build compiling
    the same modules again (for the same target) emits nothing. Off as the cache is."""
    cache = disk_cache()
    if cache is None:
        return emit_object(program, target_machine)
    import llvmlite
    import llvmlite.binding as llvm

    from .backends.llvm import target

    version = code_version(f"aot {target_machine.triple} {llvmlite.__version__} {llvm.llvm_version_info} "
                           f"{cpu_and_features} {target_machine.target_data}", [Path(target.__file__)])
    source = f"{version}\n{program.llvm_module}"
    key = hashlib.sha256(source.encode()).hexdigest()
    found = cache.get(key)
    if found is not None:
        return found
    object_code = emit_object(program, target_machine)
    cache.put(key, object_code)
    return object_code


def compile_module(module: Module, name: str, *, output_dir: str | os.PathLike, triple: str | None = None,
                   cpu: str = "", features: str = "", argument_names: Sequence[str] | None = None) -> AotResult:
    """Compile an HLO module to `output_dir/name.o` and `output_dir/name.h`.

    Parameters are the entry's arguments in number order, then one output pointer per module
    output, then `void* scratch`. `triple` defaults to this machine's; `cpu` and `features`
    (LLVM's names, e.g. 'skylake', '+avx2') default to the triple's generic CPU, so the object
    runs on any CPU of that architecture; cpu='native' targets this machine's CPU and features
    (wider vectors, the object may not run elsewhere). `argument_names` name the parameters in
    the header.

    >>> from lazyarr.hlo import text
    >>> module = text.parse('HloModule m\\nENTRY main {\\n  p0 = f32[3] parameter(0)\\n'
    ...                     '  ROOT exp.1 = f32[3] exp(p0)\\n}')
    >>> import tempfile; result = compile_module(module, "exp3", output_dir=tempfile.mkdtemp())
    >>> result.entry_signature
    'int32_t exp3(const float* arg0, float* out0, void* scratch)'
    """
    from .backends.llvm.aot_entry import build_program, emit_object, host_triple
    from .backends.llvm.target import host_cpu_features, host_cpu_name, target_machine_for

    _check_name(name)
    if triple is not None and not isinstance(triple, str):
        raise TypeError(f"aot: triple must be a string such as 'aarch64-unknown-linux-gnu', got {triple!r}")
    if cpu == "native":
        if triple is not None and triple != host_triple():
            raise ValueError(f"aot: cpu='native' means this machine's CPU ({host_triple()}), not one for {triple!r}")
        cpu, features = host_cpu_name(), ",".join(filter(None, [host_cpu_features(), features]))
    target_machine = target_machine_for(triple or host_triple(), cpu=cpu, features=features)
    program = build_program(module, name, triple=target_machine.triple, data_layout=str(target_machine.target_data))
    object_code = _object_code(program, target_machine, emit_object, f"{cpu}|{features}")
    names = _argument_names(argument_names, len(program.parameters), len(program.outputs))
    arguments = tuple((names[position], *spec) for position, spec in enumerate(program.parameters))
    results = tuple((f"out{position}", *spec) for position, spec in enumerate(program.outputs))
    signature = entry_signature(name, arguments, results)
    os.makedirs(output_dir, exist_ok=True)
    object_path = os.path.join(os.fspath(output_dir), f"{name}.o")
    header_path = os.path.join(os.fspath(output_dir), f"{name}.h")
    # Through a new file and a rename: a symlink planted at either path is replaced, not followed.
    _files.replace(object_path, object_code)
    _files.replace(header_path, header_text(program, signature, arguments, results, target_machine.triple))
    return AotResult(name, object_path, header_path, signature, target_machine.triple, arguments, results,
                     program.scratch_bytes)


def compile(  # noqa: A001  (public as la.aot.compile; the builtin is not used here)
    function: Callable, *argument_specs, name: str | None = None, output_dir: str | os.PathLike = ".",
    triple: str | None = None, cpu: str = "", features: str = "",
) -> AotResult:
    """Trace `function` for the given argument shapes and dtypes, then `compile_module` it.

    Specs are `la.ShapeDtypeStruct(shape, dtype)`, arrays (their shape and dtype; values are
    not used) or strings like 'f32[100,3]'. Arrays the function closes over become constants in
    the object. `name` defaults to the function's name; the header names the arguments after the
    function's parameters.
    """
    if not callable(function):
        raise TypeError(f"aot.compile: expected a function to compile, got {type(function).__name__}")
    specs = [parse_spec(spec, where=f"argument {position}") for position, spec in enumerate(argument_specs)]
    name = name if name is not None else getattr(function, "__name__", "")
    if name == "<lambda>":
        raise ValueError("aot.compile: a lambda has no usable name; pass name='...' (a C identifier)")
    from .frontend.jit import JittedFunction, ShapeDtypeStruct, jit

    jitted = function if isinstance(function, JittedFunction) else jit(function)
    module = jitted.lower(*(ShapeDtypeStruct(shape, dtype) for shape, dtype in specs)).module
    return compile_module(module, name, output_dir=output_dir, triple=triple, cpu=cpu, features=features,
                          argument_names=_parameter_names(function, len(specs)))


def parse_spec(spec, where: str = "spec") -> tuple[tuple[int, ...], np.dtype]:
    """'f32[100,3]', 'float32[100,3]', 'pred[]', a ShapeDtypeStruct or an array -> (shape, dtype).

    >>> parse_spec("f32[100,3]")
    ((100, 3), dtype('float32'))
    """
    if isinstance(spec, str):
        match = _SPEC.match(spec)
        if match is None:
            raise ValueError(
                f"aot: {where} {spec!r} is not a spec like 'f32[100,3]' (a dtype, then the shape in "
                "brackets; 'f32[]' is a scalar)"
            )
        dtype_name, dims = match.groups()
        if dtype_name not in _DTYPE_ALIASES:
            raise ValueError(
                f"aot: {where} {spec!r} has unknown dtype {dtype_name!r}; accepted: "
                f"{', '.join(sorted(_DTYPE_ALIASES))}"
            )
        shape = tuple(int(size) for size in dims.replace(" ", "").split(",") if size)
        if dims.strip() and len(shape) != dims.count(",") + 1:
            raise ValueError(f"aot: {where} {spec!r} has an empty dimension")
        return shape, _DTYPE_ALIASES[dtype_name]
    shape, dtype = getattr(spec, "shape", None), getattr(spec, "dtype", None)
    if shape is None or dtype is None:
        raise TypeError(
            f"aot: {where} must be a ShapeDtypeStruct, an array or a string like 'f32[100,3]', "
            f"got {type(spec).__name__}"
        )
    dtype = np.dtype(dtype)
    if dtype not in _C_TYPES:
        raise ValueError(f"aot: {where} has dtype {dtype}; accepted: {', '.join(sorted(d.name for d in _C_TYPES))}")
    return tuple(int(size) for size in shape), dtype


def entry_signature(name: str, arguments, results) -> str:
    """The C prototype: inputs as const pointers, then outputs, then scratch."""
    pointers = [f"const {_C_TYPES[dtype]}* {label}" for label, _, dtype in arguments]
    pointers += [f"{_C_TYPES[dtype]}* {label}" for label, _, dtype in results]
    return f"int32_t {name}({', '.join(pointers + ['void* scratch'])})"


def header_text(program: AotProgram, signature: str, arguments, results, triple: str) -> str:
    """The C header declaring the entry point and its scratch size, with extern "C" guards."""
    guard = f"LAZYARR_AOT_{program.name.upper()}_H"
    lines = [
        f"/* {program.name}: ahead-of-time compiled by lazyarr for {triple}. Do not edit.",
        f" * Link: cc your_program.c {program.name}.o -lm */",
        f"#ifndef {guard}", f"#define {guard}", "",
        "#include <stddef.h>", "#include <stdint.h>", "",
        "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
        f"/* Bytes of scratch memory {program.name} needs for intermediates ({program.scratch_bytes}). */",
        f"size_t {program.name}_scratch_bytes(void);", "",
        f"/* {program.name}: every array is dense, row-major (C order) and naturally aligned.",
    ]
    for label, shape, dtype in arguments:
        lines.append(f" *   {label}: input {_describe(shape, dtype)}")
    for label, shape, dtype in results:
        lines.append(f" *   {label}: output {_describe(shape, dtype)}, written in full; must not overlap the inputs")
    lines += [
        f" *   scratch: {program.name}_scratch_bytes() bytes, aligned to 16 bytes or more (64 is best),",
        f" *            or NULL: {program.name} then mallocs and frees it itself.",
        " * Returns 0, or 1 when scratch was NULL and malloc failed (nothing is written then).",
        " * Single-threaded; concurrent calls are safe when each has its own outputs and scratch. */",
        f"{signature};", "",
        "#ifdef __cplusplus", "}", "#endif", "", f"#endif  /* {guard} */", "",
    ]
    return "\n".join(lines)


def _describe(shape, dtype) -> str:
    count = math.prod(shape)
    return (f"{dtype.name}[{','.join(str(size) for size in shape)}], {count} element{'s' * (count != 1)} of "
            f"{_C_TYPES[dtype]}{_C_TYPE_NOTES.get(dtype, '')}")


def _check_name(name) -> None:
    if (not isinstance(name, str) or not _IDENTIFIER.match(name) or name in _RESERVED_NAMES
            or name in _LIBM_NAMES or name.startswith("__")):
        raise ValueError(
            f"aot: name {name!r} cannot name a C function: it must be an identifier ([A-Za-z_][A-Za-z0-9_]*), "
            "not a C/C++ keyword or a C library function the object may call (malloc, free, memcpy, expf, "
            "...), and not start with '__'"
        )


def _argument_names(names: Sequence[str] | None, parameters: int, outputs: int) -> list[str]:
    """`names` when they are distinct C identifiers that clash with nothing, else arg0, arg1, ..."""
    fallback = [f"arg{position}" for position in range(parameters)]
    if names is None:
        return fallback
    names = list(names)
    taken = {f"out{position}" for position in range(outputs)}
    usable = (
        len(names) == parameters and len(set(names)) == parameters
        and all(isinstance(label, str) and _IDENTIFIER.match(label) and label not in _RESERVED_NAMES
                and label not in taken and not label.startswith("__") for label in names)
    )
    return names if usable else fallback


def _parameter_names(function: Callable, count: int) -> list[str] | None:
    """The function's first `count` positional parameter names, when it has that many."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return positional[:count] if len(positional) >= count else None


# -- command line: python -m lazyarr aot path/to/file.py:function --arg f32[8,3] -o build -------


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of `python -m lazyarr aot`."""
    parser.description = "Compile a lazyarr function ahead of time to an object file and a C header."
    parser.add_argument("function", metavar="SPEC",
                        help="the function to compile: path/to/file.py:function or package.module:function")
    parser.add_argument("--arg", dest="arguments", action="append", default=[], metavar="TYPE",
                        help="one argument's dtype and shape, e.g. f32[100,3] (repeat in argument order)")
    parser.add_argument("--name", help="the C entry point's name (default: the function's name)")
    parser.add_argument("--triple", help="LLVM target triple (default: this machine's), e.g. aarch64-unknown-linux-gnu")
    parser.add_argument("--cpu", default="",
                        help="LLVM CPU name, or native for this machine's (default: the triple's generic CPU)")
    parser.add_argument("--features", default="", help="LLVM feature string, e.g. +avx2,+fma")
    parser.add_argument("-o", "--output-dir", default=".", help="directory for NAME.o and NAME.h (default: .)")


def main(args: argparse.Namespace) -> int:
    """Run `python -m lazyarr aot`: print the written paths and the C signature; 0 on success."""
    try:
        function = load_function(args.function)
        result = compile(function, *args.arguments, name=args.name, output_dir=args.output_dir,
                         triple=args.triple, cpu=args.cpu, features=args.features)
    except (ValueError, TypeError, NotImplementedError, ImportError, OSError) as error:
        print(f"lazyarr aot: error: {error}", file=sys.stderr)
        return 2
    print(result.object_path)
    print(result.header_path)
    print(result.entry_signature)
    return 0


def load_function(spec: str) -> Callable:
    """'path/to/file.py:function' or 'package.module:function' -> the function object."""
    location, separator, attribute = spec.rpartition(":")
    if not separator or not location or not attribute:
        raise ValueError(f"aot: {spec!r} must be path/to/file.py:function or module:function")
    if location.endswith(".py") or os.sep in location:
        if not os.path.isfile(location):
            raise ValueError(f"aot: no such file {location!r} (from {spec!r})")
        module_name = "_lazyarr_aot_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(location))[0])
        module_spec = importlib.util.spec_from_file_location(module_name, location)
        module = importlib.util.module_from_spec(module_spec)
        # As when the file runs as a script: its own directory comes first on the import path.
        sys.path.insert(0, os.path.dirname(os.path.abspath(location)))
        try:
            module_spec.loader.exec_module(module)
        finally:
            sys.path.pop(0)
    else:
        module = importlib.import_module(location)
    function = getattr(module, attribute, None)
    if not callable(function):
        raise ValueError(f"aot: {location!r} has no function {attribute!r}")
    return function
