"""Matrix products in native code: NumPy's own BLAS called from a kernel.

NumPy's wheels bundle OpenBLAS (scipy-openblas) and export its CBLAS interface. A dot that is
one matrix or vector product of float32/float64 buffers becomes a kernel of its own whose body
is one `cblas_?gemm` call (`cblas_?gemv` when an operand is a vector, as NumPy's matmul does),
so it joins the native run of the kernels around it (llvm/dispatch.py) instead of leaving
native code for a Python host step: a jitted training step runs as one native call. The
library is the one NumPy has loaded (the same threads, the same code as `np.matmul`'s gemm);
where none is found (another BLAS vendor, no CBLAS symbol), `gemm()` is None and dots stay
host steps through NumPy.

Kernels call the stable names `lazyarr_cblas_sgemm`, `lazyarr_cblas_sgemv`, ..., bound to the
library's addresses with `llvm.add_symbol` in each process, so compiled objects stay valid in
the persistent cache across processes.
"""

from __future__ import annotations

import ctypes
import functools
import glob
from dataclasses import dataclass
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from .loops import for_range, index_constant

# (symbol template, width of BLAS integers): ILP64 builds (NumPy's wheels) take int64 sizes.
_SYMBOLS = (("scipy_cblas_{}64_", 64), ("cblas_{}64_", 64), ("scipy_cblas_{}", 32), ("cblas_{}", 32))
# gemm for matrix products, gemv where one operand is a vector (as NumPy's matmul: a gemm
# with n = 1 packs its operands for a blocked product and runs ~3x slower than gemv).
_ROUTINES = ("sgemm", "dgemm", "sgemv", "dgemv")
_ROW_MAJOR, _NO_TRANSPOSE, _TRANSPOSE = 101, 111, 112
_PREFIXES = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}


@dataclass(frozen=True)
class Gemm:
    """The CBLAS gemm functions found, as kernels declare them."""

    library: str
    integer_bits: int  # BLAS integer width (64: ILP64)

    @property
    def abi(self) -> str:
        """What compiled kernels depend on (part of the persistent cache's code version)."""
        return f"cblas gemm and gemv, {self.integer_bits}-bit integers"


def _loaded_blas_libraries() -> list[str]:
    """Paths of BLAS libraries loaded in this process (Linux), then those NumPy's wheel bundles."""
    paths = []
    maps = Path("/proc/self/maps")
    if maps.exists():
        for line in maps.read_text().splitlines():
            path = line.split(maxsplit=5)[-1] if line.count(" ") >= 5 else ""
            if path.startswith("/") and "blas" in Path(path).name.lower():
                paths.append(path)
    numpy_directory = Path(np.__file__).resolve().parent
    for pattern in ("../numpy.libs/*blas*", ".dylibs/*blas*"):
        paths += sorted(glob.glob(str(numpy_directory / pattern)))
    return list(dict.fromkeys(paths))


@functools.cache
def gemm() -> Gemm | None:
    """NumPy's CBLAS sgemm, dgemm, sgemv and dgemv, bound to the kernels' names; None where not found."""
    import numpy.linalg  # noqa: F401  (NumPy loads its BLAS with its linear algebra)

    for path in _loaded_blas_libraries():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for template, bits in _SYMBOLS:
            try:
                functions = {routine: getattr(library, template.format(routine)) for routine in _ROUTINES}
            except AttributeError:
                continue
            for routine, function in functions.items():
                llvm.add_symbol(f"lazyarr_cblas_{routine}", ctypes.cast(function, ctypes.c_void_p).value)
            return Gemm(path, bits)
    return None


def native_dot_refusal(dot) -> str | None:
    """Why `dot` cannot be one gemm call in a kernel, or None when it can: one matrix or
    vector product (no batch dims, one contracting dim, operands of rank 1 or 2) of float32 or
    float64, with NumPy's CBLAS found (`gemm()`)."""
    if dot.dtype not in _PREFIXES or any(operand.dtype != dot.dtype for operand in dot.operands):
        return f"a {dot.dtype} dot (native gemm: float32 and float64)"
    if dot.attr("lhs_batch") or len(dot.attr("lhs_contracting")) != 1:
        return "a batched dot or one contracting several dims (NumPy's matmul on the host)"
    if any(operand.ndim not in (1, 2) for operand in dot.operands):
        return "a dot of an operand of rank other than 1 or 2"
    found = gemm()
    if found is None:
        return "no CBLAS gemm found in NumPy's BLAS (dots run through NumPy on the host)"
    if found.integer_bits == 32 and any(size >= 2**31 for operand in dot.operands for size in operand.shape):
        return "a dot with a dimension beyond the 32-bit BLAS's integers"  # (placeholder sizes too)
    return None


def is_native_dot(computation) -> bool:
    """Whether `computation` is a dot on its own parameters (what `emit_gemm` compiles)."""
    outputs = computation.outputs
    return len(outputs) == 1 and outputs[0].opcode == "dot" and all(
        operand.opcode == "parameter" for operand in outputs[0].operands)


def emit_gemm(ctx, computation, pointers) -> None:
    """The body of a kernel computing `computation` (`is_native_dot`) by one CBLAS gemm (gemv for a vector).

    Row-major C (m, n) = A (m, k) B (k, n): a 2-d operand contracting its first dim is passed
    transposed (BLAS reads it through its transpose flag, no copy); a 1-d lhs is a (1, k) row,
    a 1-d rhs a (k, 1) column. Empty products are settled here: no call when m or n is 0, and
    zeros when k is 0 (BLAS would refuse a leading dimension of 0).
    """
    builder = ctx.builder
    (dot,) = computation.outputs
    lhs, rhs = dot.operands
    parameters = list(computation.parameters)
    lhs_pointer, rhs_pointer = pointers[parameters.index(lhs)], pointers[parameters.index(rhs)]
    output_pointer = pointers[len(parameters)]
    (lhs_contracting,), (rhs_contracting,) = dot.attr("lhs_contracting"), dot.attr("rhs_contracting")
    extent = ctx.extent
    k = extent(lhs.shape[lhs_contracting])
    m = extent(lhs.shape[1 - lhs_contracting]) if lhs.ndim == 2 else index_constant(1)
    n = extent(rhs.shape[1 - rhs_contracting]) if rhs.ndim == 2 else index_constant(1)
    lhs_row = extent(lhs.shape[1]) if lhs.ndim == 2 else k
    rhs_row = extent(rhs.shape[1]) if rhs.ndim == 2 else index_constant(1)
    transpose_lhs = lhs.ndim == 2 and lhs_contracting == 0
    transpose_rhs = rhs.ndim == 2 and rhs_contracting == 1

    found = gemm()
    integer = ir.IntType(found.integer_bits)
    enum = ir.IntType(32)
    scalar = ir.FloatType() if dot.dtype == np.float32 else ir.DoubleType()
    pointer = ir.PointerType()
    vector_product = lhs.ndim == 1 or rhs.ndim == 1
    if vector_product:
        routine, arguments = f"{_PREFIXES[dot.dtype]}gemv", [
            enum, enum, integer, integer, scalar, pointer, integer, pointer, integer, scalar, pointer, integer]
    else:
        routine, arguments = f"{_PREFIXES[dot.dtype]}gemm", [
            enum, enum, enum, integer, integer, integer, scalar, pointer, integer, pointer, integer, scalar,
            pointer, integer]
    name = f"lazyarr_cblas_{routine}"
    function = ctx.module.globals.get(name) or ir.Function(
        ctx.module, ir.FunctionType(ir.VoidType(), arguments), name=name)

    def blas_integer(value):
        return builder.trunc(value, integer) if integer.width < 64 else value

    def call():
        one, nothing = ir.Constant(scalar, 1.0), ir.Constant(scalar, 0.0)
        if not vector_product:
            builder.call(function, [
                ir.Constant(enum, _ROW_MAJOR),
                ir.Constant(enum, _TRANSPOSE if transpose_lhs else _NO_TRANSPOSE),
                ir.Constant(enum, _TRANSPOSE if transpose_rhs else _NO_TRANSPOSE),
                blas_integer(m), blas_integer(n), blas_integer(k), one,
                lhs_pointer, blas_integer(lhs_row), rhs_pointer, blas_integer(rhs_row),
                nothing, output_pointer, blas_integer(n),
            ])
            return
        # y = op(A) x: the matrix is the 2-d operand (a 1-d lhs: a (1, k) matrix), stored
        # row-major (rows, columns), transposed when the vector meets its rows.
        if rhs.ndim == 1:
            matrix, vector, transposed = lhs_pointer, rhs_pointer, transpose_lhs
            rows, columns = (k, m) if transpose_lhs else (m, k)
        else:
            matrix, vector, transposed = rhs_pointer, lhs_pointer, not transpose_rhs
            rows, columns = (n, k) if transpose_rhs else (k, n)
        builder.call(function, [
            ir.Constant(enum, _ROW_MAJOR), ir.Constant(enum, _TRANSPOSE if transposed else _NO_TRANSPOSE),
            blas_integer(rows), blas_integer(columns), one, matrix, blas_integer(columns),
            vector, blas_integer(index_constant(1)), nothing, output_pointer, blas_integer(index_constant(1)),
        ])

    zero = index_constant(0)
    empty = builder.or_(builder.icmp_signed("==", m, zero), builder.icmp_signed("==", n, zero))
    with builder.if_else(empty) as (then, otherwise):
        with then:
            pass
        with otherwise:
            with builder.if_else(builder.icmp_signed("==", k, zero)) as (no_terms, terms):
                with no_terms:
                    with for_range(builder, 0, builder.mul(m, n), name="zero") as position:
                        address = builder.gep(output_pointer, [position], source_etype=scalar)
                        builder.store(ir.Constant(scalar, 0.0), address)
                with terms:
                    call()
