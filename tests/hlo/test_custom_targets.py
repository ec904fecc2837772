"""Every custom-call target against a direct NumPy call, as a table run with hypothesis.

Each record draws operands (random batch shapes, empty batches, 0x0 and 1x1 matrices) and
options, builds the target with `custom_call_outputs`, evaluates it, and checks shape, then
dtype, then values. The dtype `infer` gives must equal the dtype of NumPy's own result, and
the implementation's raw result must already have it (the evaluator would silently cast a
same-kind mismatch). Values must be equal exactly: the implementation *is* the NumPy call,
so there is no tolerance. A second table pins the errors `infer` raises for bad input.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lazyarr import hlo
from lazyarr.hlo import HloError, make
from lazyarr.hlo.ops.custom import all_targets, custom_call_outputs, get_target
from tests.strategies import elements

LINALG_DTYPES = [np.dtype(name) for name in ("float32", "float64", "complex64", "complex128")]
REAL_FLOAT_DTYPES = LINALG_DTYPES[:2]
SORTABLE_DTYPES = [np.dtype(name) for name in ("bool", "int8", "int64", "uint16", "float32", "float64")]
NORMS = [None, "backward", "ortho", "forward"]  # None: the option is omitted

batch_shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)
matrix_sides = st.integers(0, 4)


@dataclass(frozen=True)
class TargetRecord:
    """One target: how to draw (operands, options) and the NumPy call it must reproduce."""

    target: str
    draw_inputs: Callable[[st.DataObject], tuple[list[np.ndarray], dict]]
    numpy_call: Callable[[list[np.ndarray], dict], tuple]


# --- operand drawing --------------------------------------------------------------------------


def _draw_array(data, shape, dtype, bound=1.0):
    """Finite values of magnitude <= bound (LAPACK may refuse NaN; conditioning needs a bound)."""
    return data.draw(hnp.arrays(dtype, shape, elements=elements(
        dtype, allow_edge=False, min_value=-bound if dtype.kind == "f" else None, max_value=bound,
    )))


def _general(data):
    dtype = data.draw(st.sampled_from(LINALG_DTYPES))
    shape = data.draw(batch_shapes) + (data.draw(matrix_sides), data.draw(matrix_sides))
    return _draw_array(data, shape, dtype)


def _square(data):
    dtype = data.draw(st.sampled_from(LINALG_DTYPES))
    side = data.draw(matrix_sides)
    return _draw_array(data, data.draw(batch_shapes) + (side, side), dtype)


def _dominant(matrix):
    """Entries of magnitude <= 1 plus (n + 1) * I: strictly diagonally dominant, so invertible."""
    side = matrix.shape[-1]
    return (matrix + (side + 1) * np.eye(side, dtype=matrix.dtype)).astype(matrix.dtype)


def _well_conditioned(data):
    return _dominant(_square(data))


def _positive_definite(data):
    """A @ A^H / n + (n + 1) * I: Hermitian positive definite (and well conditioned)."""
    matrix = _square(data)
    return _dominant(matrix @ np.conj(np.swapaxes(matrix, -1, -2)) / max(matrix.shape[-1], 1))


def _one(draw_operand, **option_strategies):
    """Inputs of one operand; each option strategy drawing None leaves that option out."""

    def draw_inputs(data):
        operand = draw_operand(data)
        options = {name: data.draw(strategy) for name, strategy in option_strategies.items()}
        return [operand], {name: value for name, value in options.items() if value is not None}

    return draw_inputs


def _solve_inputs(data):
    """x1 (..., M, M) well conditioned; x2 a vector (M,) or matrices (..., M, K), batch dims
    broadcasting against x1's."""
    dtype = data.draw(st.sampled_from(LINALG_DTYPES))
    side = data.draw(matrix_sides)
    batches = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=2, min_side=0, max_side=3,
    )).input_shapes
    coefficients = _dominant(_draw_array(data, batches[0] + (side, side), dtype))
    if data.draw(st.booleans()):
        right_side = _draw_array(data, (side,), dtype)
    else:
        right_side = _draw_array(data, batches[1] + (side, data.draw(matrix_sides)), dtype)
    return [coefficients, right_side], {}


def _pinv_inputs(data):
    """A general stack; the cutoff omitted, a scalar option, or an operand (float32 or float64)
    whose shape broadcasts to the batch shape (fewer axes, or 1 for some of them)."""
    operand = _general(data)
    batch = operand.shape[:-2]
    form = data.draw(st.sampled_from(["omitted", "option", "operand"]))
    if form == "omitted":
        return [operand], {}
    if form == "option":
        return [operand], {"rtol": data.draw(st.floats(0.0, 0.5))}
    kept = batch[len(batch) - data.draw(st.integers(0, len(batch))):]
    shape = tuple(size if data.draw(st.booleans()) else 1 for size in kept)
    dtype = data.draw(st.sampled_from(REAL_FLOAT_DTYPES))
    tolerance = data.draw(hnp.arrays(dtype, shape, elements=st.floats(0.0, 0.5, width=dtype.itemsize * 8)))
    return [operand, tolerance], {}


def _fft_inputs(real_only, dimensions):
    """An operand of rank 1..3 and valid-looking options; a transform length of 0 may be drawn
    on purpose (an empty axis, or irfft of length 1) to check infer refuses what NumPy refuses."""

    def draw_inputs(data):
        dtype = data.draw(st.sampled_from(REAL_FLOAT_DTYPES if real_only else LINALG_DTYPES))
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
        operand = _draw_array(data, shape, dtype, bound=100.0)
        options = {"norm": data.draw(st.sampled_from(NORMS))}
        if dimensions == "one":
            options["axis"] = data.draw(st.integers(0, len(shape) - 1))
            options["n"] = data.draw(st.none() | st.integers(1, 8))
        else:
            order = data.draw(st.permutations(range(len(shape))))
            axes = tuple(order[: data.draw(st.integers(1, len(shape)))])
            options["axes"] = axes
            lengths = st.tuples(*[st.sampled_from([-1]) | st.integers(1, 6) for _ in axes])
            options["s"] = data.draw(st.none() | lengths)
        return [operand], {name: value for name, value in options.items() if value is not None}

    return draw_inputs


def _sort_inputs(data):
    dtype = data.draw(st.sampled_from(SORTABLE_DTYPES))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    operand = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    options = {"axis": data.draw(st.integers(0, len(shape) - 1))}
    descending = data.draw(st.sampled_from([None, False, True]))
    if descending is not None:
        options["descending"] = descending
    return [operand], options


# --- NumPy calls ----------------------------------------------------------------------------


def _stable_order(value, options):
    """Stable sort order per lane; descending keeps ties in their original order and puts NaN
    first (Python's sorted(reverse=True) is stable), ascending is NumPy's own argsort."""
    axis = options["axis"]
    if not options.get("descending", False):
        return np.argsort(value, axis=axis, kind="stable")
    lanes = np.moveaxis(value, axis, -1)
    flat = lanes.reshape(math.prod(lanes.shape[:-1]), lanes.shape[-1])

    def key(item):
        return (bool(np.isnan(item)), 0 if np.isnan(item) else item) if value.dtype.kind == "f" else item

    order = np.array(
        [sorted(range(len(lane)), key=lambda index: key(lane[index]), reverse=True) for lane in flat],
        dtype=np.int64,
    ).reshape(lanes.shape)
    return np.moveaxis(order, -1, axis)


def _fft_call(function, dimensions):
    def call(values, options):
        if dimensions == "one":
            return (function(values[0], n=options.get("n"), axis=options["axis"], norm=options.get("norm")),)
        return (function(values[0], s=options.get("s"), axes=options["axes"], norm=options.get("norm")),)

    return call


def _fft_record(name, real_only=False):
    dimensions = "many" if name.endswith("fftn") else "one"
    function = getattr(np.fft, name.split(".")[1])
    return TargetRecord(name, _fft_inputs(real_only, dimensions), _fft_call(function, dimensions))


def _single(function):
    """The NumPy call of a one-operand, one-result target without options."""
    return lambda values, options: (function(values[0]),)


def _several(function):
    """The NumPy call of a one-operand target whose result is a named tuple."""
    return lambda values, options: tuple(function(values[0]))


def _sorted_values(values, options):
    return (np.take_along_axis(values[0], _stable_order(values[0], options), options["axis"]),)


def _complex(function):
    """The NumPy call of a linalg.eig-like target: NumPy's real results for real spectra cast to
    complex of the same precision (the array API's dtype, which does not depend on values)."""
    def call(values, options):
        results = function(values[0])
        results = results if isinstance(results, tuple) else (results,)
        dtype = np.result_type(values[0].dtype, np.complex64)
        return tuple(np.asarray(result).astype(dtype) for result in results)

    return call


def _pinv_call(values, options):
    if len(values) == 2:
        return (np.linalg.pinv(values[0], rtol=values[1]),)
    if "rtol" in options:
        return (np.linalg.pinv(values[0], rtol=options["rtol"]),)
    return (np.linalg.pinv(values[0]),)


# ufunc-method targets take operands already in the dtype NumPy's loop keeps (float32/float64)
UFUNC_FOLDS = ["subtract", "divide", "power", "arctan2", "hypot", "logaddexp", "maximum", "fmin"]
UFUNC_AT = ["add", "multiply", "subtract", "maximum", "negative", "sqrt"]
small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)


def _float_array(data, shape):
    dtype = data.draw(st.sampled_from(REAL_FLOAT_DTYPES))
    return data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)))


def _ufunc_reduce_inputs(data):
    """Any axes (several on a non-reorderable fold, or an empty one without initial, are drawn
    on purpose: infer refuses them as NumPy does), keepdims, initial and where as operands."""
    value = _float_array(data, small_shapes)
    axes = data.draw(st.lists(st.integers(0, max(value.ndim - 1, 0)), unique=True, max_size=value.ndim))
    options = {"ufunc": data.draw(st.sampled_from(UFUNC_FOLDS)), "axes": tuple(sorted(axes)),
               "keepdims": data.draw(st.booleans())}
    operands = [value]
    if data.draw(st.booleans()):
        operands.append(np.asarray(data.draw(elements(value.dtype)), value.dtype))
        options["initial"] = True
    elif data.draw(st.booleans()):
        options["identity"] = False  # NumPy's initial=None: fold from the first element
    if data.draw(st.booleans()):
        operands.append(data.draw(hnp.arrays(np.bool_, value.shape)))
        options["where"] = True
    return operands, options


def _ufunc_reduce_call(values, options):
    rest, keywords = list(values[1:]), {}
    if options.get("initial"):
        keywords["initial"] = rest.pop(0)[()]
    elif not options.get("identity", True):
        keywords["initial"] = None
    if options.get("where"):
        keywords["where"] = rest.pop(0)
    ufunc = getattr(np, options["ufunc"])
    return (ufunc.reduce(values[0], axis=options["axes"], keepdims=options["keepdims"], **keywords),)


def _ufunc_axis_inputs(data, with_indices=False):
    value = _float_array(data, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
    axis = data.draw(st.integers(0, value.ndim - 1))
    operands = [value]
    if with_indices:
        size = value.shape[axis]
        indices = data.draw(st.lists(st.integers(0, size - 1), max_size=4)) if size else []
        operands.append(np.array(indices, np.int64))
    return operands, {"ufunc": data.draw(st.sampled_from(UFUNC_FOLDS)), "axis": axis}


def _ufunc_at_inputs(data):
    """a, flat positions into it (repeats included), and b of the positions' shape."""
    operand = _float_array(data, small_shapes)
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=4)) if operand.size else (0,)
    positions = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(0, max(operand.size - 1, 0))))
    name = data.draw(st.sampled_from(UFUNC_AT))
    operands = [operand, positions]
    if getattr(np, name).nin == 2:
        operands.append(_float_array(data, st.just(shape)))
    return operands, {"ufunc": name}


def _ufunc_at_call(values, options):
    result = values[0].copy()
    getattr(np, options["ufunc"]).at(result.reshape(-1), *values[1:])
    return (result,)


boolean_or_omitted = st.sampled_from([None, False, True])
tolerance_or_omitted = st.none() | st.floats(0.0, 0.5)

RECORDS = [
    TargetRecord("sort", _sort_inputs, _sorted_values),
    TargetRecord("argsort", _sort_inputs, lambda values, options: (_stable_order(values[0], options),)),
    TargetRecord(
        "linalg.cholesky", _one(_positive_definite, upper=boolean_or_omitted),
        lambda values, options: (np.linalg.cholesky(values[0], upper=options.get("upper", False)),),
    ),
    TargetRecord("linalg.inv", _one(_well_conditioned), _single(np.linalg.inv)),
    TargetRecord("linalg.solve", _solve_inputs, lambda values, options: (np.linalg.solve(*values),)),
    TargetRecord("linalg.det", _one(_square), _single(np.linalg.det)),
    TargetRecord("linalg.slogdet", _one(_square), _several(np.linalg.slogdet)),
    TargetRecord("linalg.eigh", _one(_positive_definite), _several(np.linalg.eigh)),
    TargetRecord("linalg.eigvalsh", _one(_positive_definite), _single(np.linalg.eigvalsh)),
    TargetRecord("linalg.eig", _one(_square), _complex(np.linalg.eig)),
    TargetRecord("linalg.eigvals", _one(_square), _complex(np.linalg.eigvals)),
    TargetRecord(
        "linalg.qr", _one(_general, mode=st.sampled_from([None, "reduced", "complete"])),
        lambda values, options: tuple(np.linalg.qr(values[0], mode=options.get("mode", "reduced"))),
    ),
    TargetRecord(
        "linalg.svd", _one(_general, full_matrices=boolean_or_omitted),
        lambda values, options: tuple(
            np.linalg.svd(values[0], full_matrices=options.get("full_matrices", True))
        ),
    ),
    TargetRecord("linalg.svdvals", _one(_general), _single(np.linalg.svdvals)),
    TargetRecord("linalg.pinv", _pinv_inputs, _pinv_call),
    TargetRecord(
        "linalg.matrix_rank", _one(_general, rtol=tolerance_or_omitted),
        lambda values, options: (np.linalg.matrix_rank(values[0], rtol=options.get("rtol")),),
    ),
    _fft_record("fft.fft"),
    _fft_record("fft.ifft"),
    _fft_record("fft.rfft", real_only=True),
    _fft_record("fft.irfft"),
    _fft_record("fft.hfft"),
    _fft_record("fft.ihfft", real_only=True),
    _fft_record("fft.fftn"),
    _fft_record("fft.ifftn"),
    _fft_record("fft.rfftn", real_only=True),
    _fft_record("fft.irfftn"),
    TargetRecord("ufunc.reduce", _ufunc_reduce_inputs, _ufunc_reduce_call),
    TargetRecord(
        "ufunc.accumulate", _ufunc_axis_inputs,
        lambda values, options: (getattr(np, options["ufunc"]).accumulate(values[0], axis=options["axis"]),),
    ),
    TargetRecord(
        "ufunc.reduceat", lambda data: _ufunc_axis_inputs(data, with_indices=True),
        lambda values, options: (getattr(np, options["ufunc"]).reduceat(*values, axis=options["axis"]),),
    ),
    TargetRecord("ufunc.at", _ufunc_at_inputs, _ufunc_at_call),
]


def test_every_registered_target_has_a_record():
    assert sorted(record.target for record in RECORDS) == sorted(all_targets())


def _parameters(values):
    return [
        make("parameter", number=index, shape=value.shape, dtype=value.dtype)
        for index, value in enumerate(values)
    ]


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: record.target)
@settings(max_examples=max(settings.default.max_examples // 2, 1), deadline=None)  # ci: 20
@given(data=st.data())
def test_target_matches_numpy(record, data):
    values, options = record.draw_inputs(data)
    parameters = _parameters(values)
    try:
        outputs = custom_call_outputs(record.target, parameters, **options)
    except HloError:
        event("infer refuses")
        # infer refuses exactly what NumPy refuses (drawn only for FFT lengths below 1)
        with pytest.raises(ValueError):
            record.numpy_call(values, options)
        return
    with np.errstate(all="ignore"):
        expected = [np.asarray(result) for result in record.numpy_call(values, options)]
    event("empty operand" if any(value.size == 0 for value in values) else "non-empty operands")
    raw = get_target(record.target).implementation(values, options)
    computation = hlo.Computation("main", tuple(parameters), tuple(outputs))
    results = hlo.evaluate(computation, values)
    assert len(results) == len(raw) == len(expected) == len(outputs)
    for output, raw_result, result, reference in zip(outputs, raw, results, expected):
        assert result.shape == output.shape == reference.shape
        assert raw_result.dtype == result.dtype == output.dtype == reference.dtype
        # exact: the implementation is this same NumPy call (NaN compares equal to NaN)
        np.testing.assert_array_equal(result, reference, strict=True)


# --- errors -----------------------------------------------------------------------------------

f32, f64, c64 = np.dtype("float32"), np.dtype("float64"), np.dtype("complex64")
i64, f16 = np.dtype("int64"), np.dtype("float16")

# (target, operand (shape, dtype) list, options, fragments the message must contain)
ERROR_CASES = [
    ("linalg.inv", [((2, 3), f64)], {}, ["square", "f64[2, 3]"]),
    ("linalg.det", [((4, 2, 3), f32)], {}, ["square", "f32[4, 2, 3]"]),
    ("linalg.cholesky", [((3,), f64)], {}, ["rank 1", "f64[3]"]),
    ("linalg.eigh", [((3, 3), i64)], {}, ["int64", "(3, 3)", "float64"]),
    ("linalg.eigvalsh", [((2, 2), f16)], {}, ["float16"]),
    ("linalg.svd", [((), f64)], {}, ["rank 0"]),
    ("linalg.inv", [((2, 2), f64), ((2, 2), f64)], {}, ["expects 1 operand"]),
    ("linalg.solve", [((3, 3), f64), ((3,), f32)], {}, ["equal dtypes", "f64[3, 3]", "f32[3]"]),
    ("linalg.solve", [((3, 3), f64), ((2,), f64)], {}, ["length 3", "f64[2]"]),
    ("linalg.solve", [((3, 3), f64), ((2, 1), f64)], {}, ["3 rows", "f64[2, 1]"]),
    ("linalg.solve", [((2, 3, 3), f64), ((4, 3, 1), f64)], {}, ["broadcast", "(2,)", "(4,)"]),
    ("linalg.qr", [((3, 2), f64)], {"mode": "r"}, ["mode", "'r'"]),
    ("linalg.svd", [((3, 2), f64)], {"full_matrices": 1}, ["full_matrices", "bool"]),
    ("linalg.pinv", [((3, 2), f64)], {"rtol": -1.0}, ["rtol", "-1.0"]),
    ("linalg.pinv", [((2, 3, 2), f64), ((4,), f64)], {}, ["batch shape (2,)", "f64[4]"]),
    ("linalg.pinv", [((3, 2), f64), ((), c64)], {}, ["real", "c64[]"]),
    ("linalg.pinv", [((3, 2), f64), ((), f64)], {"rtol": 0.5}, ["both"]),
    ("linalg.eig", [((2, 3), f64)], {}, ["square", "f64[2, 3]"]),
    ("linalg.eigvals", [((2, 2), f16)], {}, ["float16"]),
    ("linalg.cholesky", [((2, 2), f64)], {"lower": True}, ["unknown option", "lower"]),
    ("fft.fft", [((4, 5), f64)], {"axis": 2}, ["axis 2", "f64[4, 5]"]),
    ("fft.fft", [((4,), f64)], {}, ["axis is required"]),
    ("fft.fft", [((4,), i64)], {"axis": 0}, ["int64", "s64[4]"]),
    ("fft.fft", [((4,), f64)], {"axis": 0, "n": 0}, ["n must be an int >= 1", "0"]),
    ("fft.fft", [((0, 3), c64)], {"axis": 0}, ["transform length 0", "c64[0, 3]"]),
    ("fft.irfft", [((1,), c64)], {"axis": 0}, ["transform length 0", "c64[1]"]),
    ("fft.rfft", [((4,), c64)], {"axis": 0}, ["complex64", "c64[4]"]),
    ("fft.ifft", [((4,), f64)], {"axis": 0, "norm": "none"}, ["norm", "'none'"]),
    ("fft.fftn", [((2, 3), f64)], {}, ["axes is required"]),
    ("fft.fftn", [((2, 3), f64)], {"axes": ()}, ["non-empty"]),
    ("fft.ifftn", [((2, 3), f64)], {"axes": (1, 1)}, ["repeated axes", "(1, 1)"]),
    ("fft.rfftn", [((2, 3), f64)], {"axes": (0, 1), "s": (4,)}, ["tuple of 2 ints", "(4,)"]),
    ("fft.irfftn", [((2, 3), c64)], {"axes": (0, 1), "s": (0, 2)}, ["each >= 1 or -1"]),
    ("fft.fftn", [((2, 3), f64)], {"axes": (0,), "n": 3}, ["unknown option", "'n'"]),
    # defaults are spelled by omission: HLO text cannot print None
    ("fft.fft", [((4,), f64)], {"axis": 0, "n": None}, ["omit it", "None"]),
    ("fft.fftn", [((4,), f64)], {"axes": (0,), "s": None}, ["omit s", "None"]),
    ("linalg.matrix_rank", [((2, 2), f64)], {"rtol": None}, ["omit it", "None"]),
    ("ufunc.reduce", [((3,), i64)], {"ufunc": "divide", "axes": (0,)}, ["int64", "computes in float64"]),
    ("ufunc.reduce", [((2, 2), f64)], {"ufunc": "subtract", "axes": (0, 1)}, ["not reorderable"]),
    ("ufunc.reduce", [((0,), f64)], {"ufunc": "power", "axes": (0,)}, ["no identity", "initial"]),
    ("ufunc.reduce", [((3,), f64)], {"ufunc": "sin", "axes": (0,)}, ["not a binary ufunc"]),
    ("ufunc.accumulate", [((3,), f64)], {"ufunc": "no_such_ufunc", "axis": 0}, ["'no_such_ufunc'"]),
    ("ufunc.accumulate", [((3,), f64)], {"ufunc": "add", "axis": 1}, ["axes (1,)"]),
    ("ufunc.reduceat", [((3,), f64), ((2,), f32)], {"ufunc": "add", "axis": 0}, ["1-d int64", "float32"]),
    ("ufunc.at", [((3,), f64), ((2,), f64), ((2,), f64)], {"ufunc": "add"}, ["int64", "float64"]),
    ("ufunc.at", [((3,), f64), ((2,), i64), ((3,), f64)], {"ufunc": "add"}, ["positions' shape"]),
]


@pytest.mark.parametrize(
    "target, operand_specs, options, fragments", ERROR_CASES,
    ids=[f"{case[0]}-{index}" for index, case in enumerate(ERROR_CASES)],
)
def test_infer_refuses_bad_input(target, operand_specs, options, fragments):
    parameters = [
        make("parameter", number=index, shape=shape, dtype=dtype)
        for index, (shape, dtype) in enumerate(operand_specs)
    ]
    with pytest.raises(HloError) as caught:
        custom_call_outputs(target, parameters, **options)
    message = str(caught.value)
    assert target in message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
