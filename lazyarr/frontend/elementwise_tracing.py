"""Tracing a Python function into an elementwise graph, for vectorize and piecewise.

NumPy calls such functions on values (vectorize: each element; piecewise: the elements a
condition selects). lazyarr first runs the function once on *stand-ins*: tracer leaves, as
`la.jit` makes them (frontend/tracing.py), which have a shape and dtype but no values, so a
function that asks for a value (`if v > 0`, `float(v)`, `math.sin(v)`, a NumPy function lazyarr
lacks) raises there instead of seeing data. When it returns, the recorded graph is accepted
only if every node between the stand-ins and the result is elementwise (`ELEMENTWISE` ops,
whose output element depends only on the operands' elements at the same index) or a
broadcast of something that does not depend on the stand-ins (a constant, a closed-over
value). Such a graph computes each output element from the input elements at its index
alone, so it gives, on whole arrays, exactly what the function gives element by element or
on any selection of elements: `spread` rebuilds it over the real inputs' nodes (any shape).
Anything else (a reduction, a reshape, an index, a result of another shape, an exception)
is `NotElementwise`, whose message says why; the caller then takes NumPy's way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..hlo import Instruction, make, post_order, remake
from ..hlo.op import ELEMENTWISE
from . import tracing
from .array import Array
from .core import as_array, broadcast_to

__all__: list[str] = []


class NotElementwise(Exception):
    """A function that could not be traced into an elementwise graph (the message says why)."""


class Traced:
    """One run of a function on stand-ins: the stand-in leaves, and its results as nodes (a
    tuple when the function returned a tuple)."""

    def __init__(self, leaves: list[Instruction], results: list[Instruction], is_tuple: bool):
        self.leaves, self.results, self.is_tuple = leaves, results, is_tuple


def trace(function: Callable, stand_ins: Sequence[tuple[tuple, np.dtype]], name: str,
          call: Callable | None = None) -> Traced:
    """Run `function` on tracer leaves of the given (shape, dtype)s (`call(function, arrays)`
    calls it, by default with the arrays as positional arguments); its results become nodes
    (Python and NumPy scalars become constants). Raises NotElementwise when the function
    raises (it asked for a value, or rejected the stand-in) or returns something else than
    arrays and scalars."""
    with tracing.tracing(name) as current:
        leaves = [current.new_tracer(shape, np.dtype(dtype)) for shape, dtype in stand_ins]
        arrays = [Array(leaf) for leaf in leaves]
        try:
            result = function(*arrays) if call is None else call(function, arrays)
        except tracing.TracedValueError as error:
            asked = str(error).split(" on a traced array")[0]
            raise NotElementwise(f"it asks for the values of its argument: {asked}") from error
        except Exception as error:  # noqa: BLE001 (any failure means: not traceable; NumPy's way decides)
            raise NotElementwise(f"called on a stand-in it raised {type(error).__name__}: {error}") from error
    is_tuple = isinstance(result, tuple)
    results = []
    for item in result if is_tuple else (result,):
        if isinstance(item, Array):
            results.append(item._node)
        elif isinstance(item, (bool, int, float, complex, np.generic)) or (
                isinstance(item, np.ndarray) and item.dtype.kind in "biufc"):
            results.append(as_array(item, where=name)._node)
        else:
            raise NotElementwise(f"it returned a {type(item).__name__}, not an array or a number")
    return Traced(leaves, results, is_tuple)


def _dependents(traced: Traced, leaves: Sequence[Instruction] | None = None) -> set[int]:
    """Ids of the nodes that depend on a stand-in leaf (on one of `leaves`, when given)."""
    leaves = {id(leaf) for leaf in (traced.leaves if leaves is None else leaves)}
    dependent: set[int] = set()
    for node in post_order(traced.results):
        if id(node) in leaves or any(id(operand) in dependent for operand in node.operands):
            dependent.add(id(node))
    return dependent


def spread(traced: Traced, inputs: Sequence[Instruction], batch_rank: int) -> list[Instruction]:
    """The traced results rebuilt over `inputs` (one node per stand-in, all of one shape).

    The stand-ins' shape is `leading + rest` with `leading` of length `traced_rank` (0 for
    vectorize's 0-d stand-ins, 1 for piecewise's selected elements); the inputs' shape is
    `batch + rest` with `batch` of length `batch_rank`. Results not depending on the stand-ins
    are broadcast to that shape. Raises NotElementwise naming the first node that is not
    elementwise in the stand-ins."""
    leaf_shape = traced.leaves[0].shape
    shape = inputs[0].shape
    rest = len(shape) - batch_rank
    traced_rank = len(leaf_shape) - rest
    dependent = _dependents(traced)
    mapping: dict[int, Instruction] = {id(leaf): node for leaf, node in zip(traced.leaves, inputs)}

    def moved(node: Instruction) -> Instruction | None:
        """The node for an operand at the stand-ins' shape whose operands need no rebuilding."""
        if id(node) not in dependent and node.shape == () and leaf_shape == ():
            return broadcast_to(node, shape)  # a scalar the function computed without the stand-ins
        if node.op.name == "broadcast" and node.operands[0].shape != leaf_shape:
            operand = node.operands[0]
            dimensions = node.attributes["dimensions"]
            if id(operand) in dependent:
                name = _first_not_elementwise(operand, dependent)
                raise NotElementwise(f"it uses '{name}', which is not elementwise")
            if any(dimension < traced_rank for dimension in dimensions):
                raise NotElementwise(f"it broadcasts a value of shape {operand.shape} along the elements")
            dimensions = tuple(dimension - traced_rank + batch_rank for dimension in dimensions)
            return make("broadcast", [operand], shape=shape, dimensions=dimensions)
        if node.op.has(ELEMENTWISE) and node.operands:
            return None  # rebuilt from its operands
        if node.op.name == "broadcast":
            return None  # of an operand at the stand-ins' shape: that operand's node
        raise NotElementwise(f"it uses '{node.op.name}', which is not elementwise")

    results = []
    for result in traced.results:
        if id(result) not in dependent and result.shape != leaf_shape:
            results.append(_filled(result, shape, leaf_shape, traced_rank))
            continue
        stack = [result]
        while stack:  # iterative: operands before users
            node = stack[-1]
            if id(node) in mapping:
                stack.pop()
                continue
            if node.shape != leaf_shape:
                raise NotElementwise(f"a step ('{node.op.name}') changes the shape from {leaf_shape} to {node.shape}")
            direct = moved(node)
            if direct is not None:
                mapping[id(node)] = direct
                stack.pop()
                continue
            waiting = [operand for operand in node.operands if id(operand) not in mapping]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            if node.op.name == "broadcast":
                mapping[id(node)] = mapping[id(node.operands[0])]
            else:
                mapping[id(node)] = remake(node, [mapping[id(operand)] for operand in node.operands])
        results.append(mapping[id(result)])
    return results


def _first_not_elementwise(node: Instruction, dependent: set[int]) -> str:
    """The name of the first op below `node`, on a path to a stand-in, that is not elementwise."""
    stack = [node]
    while stack:
        node = stack.pop()
        if not node.op.has(ELEMENTWISE) and node.operands:
            return node.op.name
        stack.extend(operand for operand in node.operands if id(operand) in dependent)
    return node.op.name


def _filled(result: Instruction, shape: tuple, leaf_shape: tuple, traced_rank: int) -> Instruction:
    """A result that does not depend on the stand-ins, broadcast as NumPy assigns it to each
    selection (`y[cond] = value`): leading size-1 dimensions dropped, then it must broadcast
    to the stand-ins' shape with size 1 along the stand-ins' own (leading) dimensions."""
    given = result.shape
    while len(given) > len(shape) and given and given[0] == 1:
        given = given[1:]
    offset = len(leaf_shape) - len(given)
    fits = offset >= 0 and all(size == 1 or (offset + axis >= traced_rank and size == leaf_shape[offset + axis])
                               for axis, size in enumerate(given))
    if not fits:
        raise NotElementwise(f"its result has shape {result.shape}, which does not broadcast to the elements' "
                             f"{leaf_shape}")
    return broadcast_to(make("reshape", [result], shape=given), shape)


_WEAK = {"b": True, "i": 0, "u": 0, "f": 0.0, "c": 0j}  # a Python number of each kind


# What Python's operators on numbers record (a Python bool acts as the int it is under them,
# but NumPy's functions take it as np.bool_: np.sin(True) is float16).
_PYTHON_OPERATORS = frozenset({
    "add", "subtract", "multiply", "divide", "floor-divide", "remainder", "power", "negate", "abs", "compare",
    "and", "or", "xor", "not", "convert",
})


def check_python_promotion(traced: Traced, booleans: Sequence[Instruction] = ()) -> None:
    """Raise NotElementwise where the stand-ins, standing for Python numbers (vectorize hands
    its function `astype(object)` elements), would compute otherwise than those numbers:

    - they meet a NumPy value whose dtype NumPy's weak promotion would keep but the stand-in's
      dtype promoted (`v * np.float32(2)`: float32 for a Python float, float64 for a float64
      stand-in; `v + np.int8(1)`); every node depending on a stand-in is taken as still a
      Python number (one that is not only makes this stricter);
    - a stand-in for a Python bool (`booleans`, traced as int64) reaches anything but Python's
      operators."""
    dependent = _dependents(traced)
    from_booleans = _dependents(traced, booleans) if booleans else set()
    for node in post_order(traced.results):
        if id(node) in from_booleans and node.op.name not in _PYTHON_OPERATORS and node.operands:
            raise NotElementwise(f"it applies '{node.op.name}' to a bool element, which NumPy's call passes as "
                                 "a Python bool (an int to operators, np.bool_ to NumPy's functions)")
        if id(node) not in dependent or len(node.operands) < 2:
            continue
        anchor = next(operand for operand in node.operands if id(operand) in dependent)
        weak = _WEAK[anchor.dtype.kind]
        for operand in node.operands:
            if id(operand) in dependent or operand.dtype != anchor.dtype:
                continue
            base = operand
            while base.op.name == "convert":
                base = base.operands[0]
            kept = np.result_type(base.dtype, weak)
            if kept != operand.dtype:
                raise NotElementwise(f"it combines the element (a Python {type(weak).__name__} in NumPy's call) with "
                                     f"a {base.dtype} value, which NumPy's promotion keeps {kept}")


def same_structure(first: Sequence[Instruction], second: Sequence[Instruction]) -> bool:
    """Whether two graphs compute the same thing: nodes compared by op, attributes and operands;
    buffers of 64 elements or fewer (NumPy scalars the function used) by value, larger ones and
    unbound leaves by identity. Two traces of a function that reads the stand-ins' sizes
    (`v * v.size`) differ here."""
    numbers: dict[int, int] = {}
    table: dict[tuple, int] = {}  # one numbering for both graphs: equal numbers, equal structure
    for node in post_order([*first, *second]):
        bound = node._bound
        if bound is not None:
            buffer = bound if isinstance(bound, np.ndarray) else None
            if buffer is not None and buffer.size <= 64:
                key = ("buffer", buffer.dtype.str, buffer.shape, buffer.tobytes())
            else:
                key = ("node", id(node))
        elif node.op.name == "parameter":
            key = ("node", id(node))
        else:
            key = (node.op.name, node.shape, node.dtype.str, node.attrs,
                   tuple(numbers[id(operand)] for operand in node.operands))
        numbers[id(node)] = table.setdefault(key, len(table))
    return [numbers[id(node)] for node in first] == [numbers[id(node)] for node in second]
