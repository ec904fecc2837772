"""CommonSubexpressionEliminator: HLO text -> cse -> HLO text, and properties: every operand
swap it makes is bit-exact in NumPy on edge values, and the pass is idempotent."""

from __future__ import annotations

import doctest
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lazyarr import dtypes
from lazyarr.hlo import Computation, Module, all_ops, constant, evaluate, make, text
from lazyarr.hlo.op import COMMUTATIVE
from lazyarr.passes import cse
from lazyarr.passes.cse import CommonSubexpressionEliminator, swappable
from tests.assertions import assert_identical
from tests.strategies import arrays, edge_values

SHAPES = st.lists(st.integers(0, 3), max_size=3).map(tuple)
COMMUTATIVE_OPS = sorted(name for name, opdef in all_ops().items() if opdef.has(COMMUTATIVE))


def parameter(number, shape, dtype):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


def eliminated(body: str) -> tuple[bool, str]:
    module = text.parse("HloModule m\nENTRY main {\n" + textwrap.dedent(body) + "\n}")
    changed = CommonSubexpressionEliminator().run(module)
    return changed, text.print_computation(module.entry, entry=True)


def expected(body: str) -> str:
    return "ENTRY main {\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "  ") + "\n}"




def test_swapped_add_and_mirrored_compares_become_one():
    changed, result = eliminated(
        """
        p0 = f32[2] parameter(0)
        p1 = f32[2] parameter(1)
        a = f32[2] add(p0, p1)
        b = f32[2] add(p1, p0)
        lt = pred[2] compare(p0, p1), direction=LT
        gt = pred[2] compare(p1, p0), direction=GT
        s = f32[2] select(lt, a, b)
        t = f32[2] select(gt, a, b)
        ROOT r = (f32[2], f32[2]) tuple(s, t)
        """
    )
    assert changed
    # Both selects are now one instruction over one add and one compare (operand order is
    # the structural key's, so it is checked through the counts, not spelled out).
    assert result.count(" add(") == 1 and result.count(" compare(") == 1 and result.count(" select(") == 1


def test_constants_go_to_the_right():
    changed, result = eliminated(
        """
        p0 = s32[2] parameter(0)
        c = s32[2] constant({1, 2})
        ROOT m = s32[2] multiply(c, p0)
        """
    )
    assert changed
    assert result == expected(
        """
        p0 = s32[2] parameter(0)
        constant.1 = s32[2] constant({1,2})
        ROOT multiply.2 = s32[2] multiply(p0, constant.1)
        """
    )


@pytest.mark.parametrize(
    ("op", "dtype", "merged"),
    [
        ("maximum", "f32", False), ("minimum", "f64", False), ("fmax", "f16", False),
        ("fmin", "c64", False), ("maximum", "s32", True), ("multiply", "c64", False),
        ("multiply", "f32", True), ("hypot", "f32", True), ("xor", "pred", True),
    ],
)
def test_only_bit_exact_swaps_are_made(op, dtype, merged):
    _, result = eliminated(
        f"""
        p0 = {dtype}[2] parameter(0)
        p1 = {dtype}[2] parameter(1)
        a = {dtype}[2] {op}(p0, p1)
        b = {dtype}[2] {op}(p1, p0)
        ROOT r = ({dtype}[2], {dtype}[2]) tuple(a, b)
        """
    )
    assert result.count(f" {op}(") == (1 if merged else 2)


def test_maximum_of_signed_zeros_depends_on_operand_order_in_numpy():
    """Why maximum/minimum on floats are not swapped: NumPy picks an operand by position."""
    negative, positive = np.array([-0.0], np.float32), np.array([0.0], np.float32)
    assert np.signbit(np.maximum(negative, positive)) != np.signbit(np.maximum(positive, negative))


def test_second_run_changes_nothing():
    x, y = parameter(0, (3,), np.float64), parameter(1, (3,), np.float64)
    outputs = (make("add", [y, x]), make("multiply", [make("add", [x, y]), constant(np.ones(3))]),
               make("compare", [y, x], direction="GE"))
    module = Module("m", Computation("main", (x, y), outputs))
    CommonSubexpressionEliminator().run(module)
    assert CommonSubexpressionEliminator().run(module) is False


def test_a_hundred_thousand_deep_chain_runs_without_recursion():
    x = parameter(0, (2,), np.int64)
    node = x
    one = constant(np.ones(2, np.int64))
    for _ in range(100_000):
        node = make("add", [one, node])
    module = Module("m", Computation("main", (x,), (node,)))
    assert CommonSubexpressionEliminator().run(module)
    assert module.entry.outputs[0].operands[1] is one


def test_docstring_examples():
    assert doctest.testmod(cse).failed == 0


# ------------------------------------------------------------------------ properties


def _accepts(op, dtype):
    x = parameter(0, (1,), dtype)
    try:
        make(op, [x, x], **({"direction": "LT"} if op == "compare" else {}))
    except Exception:
        return False
    return True


SWAP_CASES = [
    (op, dtype) for op in [*COMMUTATIVE_OPS, "compare"] for dtype in dtypes.ALL if _accepts(op, dtype)
]


@given(data=st.data())
def test_every_swap_made_is_bit_exact(data):
    op, dtype = data.draw(st.sampled_from(SWAP_CASES), label="op and dtype")
    shape = data.draw(SHAPES, label="shape")
    x, y = parameter(0, shape, dtype), parameter(1, shape, dtype)
    attrs = {}
    if op == "compare":
        attrs["direction"] = data.draw(st.sampled_from(sorted(cse.MIRRORED_DIRECTION)))
    original = (make(op, [x, y], **attrs), make(op, [y, x], **attrs))
    module = Module("m", Computation("main", (x, y), original))
    CommonSubexpressionEliminator().run(module)
    if swappable(original[0]):
        merged = {id(node) for node in module.entry.outputs} if op != "compare" else None
        assert merged is None or len(merged) == 1
    arguments = [data.draw(arrays(dtype, shape), label=name) for name in ("x", "y")]
    want = evaluate(Computation("main", (x, y), original), arguments)
    for got, expected_value in zip(evaluate(module.entry, arguments), want, strict=True):
        assert_identical(got, expected_value)


def test_every_swap_made_is_bit_exact_on_all_pairs_of_edge_values():
    """Every (op, dtype) CSE may swap, on the cross product of edge values and random values."""
    random = np.random.default_rng(0)
    for op, dtype in SWAP_CASES:
        with np.errstate(all="ignore"):
            values = np.array(edge_values(dtype)).astype(dtype)
        if dtypes.is_inexact(dtype):
            values = np.concatenate([values, (random.standard_normal(8) * 4).astype(dtype)])
        left, right = (grid.reshape(-1) for grid in np.meshgrid(values, values))
        x, y = parameter(0, left.shape, dtype), parameter(1, left.shape, dtype)
        directions = sorted(cse.MIRRORED_DIRECTION) if op == "compare" else [None]
        for direction in directions:
            attrs = {"direction": direction} if direction else {}
            both = (make(op, [x, y], **attrs), make(op, [y, x], **attrs))  # one of them is swapped
            module = Module("m", Computation("main", (x, y), both))
            CommonSubexpressionEliminator().run(module)
            want = evaluate(Computation("main", (x, y), both), [left, right])
            for got, expected_value in zip(evaluate(module.entry, [left, right]), want, strict=True):
                assert_identical(got, expected_value)
