"""Column reductions (`kernel.is_column_reduction`).

When the operand's innermost axis is kept (`x.sum(axis=0)` of a matrix: a bias gradient, a
column mean), the CPU kernel walks the reduced axes row by row, combining each row's tile of
contiguous elements into a tile of accumulators, so the inner loop vectorizes. These tests
check that path against NumPy for every reduction kind, dtypes with their edge values, reduced
and kept extents of zero, tiles and sum blocks cut short, the thread-pool split (outputs sliced
over threads), and the accuracy of long float sums (blocks of rows, as the other order).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lazyarr.backends.llvm.kernel import is_column_reduction
from lazyarr.compile import compile_module
from lazyarr.hlo import Computation, Module, make

_NUMPY = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
          "or": np.logical_or, "and": np.logical_and}
_KINDS = {np.bool_: ["or", "and", "max", "min"], np.int32: ["sum", "prod", "max", "min"],
          np.int8: ["sum", "max", "min"], np.float16: ["sum", "max", "min"], np.float32: ["sum", "max", "min"],
          np.float64: ["sum", "max", "min"]}


def _parameter(number, shape, dtype):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


@st.composite
def _cases(draw):
    """A shape whose last axis is kept with >= 4 elements, and some leading axes reduced."""
    ndim = draw(st.integers(2, 4))
    shape = tuple(draw(st.integers(0, 7)) for _ in range(ndim - 1)) + (draw(st.integers(4, 70)),)  # 64: a tile
    reduced = tuple(sorted(draw(st.sets(st.integers(0, ndim - 2), min_size=1))))
    dtype = draw(st.sampled_from(sorted(_KINDS, key=str)))
    kinds = _KINDS[dtype]
    if any(shape[axis] == 0 for axis in reduced):  # max/min of nothing is refused (no identity)
        kinds = [kind for kind in kinds if kind not in ("max", "min")]
    return shape, reduced, np.dtype(dtype), draw(st.sampled_from(kinds))


def _operand(rng, shape, dtype):
    """Values with the dtype's edge cases: NaN, inf and -0.0 for floats, extremes for ints."""
    if dtype == np.bool_:
        return rng.random(shape) < 0.7
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        values = rng.integers(-3, 4, shape).astype(dtype)
        edges = np.array([info.min, info.max, 0, -1], dtype)
    else:
        values = rng.standard_normal(shape).astype(dtype)
        edges = np.array([np.nan, np.inf, -np.inf, -0.0], dtype)
    chosen = rng.random(shape) < 0.05
    values[chosen] = rng.choice(edges, size=int(chosen.sum()))
    return values


def _run(shape, reduced, dtype, kind, x):
    """reduce(kind, dimensions=reduced) of `not x` / `-x`, so the operand is a fused producer."""
    parameter = _parameter(0, shape, dtype)
    operand = make("not" if dtype == np.bool_ else "negate", [parameter])
    root = make("reduce", [operand], kind=kind, dimensions=reduced)
    assert is_column_reduction(root) or root.size == 0  # (an empty kept axis: nothing to accumulate)
    executable = compile_module(Module("main", Computation("main", (parameter,), (root,))), "cpu")
    (result,) = executable.run([x])
    return result, (~x if dtype == np.bool_ else -x)


def _check(result, operand, reduced, dtype, kind):
    with np.errstate(all="ignore"):
        expected = _NUMPY[kind].reduce(operand, axis=reduced, dtype=dtype)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    if kind == "sum" and dtype.kind == "f":
        # Same terms, possibly in another order than NumPy's: within the recursive-summation
        # bound n * eps * sum|t| (Higham 4.3) of the exact (float64) sum, NaN and infinities
        # where NumPy has them. float16 accumulates in float32 and rounds once at the end, so
        # it is held to the exact sum, not to NumPy's (whose leading-axis sum of halves rounds
        # to half at every row and can be further off).
        count = int(np.prod([operand.shape[axis] for axis in reduced]))
        with np.errstate(all="ignore"):
            wide = operand.astype(np.float64)
            exact = np.add.reduce(wide, axis=reduced)
            magnitude = np.add.reduce(np.abs(wide), axis=reduced)
        bound = count * np.finfo(np.float32 if dtype == np.float16 else dtype).eps * magnitude
        if dtype == np.float16:
            bound = bound + np.finfo(np.float16).eps * np.abs(exact)
        np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
        finite = np.isfinite(expected)
        np.testing.assert_array_equal(result[~finite], expected[~finite])
        assert np.all(np.abs(result[finite].astype(np.float64) - exact[finite]) <= bound[finite])
    else:
        np.testing.assert_array_equal(result, expected)  # max/min/int/bool: exact (NaN where NumPy's)


@pytest.mark.usefixtures("cpu_backend")
@settings(max_examples=40, deadline=None)
@given(_cases(), st.integers(0, 2**32 - 1))
def test_column_reductions_match_numpy(case, seed):
    shape, reduced, dtype, kind = case
    result, operand = _run(shape, reduced, dtype, kind, _operand(np.random.default_rng(seed), shape, dtype))
    _check(result, operand, reduced, dtype, kind)


@pytest.mark.usefixtures("thread_pool_kernels")
@pytest.mark.parametrize("shape, reduced", [((300, 37), (0,)), ((5, 40, 33), (1,)), ((7, 9, 16), (0, 1))])
def test_column_reductions_split_over_threads(shape, reduced):
    """Output slices computed by different threads: every output element exactly once."""
    x = _operand(np.random.default_rng(1), shape, np.dtype(np.float64))
    for kind in ("sum", "max"):
        result, operand = _run(shape, reduced, np.dtype(np.float64), kind, x)
        _check(result, operand, reduced, np.dtype(np.float64), kind)


def test_which_reductions_are_column_reductions():
    def reduce(shape, dimensions, dtype=np.float32):
        return make("reduce", [_parameter(0, shape, dtype)], kind="sum", dimensions=dimensions)

    assert is_column_reduction(reduce((512, 128), (0,)))
    assert is_column_reduction(reduce((4, 5, 6), (0, 1)))
    assert not is_column_reduction(reduce((512, 128), (1,)))  # the contiguous axis is reduced
    assert not is_column_reduction(reduce((512, 3), (0,)))  # too few contiguous outputs
    assert is_column_reduction(reduce((512, 128), (0,), np.float16))  # accumulates in float32
    assert not is_column_reduction(reduce((512, 128), (0,), np.complex64))


@pytest.mark.usefixtures("cpu_backend")
@pytest.mark.parametrize("rows, columns", [(100_003, 70), (257, 129)])
def test_long_column_sums_add_blocks_of_rows(rows, columns):
    """Float sums of many rows add blocks of 256 rows first: the error stays within
    (256 + rows / 256) * eps * sum|t| (not rows * eps * sum|t|, the bound of one running total);
    the tiles of 64 columns and the last block are cut short here."""
    x = np.random.default_rng(2).standard_normal((rows, columns)).astype(np.float32)
    result, operand = _run(x.shape, (0,), np.dtype(np.float32), "sum", x)
    exact = operand.astype(np.float64).sum(axis=0)
    bound = (256 + rows / 256) * np.finfo(np.float32).eps * np.abs(operand.astype(np.float64)).sum(axis=0)
    assert np.all(np.abs(result - exact) <= bound)
