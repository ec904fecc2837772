"""The math tables: HLO transcendental op name -> LLVM IR, per dtype, one per target.

A table is called as `table(context, name, dtype, *values)`; the elemental emitter knows
nothing else about the target's math.

CPU: vectorizable polynomial implementations (lazyarr.backends.llvm.math) where they exist,
so loops calling exp/log/tanh stay vectorized; every other function calls the C library
(libm), which MCJIT resolves in the running process.
GPU: NVIDIA's libdevice (`__nv_expf`, `__nv_sin`, ...: the functions CUDA's own math library
compiles to, linked into each PTX module as bitcode, see nvptx.py), and the straight-line
polynomials for what libdevice lacks (logistic, logaddexp, sqrt), which are plain LLVM IR.

"fma" (a*b + c) is the multiply-add of NumPy's SIMD complex loops (complex_ops.py): one
rounding (llvm.fma) on targets with fused multiply-add instructions, as NumPy's
`npyv_muladdsub` and Highway's `MulAdd` compile there (x86-64 with FMA3, AArch64, NVPTX),
and two roundings on x86-64 without FMA3, where NumPy multiplies and adds separately.
"""

from __future__ import annotations

import functools

import llvmlite.ir as ir

from ... import dtypes

# HLO op name -> C function name (float64; float32 adds the "f" suffix)
_LIBM_NAMES = {
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10",
    "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
    "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh",
    "atanh": "atanh", "cbrt": "cbrt", "atan2": "atan2", "hypot": "hypot", "power": "pow",
    "nextafter": "nextafter", "erf": "erf", "fmod": "fmod",
}


def _polynomials():
    """The vectorizable implementations, if that module is present."""
    try:
        from .math import MATH_FUNCTIONS
    except ImportError:  # pragma: no cover - the polynomial library is optional
        return {}
    return MATH_FUNCTIONS


def libm_call(ctx, name: str, dtype, *arguments):
    """Call the C library's `name` for float32 (`namef`) or float64."""
    symbol = _LIBM_NAMES[name] + ("f" if dtype == dtypes.float32 else "")
    function = ctx.module.globals.get(symbol)
    if function is None:
        signature = ir.FunctionType(arguments[0].type, [argument.type for argument in arguments])
        function = ir.Function(ctx.module, signature, name=symbol)
    return ctx.builder.call(function, arguments)


@functools.cache
def _host_fuses_multiply_add() -> bool:
    """Whether NumPy's SIMD loops fuse multiply-adds on this host (see the module docstring)."""
    import llvmlite.binding as llvm

    from .target import host_cpu_features

    if llvm.get_process_triple().startswith(("aarch64", "arm64")):
        return True
    return "+fma" in host_cpu_features().split(",")


def multiply_add(ctx, fused: bool, a, b, c):
    """a*b + c, rounded once (`fused`) or twice."""
    if fused:
        return ctx.intrinsic("llvm.fma", a, b, c)
    return ctx.builder.fadd(ctx.builder.fmul(a, b), c)


def cpu_math(ctx, name: str, dtype, *arguments):
    """`name(*arguments)` for float32/float64 values (float16 is widened by the caller)."""
    if name == "fma":
        return multiply_add(ctx, _host_fuses_multiply_add(), *arguments)
    if name == "fmod":
        return ctx.builder.frem(*arguments)  # exact on the CPU (LLVM calls fmod where needed)
    polynomial = _polynomials().get((name, dtype.name))
    if polynomial is not None:
        return polynomial(ctx.builder, *arguments)
    return libm_call(ctx, name, dtype, *arguments)


def gpu_math(ctx, name: str, dtype, *arguments):
    """`name(*arguments)` on NVPTX: libdevice's `__nv_<name>[f]`, else a straight-line polynomial.
    fmod too: NVPTX lowers LLVM's `frem` to x - trunc(x / y) * y, whose rounded quotient is wrong
    for large |x / y| (float32 1e10 % 3 gives 256); libdevice's fmod is exact."""
    if name == "fma":
        return multiply_add(ctx, True, *arguments)
    if name == "hypot" and dtype == dtypes.float32:
        return _hypotf_in_double(ctx, *arguments)
    if name in _LIBM_NAMES:
        symbol = "__nv_" + _LIBM_NAMES[name] + ("f" if dtype == dtypes.float32 else "")
        function = ctx.module.globals.get(symbol)
        if function is None:
            signature = ir.FunctionType(arguments[0].type, [argument.type for argument in arguments])
            function = ir.Function(ctx.module, signature, name=symbol)
        return ctx.builder.call(function, arguments)
    polynomial = _polynomials().get((name, dtype.name))
    if polynomial is None or not polynomial.straight_line:
        raise NotImplementedError(f"no GPU implementation of {name} for {dtype}")
    return polynomial(ctx.builder, *arguments)


def _hypotf_in_double(ctx, x, y):
    """glibc's hypotf (sysdeps/ieee754/flt-32/e_hypotf.c): sqrt(x*x + y*y) in double, rounded to
    float32; an infinite argument gives inf, even beside a NaN. Both squares are exact in double,
    so this is NumPy's float32 hypot on Linux bit for bit (and complex64 `sign`, z / hypot(z)),
    where libdevice's __nv_hypotf is within 3 ulp of it and differed in the last bit."""
    builder, double = ctx.builder, ir.DoubleType()
    wide_x, wide_y = builder.fpext(x, double), builder.fpext(y, double)
    sum_of_squares = builder.fadd(builder.fmul(wide_x, wide_x), builder.fmul(wide_y, wide_y))
    result = builder.fptrunc(ctx.intrinsic("llvm.sqrt", sum_of_squares), x.type)
    infinity = ir.Constant(x.type, float("inf"))
    infinite = builder.or_(builder.fcmp_ordered("==", ctx.intrinsic("llvm.fabs", x), infinity),
                           builder.fcmp_ordered("==", ctx.intrinsic("llvm.fabs", y), infinity))
    return builder.select(infinite, infinity, result)
