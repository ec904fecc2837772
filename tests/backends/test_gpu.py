"""The GPU backend on a real GPU, held to the interpreter and NumPy: the elementwise op table,
reductions of every kind (large ones take the split path), the differential fuzz test,
transfers and interop (CuPy arrays, __cuda_array_interface__, DLPack), devices that must not
mix, jit on GPU arrays, and dot through cuBLAS.

Every test here needs CuPy and a CUDA device; without them the module is skipped with the
GpuUnavailable message (what to install). Run the GPU suite with
`python -m pytest -m gpu -rs` (`-m pytest`, so that `tests.*` imports resolve).
PTX generation itself is checked everywhere, without a GPU, by test_gpu_codegen.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest


def _load_gpu_backend():
    """lazyarr.backends.gpu, or a module-level skip saying why it cannot load here."""
    try:
        import lazyarr.backends.gpu as gpu_backend
    except RuntimeError as error:
        if type(error).__name__ != "GpuUnavailable":
            raise
        pytest.skip(f"GpuUnavailable: {error}", allow_module_level=True)
    return gpu_backend


pytestmark = pytest.mark.gpu
gpu = _load_gpu_backend()
cupy = gpu.cupy

# Imported after the skip: `tests.*` resolves only under `python -m pytest` (rootdir on sys.path).
from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import lazyarr as la  # noqa: E402
from lazyarr import _flags, dtypes  # noqa: E402
from lazyarr.backends.cpu import HostStep  # noqa: E402
from lazyarr.backends.gpu_compile import DotStep, LaunchStep  # noqa: E402
from lazyarr.backends.llvm.elemental import COMPILED_DTYPES  # noqa: E402
from lazyarr.backends.llvm.gpu_kernel import launch_splits  # noqa: E402
from lazyarr.compile import compile_module  # noqa: E402
from lazyarr.hlo import Computation, Module, evaluate, make  # noqa: E402
from lazyarr.hlo.ops.reduce import REDUCE_KINDS  # noqa: E402
from lazyarr.shapes import resolve_shape  # noqa: E402
from tests.assertions import assert_identical  # noqa: E402
from tests.backends.test_cpu_elementwise import (  # noqa: E402
    CASES,
    LDEXP_DTYPES,
    SHAPE,
    ULP_TOLERANCE,
    assert_agrees,
    ldexp_case,
)
from tests.backends.test_cpu_fuzz import (  # noqa: E402
    TRANSCENDENTAL,
    check_random_graph,
    error_bound,
    magnitude,
    random_graphs,
)
from tests.strategies import arrays  # noqa: E402

COMPILED = sorted(COMPILED_DTYPES, key=lambda dtype: dtype.num)


def run_on_gpu(computation: Computation, values) -> list[np.ndarray]:
    """Compile `computation` for the GPU (symbolic sizes, as evaluation does), run it on
    `values`, and copy the results (CuPy arrays) back."""
    results = compile_module(Module("main", computation), "gpu").run(values)
    assert all(isinstance(result, cupy.ndarray) for result in results), [type(result) for result in results]
    return [cupy.asnumpy(result) for result in results]


def on_gpu(value) -> la.Array:
    """A lazy array holding `value` on the GPU (the one place tests choose a device)."""
    return la.asarray(value).to_device("gpu")


@pytest.fixture
def gpu_default():
    """The GPU as the default backend (graphs that read no buffers run there)."""
    previous = _flags.FLAGS.backend
    _flags.with_overrides(backend="gpu")
    yield
    _flags.with_overrides(backend=previous)


# ------------------------------------------------------------------ the elementwise op table

# The GPU computes transcendentals with libdevice; NumPy with its own loops. Each is within a
# documented number of ULP of the correctly rounded result, so they differ by at most the sum.
# libdevice (float32, float64): NVIDIA's CUDA C++ Programming Guide, appendix "Mathematical
# Functions", tables of maximum ULP error of the single- and double-precision standard
# functions (the libdevice user guide refers each __nv_* function there).
LIBDEVICE_ULP = {
    "exp": (2, 1), "exp2": (2, 1), "expm1": (1, 1), "log": (1, 1), "log2": (1, 1), "log10": (2, 1),
    "log1p": (1, 1), "sin": (2, 2), "cos": (2, 2), "tan": (4, 2), "asin": (2, 2), "acos": (2, 2),
    "atan": (2, 2), "sinh": (3, 2), "cosh": (2, 1), "tanh": (2, 1), "asinh": (3, 3), "acosh": (4, 3),
    "atanh": (3, 2), "cbrt": (1, 1), "atan2": (3, 2), "hypot": (3, 2), "power": (4, 2),
    # x + log1p(exp(y - x)) around the larger argument: exp's error (relative, so at most its
    # ULP in log1p's result), log1p's, and the final addition's half ULP.
    "logaddexp": (4, 3),
}
# NumPy (float32, float64): the maxima its accuracy test holds it to
# (numpy/_core/tests/data/umath-validation-set-<name>.csv, test_umath_accuracy.py); the
# binary functions have no data file and call the C library (glibc: within 2 ULP).
NUMPY_ULP = {
    "exp": (3, 1), "exp2": (2, 1), "expm1": (3, 1), "log": (4, 1), "log2": (3, 1), "log10": (4, 1),
    "log1p": (2, 1), "sin": (2, 1), "cos": (2, 1), "tan": (4, 1), "asin": (4, 1), "acos": (3, 1),
    "atan": (3, 1), "sinh": (2, 1), "cosh": (3, 1), "tanh": (2, 2), "asinh": (2, 1), "acosh": (2, 1),
    "atanh": (2, 1), "cbrt": (2, 2), "atan2": (2, 2), "hypot": (2, 2), "power": (2, 2), "logaddexp": (2, 2),
}
# The CPU table's 4 ULP where the documented maxima add up to no more; their sum where they
# exceed it (float16 goes through float32 and rounds: within 1 float16 ULP either way).
GPU_ULP_TOLERANCE = {
    name: max(tolerance, *(gpu_ulp + numpy_ulp for gpu_ulp, numpy_ulp in
                           zip(LIBDEVICE_ULP.get(name, (0, 0)), NUMPY_ULP.get(name, (0, 0)))))
    for name, tolerance in ULP_TOLERANCE.items()
}


def test_tolerances_cover_every_transcendental_of_the_cpu_table():
    assert set(ULP_TOLERANCE) <= set(LIBDEVICE_ULP) == set(NUMPY_ULP)


@pytest.mark.parametrize("name, arity, dtype", CASES, ids=[f"{n}-{d}" for n, _, d in CASES])
@settings(max_examples=max(settings().max_examples // 5, 6))  # as the CPU table: ~400 cases
@given(data=st.data())
def test_elementwise_op_matches_interpreter(name, arity, dtype, data):
    shape = data.draw(SHAPE)
    values = [data.draw(arrays(dtype, st.just(shape))) for _ in range(arity)]
    parameters = tuple(make("parameter", number=i, shape=shape, dtype=dtype) for i in range(arity))
    computation = Computation("main", parameters, (make(name, parameters),))
    (want,) = evaluate(computation, values)
    (got,) = run_on_gpu(computation, values)
    assert_agrees(name, got, want, GPU_ULP_TOLERANCE)


@pytest.mark.parametrize("dtype", LDEXP_DTYPES, ids=str)
@settings(max_examples=max(settings().max_examples // 5, 6))
@given(data=st.data())
def test_ldexp_matches_interpreter(dtype, data):
    computation, values = ldexp_case(data, dtype)
    (want,) = evaluate(computation, values)
    (got,) = run_on_gpu(computation, values)
    assert_agrees("ldexp", got, want)  # exact: multiplies by powers of two (no ftz on the GPU)


# ------------------------------------------------------------------------------- reductions

REDUCTIONS = [(kind, dtype) for kind, (_, accepted, _) in REDUCE_KINDS.items() for dtype in COMPILED
              if dtype in accepted]
# Large layouts that launch split reductions (few output elements over many reduced ones):
# the last-block combine, the scratch partials and the tickets all run.
LARGE_LAYOUTS = [
    ((10**6,), (0,)),          # row reduction to one element
    ((100000, 3), (0,)),       # column reduction: three columns of 10^5
    ((3, 100000), (1,)),       # row reduction: three rows of 10^5
    ((64, 2000, 5), (1,)),     # column reduction over the middle dimension
    ((1000, 1000), (0, 1)),    # everything
]


@st.composite
def reduction_layouts(draw):
    """(shape, reduced dimensions): small random ones (0-d, empty, size-1 dims, no dimension
    reduced) or one of LARGE_LAYOUTS."""
    if draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(LARGE_LAYOUTS))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=40))
    dimensions = draw(st.sets(st.integers(0, max(len(shape) - 1, 0)), max_size=len(shape)))
    return shape, tuple(sorted(dimensions))


def reduction_operand(kind, dtype, shape, seed: int, exact: bool, nan: bool) -> np.ndarray:
    """Values for `kind` over `shape` from a seed (hypothesis draws the seed: 10^6 elements
    drawn one by one would take minutes). `exact`: float sums and products whose partial
    results are all exact (small integers; powers of two), so that any order gives the same
    bits; otherwise uniform values. `nan`: one NaN at a random place (floats)."""
    generator = np.random.default_rng(seed)
    size = math.prod(shape)
    if dtype == dtypes.bool_:
        density = generator.choice([0.0, 0.001, 0.5, 0.999, 1.0])  # all, almost all, some, none
        return (generator.random(size) < density).reshape(shape)
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        if kind == "prod":  # odd factors: the wrapped product never collapses to 0
            values = generator.choice([1, 3] if info.min == 0 else [1, -1, 3, -3], size)
        else:  # the whole range: sums wrap as NumPy's do
            values = generator.integers(info.min, info.max, size, endpoint=True, dtype=dtype)
        return values.astype(dtype).reshape(shape)
    if kind == "sum":
        # |partial sums| <= 8 * 10^6 < 2^24: exact in float32 (and float16's float32 accumulator).
        values = generator.integers(-8, 8, size, endpoint=True) if exact else generator.uniform(-1, 1, size)
    elif kind == "prod":
        if exact:  # +-1, with about 200 factors of +-2 or +-1/2: exponents stay far from overflow
            factors = generator.choice([2.0, 0.5], size) * (generator.random(size) < min(1.0, 200 / max(size, 1)))
            values = np.where(factors == 0, 1.0, factors) * generator.choice([1.0, -1.0], size)
        else:
            values = generator.uniform(0.99, 1.01, size)
    else:
        values = generator.standard_normal(size) * 1000
    values = values.astype(dtype)
    if nan and size:
        values[generator.integers(size)] = np.nan
    return values.reshape(shape)


def reduce_with_numpy(kind, value, dimensions):
    """NumPy's reduction (the interpreter's reference). float16 sums and products: the float64
    result rounded once; NumPy itself rounds its float16 accumulator between inner loops (on
    every element for a column), an error that grows with the size and is not what the GPU
    (float32 accumulators) approximates."""
    function = REDUCE_KINDS[kind][0]
    if kind in ("sum", "prod"):
        if value.dtype == np.float16:
            return np.asarray(function(value.astype(np.float64), axis=dimensions)).astype(np.float16)
        return np.asarray(function(value, axis=dimensions, dtype=value.dtype))
    return np.asarray(function(value, axis=dimensions))


def reduction_bound(kind, value, dimensions, want) -> np.ndarray:
    """Largest |gpu - numpy| for a float sum or product of inexact values, per output element.
    Each side is within (n - 1) u sum|t| of the exact sum (recursive summation, any order:
    Higham 4.3; u = eps / 2), and within (n - 1) u |p| of the exact product, so they differ
    by at most twice that. float16 accumulates in float32 and rounds once at the end."""
    terms = math.prod(value.shape[axis] for axis in dimensions)
    wide = value.astype(np.float64)
    accumulate = np.float32 if value.dtype == np.float16 else value.dtype
    eps = float(np.finfo(accumulate).eps)
    if kind == "sum":
        bound = max(terms - 1, 0) * eps * np.sum(np.abs(wide), axis=dimensions)
    else:
        bound = max(terms - 1, 0) * eps * np.abs(want.astype(np.float64))
    if value.dtype == np.float16:
        bound = bound + float(np.finfo(np.float16).eps) * np.abs(want.astype(np.float64))
    return bound


@pytest.mark.parametrize("kind, dtype", REDUCTIONS, ids=[f"{kind}-{dtype}" for kind, dtype in REDUCTIONS])
@settings(max_examples=12)  # each example may be 10^6 elements: ~50 cases x 12
@given(layout=reduction_layouts(), seed=st.integers(0, 2**32 - 1), exact=st.booleans(), nan=st.booleans())
def test_reduction_matches_numpy(kind, dtype, layout, seed, exact, nan):
    shape, dimensions = layout
    has_identity = REDUCE_KINDS[kind][2]
    assume(has_identity or all(shape[axis] for axis in dimensions))  # NumPy refuses max of nothing
    value = reduction_operand(kind, dtype, shape, seed, exact, nan)
    parameter = make("parameter", number=0, shape=shape, dtype=dtype)
    computation = Computation("main", (parameter,), (make("reduce", [parameter], dimensions=dimensions, kind=kind),))
    (got,) = run_on_gpu(computation, [value])
    want = reduce_with_numpy(kind, value, dimensions)
    inexact = dtypes.is_floating(dtype) and kind in ("sum", "prod") and not exact
    if not inexact:
        # Exact data, integers (wrapping sums and products are exact in any order), bool, and
        # max/min: identical bits, NaN where NumPy has NaN, +0.0 for sums of -0.0 as NumPy.
        assert_identical(got, want)
        return
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    numbers = ~np.isnan(want)
    excess = np.abs(got[numbers].astype(np.float64) - want[numbers]) - reduction_bound(
        kind, value, dimensions, want)[numbers]
    assert excess.max(initial=0.0) <= 0.0, f"off by {excess.max()} beyond the reassociation bound"


def split_steps(shape, dimensions, dtype=np.float32):
    """The reduction launches of sum(x over dimensions) on this GPU, and their splits."""
    parameter = make("parameter", number=0, shape=shape, dtype=np.dtype(dtype))
    module = Module("main", Computation("main", (parameter,), (
        make("reduce", [parameter], dimensions=dimensions, kind="sum"),)))
    executable = compile_module(module, "gpu")
    sizes = getattr(executable, "sizes", ())
    found = []
    for step in executable.program.steps:
        if isinstance(step, LaunchStep) and step.plan.kind != "loop":
            real = resolve_shape(step.plan.shape, sizes)
            kept = math.prod(size for axis, size in enumerate(real) if axis not in step.plan.reduced)
            reduced = math.prod(real[axis] for axis in step.plan.reduced)
            found.append((step.plan.kind, launch_splits(step.plan, kept, reduced, gpu.current_device().sm_count)[1]))
    return executable, found


@pytest.mark.parametrize("shape, dimensions", LARGE_LAYOUTS, ids=str)
def test_large_layouts_take_the_split_path(shape, dimensions):
    """The large layouts above do exercise split reductions on this GPU (a change of the launch
    heuristic that stops them from splitting would leave that path untested)."""
    _, found = split_steps(shape, dimensions)
    assert len(found) == 1 and found[0][1] > 1, found


@pytest.mark.parametrize("shape, dimensions", LARGE_LAYOUTS[:3], ids=str)
def test_split_reductions_are_deterministic(shape, dimensions):
    """Partials are combined in a fixed order by the last block: the same bits every run."""
    executable, _ = split_steps(shape, dimensions)
    value = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    first = cupy.asnumpy(executable.run([value])[0])
    for _ in range(3):
        np.testing.assert_array_equal(cupy.asnumpy(executable.run([value])[0]), first, strict=True)


# ------------------------------------------------------------------------ differential fuzz


def gpu_error_bound(node, values, bounds):
    """test_cpu_fuzz's error bound, with libdevice's documented errors for transcendentals of
    exact operands: up to 4 ULP (tan, pow, acosh in float32) beside NumPy's up to 4, so
    8 eps |out| in place of the CPU's 4 (eps |x| >= ulp(x))."""
    bound = error_bound(node, values, bounds)
    if node.opcode in TRANSCENDENTAL and dtypes.is_floating(node.dtype):
        eps = float(np.finfo(node.dtype).eps)
        bound += 4 * eps * magnitude(values[id(node)])
    return bound


@settings(deadline=None)  # the profile sets the size, as in test_cpu_fuzz
@given(random_graphs())
def test_gpu_backend_matches_the_evaluator_on_random_graphs(graph):
    check_random_graph(graph, run_on_gpu, "gpu", bound=gpu_error_bound)


# ------------------------------------------------------------------- transfers and interop

TRANSFER_SHAPES = [(), (0,), (1,), (7,), (3, 0, 2), (5, 17)]


@pytest.mark.parametrize("dtype", COMPILED, ids=str)
@pytest.mark.parametrize("shape", TRANSFER_SHAPES, ids=str)
def test_to_device_round_trips(dtype, shape):
    value = (np.arange(math.prod(shape)) % 7 - 3).astype(dtype).reshape(shape)
    there = on_gpu(value)
    assert there.device == "gpu"
    assert there.shape == shape and there.dtype == dtype
    back = there.to_device("cpu")
    assert back.device == "cpu"
    assert_identical(back.numpy(), value)
    assert_identical(there.numpy(), value)  # .numpy() copies to the host too


def test_results_are_cupy_arrays_on_the_gpu():
    parameter = make("parameter", number=0, shape=(4, 5), dtype=np.dtype(np.float32))
    computation = Computation("main", (parameter,), (make("exp", [parameter]),
                                                     make("reduce", [parameter], dimensions=(1,), kind="sum")))
    results = compile_module(Module("main", computation), "gpu").run([np.ones((4, 5), np.float32)])
    assert [type(result) for result in results] == [cupy.ndarray, cupy.ndarray]
    assert [result.shape for result in results] == [(4, 5), (4,)]
    lazy = (on_gpu(np.arange(6.0)) * 2.5).eval()
    assert lazy.device == "gpu"
    assert isinstance(cupy.asarray(lazy), cupy.ndarray)


def test_cuda_array_interface_describes_the_device_buffer():
    value = np.arange(12, dtype=np.float32).reshape(3, 4)
    result = (on_gpu(value) + 1).eval()
    interface = result.__cuda_array_interface__
    assert interface["shape"] == (3, 4)
    assert np.dtype(interface["typestr"]) == np.float32
    assert interface["data"][0] != 0
    view = cupy.asarray(result)  # CuPy reads __cuda_array_interface__: a view, no copy
    assert view.data.ptr == interface["data"][0]
    np.testing.assert_array_equal(cupy.asnumpy(view), value + 1)
    assert not hasattr(la.asarray(value), "__cuda_array_interface__")  # host arrays have none


def test_dlpack_hands_cupy_the_device_memory_without_a_copy():
    value = np.linspace(-1, 1, 10, dtype=np.float64)
    result = (on_gpu(value) * 3).eval()
    assert result.__dlpack_device__()[0] == 2  # kDLCUDA
    imported = cupy.from_dlpack(result)
    assert imported.data.ptr == result.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(cupy.asnumpy(imported), value * 3)


def test_cupy_arrays_stay_on_the_gpu():
    source = cupy.arange(10, dtype=cupy.float32)
    copied, imported = la.asarray(source), la.from_dlpack(source)
    for lazy in (copied, imported):
        assert lazy.device == "gpu"
        np.testing.assert_array_equal((lazy * 2).numpy(), np.arange(10, dtype=np.float32) * 2)
    source[0] = 100  # lazy arrays hold a private copy: later writes do not reach them
    assert copied.numpy()[0] == 0 and imported.numpy()[0] == 0
    assert la.asarray(source).numpy()[0] == 100


def test_arrays_on_two_devices_do_not_mix():
    host, device = la.asarray(np.ones(3)), on_gpu(np.ones(3))
    with pytest.raises(ValueError, match="different devices"):
        (host + device).eval()
    # Scalars and host 0-d arrays go with any device, as NumPy scalars do.
    assert_identical((device * np.float64(2.5) + 1.5).numpy(), np.full(3, 4.0))


def test_graphs_without_buffers_run_on_the_default_gpu(gpu_default):
    total = la.arange(12.0).reshape(3, 4).sum(axis=1)
    assert total.device == "gpu"
    assert_identical(total.numpy(), np.arange(12.0).reshape(3, 4).sum(axis=1))  # exact partial sums


# ------------------------------------------------------------------------------------ jit


def test_jit_runs_on_gpu_arrays_and_keeps_results_there():
    @la.jit
    def affine_exp(x, y):
        return la.exp(x) * y + 1

    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    y = np.linspace(3, 4, 1000, dtype=np.float32)
    result = affine_exp(on_gpu(x), on_gpu(y))
    assert result.device == "gpu" and result.dtype == np.float32
    # exp within 2 ULP (libdevice) and NumPy's within 3; the multiply and add round once each.
    np.testing.assert_allclose(result.numpy(), np.exp(x) * y + 1, rtol=8 * np.finfo(np.float32).eps)
    again = affine_exp(on_gpu(y), on_gpu(x))  # same signature: the cached executable
    assert again.device == "gpu"
    np.testing.assert_allclose(again.numpy(), np.exp(y) * x + 1, rtol=8 * np.finfo(np.float32).eps)
    assert affine_exp.cache_size() == 1


# ------------------------------------------------------------------------------- cuBLAS dot

DOT_SHAPES = [((64, 48), (48, 32)), ((48,), (48, 5)), ((7, 48), (48,)), ((48,), (48,)), ((3, 4, 5), (3, 5, 2))]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=str)
@pytest.mark.parametrize("shapes", DOT_SHAPES, ids=str)
def test_matmul_through_cublas_matches_numpy(dtype, shapes):
    generator = np.random.default_rng(1)
    left, right = (generator.uniform(-1, 1, shape).astype(dtype) for shape in shapes)
    result = la.matmul(on_gpu(left), on_gpu(right))
    want = np.matmul(left, right)
    got = result.numpy()
    assert got.shape == want.shape and got.dtype == want.dtype
    # Each side within k u (|a| @ |b|) of the exact products' sum (any summation order), so
    # they differ by at most k eps (|a| @ |b|).
    terms = shapes[0][-1]
    bound = terms * float(np.finfo(dtype).eps) * np.matmul(np.abs(left.astype(np.float64)), np.abs(right))
    assert (np.abs(got.astype(np.float64) - want) <= bound).all()


@pytest.mark.parametrize("dtype, step", [(np.float32, DotStep), (np.float64, DotStep), (np.int32, HostStep)])
def test_float_dots_go_to_cublas(dtype, step):
    lhs = make("parameter", number=0, shape=(6, 4), dtype=np.dtype(dtype))
    rhs = make("parameter", number=1, shape=(4, 3), dtype=np.dtype(dtype))
    dot = make("dot", [lhs, rhs], lhs_batch=(), rhs_batch=(), lhs_contracting=(1,), rhs_contracting=(0,))
    executable = compile_module(Module("main", Computation("main", (lhs, rhs), (dot,))), "gpu")
    assert [type(item) for item in executable.program.steps] == [step]
    left, right = np.arange(24).reshape(6, 4).astype(dtype), np.arange(12).reshape(4, 3).astype(dtype)
    (got,) = executable.run([left, right])
    assert_identical(cupy.asnumpy(got), left @ right)  # small integers: exact in any order


# ------------------------------------------- found on the first run on a GPU (an H100, CuPy 14)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32])
def test_shifts_by_more_than_32_bits_of_amount_give_numpy_results(dtype):
    """NVPTX's `shl`/`shr` take a 32-bit amount: LLVM folded `b < width ? x << b : 0` into one
    shift of b's low half, so 1 << 2**32 gave 1. Amounts at and past the width, in both halves."""
    width = np.dtype(dtype).itemsize * 8
    amounts = np.array([0, 1, width - 1, width, width + 1, 2**31, 2**32 % 2**width, 2**32 + 1, 2**63 - 1]
                       if width == 64 else [0, 1, width - 1, width, width + 1, 2**31 - 1], dtype)
    values = np.full(amounts.shape, 5, dtype)
    x, b = on_gpu(values), on_gpu(amounts)
    np.testing.assert_array_equal(np.asarray(x << b), np.left_shift(values, amounts))
    np.testing.assert_array_equal(np.asarray(x >> b), np.right_shift(values, amounts))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_negative_zero_survives_the_copy_to_the_gpu(dtype):
    """`cupy.asarray` of a 0-d -0.0 gave +0.0 (its fill clears memory for values == 0): host
    arrays, lifted scalars and host-step results now reach the device byte for byte."""
    zero = np.array(-0.0, dtype)
    assert np.signbit(np.asarray(on_gpu(zero)))
    assert np.signbit(np.asarray(on_gpu(np.ones((), dtype)) * zero))  # a host 0-d operand
    assert np.asarray(on_gpu(np.ones(3, dtype)) / zero).tolist() == [-np.inf] * 3


@given(dtype=st.sampled_from([np.int32, np.float32, np.float64]), data=st.data())
def test_scans_on_gpu_arrays_match_numpy(dtype, data):
    """cumsum/cumprod of GPU arrays (run as host steps: the GPU skeletons have no scan)."""
    value = data.draw(arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, max_side=5)))
    axis = data.draw(st.integers(0, value.ndim - 1)) if value.ndim else None
    for name in ("cumsum", "cumprod"):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(value, axis=axis)
        got = getattr(la, name)(on_gpu(value) * 1, axis=axis)  # a kernel first; * 1 keeps -0.0
        assert got.device == "gpu"
        assert_identical(np.asarray(got), want)


def test_explain_reports_the_backend_of_the_arrays_device():
    report = la.explain(on_gpu(np.arange(4.0)) * 2)
    assert report.backend == "gpu" and report.num_kernels == 1 and ".entry" in report.ptx


ROW_SHAPES = st.tuples(st.integers(1, 3), st.integers(1, 40), st.integers(0, 700)).map(
    lambda sizes: sizes[1:] if sizes[0] == 1 else sizes)  # 2-d and 3-d; rows shorter and longer than a block


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's mean of an empty row warns
@settings(max_examples=max(settings().max_examples // 2, 10))
@given(shape=ROW_SHAPES, seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from([np.float32, np.float64]))
def test_row_kernels_match_numpy(shape, seed, dtype):
    """softmax, layernorm (with its mean as a second output) and x / ||x|| over the last axis:
    one "rows" kernel each (a block per row). Tolerances: the row's sums are combined in another
    order than NumPy's pairwise sum (n * eps relative, n <= 700) and libdevice's exp is within
    2 ULP; 1e-4 (float32) and 1e-12 (float64) relative to the row's scale cover both."""
    x = (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)
    tolerance = 1e-4 if dtype == np.float32 else 1e-12
    device = on_gpu(x)
    if x.shape[-1]:  # max of an empty row raises, as NumPy's
        shifted = np.exp(x - x.max(axis=-1, keepdims=True))
        softmax = la.exp(device - device.max(axis=-1, keepdims=True))
        softmax = softmax / softmax.sum(axis=-1, keepdims=True)
        np.testing.assert_allclose(np.asarray(softmax), shifted / shifted.sum(axis=-1, keepdims=True),
                                   rtol=tolerance, atol=tolerance * 1e-3)
    mean = device.mean(axis=-1, keepdims=True)
    normalized = (device - mean) / la.sqrt(device.var(axis=-1, keepdims=True) + 1e-5)
    got_normalized, got_mean = la.eval(normalized, mean)
    with np.errstate(all="ignore"):
        want_mean = x.mean(axis=-1, keepdims=True)
        want = (x - want_mean) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
        scale = np.abs(x).max(initial=1.0) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(np.asarray(got_mean), want_mean, rtol=tolerance,
                               atol=tolerance * np.abs(x).max(initial=1))
    assert np.all(np.abs(np.asarray(got_normalized) - want) <= tolerance * scale) or not x.size
    norm = device / la.sqrt((device * device).sum(axis=-1, keepdims=True))
    with np.errstate(all="ignore"):
        want_norm = x / np.sqrt((x * x).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(norm), want_norm, rtol=tolerance, atol=tolerance * 1e-3)


def test_softmax_on_the_gpu_is_one_row_kernel():
    x = on_gpu(np.random.default_rng(0).standard_normal((300, 1000)).astype(np.float32))
    exponentials = la.exp(x - x.max(axis=-1, keepdims=True))
    assert la.explain(exponentials / exponentials.sum(axis=-1, keepdims=True)).num_kernels == 1


def test_scalar_arguments_are_copied_once_and_never_shared_with_callers():
    """0-d host arguments (lifted Python scalars) reach the device once per value and are reused
    by later runs; a module that returns one gives the caller a copy of its own."""
    parameter = make("parameter", number=0, shape=(), dtype=dtypes.float64)
    executable = compile_module(Module("main", Computation("main", (parameter,), (parameter,))), "gpu")
    (first,) = executable.run([np.array(0.7)])
    first[...] = 5.0  # a caller writing into its result
    (second,) = executable.run([np.array(0.7)])
    assert second is not first and float(second) == 0.7
    x = on_gpu(np.arange(3.0))
    for scale in (0.25, 0.75, 0.25):
        np.testing.assert_array_equal(np.asarray(x * scale + 0.125), np.arange(3.0) * scale + 0.125)
