"""C-library math functions through glibc's libmvec (backends/llvm/vector_math.py).

Where libmvec is found, a kernel computing tan, arcsin, arccos, arctan, sinh, cosh, arcsinh,
arccosh, arctanh, cbrt, arctan2 or power calls libmvec's vector functions instead of one
scalar call per element. Checked: the compiled kernel calls them; results on random inputs of
many lengths (the vector loop, its vector remainder and the scalar one all run) are within the
4 ULP that C-library functions are held to (test_llvm_math.py) of the correctly rounded result,
for float32 and float64; an element's result does not depend on where it sits (the scalar
remainder computes with the same function); special values give NumPy's results; a module
without vectorizable declarations is left as it was.
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
    "arcsinh": (la.arcsinh, np.arcsinh, [(-1e4, 1e4)]),
    "arccosh": (la.arccosh, np.arccosh, [(1.0, 1e4)]),
    "arctanh": (la.arctanh, np.arctanh, [(-1.0, 1.0)]),
    "cbrt": (la.cbrt, np.cbrt, [(-1e6, 1e6)]),
}
ULP_TOLERANCE = 4  # C-library functions' bound in test_llvm_math.py; libmvec measured <= 3.2 here


def _ulps(got: np.ndarray, reference: np.ndarray, dtype) -> np.ndarray:
    rounded = reference.astype(dtype)
    with np.errstate(invalid="ignore"):  # inf - inf where both are infinite: counted equal below
        distance = np.abs(got.astype(WIDE) - reference) / np.spacing(np.abs(rounded)).astype(WIDE)
    distance[(got == rounded) | (np.isnan(got) & np.isnan(rounded))] = 0
    return distance


@needs_libmvec
@pytest.mark.parametrize("function, symbols", [
    (la.arctan, ["_ZGVdN8v_atanf"]), (la.cbrt, ["_ZGVdN8v_cbrtf"]), (la.arctan2, ["_ZGVdN8vv_atan2f"]),
    (lambda x: x ** 0.7, ["_ZGVdN8vv_powf"]),  # a scalar exponent, lifted to a parameter
])
def test_a_kernel_of_a_library_function_calls_libmvec(function, symbols, monkeypatch):
    monkeypatch.setenv("LAZYARR_FLAGS", "--persistent_cache=false")  # the IR is kept only when compiled
    la.clear_cache()
    x = la.asarray(np.linspace(0.5, 1, 1000, dtype=np.float32))
    arguments = (x, x) if function is la.arctan2 else (x,)
    report = la.explain(function(*arguments))
    module = parse_module(report.llvm_ir)
    optimize(module, host_target_machine())
    for symbol in symbols:
        assert f"call <8 x float> @{symbol}(" in str(module)


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


def test_a_module_without_vectorizable_declarations_is_left_as_it_was():
    # Runs without libmvec too: only declarations marked vectorizable get variants.
    import llvmlite.ir as ir

    module = ir.Module("plain")
    float_type = ir.FloatType()
    ir.Function(module, ir.FunctionType(float_type, [float_type]), name="nextafterf")
    before = str(module)
    vector_math.add_vector_variants(module)
    assert str(module) == before


@needs_libmvec
def test_a_vectorizable_declaration_gets_a_one_lane_function_with_its_vector_variant():
    import llvmlite.ir as ir

    initialize_native()
    module = ir.Module("with_cbrt")
    double = ir.DoubleType()
    cbrt = ir.Function(module, ir.FunctionType(double, [double]), name="cbrt")
    cbrt.attributes.add("readnone")
    caller = ir.Function(module, ir.FunctionType(double, [double]), name="caller")
    builder = ir.IRBuilder(caller.append_basic_block("entry"))
    builder.ret(builder.call(cbrt, [caller.args[0]]))
    vector_math.add_vector_variants(module)
    text = str(module)
    assert '"vector-function-abi-variant"="_ZGVdN4v_lazyarr_vector_cbrt(_ZGVdN4v_cbrt)"' in text
    parsed = llvm.parse_assembly(text)
    parsed.verify()
    assert "call double @lazyarr_vector_cbrt(" in str(parsed)  # the caller was sent there
    assert "@_ZGVdN4v_cbrt(<4 x double>" in str(parsed)


@needs_libmvec
@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(FUNCTIONS) + ["power by a scalar"]), st.sampled_from([np.float32, np.float64]),
       st.integers(1, 80), st.integers(0, 2**32 - 1))
def test_an_elements_result_does_not_depend_on_its_position(name, dtype, size, seed):
    """One value in every element of arrays of many lengths: the vector loop, the vector and the
    scalar remainders all give the same result (they compute with one function)."""
    rng = np.random.default_rng(seed)
    if name == "power by a scalar":
        function, ranges = (lambda x: x ** 0.7), [(0.0, 10.0)]
    else:
        function, _, ranges = FUNCTIONS[name]
    operands = [np.full(size, rng.uniform(low, high), dtype) for low, high in ranges]
    got = np.asarray(function(*[la.asarray(operand) for operand in operands]))
    assert len(set(got.tolist())) == 1 or np.isnan(got).all(), (name, operands[0][0], set(got.tolist()))
