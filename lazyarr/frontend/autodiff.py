"""la.grad, la.value_and_grad and la.vjp: reverse-mode derivatives of functions on lazy arrays.

Semantics are JAX's. The function is called once on stand-ins for the differentiated
arguments (fresh parameter leaves without buffers), the backward graph is built by
`lazyarr.hlo.autodiff.vjp_graph`, and the stand-ins are then replaced by the actual inputs'
nodes. Stand-ins keep arguments independent of each other and of arrays the function closes
over (so `f(x, x)` has two gradients, and `grad(grad(f))` does not confuse the inner and outer
input). Nothing is evaluated: results are lazy arrays, so this works on unevaluated inputs and
inside `la.jit`; a jitted function called by the differentiated function is inlined into its
graph. A consequence, as in JAX: the function cannot evaluate (`float`, `bool`, `print`) a
value that depends on a differentiated argument; branch with `la.where` instead.

Differentiated arguments may be arrays or pytrees of them (tuples, lists, dicts: see
frontend/pytree.py); their gradients have the same structure.
"""

from __future__ import annotations

import functools
import operator

from .. import dtypes
from ..hlo import Instruction, bind, fresh_parameter, remake, replace_all
from ..hlo.autodiff import vjp_graph
from . import pytree, tracing
from .array import Array
from .core import as_array, from_numpy, scalar_constant

_ACCEPTED = ", ".join(str(dtype) for dtype in dtypes.FLOATING)


def _check_differentiable_dtype(where: str, what: str, dtype) -> None:
    if dtypes.is_complex(dtype):
        raise TypeError(f"{where}: {what} has dtype {dtype}; complex numbers are not supported")
    if not dtypes.is_floating(dtype):
        raise TypeError(
            f"{where}: {what} has dtype {dtype}; only real floating values can be differentiated "
            f"({_ACCEPTED}); convert with .astype(float) first"
        )


def _argument_positions(where: str, argnums, count: int) -> tuple[int, ...]:
    items = argnums if isinstance(argnums, tuple) else (argnums,)
    positions = []
    for item in items:
        try:
            position = operator.index(item)
        except TypeError:
            raise TypeError(
                f"{where}: argnums must be an int or a tuple of ints, got {type(item).__name__} {item!r}"
            ) from None
        if not -count <= position < count:
            raise ValueError(f"{where}: argnums {position} is out of range for {count} positional arguments")
        positions.append(position % count)
    if len(set(positions)) != len(positions):
        raise ValueError(f"{where}: argnums {argnums} names an argument twice")
    return tuple(positions)


def _differentiable_input(where: str, what: str, value) -> Array:
    """`value` as a lazy array of a real floating dtype (Python floats become float64)."""
    if isinstance(value, (bool, int)):
        raise TypeError(
            f"{where}: {what} is a Python {type(value).__name__}; only real floating values can be "
            f"differentiated ({_ACCEPTED} arrays, or Python floats)"
        )
    array = as_array(value, where=where)
    _check_differentiable_dtype(where, what, array.dtype)
    return array


def _substitute(nodes: list[Instruction], replacements: dict[int, Instruction]) -> tuple[Instruction, ...]:
    """`nodes` rebuilt with each stand-in (by id) replaced by its actual node."""

    def rewrite(node: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        if id(node) in replacements:
            return replacements[id(node)]
        if operands == node.operands:
            return node
        return remake(node, operands)  # (a stand-in's input has its shape and dtype: no rules run)

    return replace_all(nodes, rewrite) if nodes else ()


class _Traced:
    """One call of `fun` with stand-ins for the differentiated arguments' array leaves."""

    def __init__(self, where, fun, args, kwargs, positions, has_aux):
        self.where = where
        # The differentiated arguments' leaves at the call (a later write does not count), in order.
        self.input_nodes: list[Instruction] = []
        self.stand_ins: list[Instruction] = []  # a parameter without buffer for each input
        self.structures = []  # per differentiated argument: its treedef
        call_args = list(args)
        for position in positions:
            leaves, treedef = pytree.flatten(args[position])
            paths = pytree.leaf_paths(args[position], f"argument {position}")
            arrays = [_differentiable_input(where, path, leaf) for path, leaf in zip(paths, leaves)]
            self.input_nodes += [array._node for array in arrays]
            self.structures.append(treedef)
            stand_ins = [fresh_parameter(array.shape, array.dtype) for array in arrays]
            self.stand_ins += stand_ins
            call_args[position] = pytree.unflatten(treedef, [Array(node) for node in stand_ins])
        name = getattr(fun, "__name__", type(fun).__name__)
        try:
            with tracing.tracing(f"{where}({name})"):  # jitted functions that fun calls are inlined
                result = fun(*call_args, **kwargs)
        except ValueError as error:
            if "no buffer is bound" in str(error) and any(repr(node) in str(error) for node in self.stand_ins):
                raise tracing.TracedValueError(  # the TypeError la.jit raises for the same mistake
                    f"{where}: {name} evaluated (float, bool, print, ...) a value that depends on a "
                    "differentiated argument; derivatives are built as a graph without running the "
                    "function on data, so use la.where instead of Python branches on array values"
                ) from error
            raise
        # An input with a value: its stand-in takes the same (immutable) buffer now that `fun`
        # has run (while it ran, reading a differentiated value still raised, as documented),
        # so `finish` need not rebuild the graph over the input's node (~2 us a node).
        for stand_in, node in zip(self.stand_ins, self.input_nodes):
            buffer = node._bound
            if buffer is not None:
                bind(stand_in, buffer)
        self.aux = None
        if has_aux:
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError(
                    f"{where}: with has_aux=True, {name} must return a pair (output, aux), got "
                    f"{type(result).__name__}"
                )
            result, self.aux = result
        self.result = result

    def finish(self, output_nodes: list[Instruction], cotangent_nodes=None, *, with_aux: bool = True):
        """Replace the stand-ins by the inputs in outputs, cotangents (one per input) and aux.

        Returns (output arrays, cotangents as one pytree per differentiated argument, aux).
        """
        with_gradients = cotangent_nodes is not None
        cotangent_nodes = list(cotangent_nodes or ())
        aux_leaves, aux_tree = pytree.flatten(self.aux if with_aux else None)
        aux_arrays = [leaf for leaf in aux_leaves if isinstance(leaf, Array)]
        replacements = {id(stand_in): node for stand_in, node in zip(self.stand_ins, self.input_nodes)
                        if stand_in._bound is None}
        nodes = list(output_nodes) + list(cotangent_nodes) + [array._node for array in aux_arrays]
        rebuilt = iter([Array(node) for node in (_substitute(nodes, replacements) if replacements else nodes)])
        outputs = [next(rebuilt) for _ in output_nodes]
        cotangents = [next(rebuilt) for _ in cotangent_nodes]
        by_id = {id(array): next(rebuilt) for array in aux_arrays}
        aux = pytree.unflatten(aux_tree, [by_id.get(id(leaf), leaf) for leaf in aux_leaves])
        trees, start = [], 0
        for treedef in self.structures if with_gradients else ():
            count = pytree.leaf_count(treedef)
            trees.append(pytree.unflatten(treedef, cotangents[start:start + count]))
            start += count
        return outputs, trees, aux


def _scalar_output(where: str, value) -> Array:
    if not isinstance(value, Array) and pytree.flatten(value)[1] is not pytree.LEAF:
        raise TypeError(
            f"{where}: the function must return a scalar array, got a {type(value).__name__} "
            "(use has_aux=True to return (output, aux), or la.vjp for several outputs)"
        )
    array = as_array(value, where=where)
    if array.shape != ():
        raise TypeError(
            f"{where}: the function must return a scalar (0-d) array, got shape {array.shape}; "
            "use la.vjp for non-scalar outputs"
        )
    _check_differentiable_dtype(where, "the function's output", array.dtype)
    return array


def _value_and_grad_call(where, fun, argnums, has_aux, args, kwargs):
    if not callable(fun):
        raise TypeError(f"{where}: expected a function to differentiate, got {type(fun).__name__}")
    positions = _argument_positions(where, argnums, len(args))
    traced = _Traced(where, fun, args, kwargs, positions, has_aux)
    output = _scalar_output(where, traced.result)
    seed = scalar_constant(1, output.dtype)
    cotangents = vjp_graph([output._node], traced.stand_ins, [seed], where=where)
    (value,), gradients, aux = traced.finish([output._node], cotangents)
    return value, (tuple(gradients) if isinstance(argnums, tuple) else gradients[0]), aux


def value_and_grad(fun, argnums=0, has_aux=False):
    """`fun` and its gradient in one call: returns a function giving (value, gradient).

    With `has_aux`, `fun` returns (value, aux) and the result is ((value, aux), gradient).
    With a tuple `argnums`, the gradient is a tuple. See `grad`.

    >>> import lazyarr as la
    >>> value, slope = la.value_and_grad(lambda x: (x * x).sum())(la.asarray([1.0, 2.0]))
    >>> float(value), slope.tolist()
    (5.0, [2.0, 4.0])
    """

    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kwargs):
        value, gradients, aux = _value_and_grad_call("la.value_and_grad", fun, argnums, has_aux, args, kwargs)
        return ((value, aux) if has_aux else value), gradients

    return value_and_grad_fun


def grad(fun, argnums=0, has_aux=False):
    """The gradient of a scalar function, as a function; lazy, like everything else.

    `fun` must return a 0-d real floating array. The gradient with respect to the positional
    arguments `argnums` (an int, or a tuple for a tuple of gradients) has each argument's
    shape, dtype and pytree structure. Differentiated arguments are real floating arrays
    (NumPy or lazy, evaluated or not), Python floats (as float64), or tuples, lists and dicts
    of them; other arguments pass through untouched. With `has_aux`, `fun` returns
    (output, aux) and the result is (gradient, aux). An op without a VJP rule on the way
    (sort, linalg and FFT custom-calls) raises NotImplementedError naming it.

    >>> import lazyarr as la
    >>> la.grad(lambda x: (x ** 2).sum())(la.asarray([1.0, 2.0, 3.0])).tolist()
    [2.0, 4.0, 6.0]
    >>> float(la.grad(la.grad(lambda x: x ** 3))(2.0))   # 6 x
    12.0
    """

    @functools.wraps(fun)
    def grad_fun(*args, **kwargs):
        _, gradients, aux = _value_and_grad_call("la.grad", fun, argnums, has_aux, args, kwargs)
        return (gradients, aux) if has_aux else gradients

    return grad_fun


def _cotangent_node(where: str, path: str, value, output: Array) -> Instruction:
    if isinstance(value, Array):
        if value.dtype != output.dtype:
            raise TypeError(f"{where}: cotangent{path} has dtype {value.dtype}; its output has dtype {output.dtype}")
        array = value
    else:
        array = from_numpy(value, dtype=output.dtype, where=where)
    if array.shape != output.shape:
        raise ValueError(f"{where}: cotangent{path} has shape {array.shape}; its output has shape {output.shape}")
    return array._node


def vjp(fun, *primals, has_aux=False):
    """`fun(*primals)` and a function pulling output cotangents back to the primals.

    Returns (outputs, vjp_fn): `outputs` as `fun` returned them (an array or a pytree of real
    floating arrays); `vjp_fn(cotangents)` takes cotangents in the same structure and shapes
    and returns a tuple with one cotangent per primal. With `has_aux`, `fun` returns
    (outputs, aux) and vjp returns (outputs, vjp_fn, aux).

    >>> import lazyarr as la
    >>> y, pull_back = la.vjp(lambda x: x * x, la.asarray([1.0, 2.0]))
    >>> pull_back(la.asarray([1.0, 10.0]))[0].tolist()
    [2.0, 40.0]
    """
    where = "la.vjp"
    if not callable(fun):
        raise TypeError(f"{where}: expected a function to differentiate, got {type(fun).__name__}")
    traced = _Traced(where, fun, primals, {}, tuple(range(len(primals))), has_aux)
    leaves, out_tree = pytree.flatten(traced.result)
    paths = pytree.leaf_paths(traced.result)
    outputs = [as_array(leaf, where=where) for leaf in leaves]
    for path, output in zip(paths, outputs):
        _check_differentiable_dtype(where, f"output{path}", output.dtype)
    output_nodes = [output._node for output in outputs]
    substituted, _, aux = traced.finish(output_nodes)

    def vjp_fn(cotangents):
        cotangent_leaves, cotangent_tree = pytree.flatten(cotangents)
        if cotangent_tree != out_tree:
            raise TypeError(
                f"{where}: the cotangents must have the structure of the outputs ({len(outputs)} "
                f"arrays as fun returned them), got {type(cotangents).__name__} with {len(cotangent_leaves)} leaves"
            )
        nodes = [_cotangent_node(where, path, value, output)
                 for path, value, output in zip(paths, cotangent_leaves, outputs)]
        pulled = vjp_graph(output_nodes, traced.stand_ins, nodes, where=where)
        _, gradients, _ = traced.finish([], pulled, with_aux=False)
        return tuple(gradients)

    result = pytree.unflatten(out_tree, substituted)
    return (result, vjp_fn, aux) if has_aux else (result, vjp_fn)
