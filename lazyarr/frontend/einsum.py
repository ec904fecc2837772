"""einsum: Einstein summation lowered to diagonals, sums and HLO dots, lazily.

The subscripts are parsed as NumPy parses them (explicit '->' output or implicit mode where
the output is the broadcast '...' dims followed by the labels seen once, in character-code
order; the interleaved operand/sublist form works too). Then each operand is reduced on its
own: repeated labels become diagonals, size-1 dims broadcast to the label's size, and labels
no other operand or the output needs are summed. The operands are contracted pairwise left to
right with one `dot` each (shared labels the rest still needs are batch dims, the others are
contracted), and a final transpose puts the labels in output order. Dtype: NumPy's result
type of the operands (int8 stays int8, bool sums are logical or), or `dtype=` under `casting`.
"""

from __future__ import annotations

import string

import numpy as np

from .. import dtypes
from ..hlo import Instruction
from ..hlo.template import Templates
from . import manipulation_layout
from .array import Array
from .core import as_array, broadcast_to, convert, wrap
from .node_layout import reshape, slice_axis, transpose
from .reduction_support import reduce, refuse_out
from .views import make_view

_LETTERS = string.ascii_letters


class _Operand:
    """A node with one label per dimension (letters, or ('...', k) for broadcast dims)."""

    __slots__ = ("node", "labels")

    def __init__(self, node: Instruction, labels: list):
        self.node, self.labels = node, list(labels)


def _error(subscripts, message):
    return ValueError(f"einsum {subscripts!r}: {message}")


def _interleaved(arguments):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]) -> ('subscripts', operands)."""

    def term(sublist):
        parts = []
        for item in sublist:
            if item is Ellipsis:
                parts.append("...")
            elif isinstance(item, (int, np.integer)) and 0 <= int(item) < len(_LETTERS):
                parts.append(_LETTERS[int(item)])
            else:
                raise ValueError(f"einsum: subscript {item!r} in a sublist is not an int in [0, 52) or ...")
        return "".join(parts)

    operands = list(arguments[0::2][: len(arguments) // 2])
    inputs = [term(sublist) for sublist in arguments[1::2][: len(operands)]]
    subscripts = ",".join(inputs)
    if len(arguments) % 2:
        subscripts += "->" + term(arguments[-1])
    return subscripts, operands


def _split_term(subscripts, term, what):
    """A term as (letters before '...', has ellipsis, letters after)."""
    if term.count("...") > 1 or term.replace("...", "").count("."):
        raise _error(subscripts, f"{what} has an invalid '.' (only one '...' ellipsis is allowed)")
    before, has_ellipsis, after = term.partition("...")
    for character in before + after:
        if character not in _LETTERS:
            raise _error(
                subscripts,
                f"invalid subscript {character!r} in einstein sum subscripts string, "
                "subscripts must be letters",
            )
    return before, bool(has_ellipsis), after


def _parse(subscripts: str, arrays: list[Array]):
    """Per-operand label lists, the output labels and the broadcast ('...') dimension count."""
    text = subscripts.replace(" ", "")
    if text.count("->") > 1 or ("-" in text.replace("->", "")) or (">" in text.replace("->", "")):
        raise _error(
            subscripts, "einstein sum subscript string does not contain proper '->' output specified"
        )
    inputs_text, arrow, output_text = text.partition("->")
    terms = inputs_text.split(",")
    if len(terms) < len(arrays):
        raise _error(
            subscripts,
            "more operands provided to einstein sum function than specified in the subscripts string",
        )
    if len(terms) > len(arrays):
        raise _error(
            subscripts,
            "fewer operands provided to einstein sum function than specified in the subscripts string",
        )
    parsed = [_split_term(subscripts, term, f"operand {index}") for index, term in enumerate(terms)]
    ellipsis_dims = []
    for index, ((before, has_ellipsis, after), array) in enumerate(zip(parsed, arrays)):
        extra = array.ndim - len(before) - len(after)
        if extra < 0:
            raise _error(
                subscripts, f"einstein sum subscripts string contains too many subscripts for operand {index}"
            )
        if extra > 0 and not has_ellipsis:
            raise _error(
                subscripts,
                f"operand {index} has more dimensions ({array.ndim}) than subscripts given in einstein sum, "
                "but no '...' ellipsis provided to broadcast the extra dimensions.",
            )
        ellipsis_dims.append(extra)
    broadcast_count = max(ellipsis_dims, default=0)
    labels = [
        list(before) + [("...", broadcast_count - extra + k) for k in range(extra)] + list(after)
        for (before, _, after), extra in zip(parsed, ellipsis_dims)
    ]
    broadcast_labels = [("...", k) for k in range(broadcast_count)]
    letters = [label for operand_labels in labels for label in operand_labels if isinstance(label, str)]
    if arrow:
        before, has_ellipsis, after = _split_term(subscripts, output_text, "the output")
        for letter in before + after:
            if (before + after).count(letter) > 1:
                raise _error(
                    subscripts,
                    f"einstein sum subscripts string includes output subscript {letter!r} multiple times",
                )
            if letter not in letters:
                raise _error(
                    subscripts,
                    f"einstein sum subscripts string included output subscript {letter!r} "
                    "which never appeared in an input",
                )
        if broadcast_count and not has_ellipsis:
            raise _error(
                subscripts,
                "output has more dimensions than subscripts given in einstein sum, but no '...' ellipsis "
                "provided to broadcast the extra dimensions.",
            )
        output = list(before) + (broadcast_labels if has_ellipsis else []) + list(after)
    else:
        once = sorted((letter for letter in set(letters) if letters.count(letter) == 1), key=ord)
        output = broadcast_labels + once
    return labels, output


def _label_sizes(subscripts, operands):
    """Each label's size: equal across operands, or 1 (which broadcasts)."""
    sizes: dict = {}
    for operand in operands:
        for label, size in zip(operand.labels, operand.node.shape):
            known = sizes.setdefault(label, size)
            if size != 1 and known != 1 and size != known:
                shown = "'...'" if isinstance(label, tuple) else repr(label)
                raise _error(
                    subscripts,
                    f"operands could not be broadcast together: label {shown} has sizes {known} and {size} "
                    "(shapes " + " ".join(str(tuple(o.node.shape)) for o in operands) + ")",
                )
            if known == 1:
                sizes[label] = size
    return sizes


def _take_diagonals(subscripts, index, operand: _Operand) -> _Operand:
    """Collapse repeated labels of one operand into one dimension (a diagonal, at the end)."""
    node, labels = operand.node, list(operand.labels)
    while True:
        repeated = next((label for label in labels if labels.count(label) > 1), None)
        if repeated is None:
            return _Operand(node, labels)
        first = labels.index(repeated)
        second = labels.index(repeated, first + 1)
        size, other = node.shape[first], node.shape[second]
        if size != other:
            raise _error(
                subscripts,
                f"dimensions in operand {index} for collapsing index {repeated!r} don't match "
                f"({size} != {other})",
            )
        rest = [axis for axis in range(node.ndim) if axis not in (first, second)]
        moved = transpose(node, rest + [first, second])
        flat = reshape(moved, moved.shape[:-2] + (size * size,))
        node = slice_axis(flat, flat.ndim - 1, 0, size * size, size + 1)
        labels = [labels[axis] for axis in rest] + [repeated]


def _sum_labels(operand: _Operand, unneeded) -> _Operand:
    axes = [axis for axis, label in enumerate(operand.labels) if label in unneeded]
    if not axes:
        return operand
    kept = [label for label in operand.labels if label not in unneeded]
    return _Operand(reduce(operand.node, "sum", axes), kept)


def _contract(left: _Operand, right: _Operand, needed) -> _Operand:
    """One dot: shared labels still needed are batch dims, other shared labels are summed."""
    from .linalg import dot_general

    shared = [label for label in left.labels if label in right.labels]
    batch = [label for label in shared if label in needed]
    contracted = [label for label in shared if label not in needed]
    node = dot_general(
        left.node,
        right.node,
        left_batch=[left.labels.index(label) for label in batch],
        right_batch=[right.labels.index(label) for label in batch],
        left_contracting=[left.labels.index(label) for label in contracted],
        right_contracting=[right.labels.index(label) for label in contracted],
    )
    labels = (
        batch
        + [label for label in left.labels if label not in shared]
        + [label for label in right.labels if label not in shared]
    )
    return _Operand(node, labels)


def _result_dtype(arrays, dtype, casting):
    result = dtypes.result_type(*arrays)
    if dtype is None:
        return result
    requested = dtypes.as_dtype(dtype, where="einsum")
    for index, array in enumerate(arrays):
        if not np.can_cast(array.dtype, requested, casting=casting):
            raise TypeError(
                f"einsum: operand {index} dtype could not be cast from {array.dtype} to {requested} "
                f"according to the rule {casting!r}"
            )
    return requested


# (subscripts, dtype, casting, each operand's shape and dtype) -> the parsed labels, output labels
# and result dtype; and the template of the graph: a loop's `einsum("ij,j->i", A, x)` is parsed
# and lowered once (~53 -> ~6 us a call).
_PARSED: dict[tuple, tuple] = {}
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_EINSUMS = Templates()


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False) -> Array:
    """Einstein summation over lazy arrays (NumPy's einsum; `optimize` is accepted and ignored:
    contraction is always pairwise, left to right).

    >>> la.einsum("bij,bjk->bik", x, y)   # batched matmul
    >>> la.einsum("ii", m)                # trace
    """
    refuse_out("einsum", out)
    if not operands:
        raise TypeError("einsum: at least the subscripts and one operand are required")
    if isinstance(operands[0], str):
        subscripts, values = operands[0], list(operands[1:])
    else:
        subscripts, values = _interleaved(operands)
    arrays = [as_array(value, where="einsum") for value in values]
    if not arrays:
        raise ValueError(f"einsum {subscripts!r}: no operands given")
    nodes = [array._node for array in arrays]
    key = (subscripts, dtype, casting, *[(node.shape, node.dtype) for node in nodes])
    try:
        parsed = _PARSED.get(key)
    except TypeError:  # an unhashable subscript list or dtype: nothing remembered
        key = parsed = None
    if parsed is None:
        labels, output = _parse(subscripts, arrays)
        if len(arrays) == 1 and set(labels[0]) == set(output):
            # NumPy's view of its one operand: `dtype=` and `casting=` checked, then ignored
            if dtype is not None:
                dtypes.as_dtype(dtype, where="einsum")
            if casting not in _CASTINGS:
                raise ValueError(f"casting must be one of {', '.join(map(repr, _CASTINGS))} (got {casting!r})")
            result_dtype = arrays[0].dtype
        else:
            result_dtype = _result_dtype(arrays, dtype, casting)
        parsed = (labels, output, result_dtype)
        if key is not None:
            if len(_PARSED) >= 1024:
                _PARSED.clear()
            _PARSED[key] = parsed
    labels, output, result_dtype = parsed
    if key is None:
        node = _summed(subscripts, nodes, labels, output, result_dtype)
    else:
        node = _EINSUMS.build(key, lambda *leaves: _summed(subscripts, list(leaves), labels, output, result_dtype),
                              *nodes)
    if len(arrays) == 1 and isinstance(values[0], Array) and result_dtype == arrays[0].dtype \
            and set(labels[0]) == set(output):
        return _single_operand_view(subscripts, arrays[0], labels[0], output, node)
    return wrap(node)


def _single_operand_view(subscripts, array: Array, labels, output, node: Instruction) -> Array:
    """One operand and no sum: NumPy's einsum returns a writable view of it ('ij->ji' a
    transpose, 'ii->i' a diagonal). A transpose is lazyarr's view too; a diagonal follows
    the operand but refuses writes (lazyarr does not write diagonals through)."""
    if len(set(labels)) == len(labels):
        return manipulation_layout.transpose(array, [labels.index(label) for label in output])
    refusal = (
        f"einsum {subscripts!r}: NumPy returns a writable view of the operand's diagonal here, "
        "which lazyarr does not write through, so writes are refused; write to a .copy() of "
        "it, or to the operand"
    )
    return make_view(array, lambda base: _summed(subscripts, [base], [labels], output, array.dtype), None,
                     node, refusal=refusal)


def _summed(subscripts, nodes: list[Instruction], labels, output, result_dtype) -> Instruction:
    """The einsum of `nodes` (labels parsed): diagonals, sums, pairwise dots, a transpose."""
    state = [
        _Operand(convert(node, result_dtype), operand_labels)
        for node, operand_labels in zip(nodes, labels)
    ]
    state = [_take_diagonals(subscripts, index, operand) for index, operand in enumerate(state)]
    sizes = _label_sizes(subscripts, state)
    state = [
        _Operand(broadcast_to(operand.node, tuple(sizes[label] for label in operand.labels)), operand.labels)
        for operand in state
    ]
    for index, operand in enumerate(state):
        elsewhere = set(output).union(
            *(other.labels for position, other in enumerate(state) if position != index)
        )
        state[index] = _sum_labels(operand, set(operand.labels) - elsewhere)
    result = state[0]
    for position in range(1, len(state)):
        needed = set(output).union(*(operand.labels for operand in state[position + 1 :]))
        result = _contract(result, state[position], needed)
        result = _sum_labels(result, set(result.labels) - needed)
    return transpose(result.node, [result.labels.index(label) for label in output])


__all__ = ["einsum"]
