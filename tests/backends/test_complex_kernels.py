"""complex64/complex128 arithmetic compiled into CPU kernels, held to NumPy bit for bit.

lazyarr/backends/llvm/complex_ops.py replicates NumPy's loops operation for operation (its
multiply's fused multiply-adds included, on hosts where NumPy fuses them), so every check here
is exact: both parts of every element equal NumPy's, NaN in the same parts, zeros of the same
sign (NaN payloads and signs are not compared: IEEE 754 leaves them unspecified). No tolerance
is needed anywhere. Each table compiles one module per dtype and shape (many ops as outputs of
one computation) to keep the compile count, and the suite's time, small.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyarr as la
from lazyarr import dtypes
from lazyarr.backends.slots import HostStep
from lazyarr.compile import compile_module
from lazyarr.hlo import Computation, Module, evaluate, make
from lazyarr.hlo.text import parse
from tests.assertions import assert_identical
from tests.strategies import edge_values

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"), pytest.mark.usefixtures("cpu_backend")]

COMPLEX = [dtypes.complex64, dtypes.complex128]
UNARY = ["negate", "conj", "real", "imag", "abs", "sign", "reciprocal", "is-nan", "is-inf", "is-finite"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "fmax", "fmin"]
DIRECTIONS = ["EQ", "NE", "LT", "LE", "GT", "GE"]
# Fixed shapes, so that each (dtype, shape) compiles once: 0-d, a vector tail, a 3-d nest.
SHAPES = [(), (5,), (2, 3, 17)]


def part_values(dtype) -> list[float]:
    """Parts that break naive complex arithmetic: 0, -0.0, +-inf, NaN, the largest and the
    smallest (subnormal) magnitudes, and ordinary numbers."""
    real = np.dtype(dtypes.real_dtype(np.dtype(dtype)))
    return [float(value) for value in edge_values(real)] + [-2.5, 3.0, 0.1]


def complex_elements(dtype):
    """Elements with each part drawn on its own: any float of the part dtype (large magnitudes
    included) or an edge value."""
    real = np.dtype(dtypes.real_dtype(np.dtype(dtype)))
    part = st.one_of(hnp.from_dtype(real, allow_nan=True, allow_infinity=True, allow_subnormal=True),
                     st.sampled_from(part_values(dtype)))
    return st.builds(lambda re, im: _complex_of(dtype, re, im), part, part)


def _complex_of(dtype, real_part, imaginary_part):
    value = np.zeros((), dtype)
    value.real, value.imag = real_part, imaginary_part  # no arithmetic: -0.0, inf and NaN parts kept
    return value[()]


def complex_arrays(dtype, shape):
    return hnp.arrays(np.dtype(dtype), shape, elements=complex_elements(dtype))


def assert_exact(got, want, label=""):
    """Shape, dtype, then each part as a float array: equal, NaN in the same places, zeros of
    the same sign (a complex NaN check alone would let (nan, inf) pass for (nan, nan))."""
    assert got.shape == want.shape, label
    assert got.dtype == want.dtype, label
    if dtypes.is_complex(want.dtype):
        for part in ("real", "imag"):
            assert_identical(np.ascontiguousarray(getattr(got, part)), np.ascontiguousarray(getattr(want, part)))
    else:
        assert_identical(got, want)


def compiled(computation):
    """The CPU executable of `computation`, after checking that nothing runs on the host."""
    executable = compile_module(Module("main", computation), "cpu")
    host = [step.instruction.opcode for step in executable.steps if isinstance(step, HostStep)]
    assert host == [], f"ran on the host instead of in a kernel: {host}"
    return executable


def run_table(computation, labels, values):
    want = evaluate(computation, values)  # the interpreter: NumPy's own loops
    got = compiled(computation).run(values)
    for label, got_one, want_one in zip(labels, got, want):
        try:
            assert_exact(got_one, want_one, label)
        except AssertionError as error:
            raise AssertionError(f"{label}: {error}") from None


def parameters(*specs):
    return tuple(make("parameter", number=number, shape=shape, dtype=np.dtype(dtype))
                 for number, (shape, dtype) in enumerate(specs))


# ------------------------------------------------------------------- ops against NumPy


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@settings(max_examples=12)  # x 3 shapes x 2 dtypes; each example holds every op
@given(data=st.data())
def test_elementwise_ops_match_numpy(dtype, data):
    shape = data.draw(st.sampled_from(SHAPES))
    left, right = data.draw(complex_arrays(dtype, shape)), data.draw(complex_arrays(dtype, shape))
    a, b = parameters((shape, dtype), (shape, dtype))
    outputs = [make(name, [a]) for name in UNARY] + [make(name, [a, b]) for name in BINARY]
    outputs += [make("compare", [a, b], direction=direction) for direction in DIRECTIONS]
    labels = UNARY + BINARY + [f"compare {direction}" for direction in DIRECTIONS]
    run_table(Computation("main", (a, b), tuple(outputs)), labels, [left, right])


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_every_pair_of_edge_values(dtype):
    """Every pair of complex numbers whose parts are edge values (0, -0.0, +-inf, NaN, the
    extremes): multiply's and divide's special cases, division by zero (x/0 -> +-inf parts,
    0/0 -> NaN, as NumPy divides each part by |0|), abs's inf-beats-NaN, compared with NumPy's
    ufuncs directly (contiguous arrays: NumPy's SIMD loops)."""
    values = np.array([_complex_of(dtype, re, im) for re in part_values(dtype) for im in part_values(dtype)])
    left, right = np.repeat(values, values.size), np.tile(values, values.size)
    a, b = parameters((left.shape, dtype), (left.shape, dtype))
    computation = Computation("main", (a, b), tuple(make(name, [a, b]) for name in ("multiply", "divide", "add")))
    got = compiled(computation).run([left, right])
    with np.errstate(all="ignore"):
        for result, want, name in zip(got, (left * right, left / right, left + right), ("multiply", "divide", "add")):
            assert_exact(result, want, name)
    (operand,) = parameters((values.shape, dtype))
    functions = {"abs": np.abs, "sign": np.sign, "reciprocal": np.reciprocal, "negate": np.negative}
    computation = Computation("main", (operand,), tuple(make(name, [operand]) for name in functions))
    with np.errstate(all="ignore"):
        for result, (name, function) in zip(compiled(computation).run([values]), functions.items()):
            assert_exact(result, function(values), name)


def test_division_by_zero_as_numpy():
    """NumPy divides each part by |0|: (1+1j)/0 = inf+infj, (-1+0j)/0 = -inf+nanj, 0/0 = nan+nanj."""
    dividend = np.array([1 + 1j, -1 + 0j, 0j, complex(-0.0, 2.0), complex(np.nan, 1.0)], np.complex64)
    for zero in (complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0)):
        divisor = np.full(dividend.shape, zero, np.complex64)
        with np.errstate(all="ignore"):
            assert_exact(np.asarray(la.asarray(dividend) / la.asarray(divisor)), dividend / divisor)


def test_multiply_rounds_as_numpy():
    """NumPy's SIMD multiply fuses a product into each part's sum where the host has FMA; the
    plain formula rounds differently for about a quarter of random complex64 products, so this
    tells the two apart (and checks the one the host's NumPy uses)."""
    generator = np.random.default_rng(7)
    left, right = (generator.standard_normal((3, 4098)).astype(np.float32).view(np.complex64) for _ in range(2))
    for a, b in ((left, right), (left[0], right[0, 5]), (left[:, None, :5], right[None, :, :5])):  # broadcasts
        assert_exact(np.asarray(la.asarray(a) * la.asarray(b)), a * b)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_select_and_complex_from_parts(dtype):
    real = np.dtype(dtypes.real_dtype(np.dtype(dtype)))
    parts = np.array(part_values(dtype), real)
    left, right = parts[:, None], parts[None, :]
    shape = (parts.size, parts.size)
    re, im, predicate, a, b = parameters(
        (shape, real), (shape, real), (shape, np.bool_), (shape, dtype), (shape, dtype))
    outputs = (make("complex", [re, im]), make("select", [predicate, a, b]))
    values = [np.broadcast_to(left, shape).copy(), np.broadcast_to(right, shape).copy(),
              (np.arange(parts.size ** 2) % 3 == 0).reshape(shape), np.vectorize(_complex_of, otypes=[dtype])(
                  dtype, left, right), np.vectorize(_complex_of, otypes=[dtype])(dtype, right, left)]
    run_table(Computation("main", (re, im, predicate, a, b), outputs), ["complex", "select"], values)


@pytest.mark.parametrize("source", list(dtypes.ALL), ids=str)
def test_converts_to_and_from_complex(source):
    """astype between complex and every dtype, complex64 <-> complex128 included: real -> complex
    gives a +0.0 imaginary part, complex -> bool is "either part nonzero", complex -> real or
    integer converts the real part (NumPy's values; the interpreter's rule for integers)."""
    source = np.dtype(source)
    if dtypes.is_complex(source):
        values = np.array([_complex_of(source, re, im) for re in part_values(source) for im in (0.0, -0.0, 1.5)])
        targets = [np.dtype(target) for target in dtypes.ALL if target != source]
    elif source == np.bool_:
        values, targets = np.array([True, False]), COMPLEX
    elif source.kind == "f":
        values, targets = np.array(part_values(np.complex128), np.float64).astype(source), COMPLEX
    else:
        info = np.iinfo(source)
        values, targets = np.array([0, 1, info.min, info.max, info.max // 3], source), COMPLEX
    (operand,) = parameters((values.shape, source))
    outputs = []
    for target in targets:
        if dtypes.is_complex(source) and target.kind in "iu":
            continue  # complex -> integer: below, on values whose real part converts
        outputs.append(make("convert", [operand], dtype=target))
    run_table(Computation("main", (operand,), tuple(outputs)),
              [f"{source}->{node.dtype}" for node in outputs], [values])
    if dtypes.is_complex(source):
        finite = values[np.isfinite(values.real) & (np.abs(values.real) < 100)]
        (operand,) = parameters((finite.shape, source))
        outputs = tuple(make("convert", [operand], dtype=np.dtype(t)) for t in dtypes.INTEGER)
        run_table(Computation("main", (operand,), outputs), [str(node.dtype) for node in outputs], [finite])


# ----------------------------------------------------------- broadcasting and promotion


OPERATIONS = {
    "a * b": lambda a, b: a * b,
    "a / b": lambda a, b: a / b,
    "a + b - a": lambda a, b: a + b - a,
    "where(|a| > 1, a*a + b, a)": lambda a, b, xp=np: xp.where(abs(a) > 1, a * a + b, a),
    "a.real * b.imag + abs(b)": lambda a, b: a.real * b.imag + abs(b),
    "conj(a) == b": lambda a, b: a.conj() == b,
    "-a * 2.0 + 1j": lambda a, b: -a * 2.0 + 1j,
}


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
@pytest.mark.parametrize("name", list(OPERATIONS))
@settings(max_examples=6)
@given(data=st.data())
def test_broadcast_expressions_match_numpy(dtype, name, data):
    """NumPy expressions on lazy arrays of broadcast shapes, with Python scalars (weak: the
    dtype stays) and NumPy's promotion; NumPy runs them on the same (broadcast) inputs."""
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1,
                                                         max_side=4)).input_shapes
    left, right = (data.draw(complex_arrays(dtype, shape)) for shape in shapes)
    function = OPERATIONS[name]
    with np.errstate(all="ignore"):
        want = function(left, right)
    assert_exact(np.asarray(function(la.asarray(left), la.asarray(right))), want, name)


def test_promotion_with_real_and_integer_arrays():
    generator = np.random.default_rng(3)
    z = generator.standard_normal((4, 6)).astype(np.float32).view(np.complex64)  # (4, 3)
    floats = generator.standard_normal(3).astype(np.float32)
    integers = np.arange(-4, 8).reshape(4, 3)
    halves = generator.standard_normal((1, 3)).astype(np.float16)
    for function in (lambda z, f, i, h: z * f + i, lambda z, f, i, h: z / i, lambda z, f, i, h: (z - h) * 1.5,
                     lambda z, f, i, h: z.astype(np.complex128) * f):
        with np.errstate(all="ignore"):
            want = function(z, floats, integers, halves)
        lazy = [la.asarray(value) for value in (z, floats, integers, halves)]
        assert_exact(np.asarray(function(*lazy)), want)


# ------------------------------------------------------------------ what stays on the host


def test_unsupported_complex_ops_run_on_the_host_and_say_why():
    """sqrt and the other complex transcendental functions, and complex reductions, are left to
    NumPy on the host; the fusion report names them."""
    z = np.array([1 + 2j, -3 - 0.5j, 4j], np.complex64)
    lazy = la.asarray(z)
    result = la.sqrt(lazy * 2) + la.sum(lazy)
    report = la.explain(result)
    reasons = " ".join(str(decision) for _, _, decision in report.fusion_decisions)
    assert "sqrt on complex64, which runs on the host" in reasons
    assert_exact(np.asarray(result), np.sqrt(z * 2) + np.sum(z))


def test_empty_complex_arrays():
    empty = np.zeros((0, 3), np.complex128)
    assert_exact(np.asarray(la.asarray(empty) * 2 + la.asarray(empty)), empty * 2 + empty)


# ---------------------------------------------------------------------------- Mandelbrot


def _program_kernels():
    """benchmarks/program_kernels.py (the whole programs), loaded from its file.

    The module puts benchmarks/ first on sys.path to find its sibling `workloads`; the path is put
    back afterwards, or benchmarks/dask.py would shadow the real `dask` package for every later
    import in the test session (scikit-learn's estimator discovery imports it).
    """
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "program_kernels.py"
    spec = importlib.util.spec_from_file_location("program_kernels", path)
    module = importlib.util.module_from_spec(spec)
    saved_path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = saved_path
    return module


mandelbrot = _program_kernels().mandelbrot  # complex64, `where`: the programs benchmark's own code


def test_mandelbrot_compiles_into_kernels():
    """The whole recorded loop runs as kernels: no complex op is a host step any more (each was
    one NumPy pass and one allocation), and the results are NumPy's bit for bit."""
    x, y = np.linspace(-2, 1, 40), np.linspace(-1.5, 1.5, 30)
    c = (x[None, :] + 1j * y[:, None]).astype(np.complex64)
    counts, z = mandelbrot(la, la.asarray(c), 6)
    module = parse(la.hlo_text(counts, z))
    executable = compile_module(module, "cpu")
    assert not any(isinstance(step, HostStep) for step in executable.steps)
    want_counts, want_z = mandelbrot(np, c, 6)
    assert_exact(np.asarray(counts), want_counts)
    assert_exact(np.asarray(z), want_z)


# --------------------------------------------------------------------------------- PTX


def test_complex_kernels_assemble_for_the_gpu():
    """The GPU backend compiles complex ops with the same emitter; its PTX assembles (ptxas)."""
    from lazyarr.backends.gpu_compile import compile_program
    from lazyarr.backends.llvm.nvptx import assemble, ptxas_path

    if ptxas_path() is None:
        pytest.skip("ptxas is not installed (it comes with the CUDA toolkit)")
    nodes, outputs = [], []
    for dtype in COMPLEX:
        a, b, f = (make("parameter", number=len(nodes) + k, shape=(5, 7), dtype=np.dtype(kind))
                   for k, kind in enumerate((dtype, dtype, dtypes.real_dtype(dtype))))
        nodes += [a, b, f]
        outputs += [make(name, [a]) for name in UNARY] + [make(name, [a, b]) for name in BINARY]
        outputs += [make("compare", [a, b], direction="LT"), make("complex", [f, f]),
                    make("convert", [f], dtype=dtype), make("convert", [a], dtype=np.int32),
                    make("select", [make("compare", [f, f], direction="LT"), a, b])]
    program = compile_program(Module("complex", Computation("complex", tuple(nodes), tuple(outputs))), "sm_90")
    assert not any(isinstance(step, HostStep) for step in program.steps)
    assemble(program.ptx, "sm_90")
    assert "fma.rn.f32" in program.ptx and "fma.rn.f64" in program.ptx  # multiply, as NumPy's FMA loops
