"""Every HLO op on its own: shape and dtype rules, rule violations, and reference values.

No frontend here: instructions are built with `make()` over parameters and evaluated with
`lazyarr.hlo.evaluate`. Four tables:

- ELEMENTWISE: one record per elementwise op (op, NumPy function, arity, accepted dtypes,
  result dtype). Every dtype is tried and must be accepted exactly where the record says; with
  hypothesis-drawn shapes and edge values the evaluated result must equal the NumPy function
  bit for bit (operands are equal-shaped and contiguous, so NumPy takes the same path).
- STRUCTURAL_PROPERTIES: hypothesis tests of the layout, reduction, linalg and indexing ops on
  random valid instructions, each against an independent NumPy expression.
- CASES: small computations with hand-written expectations (pad with interior padding,
  gather/scatter with negative indices, dynamic-slice clamping, argmax with NaN, ...), including
  the IndexError an out-of-range index raises when evaluated.
- VIOLATIONS: each rule broken once; `make()` must raise HloError whose message starts with
  the op's name.

A completeness test fails when a registered op is in none of these tables and not listed in
COVERED_ELSEWHERE with the file that tests it.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lazyarr import dtypes, hlo
from lazyarr.hlo import Computation, HloError, Literal, evaluate, make
from tests.strategies import elements

ALL = dtypes.ALL
NUMERIC = dtypes.NUMERIC
REAL = (dtypes.bool_,) + dtypes.INTEGER + dtypes.FLOATING
REAL_NUMERIC = dtypes.INTEGER + dtypes.FLOATING
INEXACT = dtypes.FLOATING + dtypes.COMPLEX
FLOATING = dtypes.FLOATING
BITWISE = (dtypes.bool_,) + dtypes.INTEGER
INTEGER = dtypes.INTEGER
F32, F64, S32, S64 = np.dtype("float32"), np.dtype("float64"), np.dtype("int32"), np.dtype("int64")

small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)

# Ops whose semantics another file tests: op -> that file.
COVERED_ELSEWHERE = {
    "fusion": "tests/passes/test_fusion.py (fused computations evaluate as the graphs they replace)",
    "custom-call": "tests/hlo/test_custom_targets.py (every target against NumPy; its generic "
                   "rules are also checked here in VIOLATIONS)",
}


# --- helpers --------------------------------------------------------------------------------


def parameter(number, shape, dtype):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


def run(build, *arguments):
    """`build(*parameters)` over parameters shaped like `arguments`, evaluated: (root, value)."""
    arguments = [np.asarray(argument) for argument in arguments]
    parameters = [parameter(number, value.shape, value.dtype) for number, value in enumerate(arguments)]
    root = build(*parameters)
    (value,) = evaluate(Computation("test", tuple(parameters), (root,)), arguments)
    return root, value


def assert_exact(root, value, expected):
    """Shape, then dtype, then values: equal bit for bit (NaN == NaN, zero signs, complex parts)."""
    expected = np.asarray(expected)
    assert root.shape == expected.shape, ("shape rule", root.shape, expected.shape)
    assert root.dtype == expected.dtype, ("dtype rule", root.dtype, expected.dtype)
    assert value.shape == expected.shape and value.dtype == expected.dtype
    parts = [(value.real, expected.real), (value.imag, expected.imag)] if expected.dtype.kind == "c" \
        else [(value, expected)]
    for got, want in parts:
        np.testing.assert_array_equal(got, want, strict=True)
        if want.dtype.kind == "f":
            zeros = want == 0
            np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


def quiet(function):
    def call(*values):
        with np.errstate(all="ignore"):
            return np.asarray(function(*values))

    return call


# --- elementwise table ----------------------------------------------------------------------


def same(dtype):
    return dtype


def boolean(dtype):
    return dtypes.bool_


def int32(dtype):
    return np.dtype("int32")


def uint8(dtype):
    return np.dtype("uint8")


def _popcount(values):
    """Set bits of the pattern (NumPy's bitwise_count counts |x|; the frontend takes |x| first)."""
    return np.bitwise_count(values.view(f"u{values.dtype.itemsize}"))


@dataclass(frozen=True)
class ElementwiseRecord:
    op: str
    numpy_function: Callable
    arity: int
    accepted: tuple
    result: Callable = same            # result dtype from the operand dtype
    attrs: dict = field(default_factory=dict)

    @property
    def id(self):
        return "-".join([self.op, *map(str, self.attrs.values())])


def _unary(op, function, accepted, result=same):
    return ElementwiseRecord(op, function, 1, accepted, result)


def _binary(op, function, accepted, result=same, **attrs):
    return ElementwiseRecord(op, function, 2, accepted, result, attrs)


def _complex(real, imag):
    """real + imag*i placed part by part (arithmetic would turn inf*1j into NaN parts)."""
    result = np.empty(real.shape, np.result_type(real.dtype, np.complex64))
    result.real, result.imag = real, imag
    return result


INEXACT_UNARY = {
    "sqrt": np.sqrt, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "round-nearest-even": np.rint,
    "reciprocal": np.reciprocal,
}
COMPARISONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
               "GE": np.greater_equal}

ELEMENTWISE = [
    _unary("cbrt", np.cbrt, FLOATING),
    _unary("negate", np.negative, NUMERIC),
    _unary("abs", np.absolute, ALL, dtypes.real_dtype),
    _unary("sign", np.sign, NUMERIC),
    *[_unary(op, function, INEXACT) for op, function in INEXACT_UNARY.items()],
    _unary("floor", np.floor, REAL),
    _unary("ceil", np.ceil, REAL),
    _unary("trunc", np.trunc, REAL),
    _unary("not", np.invert, BITWISE),
    _unary("is-nan", np.isnan, ALL, boolean),
    _unary("is-inf", np.isinf, ALL, boolean),
    _unary("is-finite", np.isfinite, ALL, boolean),
    _unary("signbit", np.signbit, FLOATING, boolean),
    _unary("real", np.real, ALL, dtypes.real_dtype),
    _unary("imag", np.imag, ALL, dtypes.real_dtype),
    _unary("conj", np.conjugate, NUMERIC),
    _unary("frexp-mantissa", lambda x: np.frexp(x)[0], FLOATING),
    _unary("frexp-exponent", lambda x: np.frexp(x)[1], FLOATING, int32),
    _unary("spacing", np.spacing, FLOATING),
    _unary("popcount", _popcount, INTEGER, uint8),
    _binary("add", np.add, ALL),
    _binary("subtract", np.subtract, NUMERIC),
    _binary("multiply", np.multiply, ALL),
    _binary("divide", np.true_divide, INEXACT),
    _binary("floor-divide", np.floor_divide, REAL_NUMERIC),
    _binary("remainder", np.remainder, REAL_NUMERIC),
    _binary("fmod", np.fmod, REAL_NUMERIC),
    _binary("gcd", np.gcd, INTEGER),
    _binary("lcm", np.lcm, INTEGER),
    _binary("power", np.power, NUMERIC),  # integer exponents drawn >= 0; negative ones: hand case
    _binary("maximum", np.maximum, ALL),
    _binary("minimum", np.minimum, ALL),
    _binary("fmax", np.fmax, ALL),
    _binary("fmin", np.fmin, ALL),
    _binary("atan2", np.arctan2, FLOATING),
    _binary("hypot", np.hypot, FLOATING),
    _binary("copysign", np.copysign, FLOATING),
    _binary("nextafter", np.nextafter, FLOATING),
    _binary("logaddexp", np.logaddexp, FLOATING),
    _binary("and", np.bitwise_and, BITWISE),
    _binary("or", np.bitwise_or, BITWISE),
    _binary("xor", np.bitwise_xor, BITWISE),
    _binary("shift-left", np.left_shift, INTEGER),
    _binary("shift-right", np.right_shift, INTEGER),
    _binary("complex", _complex, (F32, F64),
            lambda dtype: {F32: np.dtype("complex64"), F64: np.dtype("complex128")}[dtype]),
    *[_binary("compare", function, ALL, boolean, direction=name) for name, function in COMPARISONS.items()],
    ElementwiseRecord("clamp", lambda low, value, high: np.clip(value, low, high), 3, ALL),
]


def _ids(records):
    return [record.id for record in records]


@pytest.mark.parametrize("record", ELEMENTWISE, ids=_ids(ELEMENTWISE))
def test_elementwise_accepts_exactly_its_dtypes(record):
    for dtype in ALL:
        operands = [parameter(number, (2,), dtype) for number in range(record.arity)]
        if dtype in record.accepted:
            node = make(record.op, operands, **record.attrs)
            assert (node.shape, node.dtype) == ((2,), record.result(dtype)), dtype
        else:
            with pytest.raises(HloError, match=f"^{record.op}"):
                make(record.op, operands, **record.attrs)


@pytest.mark.parametrize("record", ELEMENTWISE, ids=_ids(ELEMENTWISE))
@given(data=st.data())
def test_elementwise_reference_is_the_numpy_function(record, data):
    dtype = data.draw(st.sampled_from(record.accepted), label="dtype")
    shape = data.draw(small_shapes, label="shape")
    arguments = [data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)), label=f"operand {index}")
                 for index in range(record.arity)]
    if record.op == "power" and dtype.kind == "i":
        arguments[1] = np.where(arguments[1] < 0, ~arguments[1], arguments[1]).astype(dtype)
    root, value = run(lambda *operands: make(record.op, operands, **record.attrs), *arguments)
    assert_exact(root, value, quiet(record.numpy_function)(*arguments))


@pytest.mark.parametrize("record", [r for r in ELEMENTWISE if r.arity > 1],
                         ids=_ids([r for r in ELEMENTWISE if r.arity > 1]))
def test_elementwise_refuses_unequal_shapes_and_dtypes(record):
    first, second = record.accepted[0], record.accepted[-1]
    shapes = [(3,)] * record.arity
    shapes[1] = (4,)
    with pytest.raises(HloError, match=f"^{record.op}: operands must have equal shapes"):
        make(record.op, [parameter(n, shape, first) for n, shape in enumerate(shapes)], **record.attrs)
    kinds = [first] * record.arity
    kinds[1] = second
    with pytest.raises(HloError, match=f"^{record.op}: operands must have equal dtypes"):
        make(record.op, [parameter(n, (3,), kind) for n, kind in enumerate(kinds)], **record.attrs)
    with pytest.raises(HloError, match=f"^{record.op}: expects {record.arity} operands"):
        make(record.op, [parameter(0, (3,), first)], **record.attrs)


def test_integer_power_by_negative_exponents_truncates_toward_zero():
    base = np.array([2, -1, -1, 1, 0, 7, -2], np.int16)
    exponent = np.array([-1, -3, -2, -5, -1, 0, 3], np.int16)
    root, value = run(lambda b, e: make("power", [b, e]), base, exponent)
    assert_exact(root, value, np.array([0, -1, 1, 1, 0, 1, -8], np.int16))


@given(data=st.data())
def test_ldexp_is_numpys_with_int32_exponents(data):
    """ldexp(float x, int32 n) (C's ldexp: the exponent is an int; mixed dtypes, so not in the
    elementwise table); exponents far beyond the float range too, which saturate."""
    dtype = data.draw(st.sampled_from(FLOATING), label="dtype")
    shape = data.draw(small_shapes, label="shape")
    mantissa = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)), label="x")
    exponent = data.draw(hnp.arrays(S32, shape, elements=st.one_of(
        st.integers(-1100, 1100), elements(S32))), label="n")
    root, value = run(lambda x, n: make("ldexp", [x, n]), mantissa, exponent)
    assert_exact(root, value, quiet(np.ldexp)(mantissa, exponent))


@given(data=st.data())
def test_select_is_where(data):
    dtype = data.draw(st.sampled_from(ALL))
    shape = data.draw(small_shapes)
    predicate = data.draw(hnp.arrays(np.bool_, shape))
    on_true, on_false = (data.draw(hnp.arrays(dtype, shape, elements=elements(dtype))) for _ in range(2))
    root, value = run(lambda p, a, b: make("select", [p, a, b]), predicate, on_true, on_false)
    assert_exact(root, value, np.where(predicate, on_true, on_false))


CONVERT_VALUES = [0, 1, -1, 2.5, -0.0, np.nan, np.inf, -np.inf, 300.75, -129.5, 1e30, 3 + 4j, -2j, 70000]


@pytest.mark.parametrize("source", ALL, ids=str)
def test_convert_every_pair_is_numpys_astype(source):
    with np.errstate(all="ignore"):
        values = np.array([v for v in CONVERT_VALUES if source.kind == "c" or not isinstance(v, complex)])
        operand = values.astype(source) if source.kind == "c" else values.real.astype(source)
    for target in ALL:
        with np.errstate(all="ignore"):
            if source.kind == "c" and target.kind not in "cb":
                expected = operand.real.astype(target)  # astype's value, without its ComplexWarning
            else:
                expected = operand.astype(target)
            if source.kind in "fc" and target.kind in "iu":
                # NaN/inf/out of range: NumPy's vectorized loop's value (its scalar loop, which a
                # strided `.real` takes, differs for uint32; README, Differences from NumPy)
                real = operand.real if source.kind == "c" else operand
                expected = np.repeat(real, 64).astype(target)[32::64]
        root, value = run(lambda x: make("convert", [x], dtype=target), operand)
        assert_exact(root, value, expected)


def test_complex_keeps_infinite_nan_and_negative_zero_parts():
    real = np.array([np.inf, -0.0, np.nan, 1.5], np.float32)
    imag = np.array([np.inf, np.nan, -0.0, -np.inf], np.float32)
    root, value = run(lambda a, b: make("complex", [a, b]), real, imag)
    assert root.dtype == np.complex64
    np.testing.assert_array_equal(value.real, real, strict=True)
    np.testing.assert_array_equal(value.imag, imag, strict=True)
    assert np.signbit(value.real[1]) and np.signbit(value.imag[2])


# --- structural ops: hypothesis properties against independent NumPy expressions ----------------

SOME_DTYPES = (F32, S32, np.dtype("bool"), np.dtype("complex64"))
positive_shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


@st.composite
def arrays_of(draw, shape=small_shapes, kinds=SOME_DTYPES):
    dtype = draw(st.sampled_from(kinds))
    return draw(hnp.arrays(dtype, draw(shape), elements=elements(dtype)))


def axes_subset(data, ndim):
    return tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1), max_size=ndim)))) if ndim else ()


@given(data=st.data())
def test_broadcast_property(data):
    operand = data.draw(arrays_of())
    # Output: operand dims in order (size-1 ones may stretch), with new dims inserted anywhere.
    shape, dimensions = [], []
    for axis in range(operand.ndim + 1):
        shape += data.draw(st.lists(st.integers(0, 3), max_size=2))
        if axis < operand.ndim:
            dimensions.append(len(shape))
            size = operand.shape[axis]
            shape.append(data.draw(st.integers(0, 3)) if size == 1 else size)
    shape, dimensions = tuple(shape), tuple(dimensions)
    root, value = run(lambda x: make("broadcast", [x], shape=shape, dimensions=dimensions), operand)
    view = [1] * len(shape)
    for axis, target in enumerate(dimensions):
        view[target] = operand.shape[axis]
    assert_exact(root, value, np.broadcast_to(operand.reshape(view), shape))


@given(data=st.data())
def test_reshape_transpose_reverse_properties(data):
    operand = data.draw(arrays_of())
    permutation = tuple(data.draw(st.permutations(range(operand.ndim))))
    root, value = run(lambda x: make("transpose", [x], permutation=permutation), operand)
    assert_exact(root, value, operand.transpose(permutation))
    flipped = axes_subset(data, operand.ndim)
    root, value = run(lambda x: make("reverse", [x], dimensions=flipped), operand)
    steps = tuple(slice(None, None, -1 if axis in flipped else 1) for axis in range(operand.ndim))
    assert_exact(root, value, operand[steps])
    shape = (operand.size,) if operand.size else (0, 2)
    root, value = run(lambda x: make("reshape", [x], shape=shape), operand)
    assert_exact(root, value, operand.reshape(shape))


@given(data=st.data())
def test_slice_property(data):
    operand = data.draw(arrays_of())
    start, limit, stride = [], [], []
    for size in operand.shape:
        start.append(data.draw(st.integers(0, size)))
        limit.append(data.draw(st.integers(start[-1], size)))
        stride.append(data.draw(st.integers(1, 3)))
    attrs = dict(start=tuple(start), limit=tuple(limit), stride=tuple(stride))
    root, value = run(lambda x: make("slice", [x], **attrs), operand)
    assert_exact(root, value, operand[tuple(map(slice, start, limit, stride))])


@given(data=st.data())
def test_pad_property(data):
    operand = data.draw(arrays_of())
    fill = data.draw(hnp.arrays(operand.dtype, (), elements=elements(operand.dtype)))
    low, high, interior = (tuple(data.draw(st.integers(0, 2)) for _ in operand.shape) for _ in range(3))
    root, value = run(lambda x, v: make("pad", [x, v], low=low, high=high, interior=interior), operand, fill)
    shape = tuple(lo + hi + size + max(size - 1, 0) * inner
                  for lo, hi, inner, size in zip(low, high, interior, operand.shape))
    expected = np.full(shape, fill, operand.dtype)
    positions = [lo + np.arange(size) * (inner + 1) for lo, inner, size in zip(low, interior, operand.shape)]
    expected[np.ix_(*positions)] = operand
    assert_exact(root, value, expected)


@given(data=st.data())
def test_concatenate_property(data):
    dtype = data.draw(st.sampled_from([F32, S32]))
    base = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
    dimension = data.draw(st.integers(0, len(base) - 1))
    pieces = []
    for _ in range(data.draw(st.integers(1, 3))):
        shape = base[:dimension] + (data.draw(st.integers(0, 3)),) + base[dimension + 1:]
        pieces.append(data.draw(hnp.arrays(dtype, shape, elements=elements(dtype))))
    root, value = run(lambda *xs: make("concatenate", xs, dimension=dimension), *pieces)
    assert_exact(root, value, np.concatenate(pieces, axis=dimension))


REDUCTIONS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "and": np.all, "or": np.any}
REDUCE_DTYPES = {
    "sum": (F32, S32, np.dtype("int8"), np.dtype("uint16"), np.dtype("complex128")),
    "max": (F32, S32, np.dtype("int8"), np.dtype("uint16"), np.dtype("bool")),
    "and": (np.dtype("bool"),),
}


@given(data=st.data())
def test_reduce_property(data):
    kind = data.draw(st.sampled_from(sorted(REDUCTIONS)))
    kinds = REDUCE_DTYPES[{"prod": "sum", "min": "max", "or": "and"}.get(kind, kind)]
    operand = data.draw(arrays_of(kinds=kinds))
    dimensions = axes_subset(data, operand.ndim)
    if kind in ("max", "min"):  # no identity: empty dimensions are a violation, tested below
        dimensions = tuple(axis for axis in dimensions if operand.shape[axis])
    root, value = run(lambda x: make("reduce", [x], kind=kind, dimensions=dimensions), operand)
    extra = {"dtype": operand.dtype} if kind in ("sum", "prod") else {}
    assert_exact(root, value, quiet(lambda x: REDUCTIONS[kind](x, axis=dimensions, **extra))(operand))


@given(data=st.data())
def test_argmax_argmin_and_cumulative_properties(data):
    operand = data.draw(arrays_of(positive_shapes, (F32, S32, np.dtype("bool"), np.dtype("uint8"))))
    dimension = data.draw(st.integers(0, operand.ndim - 1))
    for op, function in (("argmax", np.argmax), ("argmin", np.argmin)):
        root, value = run(lambda x: make(op, [x], dimension=dimension), operand)
        assert_exact(root, value, function(operand, axis=dimension).astype(np.int64))
    if operand.dtype != np.bool_:
        for kind, function in (("sum", np.cumsum), ("prod", np.cumprod)):
            root, value = run(lambda x: make("cumulative", [x], kind=kind, dimension=dimension), operand)
            assert_exact(root, value, quiet(lambda x: function(x, axis=dimension, dtype=x.dtype))(operand))


@given(data=st.data())
def test_dot_property(data):
    """Any batch / contracting / free split, in any axis order, equals np.einsum (int64: exact)."""
    sizes = st.lists(st.integers(0, 3), max_size=2)
    batch, contracting, lhs_free, rhs_free = (data.draw(sizes) for _ in range(4))
    letters = iter(string.ascii_lowercase)
    batch_letters, contracting_letters = [next(letters) for _ in batch], [next(letters) for _ in contracting]
    lhs_letters = batch_letters + contracting_letters + [next(letters) for _ in lhs_free]
    rhs_letters = batch_letters + contracting_letters + [next(letters) for _ in rhs_free]
    size_of = dict(zip(batch_letters + contracting_letters, batch + contracting))
    size_of.update(zip(lhs_letters[len(size_of):], lhs_free))
    size_of.update(zip(rhs_letters[len(batch) + len(contracting):], rhs_free))
    lhs_axes, rhs_axes = data.draw(st.permutations(lhs_letters)), data.draw(st.permutations(rhs_letters))
    values = st.integers(-5, 5)
    lhs = data.draw(hnp.arrays(S64, tuple(size_of[c] for c in lhs_axes), elements=values))
    rhs = data.draw(hnp.arrays(S64, tuple(size_of[c] for c in rhs_axes), elements=values))
    attrs = dict(lhs_batch=tuple(map(lhs_axes.index, batch_letters)),
                 rhs_batch=tuple(map(rhs_axes.index, batch_letters)),
                 lhs_contracting=tuple(map(lhs_axes.index, contracting_letters)),
                 rhs_contracting=tuple(map(rhs_axes.index, contracting_letters)))
    shared = batch_letters + contracting_letters
    output = batch_letters + [c for c in lhs_axes + rhs_axes if c not in shared]
    expected = np.einsum(f"{''.join(lhs_axes)},{''.join(rhs_axes)}->{''.join(output)}", lhs, rhs)
    root, value = run(lambda a, b: make("dot", [a, b], **attrs), lhs, rhs)
    assert_exact(root, value, expected.astype(S64))


@st.composite
def operand_and_indices(draw):
    operand = draw(arrays_of(positive_shapes))
    index_dims = tuple(draw(st.permutations(range(operand.ndim)))[: draw(st.integers(1, operand.ndim))])
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    columns = [draw(hnp.arrays(S32, batch, elements=st.integers(-size, size - 1)))
               for size in (operand.shape[axis] for axis in index_dims)]
    return operand, index_dims, np.stack(columns, axis=-1)


def _positions(operand_shape, index_dims, indices):
    """For each batch position: the operand index tuple (with slices for the other dims)."""
    for batch_index in np.ndindex(*indices.shape[:-1]):
        full = [slice(None)] * len(operand_shape)
        for position, axis in enumerate(index_dims):
            full[axis] = int(indices[batch_index + (position,)]) % operand_shape[axis]
        yield batch_index, tuple(full)


@given(case=operand_and_indices())
def test_gather_property(case):
    operand, index_dims, indices = case
    rest = tuple(size for axis, size in enumerate(operand.shape) if axis not in index_dims)
    expected = np.zeros(indices.shape[:-1] + rest, operand.dtype)
    for batch_index, position in _positions(operand.shape, index_dims, indices):
        expected[batch_index] = operand[position]
    root, value = run(lambda x, i: make("gather", [x, i], index_dims=index_dims), operand, indices)
    assert_exact(root, value, expected)


@given(case=operand_and_indices(), data=st.data())
def test_scatter_property(case, data):
    operand, index_dims, indices = case
    rest = tuple(size for axis, size in enumerate(operand.shape) if axis not in index_dims)
    dtype = operand.dtype
    updates = data.draw(hnp.arrays(dtype, indices.shape[:-1] + rest, elements=elements(dtype)))
    for mode in ("set", "add") if operand.dtype != np.bool_ else ("set",):
        expected = operand.copy()
        with np.errstate(all="ignore"):  # in index order: the last set wins, adds accumulate
            for batch_index, position in _positions(operand.shape, index_dims, indices):
                addend = expected[position] if mode == "add" else 0
                expected[position] = updates[batch_index] + addend if mode == "add" else updates[batch_index]
        build = lambda x, i, u: make("scatter", [x, i, u], index_dims=index_dims, mode=mode)  # noqa: E731
        root, value = run(build, operand, indices, updates)
        assert_exact(root, value, expected)


@given(data=st.data())
def test_dynamic_slice_and_update_clamp_starts(data):
    operand = data.draw(arrays_of(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)))
    sizes = tuple(data.draw(st.integers(0, size)) for size in operand.shape)
    starts = [np.array(data.draw(st.integers(-6, 6)), S32) for _ in operand.shape]
    begin = [min(max(int(start), 0), size - extent)
             for start, size, extent in zip(starts, operand.shape, sizes)]
    window = tuple(slice(first, first + extent) for first, extent in zip(begin, sizes))
    root, value = run(lambda x, *s: make("dynamic-slice", [x, *s], sizes=sizes), operand, *starts)
    assert_exact(root, value, operand[window])
    update = data.draw(hnp.arrays(operand.dtype, sizes, elements=elements(operand.dtype)))
    expected = operand.copy()
    expected[window] = update
    root, value = run(lambda x, u, *s: make("dynamic-update-slice", [x, u, *s]), operand, update, *starts)
    assert_exact(root, value, expected)


@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), data=st.data())
def test_iota_property(shape, data):
    dimension = data.draw(st.integers(0, len(shape) - 1))
    dtype = data.draw(st.sampled_from([S32, F32, np.dtype("uint8"), np.dtype("complex64")]))
    root, value = run(lambda: make("iota", shape=shape, dtype=dtype, dimension=dimension))
    assert_exact(root, value, np.indices(shape)[dimension].astype(dtype))


STRUCTURAL_PROPERTIES = {
    "broadcast": test_broadcast_property, "reshape": test_reshape_transpose_reverse_properties,
    "transpose": test_reshape_transpose_reverse_properties,
    "reverse": test_reshape_transpose_reverse_properties, "slice": test_slice_property,
    "pad": test_pad_property, "concatenate": test_concatenate_property, "reduce": test_reduce_property,
    "argmax": test_argmax_argmin_and_cumulative_properties,
    "argmin": test_argmax_argmin_and_cumulative_properties,
    "cumulative": test_argmax_argmin_and_cumulative_properties, "dot": test_dot_property,
    "gather": test_gather_property, "scatter": test_scatter_property,
    "dynamic-slice": test_dynamic_slice_and_update_clamp_starts,
    "dynamic-update-slice": test_dynamic_slice_and_update_clamp_starts, "iota": test_iota_property,
    "select": test_select_is_where, "convert": test_convert_every_pair_is_numpys_astype,
    "ldexp": test_ldexp_is_numpys_with_int32_exponents,
}


# --- hand-written cases -----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    op: str
    attrs: dict
    arguments: tuple            # one parameter per argument, in order
    expected: object            # an array, or the exception type evaluation raises

    def build(self, *parameters):
        if hlo.get(self.op).arity == 0:
            return parameters[0] if self.op == "parameter" else make(self.op, **self.attrs)
        return make(self.op, parameters, **self.attrs)


def _case(id, op, arguments, expected, **attrs):
    return pytest.param(Case(op, attrs, tuple(np.asarray(a) for a in arguments), expected), id=id)


def f32(values):
    return np.array(values, np.float32)


def i64(values):
    return np.array(values, np.int64)


nan = np.nan
MATMUL = dict(lhs_batch=(), rhs_batch=(), lhs_contracting=(1,), rhs_contracting=(0,))
GRID = np.arange(12, dtype=np.int32).reshape(4, 3) * 10
SET, ADD = dict(index_dims=(0,), mode="set"), dict(index_dims=(0,), mode="add")

CASES = [
    _case("parameter", "parameter", [f32([1, -0.0])], f32([1, -0.0])),
    _case("constant", "constant", [], f32([[1.5, -0.0, nan]]), literal=Literal(f32([[1.5, -0.0, nan]]))),
    _case("iota-columns", "iota", [], np.array([[0, 1, 2], [0, 1, 2]], np.int32), shape=(2, 3), dtype=S32,
          dimension=1),
    _case("broadcast-rows", "broadcast", [f32([1, 2, 3])], f32([[1, 2, 3], [1, 2, 3]]), shape=(2, 3),
          dimensions=(1,)),
    _case("broadcast-columns", "broadcast", [f32([1, 2, 3])], f32([[1, 1], [2, 2], [3, 3]]), shape=(3, 2),
          dimensions=(0,)),
    _case("broadcast-stretch-size-1", "broadcast", [f32([[7, 8, 9]])], f32([[7, 8, 9], [7, 8, 9]]),
          shape=(2, 3), dimensions=(0, 1)),
    _case("reshape-row-major", "reshape", [i64([[1, 2, 3], [4, 5, 6]])], i64([[1, 2], [3, 4], [5, 6]]),
          shape=(3, 2)),
    _case("transpose", "transpose", [i64([[1, 2, 3], [4, 5, 6]])], i64([[1, 4], [2, 5], [3, 6]]),
          permutation=(1, 0)),
    _case("slice-strided", "slice", [i64(range(10))], i64([1, 4, 7]), start=(1,), limit=(8,), stride=(3,)),
    _case("slice-empty", "slice", [np.ones((3, 2), np.int64)], np.ones((0, 2), np.int64), start=(2, 0),
          limit=(2, 2), stride=(1, 1)),
    _case("reverse", "reverse", [i64([[1, 2], [3, 4]])], i64([[4, 3], [2, 1]]), dimensions=(0, 1)),
    _case("pad-interior-1d", "pad", [i64([1, 2, 3]), i64(0)], i64([0, 1, 0, 2, 0, 3, 0, 0]), low=(1,),
          high=(2,), interior=(1,)),
    _case("pad-interior-2d", "pad", [i64([[1, 2], [3, 4]]), i64(9)],
          i64([[9, 1, 9, 9, 2], [9, 9, 9, 9, 9], [9, 3, 9, 9, 4], [9, 9, 9, 9, 9]]),
          low=(0, 1), high=(1, 0), interior=(1, 2)),
    _case("pad-empty-with-interior", "pad", [f32([]), f32(nan)], f32([nan, nan]), low=(1,), high=(1,),
          interior=(2,)),
    _case("concatenate-with-empty", "concatenate", [i64([[1], [2]]), np.zeros((2, 0), np.int64),
                                                    i64([[3, 4], [5, 6]])], i64([[1, 3, 4], [2, 5, 6]]),
          dimension=1),
    _case("reduce-sum-int8-wraps", "reduce", [np.array([[100, 100], [1, 2]], np.int8)],
          np.array([-56, 3], np.int8), kind="sum", dimensions=(1,)),
    _case("reduce-max-nan-propagates", "reduce", [f32([1, nan, 3])], f32(nan), kind="max", dimensions=(0,)),
    _case("reduce-min-nan-propagates", "reduce", [f32([[1, 2], [nan, -5]])], f32(nan), kind="min",
          dimensions=(0, 1)),
    _case("reduce-sum-over-empty", "reduce", [np.zeros((0, 3), np.float32)], f32([0, 0, 0]), kind="sum",
          dimensions=(0,)),
    _case("reduce-and", "reduce", [np.array([[True, False], [True, True]])], np.array([False, True]),
          kind="and", dimensions=(1,)),
    _case("argmax-nan-wins", "argmax", [f32([1, nan, 3, nan])], i64(1), dimension=0),
    _case("argmin-first-tie", "argmin", [f32([[3, 1, 1], [-0.0, 0.0, 2]])], i64([1, 0]), dimension=1),
    _case("cumulative-sum", "cumulative", [i64([[1, 2, 3], [4, 5, 6]])], i64([[1, 3, 6], [4, 9, 15]]),
          kind="sum", dimension=1),
    _case("cumulative-prod-int8-wraps", "cumulative", [np.array([16, 16, 2], np.int8)],
          np.array([16, 0, 0], np.int8), kind="prod", dimension=0),
    _case("dot-matrix", "dot", [i64([[1, 2], [3, 4]]), i64([[5, 6, 7], [8, 9, 10]])],
          i64([[21, 24, 27], [47, 54, 61]]), **MATMUL),
    _case("dot-batch-not-leading", "dot", [i64([[1, 2], [3, 4]]), i64([[1, 1], [2, 0]])], i64([4, 4]),
          lhs_batch=(1,), rhs_batch=(0,), lhs_contracting=(0,), rhs_contracting=(1,)),
    _case("dot-empty-contraction", "dot", [np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)],
          np.zeros((2, 3), np.float32), **MATMUL),
    _case("gather-negative", "gather", [i64([10, 20, 30, 40]), np.array([[3], [-1], [0], [-4]], np.int32)],
          i64([40, 40, 10, 10]), index_dims=(0,)),
    _case("gather-inner-dim", "gather", [GRID, np.array([[2], [-3]], np.int8)],
          np.array([[20, 50, 80, 110], [0, 30, 60, 90]], np.int32), index_dims=(1,)),
    _case("gather-reversed-index-dims", "gather", [GRID, np.array([[2, 1], [-1, -1]], np.int16)],
          np.array([50, 110], np.int32), index_dims=(1, 0)),
    _case("gather-out-of-range", "gather", [i64([10, 20, 30, 40]), i64([[1], [4]])], IndexError,
          index_dims=(0,)),
    _case("gather-below-range", "gather", [i64([10, 20, 30, 40]), i64([[-5]])], IndexError, index_dims=(0,)),
    _case("scatter-set-last-wins", "scatter", [i64([0, 0, 0, 0, 0]), i64([[1], [-1], [1]]), i64([7, 8, 9])],
          i64([0, 9, 0, 0, 8]), **SET),
    _case("scatter-add-accumulates", "scatter", [i64([1, 1, 1, 1, 1]), i64([[1], [-1], [1]]), i64([7, 8, 9])],
          i64([1, 17, 1, 1, 9]), **ADD),
    _case("scatter-rows", "scatter", [np.zeros((3, 2), np.float32), i64([[-1]]), f32([[1, 2]])],
          f32([[0, 0], [0, 0], [1, 2]]), **SET),
    _case("scatter-out-of-range", "scatter", [i64([0, 0]), i64([[2]]), i64([1])], IndexError, **SET),
    _case("dynamic-slice-clamps-high", "dynamic-slice", [i64(range(10)), np.array(7, np.int32)],
          i64([5, 6, 7, 8, 9]), sizes=(5,)),
    _case("dynamic-slice-clamps-negative", "dynamic-slice", [GRID, i64(-3), np.array(10, np.int8)],
          np.array([[10, 20], [40, 50]], np.int32), sizes=(2, 2)),
    _case("dynamic-update-slice-clamps", "dynamic-update-slice",
          [i64([0, 0, 0, 0, 0]), i64([1, 2]), np.array(4, np.int32)], i64([0, 0, 0, 1, 2])),
    _case("dynamic-update-slice-negative-start", "dynamic-update-slice",
          [i64([0, 0, 0]), i64([5]), np.array(-9, np.int32)], i64([5, 0, 0])),
    _case("select", "select", [np.array([True, False]), f32([1, -0.0]), f32([nan, 2])], f32([1, 2])),
    _case("clamp-nan-bound", "clamp", [f32([0, nan, 0]), f32([5, 1, nan]), f32([2, 2, 2])],
          f32([2, nan, nan])),
    _case("convert-complex-to-bool", "convert", [np.array([0j, 1j, 2 + 0j, complex(0, -0.0)])],
          np.array([False, True, True, False]), dtype=np.dtype(bool)),
    _case("compare-nan-unequal", "compare", [f32([nan, 1]), f32([nan, 1])], np.array([True, False]),
          direction="NE"),
]


@pytest.mark.parametrize("case", CASES)
def test_hand_written_case(case):
    if isinstance(case.expected, type):
        with pytest.raises(case.expected, match="out of bounds"):
            run(case.build, *case.arguments)
        return
    root, value = run(case.build, *case.arguments)
    assert root.opcode == case.op
    assert_exact(root, value, case.expected)


# --- rule violations --------------------------------------------------------------------------


def operands_of(specs: str):
    """Parameters written as HLO types: "f32[2,3] s32[]" -> two parameters numbered 0 and 1."""
    result = []
    for number, spec in enumerate(specs.split()):
        name, _, dims = spec.rstrip("]").partition("[")
        shape = tuple(int(size) for size in dims.split(",") if size)
        result.append(parameter(number, shape, dtypes.from_short_name(name)))
    return result


def _violation(id, op, fragment, specs="", **attrs):
    return pytest.param(op, specs, attrs, fragment, id=id)


NO_PADDING = dict(low=(0,), high=(0,), interior=(0,))

_FUSED_PARAMETER = make("parameter", number=0, shape=(3,), dtype=np.dtype("float32"))
_NEGATE_COMPUTATION = Computation("fused_negate", (_FUSED_PARAMETER,), (make("negate", [_FUSED_PARAMETER]),))

VIOLATIONS = [  # id, op, a fragment of the message, operand types, attributes
    _violation("add-shapes", "add", "equal shapes", "f32[3] f32[4]"),
    _violation("add-dtypes", "add", "equal dtypes", "f32[3] s32[3]"),
    _violation("add-arity", "add", "expects 2 operands", "f32[3]"),
    _violation("sqrt-integer", "sqrt", "accepted", "s32[3]"),
    _violation("compare-direction", "compare", "direction", "f32[3] f32[3]", direction="XX"),
    _violation("compare-missing-direction", "compare", "missing attribute", "f32[3] f32[3]"),
    _violation("negate-unknown-attribute", "negate", "unknown attribute", "f32[3]", axis=0),
    _violation("select-predicate", "select", "predicate", "f32[3] f32[3] f32[3]"),
    _violation("select-branches", "select", "equal dtypes", "pred[3] f32[3] s32[3]"),
    _violation("select-shapes", "select", "equal shapes", "pred[2] f32[3] f32[3]"),
    _violation("clamp-dtypes", "clamp", "equal dtypes", "s32[3] f32[3] f32[3]"),
    _violation("convert-unsupported", "convert", "not supported", "f32[3]", dtype=np.dtype("U5")),
    _violation("complex-float16", "complex", "accepted", "f16[3] f16[3]"),
    _violation("ldexp-integer-mantissa", "ldexp", "accepted", "s32[3] s32[3]"),
    _violation("ldexp-int64-exponent", "ldexp", "must be int32", "f32[3] s64[3]"),
    _violation("ldexp-float-exponent", "ldexp", "must be int32", "f64[3] f64[3]"),
    _violation("ldexp-shapes", "ldexp", "equal shapes", "f32[3] s32[2]"),
    _violation("broadcast-dimension-count", "broadcast", "must map each", "f32[3]", shape=(2, 3),
               dimensions=(0, 1)),
    _violation("broadcast-size", "broadcast", "cannot broadcast", "f32[3]", shape=(2, 4), dimensions=(1,)),
    _violation("broadcast-order", "broadcast", "increasing", "f32[2,3]", shape=(3, 2), dimensions=(1, 0)),
    _violation("broadcast-out-of-range", "broadcast", "out of range", "f32[3]", shape=(3,), dimensions=(5,)),
    _violation("broadcast-negative-shape", "broadcast", ">= 0", "f32[]", shape=(-1,), dimensions=()),
    _violation("reshape-count", "reshape", "cannot reshape", "f32[2,3]", shape=(4,)),
    _violation("reshape-negative", "reshape", ">= 0", "f32[6]", shape=(-1, -6)),
    _violation("transpose-repeated", "transpose", "repeated", "f32[2,3]", permutation=(0, 0)),
    _violation("transpose-length", "transpose", "entries", "f32[2,3]", permutation=(0,)),
    _violation("slice-limit-beyond", "slice", "start <= limit <= size", "f32[3]", start=(0,), limit=(4,),
               stride=(1,)),
    _violation("slice-start-after-limit", "slice", "start <= limit", "f32[3]", start=(2,), limit=(1,),
               stride=(1,)),
    _violation("slice-zero-stride", "slice", ">= 1", "f32[3]", start=(0,), limit=(3,), stride=(0,)),
    _violation("slice-negative-start", "slice", ">= 0", "f32[3]", start=(-1,), limit=(3,), stride=(1,)),
    _violation("slice-rank", "slice", "2 entries", "f32[3,3]", start=(0,), limit=(3,), stride=(1,)),
    _violation("reverse-out-of-range", "reverse", "out of range", "f32[3]", dimensions=(1,)),
    _violation("pad-value-not-scalar", "pad", "scalar", "f32[3] f32[1]", **NO_PADDING),
    _violation("pad-negative-interior", "pad", ">= 0", "f32[3] f32[]", low=(0,), high=(0,), interior=(-1,)),
    _violation("pad-dtypes", "pad", "equal dtypes", "f32[3] s32[]", **NO_PADDING),
    _violation("concatenate-rank", "concatenate", "shapes must match", "f32[2,3] f32[3]", dimension=0),
    _violation("concatenate-other-dims", "concatenate", "shapes must match", "f32[2,3] f32[2,4]",
               dimension=0),
    _violation("concatenate-dimension", "concatenate", "out of range", "f32[2]", dimension=1),
    _violation("concatenate-nothing", "concatenate", "at least one", "", dimension=0),
    _violation("concatenate-dtypes", "concatenate", "equal dtypes", "f32[3] s32[3]", dimension=0),
    _violation("iota-dimension", "iota", "out of range", shape=(2,), dtype=S32, dimension=1),
    _violation("iota-bool", "iota", "numeric", shape=(2,), dtype=np.dtype(bool), dimension=0),
    _violation("parameter-negative-shape", "parameter", ">= 0", number=0, shape=(-2,), dtype=F32),
    _violation("constant-not-literal", "constant", "Literal", literal=3.0),
    _violation("reduce-max-empty", "reduce", "no identity", "f32[0,3]", kind="max", dimensions=(0,)),
    _violation("reduce-kind", "reduce", "kind", "f32[3]", kind="mean", dimensions=(0,)),
    _violation("reduce-order", "reduce", "increasing", "f32[2,2]", kind="sum", dimensions=(1, 0)),
    _violation("reduce-out-of-range", "reduce", "out of range", "f32[3]", kind="sum", dimensions=(1,)),
    _violation("reduce-and-float", "reduce", "accepted", "f32[3]", kind="and", dimensions=(0,)),
    _violation("reduce-max-complex", "reduce", "accepted", "c64[3]", kind="max", dimensions=(0,)),
    _violation("argmax-empty", "argmax", "empty sequence", "f32[2,0]", dimension=1),
    _violation("argmin-complex", "argmin", "accepted", "c64[3]", dimension=0),
    _violation("argmax-dimension", "argmax", "out of range", "f32[3]", dimension=1),
    _violation("cumulative-kind", "cumulative", "kind", "f32[3]", kind="max", dimension=0),
    _violation("cumulative-bool", "cumulative", "accepted", "pred[3]", kind="sum", dimension=0),
    _violation("cumulative-dimension", "cumulative", "out of range", "f32[3]", kind="sum", dimension=2),
    _violation("dot-contracting-sizes", "dot", "differ", "f32[2,3] f32[4,5]", **MATMUL),
    _violation("dot-batch-and-contracting", "dot", "both batch and contracting", "f32[3,3] f32[3,3]",
               **{**MATMUL, "lhs_batch": (1,), "rhs_batch": (1,)}),
    _violation("dot-batch-count", "dot", "same number", "f32[2,3] f32[3]", **{**MATMUL, "lhs_batch": (0,)}),
    _violation("dot-dtypes", "dot", "equal dtypes", "f32[2,3] s32[3,2]", **MATMUL),
    _violation("gather-float-indices", "gather", "integers", "f32[4] f32[2,1]", index_dims=(0,)),
    _violation("gather-scalar-indices", "gather", "index-vector", "f32[4] s32[]", index_dims=(0,)),
    _violation("gather-index-length", "gather", "last dimension", "f32[4,4] s32[2,2]", index_dims=(0,)),
    _violation("gather-index-dims", "gather", "out of range", "f32[4] s32[2,1]", index_dims=(1,)),
    _violation("scatter-updates-shape", "scatter", "updates must have shape", "f32[4] s32[2,1] f32[3]",
               index_dims=(0,), mode="set"),
    _violation("scatter-mode", "scatter", "mode", "f32[4] s32[2,1] f32[2]", index_dims=(0,), mode="max"),
    _violation("scatter-dtypes", "scatter", "equal dtypes", "f32[4] s32[2,1] s32[2]", index_dims=(0,),
               mode="set"),
    _violation("dynamic-slice-sizes", "dynamic-slice", "exceed", "f32[3] s32[]", sizes=(4,)),
    _violation("dynamic-slice-float-start", "dynamic-slice", "integer scalars", "f32[3] f32[]", sizes=(1,)),
    _violation("dynamic-slice-start-count", "dynamic-slice", "start indices", "f32[3,3] s32[]", sizes=(1, 1)),
    _violation("dynamic-update-slice-too-big", "dynamic-update-slice", "does not fit", "f32[3] f32[4] s32[]"),
    _violation("dynamic-update-slice-dtypes", "dynamic-update-slice", "equal dtypes", "f32[3] s32[2] s32[]"),
    _violation("dynamic-update-slice-operands", "dynamic-update-slice", "needs", "f32[3]"),
    _violation("custom-call-target", "custom-call", "unknown target", "f32[3]", target="no-such-target"),
    _violation("fusion-kind", "fusion", "kind", "f32[3]", kind="nonsense", computation=_NEGATE_COMPUTATION),
    _violation("fusion-operand-type", "fusion", "must be", "s32[3]", kind="loop", computation=_NEGATE_COMPUTATION),
    _violation("fusion-operand-count", "fusion", "takes 1 operands", "f32[3] f32[3]", kind="loop",
               computation=_NEGATE_COMPUTATION),
    _violation("custom-call-output-index", "custom-call", "output_index", "f32[3]", target="sort",
               output_index=3, options=(("axis", 0),)),
]


@pytest.mark.parametrize("op, specs, attrs, fragment", VIOLATIONS)
def test_rule_violation_raises_hlo_error_naming_the_op(op, specs, attrs, fragment):
    with pytest.raises(HloError) as info:
        make(op, operands_of(specs), **attrs)
    message = str(info.value)
    assert message.startswith(op), message
    assert fragment in message, message


def test_unknown_op_is_refused():
    with pytest.raises(HloError, match="unknown op 'no-such-op'"):
        make("no-such-op", [])


def test_operands_must_be_instructions():
    with pytest.raises(HloError, match="^negate: operand"):
        make("negate", [np.zeros(3)])


def test_literal_refuses_unsupported_dtypes():
    with pytest.raises(TypeError, match="<U1"):
        Literal(np.array(["a"]))


# --- completeness ---------------------------------------------------------------------------------


def test_every_registered_op_is_tested():
    """Each op has an evaluated test (elementwise record, structural property or hand case) or
    is listed in COVERED_ELSEWHERE with its file; every op also appears in some violation."""
    evaluated = {record.op for record in ELEMENTWISE} | set(STRUCTURAL_PROPERTIES) \
        | {case.values[0].op for case in CASES}
    missing = sorted(set(hlo.all_ops()) - evaluated - set(COVERED_ELSEWHERE))
    assert not missing, f"ops with no reference test and not listed in COVERED_ELSEWHERE: {missing}"
    stale = sorted(set(COVERED_ELSEWHERE) - set(hlo.all_ops()))
    assert not stale, f"COVERED_ELSEWHERE names ops that do not exist: {stale}"
    elementwise_violations = {record.op for record in ELEMENTWISE if record.arity > 1}
    violated = {violation.values[0] for violation in VIOLATIONS} | elementwise_violations
    # Unary elementwise ops are refused wrong dtypes in test_elementwise_accepts_exactly_its_dtypes.
    structural = set(hlo.all_ops()) - {record.op for record in ELEMENTWISE}
    unviolated = sorted(op for op in structural if op not in violated)
    assert not unviolated, f"ops whose rules no violation exercises: {unviolated}"
