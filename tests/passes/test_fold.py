"""ConstantFolder: HLO text -> fold -> HLO text, what it must leave alone, and a property:
random constant-only graphs (edge values in every dtype) evaluate bit-identically after
folding, and every small foldable instruction became a constant."""

from __future__ import annotations

import doctest
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lazyarr import dtypes
from lazyarr.hlo import Computation, HloError, Module, constant, evaluate, make, text
from lazyarr.hlo.ops.custom import custom_call_outputs
from lazyarr.hlo.ops.elementwise import BINARY, COMPARISONS, UNARY
from lazyarr.passes import fold
from lazyarr.passes.fold import ConstantFolder
from tests.assertions import assert_identical
from tests.strategies import arrays

SHAPES = st.lists(st.integers(0, 3), max_size=3).map(tuple)


def parsed(body: str):
    return text.parse("HloModule m\nENTRY main {\n" + textwrap.dedent(body) + "\n}")


def folded(body: str, **options) -> tuple[bool, str]:
    module = parsed(body)
    changed = ConstantFolder(**options).run(module)
    return changed, text.print_computation(module.entry, entry=True)


def expected(body: str) -> str:
    return "ENTRY main {\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n}"




def test_folds_a_chain_of_constants_and_keeps_the_parameter_side():
    changed, result = folded(
        """
        p0 = f32[2] parameter(0)
        a = f32[2] constant({1.5, -0})
        b = f32[2] negate(a)
        c = f32[2] add(b, b)
        ROOT d = f32[2] multiply(c, p0)
        """
    )
    assert changed
    assert result == expected(
        """
        constant.0 = f32[2] constant({-3.0,0.0})
        p0 = f32[2] parameter(0)
        ROOT multiply.2 = f32[2] multiply(constant.0, p0)
        """
    )


def test_folds_layout_reductions_and_converts():
    changed, result = folded(
        """
        a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
        t = s32[3,2] transpose(a), permutation={1,0}
        r = s32[3] reduce(t), dimensions={1}, kind=sum
        ROOT c = f64[3] convert(r), dtype=f64
        """
    )
    assert changed
    assert result == expected("ROOT constant.0 = f64[3] constant({5.0,7.0,9.0})")


def test_the_size_limit_is_respected_and_configurable():
    ones = ",".join(["1"] * 65)
    body = f"""
        a = f32[65] iota(), dimension=0, dtype=f32, shape={{65}}
        c = f32[65] constant({{{ones}}})
        ROOT n = f32[65] negate(c)
        """
    assert folded(body) == (False, text.print_computation(parsed(body).entry, entry=True))
    changed, result = folded(body, max_elements=65)
    assert changed and "negate" not in result


def test_leaves_iota_broadcast_of_a_scalar_custom_calls_and_fusions():
    changed, _ = folded(
        """
        a = f32[3] iota(), dimension=0, dtype=f32, shape={3}
        c = f32[] constant(2)
        ROOT b = f32[3] broadcast(c), dimensions={}, shape={3}
        """
    )
    assert not changed
    values = constant(np.array([3.0, 1.0, 2.0]))
    (sort,) = custom_call_outputs("sort", [values], axis=0, descending=False)
    x = make("parameter", number=0, shape=(3,), dtype=np.dtype("float64"))
    called = Computation("fused", (x,), (make("negate", [x]),))
    fusion = make("fusion", [values], kind="loop", computation=called)
    module = Module("m", Computation("main", (), (sort, fusion)), {"fused": called})
    assert ConstantFolder().run(module) is False
    assert module.entry.outputs == (sort, fusion)


def test_broadcast_of_a_non_scalar_constant_is_folded():
    changed, result = folded(
        """
        c = s8[2] constant({1, 2})
        ROOT b = s8[2,2] broadcast(c), dimensions={1}, shape={2,2}
        """
    )
    assert changed and result == expected("ROOT constant.0 = s8[2,2] constant({{1,2},{1,2}})")


def test_an_out_of_range_gather_is_left_for_evaluation_to_raise():
    body = """
        table = f32[3] constant({1, 2, 3})
        i = s64[2,1] constant({{0}, {%s}})
        ROOT g = f32[2] gather(table, i), index_dims={0}
        """
    changed, _ = folded(body % "5")
    assert not changed
    module = parsed(body % "5")
    ConstantFolder().run(module)
    with pytest.raises(IndexError, match="out of bounds"):
        evaluate(module.entry, [])
    changed, result = folded(body % "-1")
    assert changed and result == expected("ROOT constant.0 = f32[2] constant({1.0,3.0})")


def test_docstring_examples():
    assert doctest.testmod(fold).failed == 0


# ------------------------------------------------------------------------ the property


def _pick(draw, pool, dtype=None, shape=None):
    fitting = [
        node for node in pool
        if (dtype is None or node.dtype == dtype) and (shape is None or node.shape == shape)
    ]
    return draw(st.sampled_from(fitting)) if fitting else None


STEPS = ["unary", "binary", "select", "convert", "transpose", "reverse", "reduce"]


@st.composite
def constant_graphs(draw):
    """Outputs of random elementwise, compare/select, convert and layout ops over constants."""
    dtype = np.dtype(draw(st.sampled_from(dtypes.ALL)))
    shape = draw(SHAPES)
    pool = [constant(draw(arrays(dtype, shape))) for _ in range(draw(st.integers(1, 3)))]
    for _ in range(draw(st.integers(1, 8))):
        operand = _pick(draw, pool)
        step = draw(st.sampled_from(STEPS))
        try:
            if step == "unary":
                names = [row[0] for row in UNARY if operand.dtype in row[2]]
                node = make(draw(st.sampled_from(names)), [operand])
            elif step == "binary":
                names = [row[0] for row in BINARY if operand.dtype in row[2]]
                other = _pick(draw, pool, operand.dtype, operand.shape)
                node = make(draw(st.sampled_from(names)), [operand, other])
            elif step == "select":
                other = _pick(draw, pool, operand.dtype, operand.shape)
                direction = draw(st.sampled_from(sorted(COMPARISONS)))
                predicate = make("compare", [operand, other], direction=direction)
                node = make("select", [predicate, operand, other])
            elif step == "convert":
                node = make("convert", [operand], dtype=draw(st.sampled_from(dtypes.ALL)))
            elif step == "transpose":
                permutation = tuple(draw(st.permutations(range(operand.ndim))))
                node = make("transpose", [operand], permutation=permutation)
            elif step == "reverse":
                node = make("reverse", [operand], dimensions=tuple(range(operand.ndim)))
            else:
                node = make("reduce", [operand], dimensions=tuple(range(operand.ndim)), kind="max")
        except HloError:
            continue  # the op refuses this dtype or shape
        pool.append(node)
    return pool[-draw(st.integers(1, min(3, len(pool)))):]


@given(constant_graphs())
def test_folding_random_constant_graphs_keeps_every_bit(outputs):
    module = Module("m", Computation("main", (), tuple(outputs)))
    want = evaluate(module.entry, [])
    ConstantFolder().run(module)
    for node in module.entry.post_order():
        assert node.opcode == "constant"  # every instruction here is small and foldable
    for got, expected_value in zip(evaluate(module.entry, []), want, strict=True):
        assert_identical(got, expected_value)
