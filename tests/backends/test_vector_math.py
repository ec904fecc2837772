"""C-library math functions through glibc's libmvec (backends/llvm/vector_math.py).

Where libmvec is found, a kernel computing tan, arcsin, arccos, arctan, sinh, cosh, arctan2 or
power calls libmvec's vector functions instead of one scalar call per element. Checked: the
compiled kernel calls them; results on random inputs of many lengths (the 16-wide wrapper, the
8- and 4-wide functions and the scalar remainder all run) are within the 4 ULP that C-library
functions are held to (test_llvm_math.py) of the correctly rounded result, for float32 and
float64; special values give NumPy's results; the wrappers' IR is valid where libmvec is not.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.backends.llvm import vector_math
from lazyarr.backends.llvm.target import host_target_machine, initialize_native, optimize, parse_module

needs_libmvec = pytest.mark.skipif(vector_math.libmvec() is None, reason="no usable libmvec on this host")

WIDE = np.longdouble
# name -> (lazyarr function, NumPy reference, input range per operand)
FUNCTIONS = {
    "tan": (la.tan, np.tan, [(-100.0, 100.0)]),
    "arcsin": (la.arcsin, np.arcsin, [(-1.0, 1.0)]),
    "arccos": (la.arccos, np.arccos, [(-1.0, 1.0)]),
    "arctan": (la.arctan, np.arctan, [(-50.0, 50.0)]),
    "sinh": (la.sinh, np.sinh, [(-80.0, 80.0)]),
    "cosh": (la.cosh, np.cosh, [(-80.0, 80.0)]),
    "arctan2": (la.arctan2, np.arctan2, [(-10.0, 10.0), (-10.0, 10.0)]),
    "power": (la.power, np.power, [(0.0, 10.0), (-5.0, 5.0)]),
}
ULP_TOLERANCE = 4  # C-library functions' bound in test_llvm_math.py; libmvec measured <= 3.2 here


def _ulps(got: np.ndarray, reference: np.ndarray, dtype) -> np.ndarray:
    rounded = reference.astype(dtype)
    with np.errstate(invalid="ignore"):  # inf - inf where both are infinite: counted equal below
        distance = np.abs(got.astype(WIDE) - reference) / np.spacing(np.abs(rounded)).astype(WIDE)
    distance[(got == rounded) | (np.isnan(got) & np.isnan(rounded))] = 0
    return distance


@needs_libmvec
def test_a_kernel_of_arctan_calls_libmvec():
    la.clear_cache()
    x = la.asarray(np.linspace(-1, 1, 1000, dtype=np.float32))
    report = la.explain(la.arctan(x))
    module = parse_module(report.llvm_ir)
    optimize(module, host_target_machine())
    vector_math.use_vector_library(module)
    assert "_ZGVdN8v_atanf" in str(module)


@needs_libmvec
@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(FUNCTIONS)), st.sampled_from([np.float32, np.float64]),
       st.integers(1, 100), st.integers(0, 2**32 - 1))
def test_libmvec_results_are_within_four_ulps(name, dtype, size, seed):
    function, reference, ranges = FUNCTIONS[name]
    rng = np.random.default_rng(seed)
    operands = [rng.uniform(low, high, size).astype(dtype) for low, high in ranges]
    got = np.asarray(function(*[la.asarray(operand) for operand in operands]))
    with np.errstate(all="ignore"):
        expected = reference(*[operand.astype(WIDE) for operand in operands])
    assert got.dtype == dtype
    worst = _ulps(got, expected, dtype)
    assert worst.max() <= ULP_TOLERANCE, (name, operands, got, expected.astype(dtype))


@needs_libmvec
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_libmvec_special_values_match_numpy(name, dtype):
    function, reference, ranges = FUNCTIONS[name]
    tiny = np.finfo(dtype).smallest_subnormal
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, 1.0, -1.0], dtype)
    specials = np.tile(specials, 3)  # 27 elements: vector calls and the remainder both see them
    operands = [specials] if len(ranges) == 1 else [specials, np.roll(specials, 4)]
    with np.errstate(all="ignore"):
        expected = reference(*operands)
        got = np.asarray(function(*[la.asarray(operand) for operand in operands]))
    special = ~np.isfinite(expected) | (expected == 0) | np.isnan(expected)
    np.testing.assert_array_equal(got[special], expected[special])
    np.testing.assert_array_equal(np.signbit(got[special & ~np.isnan(expected)]),
                                  np.signbit(expected[special & ~np.isnan(expected)]))
    assert (_ulps(got, expected.astype(WIDE), dtype)[~special] <= ULP_TOLERANCE).all()


@pytest.mark.parametrize("element, lanes, arity", [("f32", 16, 1), ("f64", 8, 2), ("f32", 8, 2)])
def test_wrappers_and_intrinsic_names_parse(element, lanes, arity):
    # Runs without libmvec too: the wrapper of twice libmvec's width is valid IR.
    initialize_native()
    half = lanes // 2
    symbol = vector_math._symbol("atan" if arity == 1 else "atan2", element, half, arity)
    text = vector_math._wrapper_ir("wrapper", symbol, element, lanes, arity)
    llvm.parse_assembly(text).verify()
    name = "atan" if arity == 1 else "atan2"
    assert vector_math._parse_intrinsic(f"llvm.{name}.v{lanes}{element}") == (name, element, lanes, arity)
    assert vector_math._parse_intrinsic("llvm.exp.v8f32") is None
