"""HLO text: print -> parse -> print is exact, and the parsed module evaluates identically.

Random graphs (hypothesis) mix elementwise, layout, reduction, dot, custom-call and
constants holding edge values; constants are checked bit for bit for every dtype.
"""

from __future__ import annotations

import doctest
import importlib
import math
import re
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays, from_dtype

from lazyarr import dtypes
from lazyarr.hlo import Computation, HloError, Literal, Module, constant, evaluate, make, text
from lazyarr.hlo.ops.custom import custom_call_outputs
from lazyarr.hlo.ops.elementwise import BINARY, COMPARISONS, UNARY
from lazyarr.hlo.ops.reduce import REDUCE_KINDS
from lazyarr.hlo.verify import verify

SHAPES = st.lists(st.integers(0, 3), max_size=3).map(tuple)
NONEMPTY_SHAPES = st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple)


def parameter(number, shape, dtype):
    return make("parameter", number=number, shape=tuple(shape), dtype=np.dtype(dtype))


def module_of(outputs, parameters=(), name="main"):
    return Module(name, Computation(name, tuple(parameters), tuple(outputs)))


def round_trip(module):
    """Print, parse, print again; the two texts must agree. Returns (text, parsed module)."""
    printed = text.print_module(module)
    parsed = text.parse(printed)
    assert text.print_module(parsed) == printed
    return printed, parsed


def edge_values(dtype):
    """Values that printers get wrong: extremes, signed zeros, NaN, infinities, subnormals."""
    if dtype == dtypes.bool_:
        return [False, True]
    if dtypes.is_integer(dtype):
        info = np.iinfo(dtype)
        return [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
    real = dtypes.real_dtype(dtype)
    info = np.finfo(real)
    reals = [np.nan, np.inf, -np.inf, -0.0, 0.0, info.smallest_subnormal, -info.smallest_subnormal,
             info.max, info.min, info.tiny, info.eps, 0.1, 1 / 3]
    if dtypes.is_complex(dtype):
        return [complex(a, b) for a, b in zip(reals, reals[3:] + reals[:3])]
    return reals


def literal_arrays(dtype, shape):
    """Arrays of `dtype` and `shape` mixing hypothesis's own values with the edge values."""
    elements = from_dtype(dtype) | st.sampled_from(edge_values(dtype))
    return arrays(dtype, shape, elements=elements)


# ------------------------------------------------------------------ random graph builders


def _accepting(table, dtype):
    """Names of the ops in an elementwise table (name, reference, accepted dtypes, ...) taking dtype."""
    return [row[0] for row in table if dtype in row[2]]


def _unary(draw, pick):
    operand = pick()
    return make(draw(st.sampled_from(_accepting(UNARY, operand.dtype))), [operand])


def _binary(draw, pick):
    left = pick()
    right = pick(left.shape, left.dtype)
    return make(draw(st.sampled_from(_accepting(BINARY, left.dtype))), [left, right])


def _compare_select(draw, pick):
    left = pick()
    right = pick(left.shape, left.dtype)
    predicate = make("compare", [left, right], direction=draw(st.sampled_from(sorted(COMPARISONS))))
    return make("select", [predicate, left, right])


def _convert(draw, pick):
    return make("convert", [pick()], dtype=draw(st.sampled_from(dtypes.ALL)))


def _broadcast(draw, pick):
    operand = pick()
    extent = draw(st.integers(0, 2))
    dimensions = tuple(range(1, operand.ndim + 1))
    return make("broadcast", [operand], shape=(extent, *operand.shape), dimensions=dimensions)


def _reshape(draw, pick):
    operand = pick()
    shape = draw(st.sampled_from([operand.shape[::-1], (operand.size,), (1, *operand.shape)]))
    return make("reshape", [operand], shape=shape)


def _transpose(draw, pick):
    operand = pick()
    return make("transpose", [operand], permutation=tuple(draw(st.permutations(range(operand.ndim)))))


def _slice(draw, pick):
    operand = pick()
    start, limit, stride = [], [], []
    for size in operand.shape:
        start.append(draw(st.integers(0, size)))
        limit.append(draw(st.integers(start[-1], size)))
        stride.append(draw(st.integers(1, 2)))
    return make("slice", [operand], start=tuple(start), limit=tuple(limit), stride=tuple(stride))


def _reduce(draw, pick):
    operand = pick()
    dimensions = sorted(draw(st.sets(st.integers(0, max(operand.ndim - 1, 0)), max_size=operand.ndim)))
    kinds = [kind for kind, row in sorted(REDUCE_KINDS.items()) if operand.dtype in row[1]]
    kind = draw(st.sampled_from(kinds))
    return make("reduce", [operand], dimensions=tuple(dimensions), kind=kind)


def _constant(draw, pick):
    dtype = draw(st.sampled_from(dtypes.ALL))
    return constant(draw(literal_arrays(dtype, draw(SHAPES))))


def _iota(draw, pick):
    shape = draw(NONEMPTY_SHAPES)
    dtype = draw(st.sampled_from(dtypes.NUMERIC))
    return make("iota", shape=shape, dtype=dtype, dimension=draw(st.integers(0, len(shape) - 1)))


def _concatenate(draw, pick):
    operand = pick()
    dimension = draw(st.integers(0, max(operand.ndim - 1, 0)))
    return make("concatenate", [operand, pick(operand.shape, operand.dtype)], dimension=dimension)


def _dot(draw, pick):
    operand = pick()
    last = (operand.ndim - 1,)
    return make(
        "dot", [operand, operand], lhs_batch=(), rhs_batch=(), lhs_contracting=last, rhs_contracting=last
    )


def _sort(draw, pick):
    operand = pick()
    axis = draw(st.integers(0, max(operand.ndim - 1, 0)))
    return custom_call_outputs("sort", [operand], axis=axis, descending=draw(st.booleans()))[0]


BUILDERS = [_unary, _unary, _binary, _binary, _compare_select, _convert, _broadcast, _reshape, _transpose,
            _slice,            _reduce, _constant, _iota, _concatenate, _dot, _sort]


@st.composite
def random_graphs(draw):
    """(module, arguments): a random graph over 1-3 parameters, some possibly unused."""
    parameters = [
        parameter(number, draw(SHAPES), draw(st.sampled_from(dtypes.ALL)))
        for number in range(draw(st.integers(1, 3)))
    ]
    pool = list(parameters)

    def pick(shape=None, dtype=None):
        fitting = [node for node in pool if shape is None or (node.shape == shape and node.dtype == dtype)]
        if draw(st.integers(0, 3)):  # three times in four the newest fitting node: chains grow
            return fitting[-1]
        return draw(st.sampled_from(fitting))

    for _ in range(draw(st.integers(4, 14))):
        builder = draw(st.sampled_from(BUILDERS))
        try:
            pool.append(builder(draw, pick))
        except HloError:
            pass  # the op refuses this operand (dtype, rank); draw another step
    used = {id(operand) for node in pool for operand in node.operands}
    sinks = [node for node in pool[len(parameters):] if id(node) not in used] or [pool[-1]]
    outputs = [*sinks, *draw(st.lists(st.sampled_from(pool), max_size=1))]
    arguments = [draw(literal_arrays(node.dtype, node.shape)) for node in parameters]
    return module_of(outputs, parameters), arguments


@settings(max_examples=200, deadline=None)
@given(random_graphs())
def test_random_graph_round_trips_and_evaluates_identically(graph):
    module, arguments = graph
    _, parsed = round_trip(module)
    verify(parsed)
    # Interning makes structural equality identity: the parsed graph *is* the original.
    assert all(new is old for new, old in zip(parsed.entry.outputs, module.entry.outputs, strict=True))
    assert parsed.entry.parameters == module.entry.parameters
    try:
        expected = evaluate(module.entry, arguments)
    except HloError as error:  # an op reference that breaks its own rules fails the same way
        with pytest.raises(HloError, match=re.escape(str(error))):
            evaluate(parsed.entry, arguments)
        return
    actual = evaluate(parsed.entry, arguments)
    for want, got in zip(expected, actual, strict=True):
        assert got.shape == want.shape
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert got.tobytes() == want.tobytes()  # bit-identical, NaN payloads and -0.0 included


# ----------------------------------------------------------------------------- literals


def _parsed_literal(array):
    node = constant(array)
    _, parsed = round_trip(module_of([node]))
    (result,) = parsed.entry.outputs
    assert result is node
    return result.attr("literal").array


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(dtypes.ALL).flatmap(lambda dtype: literal_arrays(dtype, SHAPES)))
def test_literal_round_trips_for_every_dtype(array):
    result = _parsed_literal(array)
    assert result.dtype == array.dtype and result.shape == array.shape
    assert result.tobytes() == array.tobytes()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(dtypes.NUMERIC), st.integers(0, 6), st.randoms(use_true_random=False))
def test_literal_keeps_every_bit_pattern(dtype, size, random):
    """Random bytes viewed as the dtype: every NaN payload, subnormal and signed zero."""
    raw = bytes(random.getrandbits(8) for _ in range(size * dtype.itemsize))
    array = np.frombuffer(raw, dtype)
    assert _parsed_literal(array).tobytes() == raw


def test_every_float16_bit_pattern_round_trips():
    array = np.arange(1 << 16, dtype=np.uint16).view(np.float16).reshape(256, 256)
    assert _parsed_literal(array).tobytes() == array.tobytes()


@pytest.mark.parametrize(
    ("value", "dtype", "written"),
    [
        (2.5, "float32", "constant(2.5)"),
        (np.nan, "float64", "constant(nan)"),
        (-np.inf, "float16", "constant(-inf)"),
        (-0.0, "float32", "constant(-0.0)"),
        (0.1, "float32", "constant(0.1)"),
        (np.iinfo(np.uint64).max, "uint64", "constant(18446744073709551615)"),
        (np.iinfo(np.int64).min, "int64", "constant(-9223372036854775808)"),
        (True, "bool", "constant(true)"),
        (1 - 2j, "complex64", "constant((1.0,-2.0))"),
        ([[1, 2], [3, 4]], "int8", "constant({{1,2},{3,4}})"),
        (np.zeros((2, 0)), "float32", "constant({{},{}})"),
        (np.zeros((0, 3)), "float32", "constant({})"),
        (np.array(-np.nan, np.float32), "float32", "constant(nan(0xffc00000))"),
    ],
)
def test_literal_text(value, dtype, written):
    printed, parsed = round_trip(module_of([constant(value, dtype)]))
    assert written in printed
    expected = np.array(value, dtype)
    assert parsed.entry.outputs[0].attr("literal").array.tobytes() == expected.tobytes()


def test_large_constant_summarizes_only_when_asked():
    module = module_of([constant(np.arange(1001, dtype=np.int32))])
    assert "{...}" not in text.print_module(module)
    summary = text.print_module(module, summarize=True)
    assert "constant({...})" in summary
    with pytest.raises(HloError, match="summarized"):
        text.parse(summary)


# ------------------------------------------------------------------------- the format


def test_format_matches_the_documented_example():
    p0 = parameter(0, (3, 4), "float32")
    broadcast = make("broadcast", [constant(2.5, "float32")], dimensions=(), shape=(3, 4))
    product = make("multiply", [p0, broadcast])
    total = make("reduce", [product], dimensions=(0,), kind="sum")
    printed, _ = round_trip(module_of([product, total], [p0]))
    assert printed == (
        "HloModule main\n\n"
        "ENTRY main {\n"
        "  p0 = f32[3,4] parameter(0)\n"
        "  constant.1 = f32[] constant(2.5)\n"
        "  broadcast.2 = f32[3,4] broadcast(constant.1), dimensions={}, shape={3,4}\n"
        "  multiply.3 = f32[3,4] multiply(p0, broadcast.2)\n"
        "  reduce.4 = f32[4] reduce(multiply.3), dimensions={0}, kind=sum\n"
        "  ROOT outputs = (f32[3,4], f32[4]) tuple(multiply.3, reduce.4)\n"
        "}\n"
    )


def test_unused_parameters_and_repeated_outputs_survive():
    parameters = [parameter(number, (2,), "int32") for number in range(4)]
    negated = make("negate", [parameters[2]])
    module = module_of([negated, parameters[1], negated], parameters)
    printed, parsed = round_trip(module)
    assert parsed.entry.parameters == tuple(parameters)
    assert parsed.entry.outputs == (negated, parameters[1], negated)
    assert printed.index("p0 =") < printed.index("p3 =") < printed.index("p2 =")  # unused first


def test_single_output_is_marked_root():
    p0 = parameter(0, (), "float64")
    printed, parsed = round_trip(module_of([make("exp", [p0])], [p0]))
    assert "  ROOT exp.1 = f64[] exp(p0)\n" in printed
    assert len(parsed.entry.outputs) == 1


def test_attribute_values_of_every_kind_round_trip():
    operand = parameter(0, (3,), "float32")
    options = {
        "axis": 0, "descending": False, "scale": -1.5e-300, "not_a_number": float("nan"),
        "plain": "word", "spaced": "two words", "quote": 'say "hi"\n', "dtype_word": "f32",
        "number_word": "12", "bool_word": "true", "empty": (), "nested": (1, (2, ("x", 3.0)), ()),
        "unicode": "caf\u00e9", "dtype": np.dtype("complex64"),
    }
    (sorted_node,) = custom_call_outputs("sort", [operand], **options)
    module = module_of([sorted_node], [operand])
    printed, parsed = round_trip(module)
    parsed_options = dict(parsed.entry.outputs[0].attr("options"))
    assert parsed_options.keys() == options.keys()
    for key, value in options.items():
        if key != "not_a_number":
            assert parsed_options[key] == value and type(parsed_options[key]) is type(value)
    assert math.isnan(parsed_options["not_a_number"])
    assert '{spaced,"two words"}' in printed and '{dtype_word,"f32"}' in printed
    assert "{dtype,c64}" in printed


def test_convert_and_iota_print_dtypes_as_short_names():
    iota = make("iota", shape=(2, 3), dtype=np.dtype("uint16"), dimension=1)
    converted = make("convert", [iota], dtype=np.dtype("bool"))
    printed, _ = round_trip(module_of([converted]))
    assert "iota(), dimension=1, dtype=u16, shape={2,3}" in printed
    assert "pred[2,3] convert(iota.0), dtype=pred" in printed


def test_module_with_other_computations_round_trips():
    p0 = parameter(0, (2,), "float32")
    helper = Computation("helper.1", (p0,), (make("sin", [p0]),))
    module = Module("program", Computation("main", (p0,), (make("cos", [p0]),)), {"helper.1": helper})
    printed, parsed = round_trip(module)
    assert printed.index("helper.1 {") < printed.index("ENTRY main {")
    assert list(parsed.computations) == ["helper.1"]
    assert parsed.computations["helper.1"].outputs == helper.outputs
    assert parsed.name == "program"


def test_parse_computation_and_handwritten_text():
    computation = text.parse_computation(
        """
        // a comment, then blank lines

        ENTRY f {
          x = s32[2] parameter(0)
          two = s32[2] constant({2, 2})
          ROOT y = s32[2] multiply(x, two)
        }
        """
    )
    (result,) = evaluate(computation, [np.array([3, -4], np.int32)])
    np.testing.assert_array_equal(result, [6, -8])
    assert text.print_computation(computation).startswith("f {\n  p0 = s32[2] parameter(0)")


def test_hundred_thousand_op_chain_prints_and_parses_quickly():
    p0 = parameter(0, (2,), "float32")
    node = p0
    for index in range(100_000):
        node = make("negate" if index % 2 else "abs", [node])
    start = time.perf_counter()
    printed = text.print_module(module_of([node], [p0]))
    middle = time.perf_counter()
    del node  # the parser must build the whole chain anew, not find it interned
    parsed = text.parse(printed)
    end = time.perf_counter()
    assert middle - start < 5 and end - middle < 10, (middle - start, end - middle)  # ~0.3 s, ~1.5 s
    assert printed.count("\n") == 100_005  # header, blank, ENTRY, p0, ops, }
    assert text.print_module(parsed) == printed
    (result,) = evaluate(parsed.entry, [np.array([-1.5, 2.0], np.float32)])
    np.testing.assert_array_equal(result, np.array([-1.5, -2.0], np.float32))  # negate(abs(...))


def test_docstring_examples():
    for name in ("lazyarr.hlo.text", "lazyarr.hlo.evaluate", "lazyarr.hlo.verify"):
        failures, _ = doctest.testmod(importlib.import_module(name))
        assert failures == 0, name


# ---------------------------------------------------------------------------- errors


VALID_HEAD = "HloModule m\nENTRY main {\n  p0 = f32[2] parameter(0)\n"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("", "expected 'HloModule"),
        ("HloModule m\n", "no ENTRY"),
        (VALID_HEAD + "  ROOT r = f32[2] frobnicate(p0)\n}", "line 4: unknown op 'frobnicate'"),
        (VALID_HEAD + "  ROOT r = f32[3] negate(p0)\n}",
         "line 4: declared type f32[3] but negate gives f32[2]"),
        (VALID_HEAD + "  ROOT r = f32[2] add(p0, q)\n}", "line 4: operand 'q' is not defined"),
        (VALID_HEAD + "  ROOT r f32[2] negate(p0)\n}", "line 4: expected '='"),
        (VALID_HEAD + "  ROOT r = f32[2] negate(p0) ;\n}", "line 4: expected ','"),
        (VALID_HEAD + "  ROOT r = f33[2] negate(p0)\n}", "unknown element type 'f33'"),
        (VALID_HEAD + "  ROOT r = f32[2] negate(p0), colour=red\n}", "unknown attribute"),
        (VALID_HEAD + "  ROOT r = f32[2] negate(p0\n}", "unexpected end of line"),
        (VALID_HEAD + "  r = f32[2] negate(p0)\n}", "has no ROOT"),
        (VALID_HEAD + "  ROOT r = f32[2] negate(p0)\n", "not closed"),
        (VALID_HEAD + "  p0 = f32[2] negate(p0)\n  ROOT r = f32[2] negate(p0)\n}", "defined twice"),
        (VALID_HEAD + "  ROOT c = f32[3] constant({1,2})\n}", "2 entries on dimension 0, not 3"),
        (VALID_HEAD + "  ROOT c = s8[] constant(300)\n}", "out of range for s8"),
        (VALID_HEAD + "  ROOT c = f16[] constant(1e10)\n}", "overflows f16"),
        (VALID_HEAD + "  ROOT c = s8[] constant(1.5)\n}", "must be integers"),
        (VALID_HEAD + "  ROOT c = f32[2] constant({1,x})\n}", "must be numbers"),
        (VALID_HEAD + "  ROOT c = f32[] constant(nan(0x1))\n}", "is not a NaN"),
        (VALID_HEAD + "  ROOT c = c64[] constant(1.0)\n}", "(real,imaginary)"),
        (VALID_HEAD + "  ROOT t = (f32[3]) tuple(p0)\n}", "declared types do not match"),
        (VALID_HEAD + "  t = (f32[2]) tuple(p0)\n}", "must be the ROOT"),
        ("HloModule m\nENTRY main {\n  p1 = f32[2] parameter(1)\n  ROOT r = f32[2] negate(p1)\n}",
         "parameters [1], expected 0..0"),
        (VALID_HEAD + "  ROOT r = f32[2] reduce(p0), dimensions={0,}, kind=sum\n}", "unexpected '}'"),
        (VALID_HEAD + '  ROOT r = f32[] reduce(p0), dimensions={0}, kind="sum", kind=sum\n}', "given twice"),
        (VALID_HEAD + "  ROOT r = f32[] reduce(p0), dimensions={0}, kind=average\n}", "kind 'average'"),
    ],
)
def test_parse_errors_name_the_line_and_the_problem(source, message):
    with pytest.raises(HloError) as caught:
        text.parse(source)
    assert message in str(caught.value)


def test_parse_error_quotes_the_offending_line():
    with pytest.raises(HloError, match=r"line 4: .*ROOT r = f32\[2\] frobnicate\(p0\)"):
        text.parse(VALID_HEAD + "  ROOT r = f32[2] frobnicate(p0)\n}")


def test_unprintable_attribute_value_is_refused():
    with pytest.raises(HloError, match="cannot print"):
        text.format_attribute_value((1, Literal(1)))


FUZZ_BASE = text.print_module(module_of([
    constant(np.array([[1 + 2j, np.nan]], np.complex64)),
    constant(np.array([np.float32(-np.nan), -0.0, 1e-45], np.float32)),
    constant(np.array([True, False])),
    custom_call_outputs("sort", [parameter(0, (2,), "float32")], axis=0, note=("a b", (1.5, "f32")))[0],
], [parameter(0, (2,), "float32")]))
FUZZ_PIECES = ["", "{", "}", "(", ")", ",", "-", "x", "1", "nan", '"', "=", "f32", "[", "]", " ", "\n",
               "ROOT ", "1e999", "0x", "nan(0x7fc00001)", "{...}", "c64", "\\", "9" * 30]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(FUZZ_BASE)), st.integers(0, 5), st.sampled_from(FUZZ_PIECES)),
                min_size=1, max_size=3))
def test_mangled_text_parses_or_raises_hlo_error(edits):
    source = FUZZ_BASE
    for position, removed, inserted in edits:
        source = source[:position] + inserted + source[position + removed:]
    try:
        module = text.parse(source)
    except HloError:
        return
    verify(module)
