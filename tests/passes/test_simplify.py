"""AlgebraicSimplifier: HLO text -> simplify -> HLO text for the main rules, and for every rule
a hypothesis property: on random inputs full of edge values (NaN, +-inf, -0.0, integer
extremes) the NumPy evaluator gives bit-identical results before and after the pass.

Cases that must *not* fire (x + 0.0 on floats, x * 0 on floats, x * 1 on complex, a float sum
over no dimensions, ...) are checked the same way: if one did fire, the property would find
the value it breaks.
"""

from __future__ import annotations

import doctest
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from lazyarr import dtypes
from lazyarr.hlo import Computation, HloError, Module, constant, evaluate, make, text
from lazyarr.hlo.ops.reduce import REDUCE_KINDS
from lazyarr.passes import simplify
from lazyarr.passes.simplify import AlgebraicSimplifier, exact_conversion, is_splat, may_raise, splat_value
from tests.assertions import assert_identical
from tests.strategies import arrays, edge_values

ALL = list(dtypes.ALL)
INTEGER = list(dtypes.INTEGER)
FLOATING = list(dtypes.FLOATING)
COMPLEX = list(dtypes.COMPLEX)
NUMERIC = list(dtypes.NUMERIC)
BITWISE = [dtypes.bool_, *INTEGER]
REAL_NUMERIC = INTEGER + FLOATING
SHAPES = st.lists(st.integers(0, 3), max_size=3).map(tuple)


def parameter(number, shape, dtype):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


def splat_of(value, like):
    return simplify.splat(value, like)


def negative_zero(dtype):
    return complex(-0.0, -0.0) if dtypes.is_complex(dtype) else (-0.0 if dtypes.is_floating(dtype) else 0)




def simplified(body: str) -> str:
    """Parse an ENTRY body, simplify, print the entry again (without the module header)."""
    module = text.parse("HloModule m\nENTRY main {\n" + textwrap.dedent(body) + "\n}")
    AlgebraicSimplifier().run(module)
    return text.print_computation(module.entry, entry=True)


def expected(body: str) -> str:
    return "ENTRY main {\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n}"


# -------------------------------------------------------------------- text -> text


TEXT_CASES = {
    "x * 1 -> x": (
        """
        p0 = f32[2,3] parameter(0)
        one = f32[] constant(1)
        b = f32[2,3] broadcast(one), dimensions={}, shape={2,3}
        ROOT m = f32[2,3] multiply(b, p0)
        """,
        """
        ROOT p0 = f32[2,3] parameter(0)
        """,
    ),
    "x + 0.0 stays for floats, x + -0.0 -> x": (
        """
        p0 = f32[2] parameter(0)
        z = f32[2] constant({0, 0})
        nz = f32[2] constant({-0, -0})
        a = f32[2] add(p0, z)
        ROOT b = f32[2] add(a, nz)
        """,
        """
        p0 = f32[2] parameter(0)
        constant.1 = f32[2] constant({0.0,0.0})
        ROOT add.2 = f32[2] add(p0, constant.1)
        """,
    ),
    "x + 0 -> x for ints, x * 0 -> 0 for ints": (
        """
        p0 = s32[2] parameter(0)
        z = s32[] constant(0)
        b = s32[2] broadcast(z), dimensions={}, shape={2}
        a = s32[2] add(p0, b)
        ROOT m = s32[2] multiply(a, b)
        """,
        """
        p0 = s32[2] parameter(0)
        constant.1 = s32[] constant(0)
        ROOT broadcast.2 = s32[2] broadcast(constant.1), dimensions={}, shape={2}
        """,
    ),
    "x * 0 stays for floats": (
        """
        p0 = f64[2] parameter(0)
        z = f64[2] constant({0, 0})
        ROOT m = f64[2] multiply(p0, z)
        """,
        """
        p0 = f64[2] parameter(0)
        constant.1 = f64[2] constant({0.0,0.0})
        ROOT multiply.2 = f64[2] multiply(p0, constant.1)
        """,
    ),
    "double negation and not": (
        """
        p0 = s8[3] parameter(0)
        a = s8[3] negate(p0)
        b = s8[3] negate(a)
        c = s8[3] not(b)
        ROOT d = s8[3] not(c)
        """,
        """
        ROOT p0 = s8[3] parameter(0)
        """,
    ),
    "transpose(transpose(x)) -> one transpose": (
        """
        p0 = f32[2,3,4] parameter(0)
        a = f32[3,4,2] transpose(p0), permutation={1,2,0}
        ROOT b = f32[4,3,2] transpose(a), permutation={1,0,2}
        """,
        """
        p0 = f32[2,3,4] parameter(0)
        ROOT transpose.1 = f32[4,3,2] transpose(p0), permutation={2,1,0}
        """,
    ),
    "reshape(reshape(x)) -> reshape(x), broadcast(broadcast(x)) -> broadcast(x)": (
        """
        p0 = f32[6] parameter(0)
        a = f32[2,3] reshape(p0), shape={2,3}
        b = f32[3,2] reshape(a), shape={3,2}
        c = f32[1,3,2] broadcast(b), dimensions={1,2}, shape={1,3,2}
        ROOT d = f32[5,1,3,2] broadcast(c), dimensions={1,2,3}, shape={5,1,3,2}
        """,
        """
        p0 = f32[6] parameter(0)
        reshape.1 = f32[3,2] reshape(p0), shape={3,2}
        ROOT broadcast.2 = f32[5,1,3,2] broadcast(reshape.1), dimensions={2,3}, shape={5,1,3,2}
        """,
    ),
    "slice(slice(x)) -> slice(x); full slice -> x": (
        """
        p0 = f32[10] parameter(0)
        a = f32[10] slice(p0), limit={10}, start={0}, stride={1}
        b = f32[4] slice(a), limit={9}, start={1}, stride={2}
        ROOT c = f32[2] slice(b), limit={4}, start={1}, stride={2}
        """,
        """
        p0 = f32[10] parameter(0)
        ROOT slice.1 = f32[2] slice(p0), limit={8}, start={3}, stride={4}
        """,
    ),
    "reverse twice, convert round trip, select of a constant": (
        """
        p0 = f32[2,3] parameter(0)
        a = f32[2,3] reverse(p0), dimensions={0,1}
        b = f32[2,3] reverse(a), dimensions={1,0}
        c = f64[2,3] convert(b), dtype=f64
        d = f32[2,3] convert(c), dtype=f32
        t = pred[] constant(true)
        tb = pred[2,3] broadcast(t), dimensions={}, shape={2,3}
        n = f32[2,3] negate(p0)
        ROOT s = f32[2,3] select(tb, d, n)
        """,
        """
        ROOT p0 = f32[2,3] parameter(0)
        """,
    ),
    "power(x, 2) -> x * x; float sum over nothing stays, max over nothing goes": (
        """
        p0 = f32[3] parameter(0)
        two = f32[] constant(2)
        b = f32[3] broadcast(two), dimensions={}, shape={3}
        p = f32[3] power(p0, b)
        s = f32[3] reduce(p), dimensions={}, kind=sum
        ROOT m = f32[3] reduce(s), dimensions={}, kind=max
        """,
        """
        p0 = f32[3] parameter(0)
        multiply.1 = f32[3] multiply(p0, p0)
        ROOT reduce.2 = f32[3] reduce(multiply.1), dimensions={}, kind=sum
        """,
    ),
    "convert int8 -> int32 -> int64 is one convert; int32 -> int8 -> int64 is not": (
        """
        p0 = s8[2] parameter(0)
        a = s32[2] convert(p0), dtype=s32
        b = s64[2] convert(a), dtype=s64
        c = s8[2] convert(a), dtype=s8
        d = s64[2] convert(c), dtype=s64
        ROOT e = s64[2] add(b, d)
        """,
        """
        p0 = s8[2] parameter(0)
        convert.1 = s64[2] convert(p0), dtype=s64
        ROOT add.2 = s64[2] add(convert.1, convert.1)
        """,
    ),
    "concatenate of one operand, pad by nothing, compare of an int with itself": (
        """
        p0 = s32[2] parameter(0)
        a = s32[2] concatenate(p0), dimension=0
        z = s32[] constant(0)
        b = s32[2] pad(a, z), high={0}, interior={0}, low={0}
        ROOT c = pred[2] compare(b, b), direction=LE
        """,
        """
        p0 = s32[2] parameter(0)
        constant.1 = pred[] constant(true)
        ROOT broadcast.2 = pred[2] broadcast(constant.1), dimensions={}, shape={2}
        """,
    ),
    "min over an added dimension drops it; a kept added dimension is broadcast after the sum": (
        """
        p0 = f32[7] parameter(0)
        b = f32[3,7] broadcast(p0), dimensions={1}, shape={3,7}
        m = f32[] reduce(b), dimensions={0,1}, kind=min
        s = f32[3] reduce(b), dimensions={1}, kind=sum
        ROOT t = (f32[], f32[3]) tuple(m, s)
        """,
        """
        p0 = f32[7] parameter(0)
        reduce.1 = f32[] reduce(p0), dimensions={0}, kind=min
        reduce.2 = f32[] reduce(p0), dimensions={0}, kind=sum
        broadcast.3 = f32[3] broadcast(reduce.2), dimensions={}, shape={3}
        ROOT outputs = (f32[], f32[3]) tuple(reduce.1, broadcast.3)
        """,
    ),
}


@pytest.mark.parametrize("name", list(TEXT_CASES))
def test_text_to_text(name):
    before, after = TEXT_CASES[name]
    assert simplified(before) == expected(after)


def test_rules_never_drop_a_subgraph_that_may_raise():
    body = """
        p0 = s64[2] parameter(0)
        table = s64[3] constant({1, 2, 3})
        i = s64[2,1] reshape(p0), shape={2,1}
        g = s64[2] gather(table, i), index_dims={0}
        z = s64[] constant(0)
        b = s64[2] broadcast(z), dimensions={}, shape={2}
        ROOT m = s64[2] multiply(g, b)
        """
    assert simplified(body).count("multiply(") == 1
    module = text.parse("HloModule m\nENTRY main {\n" + textwrap.dedent(body) + "\n}")
    AlgebraicSimplifier().run(module)
    with pytest.raises(IndexError):
        evaluate(module.entry, [np.array([0, 7])])


@given(kind=st.sampled_from(sorted(REDUCE_KINDS)), dtype=st.sampled_from(NUMERIC + [dtypes.bool_]),
       rows=st.sampled_from([0, 3, 2**41]), reduced=st.sampled_from([(0,), (1,), (0, 1)]))
def test_an_empty_value_is_a_zero_splat_whatever_its_operands(kind, dtype, rows, reduced):
    """Empty reductions of huge arrays compute nothing (`reduce` over 2**41 rows of nothing
    made a loop of 2**41 / 256 blocks); a non-empty result is left to the other rules."""
    x = parameter(0, (rows, 0), dtype)
    try:
        output = make("reduce", [make("exp", [x]) if dtypes.is_floating(dtype) else x], kind=kind, dimensions=reduced)
    except HloError:  # a kind the dtype has not, or max/min over nothing: no such graph
        assume(False)
    module = Module("m", Computation("main", (x,), (output,)))
    AlgebraicSimplifier().run(module)
    (result,) = module.entry.outputs
    if output.size == 0:
        assert result.opcode == "broadcast" and is_splat(result, 0), text.print_module(module)
    else:
        assert result.opcode != "broadcast" or result.operands[0].opcode != "constant" or rows != 2**41
    if rows < 2**41:
        (want,) = evaluate(Computation("main", (x,), (output,)), [np.zeros((rows, 0), dtype)])
        (got,) = evaluate(module.entry, [np.zeros((rows, 0), dtype)])
        assert_identical(got, want)


def test_an_empty_value_that_may_raise_stays():
    body = """
        p0 = s64[2] parameter(0)
        table = s64[3] constant({1, 2, 3})
        i = s64[2,1] reshape(p0), shape={2,1}
        g = s64[2] gather(table, i), index_dims={0}
        ROOT s = s64[0] slice(g), start={0}, limit={0}, stride={1}
        """
    module = text.parse("HloModule m\nENTRY main {\n" + textwrap.dedent(body) + "\n}")
    AlgebraicSimplifier().run(module)
    with pytest.raises(IndexError):
        evaluate(module.entry, [np.array([0, 7])])


def test_simplify_reports_no_change_and_is_idempotent():
    module = text.parse(
        "HloModule m\nENTRY main {\n  p0 = f32[2] parameter(0)\n  ROOT e = f32[2] exp(p0)\n}"
    )
    assert AlgebraicSimplifier().run(module) is False
    module = text.parse("HloModule m\nENTRY main {\n" + textwrap.dedent(TEXT_CASES["x * 1 -> x"][0]) + "\n}")
    assert AlgebraicSimplifier().run(module) is True
    assert AlgebraicSimplifier().run(module) is False


def test_a_chain_of_a_hundred_thousand_negations_simplifies_without_recursion():
    node = parameter(0, (2,), np.int32)
    for _ in range(100_000):
        node = make("negate", [node])
    module = Module("m", Computation("main", (parameter(0, (2,), np.int32),), (node,)))
    assert AlgebraicSimplifier().run(module)
    assert module.entry.outputs[0].opcode == "parameter"


def test_a_rule_that_changes_the_type_is_reported():
    def broken(instruction, operands):
        return make("convert", [operands[0]], dtype=np.float64)

    x = parameter(0, (2,), np.float32)
    module = Module("m", Computation("main", (x,), (make("negate", [x]),)))
    with pytest.raises(HloError, match="broken"):
        AlgebraicSimplifier([("negate", broken)]).run(module)


def test_splat_helpers_compare_bits():
    assert splat_value(constant([2.0, 2.0], np.float32)).tolist() == 2.0
    assert splat_value(constant([0.0, -0.0], np.float32)) is None  # equal values, different bits
    assert splat_value(constant(np.zeros(0, np.float32))) is None
    x = parameter(0, (3,), np.float32)
    assert splat_value(x) is None
    assert is_splat(splat_of(-0.0, x), -0.0)
    assert not is_splat(splat_of(-0.0, x), 0.0)
    assert not may_raise(make("negate", [x]))


@pytest.mark.parametrize(
    ("source", "target", "exact"),
    [
        ("bool", "float16", True), ("int8", "int16", True), ("uint8", "int16", True),
        ("int8", "uint16", False), ("uint16", "int16", False), ("int8", "float16", True),
        ("int16", "float16", False), ("int16", "float32", True), ("int32", "float32", False),
        ("int32", "float64", True), ("uint32", "float64", True), ("int64", "float64", False),
        ("float16", "float32", True), ("float32", "float16", False), ("float32", "complex64", True),
        ("float64", "complex64", False), ("complex64", "float32", False), ("float16", "int32", False),
        ("int8", "bool", False), ("uint64", "complex128", False), ("int16", "complex64", True),
    ],
)
def test_exact_conversion_pairs(source, target, exact):
    assert exact_conversion(np.dtype(source), np.dtype(target)) is exact


def test_docstring_examples():
    assert doctest.testmod(simplify).failed == 0


# ------------------------------------------------------------- rules as properties


@dataclass
class Case:
    """`build(draw, x, y)` makes the graph from two parameters of one dtype and shape;
    `fires(dtype, shape)` says whether the pass must change it."""

    name: str
    dtypes: list
    build: Callable
    fires: Callable = lambda dtype, shape: True


def _both_orders(draw, op, x, constant_operand):
    operands = [x, constant_operand] if draw(st.booleans()) else [constant_operand, x]
    return make(op, operands)


def _dense(value, like):
    return constant(np.full(like.shape, value, like.dtype))


def _convert_chain(draw, x, y):
    middle = draw(st.sampled_from(ALL))
    target = draw(st.sampled_from(ALL))
    return make("convert", [make("convert", [x], dtype=middle)], dtype=target)


def _reduce_nothing(draw, x, y):
    kind = draw(st.sampled_from([kind for kind, row in REDUCE_KINDS.items() if x.dtype in row[1]]))
    return make("reduce", [x], dimensions=(), kind=kind)


def _reduce_broadcast(draw, x, y):
    """x broadcast with up to two added dimensions (sizes 0-2) at random places, then reduced
    over a random set of dimensions with a kind that accepts x's dtype."""
    added = draw(st.lists(st.integers(0, 2), max_size=2))
    ndim = x.ndim + len(added)
    placed = sorted(draw(st.permutations(range(ndim)))[: x.ndim])
    sizes = iter(added)
    shape = tuple(x.shape[placed.index(axis)] if axis in placed else next(sizes) for axis in range(ndim))
    broadcast = make("broadcast", [x], shape=shape, dimensions=tuple(placed))
    kind = draw(st.sampled_from([kind for kind, row in REDUCE_KINDS.items() if x.dtype in row[1]]))
    dimensions = tuple(sorted(draw(st.sets(st.integers(0, max(ndim - 1, 0)), max_size=ndim))))
    return make("reduce", [broadcast], dimensions=dimensions if ndim else (), kind=kind)


def _transposes(draw, x, y):
    first = tuple(draw(st.permutations(range(x.ndim))))
    inner = make("transpose", [x], permutation=first)
    return make("transpose", [inner], permutation=tuple(draw(st.permutations(range(x.ndim)))))


def _reshapes(draw, x, y):
    middle = draw(st.sampled_from([(x.size,), (1, *x.shape), x.shape[::-1], x.shape]))
    final = draw(st.sampled_from([x.shape, (x.size,), (*x.shape, 1)]))
    return make("reshape", [make("reshape", [x], shape=middle)], shape=final)


def _broadcasts(draw, x, y):
    middle = make("broadcast", [x], shape=(2, *x.shape), dimensions=tuple(range(1, x.ndim + 1)))
    if draw(st.booleans()):
        return make("broadcast", [middle], shape=middle.shape, dimensions=tuple(range(middle.ndim)))
    return make("broadcast", [middle], shape=(*middle.shape, 3), dimensions=tuple(range(middle.ndim)))


def _slice_of(draw, operand):
    start, limit, stride = [], [], []
    for size in operand.shape:
        start.append(draw(st.integers(0, size)))
        limit.append(draw(st.integers(start[-1], size)))
        stride.append(draw(st.integers(1, 3)))
    return make("slice", [operand], start=tuple(start), limit=tuple(limit), stride=tuple(stride))


def _reverses(draw, x, y):
    axes = st.sets(st.integers(0, max(x.ndim - 1, 0)), max_size=x.ndim).map(lambda s: tuple(sorted(s)))
    return make("reverse", [make("reverse", [x], dimensions=draw(axes))], dimensions=draw(axes))


def _concatenate(draw, x, y):
    if x.ndim == 0:
        return make("concatenate", [make("reshape", [x], shape=(1,))], dimension=0)
    dimension = draw(st.integers(0, x.ndim - 1))
    empty_shape = tuple(0 if axis == dimension else size for axis, size in enumerate(x.shape))
    empty = make("slice", [y], start=(0,) * x.ndim, limit=empty_shape, stride=(1,) * x.ndim)
    operands = draw(st.permutations([x, empty]))[: draw(st.integers(1, 2))]
    return make("concatenate", operands, dimension=dimension)


def _pad_nothing(draw, x, y):
    zeros = (0,) * x.ndim
    return make("pad", [x, constant(0, x.dtype)], low=zeros, high=zeros, interior=zeros)


def _compare_same(draw, x, y):
    return make("compare", [x, x], direction=draw(st.sampled_from(["EQ", "NE", "LT", "LE", "GT", "GE"])))


def _select_same(draw, x, y):
    return make("select", [make("compare", [x, y], direction="LT"), x, x])


def _select_constant(draw, x, y):
    predicate = splat_of(draw(st.booleans()), make("compare", [x, y], direction="EQ"))
    return make("select", [predicate, x, y])


def _is_integer_or_bool(dtype):
    return dtype == dtypes.bool_ or dtypes.is_integer(dtype)


def math_size(shape):
    return int(np.prod(shape, dtype=np.int64))


CASES = [
    Case("add -0.0", ALL, lambda d, x, y: _both_orders(d, "add", x, splat_of(negative_zero(x.dtype), x))),
    Case("add +0.0 on floats stays", FLOATING + COMPLEX,
         lambda d, x, y: _both_orders(d, "add", x, splat_of(0, x)), lambda dtype, shape: False),
    Case("subtract 0", NUMERIC, lambda d, x, y: make("subtract", [x, splat_of(0, x)])),
    Case("subtract dense 0", NUMERIC, lambda d, x, y: make("subtract", [x, _dense(0, x)]),
         lambda dtype, shape: math_size(shape) > 0),
    Case("subtract -0.0 stays", FLOATING + COMPLEX,
         lambda d, x, y: make("subtract", [x, splat_of(negative_zero(x.dtype), x)]), lambda dt, s: False),
    Case("multiply 1", ALL, lambda d, x, y: _both_orders(d, "multiply", x, splat_of(1, x)),
         lambda dtype, shape: not dtypes.is_complex(dtype)),
    Case("multiply 0", ALL, lambda d, x, y: _both_orders(d, "multiply", x, splat_of(0, x)),
         lambda dtype, shape: _is_integer_or_bool(dtype)),
    Case("divide 1", FLOATING + COMPLEX, lambda d, x, y: make("divide", [x, splat_of(1, x)]),
         lambda dtype, shape: not dtypes.is_complex(dtype)),
    Case("negate negate", NUMERIC, lambda d, x, y: make("negate", [make("negate", [x])])),
    Case("not not", BITWISE, lambda d, x, y: make("not", [make("not", [x])])),
    Case("power 1", NUMERIC, lambda d, x, y: make("power", [x, splat_of(1, x)]),
         lambda dtype, shape: not dtypes.is_complex(dtype)),
    Case("power 2 broadcast", NUMERIC, lambda d, x, y: make("power", [x, splat_of(2, x)]),
         lambda dtype, shape: not dtypes.is_complex(dtype)),
    Case("power 2 dense", NUMERIC, lambda d, x, y: make("power", [x, _dense(2, x)]),
         lambda dtype, shape: not dtypes.is_complex(dtype) and math_size(shape) > 0
         and (shape == () or dtype not in (dtypes.float32, dtypes.float64))),
    Case("power 0", NUMERIC, lambda d, x, y: make("power", [x, splat_of(0, x)]),
         lambda dtype, shape: dtypes.is_integer(dtype)),
    Case("compare same", ALL, _compare_same, lambda dtype, shape: _is_integer_or_bool(dtype)),
    Case("select same", ALL, _select_same),
    Case("select constant", ALL, _select_constant),
    Case("convert same", ALL, lambda d, x, y: make("convert", [x], dtype=x.dtype)),
    Case("convert convert", ALL, _convert_chain, None),
    Case("reduce nothing", NUMERIC + [dtypes.bool_], _reduce_nothing, None),
    Case("reduce broadcast", NUMERIC + [dtypes.bool_], _reduce_broadcast, None),
    Case("transpose transpose", ALL, _transposes),
    Case("reshape reshape", ALL, _reshapes),
    Case("broadcast broadcast", ALL, _broadcasts),
    Case("slice slice", ALL, lambda d, x, y: _slice_of(d, _slice_of(d, x))),
    Case("reverse reverse", ALL, _reverses),
    Case("concatenate", ALL, _concatenate),
    Case("pad nothing", ALL, _pad_nothing),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
@given(data=st.data())
def test_rule_preserves_every_bit(case, data):
    dtype = np.dtype(data.draw(st.sampled_from(case.dtypes), label="dtype"))
    shape = data.draw(SHAPES, label="shape")
    x, y = parameter(0, shape, dtype), parameter(1, shape, dtype)
    try:
        output = case.build(data.draw, x, y)
    except HloError:  # e.g. a pad of a 0-d value has no dimensions to pad; not this rule's domain
        return
    module = Module("m", Computation("main", (x, y), (output,)))
    changed = AlgebraicSimplifier().run(module)
    if case.fires is not None:
        # Every empty value computed from operands becomes broadcast(0) (`empty_result`).
        emptied = math_size(output.shape) == 0 and output.opcode != "parameter"
        assert changed is (case.fires(dtype, shape) or emptied), text.print_module(module)
    arguments = [data.draw(arrays(dtype, shape), label=name) for name in ("x", "y")]
    (want,) = evaluate(Computation("main", (x, y), (output,)), arguments)
    (got,) = evaluate(module.entry, arguments)
    assert_identical(got, want)


# --------------------------------------------------------- exhaustive checks of the tables


def _edge_array(dtype):
    """Edge values and many random bit patterns (NaNs with payloads, subnormals) of `dtype`."""
    random_bits = np.random.default_rng(0).bytes(4096 * dtype.itemsize)
    if dtype == dtypes.bool_:
        random_values = np.frombuffer(random_bits, np.uint8) % 2 == 1
    else:
        random_values = np.frombuffer(random_bits, dtype)
    with np.errstate(all="ignore"):
        edges = np.array(edge_values(dtype)).astype(dtype)
    return np.concatenate([edges, random_values.astype(dtype)])


def _check_simplified(output, parameter_node, argument, *, fires):
    module = Module("m", Computation("main", (parameter_node,), (output,)))
    assert AlgebraicSimplifier().run(module) is fires
    (want,) = evaluate(Computation("main", (parameter_node,), (output,)), [argument])
    (got,) = evaluate(module.entry, [argument])
    assert_identical(got, want)


@pytest.mark.parametrize("dtype", [np.dtype(d) for d in (*INTEGER, *FLOATING)])
def test_power_two_matches_the_evaluator_on_thousands_of_values(dtype):
    argument = _edge_array(dtype)
    x = parameter(0, argument.shape, dtype)
    _check_simplified(make("power", [x, splat_of(2, x)]), x, argument, fires=True)
    dense_fires = dtype not in (dtypes.float32, dtypes.float64)  # NumPy's vector pow path
    _check_simplified(make("power", [x, _dense(2, x)]), x, argument, fires=dense_fires)


def test_every_convert_chain_preserves_values():
    """All 14**3 (source, middle, target) chains on edge values and random bits."""
    for source in ALL:
        argument = _edge_array(source)[:300]
        x = parameter(0, argument.shape, source)
        for middle in ALL:
            inner = make("convert", [x], dtype=middle)
            for target in ALL:
                fires = middle in (source, target) or exact_conversion(source, middle) and (
                    target == source or exact_conversion(middle, target)
                )
                _check_simplified(make("convert", [inner], dtype=target), x, argument, fires=fires)


def test_reduce_over_nothing_for_every_kind_and_dtype():
    for kind, (_, accepted, _) in REDUCE_KINDS.items():
        for dtype in accepted:
            argument = _edge_array(dtype)[:300]
            x = parameter(0, argument.shape, dtype)
            fires = kind in ("max", "min", "and", "or") or dtypes.is_integer(dtype)
            _check_simplified(make("reduce", [x], dimensions=(), kind=kind), x, argument, fires=fires)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "power"])
def test_identity_elements_on_thousands_of_values(op):
    identity = {"add": None, "subtract": 0, "multiply": 1, "divide": 1, "power": 1}[op]
    for dtype in ALL:
        try:
            x = parameter(0, (1,), dtype)
            make(op, [x, x])
        except HloError:
            continue  # the op refuses this dtype
        argument = _edge_array(dtype)
        x = parameter(0, argument.shape, dtype)
        value = negative_zero(dtype) if identity is None else identity
        output = make(op, [x, splat_of(value, x)])
        fires = not dtypes.is_complex(dtype) or op in ("add", "subtract")
        _check_simplified(output, x, argument, fires=fires)
