"""Leaf ops: parameter (a runtime input), constant (a literal), iota (index along a dimension)."""

from __future__ import annotations

import numpy as np

from ... import dtypes
from ..op import ELEMENTWISE, LEAF, HloError, OpDef, register
from ._rules import check_int_tuple
from ._vjp_support import no_operands


def _parameter_reference(values, attrs):
    raise HloError("parameter has no reference; the evaluator binds it to an argument")


register(OpDef(
    name="parameter",
    arity=0,
    shape_rule=lambda operands, attrs: check_int_tuple("parameter", "shape", attrs["shape"], minimum=0),
    dtype_rule=lambda operands, attrs: dtypes.as_dtype(attrs["dtype"], where="parameter"),
    reference=_parameter_reference,
    attrs=("number", "shape", "dtype"),
    traits=frozenset({LEAF}),
    doc="Runtime input number `number` of the computation.",
    vjp=no_operands,
))


def _literal(attrs):
    literal = attrs["literal"]
    if type(literal).__name__ != "Literal":
        raise HloError(f"constant: attribute literal must be a Literal, got {literal!r}")
    return literal


register(OpDef(
    name="constant",
    arity=0,
    shape_rule=lambda operands, attrs: _literal(attrs).shape,
    dtype_rule=lambda operands, attrs: _literal(attrs).dtype,
    reference=lambda values, attrs: attrs["literal"].array,
    attrs=("literal",),
    traits=frozenset({LEAF}),
    doc="A literal array value.",
    vjp=no_operands,
))


def _iota_shape(operands, attrs):
    shape = check_int_tuple("iota", "shape", attrs["shape"], minimum=0)
    if not 0 <= attrs["dimension"] < len(shape):
        raise HloError(f"iota: dimension {attrs['dimension']} out of range for shape {shape}")
    return shape


def _iota_reference(values, attrs):
    shape, dimension = attrs["shape"], attrs["dimension"]
    ramp = np.arange(shape[dimension]).astype(attrs["dtype"])
    view = [1] * len(shape)
    view[dimension] = shape[dimension]
    return np.broadcast_to(ramp.reshape(view), shape).copy()


def _iota_dtype(operands, attrs):
    dtype = dtypes.as_dtype(attrs["dtype"], where="iota")
    if dtype == dtypes.bool_:
        raise HloError("iota: dtype must be numeric, got bool")
    return dtype


register(OpDef(
    name="iota",
    arity=0,
    shape_rule=_iota_shape,
    dtype_rule=_iota_dtype,
    reference=_iota_reference,
    attrs=("shape", "dtype", "dimension"),
    traits=frozenset({LEAF, ELEMENTWISE}),
    doc="output[i] = i[dimension], converted to dtype.",
    vjp=no_operands,
))
