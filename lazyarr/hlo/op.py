"""OpDef: everything about one HLO op in one place, and the registry of ops by name.

An op is a bundle of rules (as a JAX primitive is): how its result shape and dtype follow
from its operands and attributes, which attributes it takes, and its NumPy reference, which
*is* the op's semantics. The evaluator runs the references; the compilers (next layers) fill
`emit` with an elemental emitter and are held to the reference by the test table.

Ops are strict like XLA's: operands of binary ops have equal shapes and dtypes; broadcasting
and promotion are the frontend's job. A rule raises `HloError` (a `ValueError`) naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class HloError(ValueError):
    """An instruction that breaks its op's rules (wrong arity, shapes, dtypes or attributes)."""


# Traits: what passes and emitters may rely on.
ELEMENTWISE = "elementwise"      # output[i] depends only on operands[...][i]; equal shapes
COMMUTATIVE = "commutative"      # binary op with op(a, b) == op(b, a)
LEAF = "leaf"                    # no operands (parameter, constant, iota)
INDEX_REMAP = "index_remap"      # output element is one operand element at a remapped index
REDUCTION = "reduction"          # output element combines many operand elements
HOST = "host"                    # runs on the host through its reference (custom-call)


@dataclass(frozen=True, eq=False)
class OpDef:
    """The rules of one op.

    `shape_rule(operands, attrs)` and `dtype_rule(operands, attrs)` receive the operand
    instructions (anything with `.shape` and `.dtype`) and the attribute mapping.
    `reference(values, attrs)` receives NumPy arrays and returns the NumPy result.
    `attrs` names the required attributes; `optional_attrs` maps optional ones to defaults.
    `emit` is the elemental emitter slot, filled by the code-generating layer.
    `vjp(instruction, cotangent)` is the reverse-mode derivative rule (see hlo/autodiff.py):
    one entry per operand, the operand's cotangent (an Instruction shaped and typed like the
    operand, built from differentiable ops so that rules compose for higher derivatives) or
    None where no gradient flows (integer, bool and index operands, zero derivatives).
    An op without a rule (None here) cannot be differentiated through.
    """

    name: str
    arity: int | None
    shape_rule: Callable[[Sequence[Any], Mapping[str, Any]], tuple[int, ...]]
    dtype_rule: Callable[[Sequence[Any], Mapping[str, Any]], np.dtype]
    reference: Callable[[Sequence[np.ndarray], Mapping[str, Any]], np.ndarray]
    attrs: tuple[str, ...] = ()
    optional_attrs: Mapping[str, Any] = field(default_factory=dict)
    traits: frozenset[str] = frozenset()
    doc: str = ""
    emit: Callable | None = None
    vjp: Callable[[Any, Any], tuple] | None = None

    def has(self, trait: str) -> bool:
        return trait in self.traits


_REGISTRY: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    if opdef.name in _REGISTRY:
        raise ValueError(f"op {opdef.name!r} is defined twice")
    _REGISTRY[opdef.name] = opdef
    return opdef


def get(name: str) -> OpDef:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise HloError(f"unknown op {name!r}") from None


def all_ops() -> dict[str, OpDef]:
    """Every registered op by name (importing lazyarr.hlo.ops registers them)."""
    return dict(_REGISTRY)
