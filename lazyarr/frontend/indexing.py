"""NumPy indexing on lazy arrays: `x[key]` and `x[key] = value`, plus take and friends.

`getitem` lowers a key (parsed by `indexing_key.parse_key`) to strict HLO: slices become one
`slice` with positive strides (negative steps add a `reverse`), integers a size-1 slice that
a `reshape` drops, and advanced indices one `gather` whose batch dims a `transpose` moves to
where NumPy puts them; a basic key's result is a view of the array (views.py). `setitem`
returns a new array (`Array.__setitem__` moves the array object to it): unit-step basic keys
become a `dynamic-update-slice` with constant starts, every other key a `scatter` (mode set;
with duplicate indices the last update wins, as NumPy does in practice).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import dtypes
from ..backends import contiguous_view
from ..hlo import Instruction, Maker, constant, make
from ..hlo.template import Templates
from .array import Array, evaluated_view_node, leaf_for
from .core import as_array, broadcast_to, contains_lazy, convert, wrap
from .elements import Element
from .indexing_key import (
    AdvancedIndex,
    EllipsisMarker,
    IndexPlan,
    IntegerIndex,
    NewAxis,
    SliceIndex,
    evaluated_mask,
    format_shape,
    parse_key,
)
from .indexing_take import compress, ix_, put_along_axis, static_integer_indices, take, take_along_axis
from .views import NOTING_VIEW_CHAINS, make_view, note_view_chain

# getitem/setitem are the Array dunders (bound in methods.py), not namespace functions.
__all__ = ["compress", "ix_", "put_along_axis", "take", "take_along_axis"]


def getitem(array, key) -> Array:
    """`array[key]` with NumPy's semantics, built lazily (a boolean mask is evaluated).

    >>> import numpy as np, lazyarr as la
    >>> x = la.asarray(np.arange(12).reshape(3, 4))
    >>> np.asarray(getitem(x, (slice(1, None), slice(None, None, -2))))
    array([[ 7,  5],
           [11,  9]])
    """
    kind = type(key)
    if kind is slice:  # `x[a:b]` is `x[a:b,]`: the memoized tuple path below (~1 µs less than the general one)
        key, kind = (key,), tuple
    if kind is int:  # hot: `x[i]` of an evaluated vector, read element by element (_element_read, inline)
        buffer = array._node._bound
        if type(buffer) is _NDARRAY and buffer.ndim == 1:
            try:
                value = buffer[key]
            except IndexError:
                pass  # the general path raises lazyarr's error, naming the axis
            else:
                element = _NEW_ELEMENT(Element)
                element._value = value
                element._leaf = element._base = element._views = None
                return element
    elif kind is tuple:
        buffer = array._node._bound
        if buffer is None:
            if type(array) is Array:
                recipe = _plain_tuple_key(array._node.shape, key)  # hot: `u[1:-1, 1:-1]` of a lazy array
                if recipe is not None and recipe.is_view:
                    # (ints pick with a dynamic-slice: never a chain the C slot replays, not noted)
                    if NOTING_VIEW_CHAINS[0] and recipe.picked is None:
                        _note_view_chain(array._node, key, recipe)
                    return make_view(array, recipe.read, recipe.write, layout=recipe.layout)
        elif type(buffer) is _NDARRAY:
            if buffer.ndim == len(key) and _all_ints(key):
                element = _element_read(buffer, key)  # `m[i, j]`
                if element is not None:
                    return element
            elif type(array) is Array:
                recipe = _plain_tuple_key(array._node.shape, key)  # hot: `u[:-2, 1:-1]` of an evaluated u
                if recipe is not None and recipe.is_view:
                    # (ints pick with a dynamic-slice: never a chain the C slot replays, not noted)
                    if NOTING_VIEW_CHAINS[0] and recipe.picked is None:
                        _note_view_chain(array._node, key, recipe)
                    return _view_of_evaluated(array, buffer[key], recipe)
    elif kind is Array and type(array) is Array and key._node.dtype.kind in "iu":
        selected = _replayed_gather(array, key)  # hot: `centres[labels]` with lazy integer indices
        if selected is not None:
            return selected
    if isinstance(array, Array) and (type(key) is int or _is_plain_basic(key)):
        return _basic_getitem(array, key)
    if type(key) is Array and type(array) is Array and key.ndim and dtypes.is_bool(key.dtype):
        selected = _host_mask_selection(array, key)
        if selected is not None:
            return selected
    if (kind is list or kind is _NDARRAY) and type(array) is Array:
        selected = _host_integer_selection(array, key)  # `x[[0, 2]]`, `x[indices]` of an evaluated x
        if selected is not None:
            return selected
    elif kind is tuple and type(array) is Array:
        selected = _replayed_gather(array, key)  # `x[:, indices]` with lazy integer indices
        if selected is not None:
            return selected
    array = as_array(array, where="__getitem__")
    plan = parse_key(array.shape, key)
    if plan.is_advanced:
        return wrap(_advanced_read(array._node, plan))
    if not _is_view(plan):  # integers for every axis: NumPy returns a scalar, a copy
        return wrap(_read_basic(array._node, plan))
    return make_view(array, lambda base: _read_basic(base, plan), lambda base, value: _written(base, plan, value),
                     layout=plan.view_layout)


_NEW_ELEMENT = object.__new__
_NDARRAY = np.ndarray


def _all_ints(key: tuple) -> bool:
    for part in key:
        if type(part) is not int:
            return False
    return True


def _element_read(buffer: np.ndarray, key: tuple) -> Element | None:
    """`buffer[i, j, ...]` of an evaluated host array, one integer per axis: NumPy's scalar as
    an Element, at about NumPy's cost (a loop reading results one by one); None where NumPy
    raises IndexError (the general path raises lazyarr's error, naming the axis). getitem
    does the same inline for a vector's `x[i]`, the commonest read."""
    try:
        value = buffer[key]
    except IndexError:
        return None
    element = _NEW_ELEMENT(Element)  # Element.__init__, inline: a call is 12 % of a read's cost
    element._value = value
    element._leaf = element._base = element._views = None
    return element


def _basic_getitem(array: Array, key) -> Array:
    """`array[key]` for a plain basic key: NumPy's element or view of an evaluated host
    array, the device's contiguous view of an evaluated device array (a loop's `inputs[rows]`:
    no slice compiled per offset), else a lazy slice (its parsing memoized: `basic_key`)."""
    buffer = array._node._bound
    if type(buffer) is np.ndarray:
        try:
            value = buffer[key]  # an evaluated host array: read as NumPy reads (elements.py, below)
        except (IndexError, TypeError):
            value = None  # the general path raises lazyarr's error
        if type(value) is np.ndarray:
            return _view_of_evaluated(array, value, basic_key(array.shape, key))
        elif value is not None:
            return Element(value)
    recipe = basic_key(array.shape, key)
    if not recipe.is_view:  # integers for every axis: NumPy returns a scalar, a copy
        return wrap(recipe.read(array._node))
    if buffer is not None:  # an evaluated device array
        value = contiguous_view(buffer, key)
        if value is not None:
            return make_view(array, recipe.read, recipe.write, node=leaf_for(value), layout=recipe.layout)
    return make_view(array, recipe.read, recipe.write, layout=recipe.layout)


def _host_mask_selection(array: Array, mask: Array) -> Array | None:
    """`array[mask]` of an evaluated host array by NumPy's own boolean indexing (a copy, as
    NumPy's result is), or None where the general path applies. The mask must be evaluated
    anyway (its count is the result's shape), and a gather kernel would cost a compiled
    module's run where NumPy's selection costs microseconds: `X[labels == k]` for each k."""
    buffer = array._node._bound
    if type(buffer) is not np.ndarray:
        return None
    values = evaluated_mask(mask)
    if type(values) is not np.ndarray or values.shape != buffer.shape[:values.ndim]:
        return None  # the general path raises NumPy's error (or handles a length-0 mask axis)
    # The same elements in the same order as `buffer[values]`; np.compress is ~3x faster.
    if values.ndim == 1:
        return Array(leaf_for(np.compress(values, buffer, axis=0)))
    if values.ndim == buffer.ndim:
        return Array(leaf_for(np.compress(values.ravel(), buffer)))
    return Array(leaf_for(buffer[values]))


def _host_integer_selection(array: Array, key) -> Array | None:
    """`array[indices]` of an evaluated host array with static integer indices (a NumPy integer
    array, a list of Python ints) by NumPy's own advanced indexing: the same elements as the
    gather the general path builds, a copy as NumPy's result is, in ~1 us instead of ~40 (the
    key parsed, an index constant hashed, a gather node made) and without a compiled run. None
    where the general path applies (a lazy array, another key, an index out of range: lazyarr's
    IndexError names the axis)."""
    buffer = array._node._bound
    if type(buffer) is not np.ndarray or not buffer.ndim or not static_integer_indices(key):
        return None
    try:
        return Array(leaf_for(buffer[key]))
    except IndexError:
        return None


_PLAIN_KEY_TYPES = (int, slice, type(None), type(Ellipsis))


def _is_plain_basic(key) -> bool:
    """Whether `key` is a basic key NumPy reads the same way lazyarr does (ints, slices,
    None, Ellipsis; no arrays, booleans or lazy values)."""
    if type(key) is tuple:
        return all(type(item) in _PLAIN_KEY_TYPES for item in key)
    return type(key) in _PLAIN_KEY_TYPES


class BasicKey:
    """A plain basic key (ints, slices, None, Ellipsis) parsed for one shape, with the view's
    `read(base node)` and `write(base node, update)` functions. Memoized per (shape, key): a
    loop slicing `u[1:-1, 1:-1]` every step parses the key once, not every time."""

    __slots__ = ("plan", "is_view", "picked", "slicing", "result_shape", "read", "write", "layout")

    def __init__(self, shape: tuple, key):
        plan = self.plan = parse_key(shape, key)  # raises IndexError as NumPy does
        self.is_view = _is_view(plan)
        # Integer indices pick with a dynamic-slice whose starts are scalar constants, which
        # evaluation passes at run time (compile.linearize): `x[i]` for every i in a loop is
        # one kernel, not one per i. Slices keep their bounds in the code (a stencil's offsets).
        integers = {entry.axis: entry.value for entry in plan.entries if isinstance(entry, IntegerIndex)}
        self.picked = None
        if integers:
            starts = [_start_constant(integers.get(axis, 0)) for axis in range(len(shape))]
            sizes = tuple(1 if axis in integers else size for axis, size in enumerate(shape))
            self.picked = (starts, Maker("dynamic-slice", sizes=sizes))
            shape = sizes
        attributes, reversed_axes = _slicing(shape, plan, skip_integers=True)
        self.result_shape = tuple(plan.result_shape())
        # The nodes a read makes, prepared once (a loop slicing every step records them fast).
        self.slicing = (Maker("slice", **attributes) if attributes is not None else None,
                        Maker("reverse", dimensions=reversed_axes) if reversed_axes else None,
                        Maker("reshape", shape=self.result_shape))
        self.read = self._read
        self.write = self._write
        self.layout = plan.view_layout

    # A view's reads and writes are replayed from templates (per base dtype): `a[3] += w` in a
    # loop writes through its view and re-reads it each time, ~5 Python-made nodes otherwise.
    def _read(self, node: Instruction) -> Instruction:
        return _VIEW_READS.build((self, node.shape, node.dtype), self._read_nodes, node)

    def _write(self, node: Instruction, update: Instruction) -> Instruction:
        return _VIEW_WRITES.build((self, node.shape, node.dtype, update.shape, update.dtype), self._write_nodes,
                                  node, update)

    def _read_nodes(self, node: Instruction) -> Instruction:
        if self.picked is not None:
            starts, dynamic_slice = self.picked
            node = dynamic_slice(node, *starts)
        sliced, reversed_, reshaped = self.slicing
        if sliced is not None:
            node = sliced(node)
        if reversed_ is not None:
            node = reversed_(node)
        return node if node.shape == self.result_shape else reshaped(node)

    def _write_nodes(self, node: Instruction, update: Instruction) -> Instruction:
        return _written(node, self.plan, update)


# A BasicKey's view reads and writes by (key, shapes, dtypes): their graphs replayed.
_VIEW_READS = Templates()
_VIEW_WRITES = Templates()


def reads_as(array: Array, key, value: Array) -> bool:
    """Whether `array[key]` is `value`'s very node, for a `value` viewing `array`: `a[k] = t`
    after `t = a[k]; t += w` (what `a[k] += w` runs), where the view wrote through already and
    the assignment changes nothing. Only a plain basic key (a view) is looked at."""
    if not _is_plain_basic(key):
        return False
    try:
        recipe = basic_key(array.shape, key)
    except (IndexError, TypeError):
        return False  # (the assignment raises lazyarr's error)
    return recipe.is_view and recipe.read(array._node) is value._node


_BASIC_KEYS: dict[tuple, BasicKey] = {}
_BASIC_KEYS_LIMIT = 4096


def basic_key(shape: tuple, key) -> BasicKey:
    """The memoized BasicKey of a plain basic `key` (see `_is_plain_basic`) for `shape`."""
    memo = (shape, tuple(map(_hashable, key)) if type(key) is tuple else _hashable(key))
    try:
        recipe = _BASIC_KEYS.get(memo)
    except TypeError:  # a slice bound that is an array (`x[n:]` with a 0-d `n`): not memoized
        return BasicKey(shape, key)
    if recipe is None:
        recipe = BasicKey(shape, key)
        if len(_BASIC_KEYS) >= _BASIC_KEYS_LIMIT:
            _BASIC_KEYS.clear()
        _BASIC_KEYS[memo] = recipe
    return recipe


def _plain_tuple_key(shape: tuple, key: tuple) -> BasicKey | None:
    """basic_key(shape, key) for a tuple `key` of ints, slices, None and Ellipsis; None for any
    other tuple. One pass does both the check and the memo key (`_is_plain_basic`, `_hashable`)."""
    parts = _key_parts(key)
    if parts is None:
        return None
    memo = (shape, parts)
    try:
        recipe = _BASIC_KEYS.get(memo)
    except TypeError:  # a slice bound that is an array: the general path
        return None
    return recipe if recipe is not None else basic_key(shape, key)


def _key_parts(key: tuple) -> tuple | None:
    """The items of a tuple key of ints, slices, None and Ellipsis as a dict key (a slice as
    (slice, start, stop, step)); None for any other tuple."""
    parts = []
    for item in key:
        kind = type(item)
        if kind is slice:
            parts.append(_slice_part(item))
        elif kind is int or item is None or item is Ellipsis:
            parts.append(item)
        else:
            return None
    return tuple(parts)


def _note_view_chain(node: Instruction, key: tuple, recipe: BasicKey) -> None:
    """Note `recipe`'s view of arrays shaped like `node` for the C getitem (views.VIEW_CHAINS)."""
    note_view_chain((node.shape, node.dtype, _key_parts(key)), node, recipe.read, recipe.write, recipe.layout)


def _hashable(item):
    """A key item as a dict key (slices are unhashable before Python 3.12); `slice` tags
    slices apart from tuples of ints."""
    return _slice_part(item) if type(item) is slice else item


def _slice_part(item: slice) -> tuple:
    """A slice as a dict key: (slice, start, stop, step), with the bounds' types where one is
    not an int or None (1.0 equals 1 as a key, but NumPy refuses it as a bound)."""
    start, stop, step = item.start, item.stop, item.step
    for bound in (start, stop, step):
        if bound is not None and type(bound) is not int:
            return (slice, start, stop, step, type(start), type(stop), type(step))
    return (slice, start, stop, step)


def _view_of_evaluated(array: Array, value: np.ndarray, recipe: BasicKey) -> Array:
    """`array[key]` (a basic key, parsed as `recipe`) of an evaluated host array, whose value
    NumPy's view `value` is.

    Reading results row by row or element by element costs what NumPy's indexing costs
    instead of a graph and a compile per new index: an element is an `Element` (NumPy's
    scalar), a contiguous slice a view whose value is a leaf bound to NumPy's view of the
    buffer (so slice offsets are data, not part of any compiled kernel). A strided view's node
    is the slice of `array`, bound to NumPy's view (read as is, nothing compiled); a
    computation reading it computes the slice in its kernel (compile.linearize) rather than
    copying the view into a buffer first. Writes through the view still reach `array`, and
    later writes to `array` re-read through the graph (views.py).
    """
    node = evaluated_view_node(array._node, recipe.read, value)
    return make_view(array, recipe.read, recipe.write, node=node, layout=recipe.layout)


def _advanced_read(node: Instruction, plan: IndexPlan) -> Instruction:
    return _reshaped(_gather(_basic_slices(node, plan), plan), plan.result_shape())


# (the array's shape and dtype, then per key part: a lazy index's shape and dtype, a slice's
# bounds, an int, None or Ellipsis) -> the template of the read (_replayed_gather).
_GATHERS = Templates()


def _replayed_gather(array: Array, key) -> Array | None:
    """`array[key]` for a key of lazy integer arrays with ints, int-bounded slices, None and
    Ellipsis beside them, replayed from its graph template: the read's nodes depend only on the
    shapes and dtypes of the array and the indices and on the rest of the key (a lazy index is
    not checked against the array's bounds before it runs), so a loop's `centres[labels]` is
    parsed and lowered once (~36 -> ~3 us). None for any other key (masks have a shape from
    their data; NumPy index arrays are checked as they are read)."""
    found = _lazy_index_key(key)
    if found is None:
        return None
    parts, signature, indices = found

    def build(base: Instruction, *index_nodes: Instruction) -> Instruction:
        return _advanced_read(base, parse_key(base.shape, _rebuilt_key(key, parts, index_nodes)))

    return Array(_GATHERS.build((array._node.shape, array._node.dtype, *signature), build, array._node, *indices))


def _lazy_index_key(key) -> tuple[tuple, list, list[Instruction]] | None:
    """(the key's parts, their signature, the lazy indices' nodes) for a key of lazy integer
    arrays with ints, int-bounded slices, None and Ellipsis beside them; None for any other key.
    Per part, the signature holds a lazy index's shape and dtype, a slice's bounds, or the part."""
    parts = key if type(key) is tuple else (key,)
    signature = []
    indices = []
    for part in parts:
        kind = type(part)
        if kind is Array:
            node = part._node
            if node.dtype.kind not in "iu":
                return None
            signature.append((node.shape, node.dtype))
            indices.append(node)
        elif kind is slice:
            bounds = (part.start, part.stop, part.step)
            for bound in bounds:
                if bound is not None and type(bound) is not int:
                    return None
            signature.append(bounds)
        elif kind is int or part is None or part is Ellipsis:
            signature.append(part)
        else:
            return None
    return (parts, signature, indices) if indices else None


def _rebuilt_key(key, parts: tuple, index_nodes) -> object:
    """`key` with its lazy indices (in order) standing on `index_nodes` (a template's leaves)."""
    nodes = iter(index_nodes)
    rebuilt = tuple(Array(next(nodes)) if type(part) is Array else part for part in parts)
    return rebuilt if type(key) is tuple else rebuilt[0]


# (the array's shape and dtype, the update's, then the key's parts as _GATHERS has them) -> the
# template of the write (_replayed_scatter).
_SCATTERS = Templates()


def _replayed_scatter(array: Array, key, value) -> Instruction | None:
    """`array[key] = value` (setitem's node) for a key _replayed_gather replays and a lazy or
    Python scalar value, replayed from its graph template: a loop's `counts[labels] += 1` (a
    gather, an add and this write) is parsed and lowered once (~95 -> ~25 us a statement). The
    update is converted as the general path converts it (a Python scalar to the array's dtype
    first, raising NumPy's OverflowError). None for any other key or value."""
    found = _lazy_index_key(key)
    kind = type(value)
    if found is None or not (kind is Array or kind is int or kind is float or kind is bool):
        return None
    parts, signature, indices = found
    update = value._node if kind is Array else _update_node(value, array.dtype, (), False)

    def build(base: Instruction, new: Instruction, *index_nodes: Instruction) -> Instruction:
        plan = parse_key(base.shape, _rebuilt_key(key, parts, index_nodes))
        return _written(base, plan, _update_node(Array(new), base.dtype, plan.result_shape(), plan.is_advanced))

    base = array._node
    return _SCATTERS.build((base.shape, base.dtype, update.shape, update.dtype, *signature), build,
                           base, update, *indices)


def _is_view(plan: IndexPlan) -> bool:
    """Whether NumPy's result of a basic key is a view: any slice, new axis or Ellipsis."""
    return any(isinstance(entry, SliceIndex | NewAxis | EllipsisMarker) for entry in plan.entries)


def _read_basic(node: Instruction, plan: IndexPlan) -> Instruction:
    return _reshaped(_basic_slices(node, plan), plan.result_shape())


def _reshaped(node: Instruction, shape) -> Instruction:
    shape = tuple(shape)
    return node if node.shape == shape else make("reshape", [node], shape=shape)


def _basic_slices(node: Instruction, plan: IndexPlan) -> Instruction:
    """Apply every slice (and basic integer, as a size-1 slice) as one slice + reverse."""
    attributes, reversed_axes = _slicing(node.shape, plan)
    if attributes is not None:
        node = make("slice", [node], **attributes)
    if reversed_axes:
        node = make("reverse", [node], dimensions=reversed_axes)
    return node


def _slicing(shape: tuple, plan: IndexPlan, skip_integers: bool = False) -> tuple[dict | None, tuple[int, ...]]:
    """The slice attributes (None: nothing to slice) and reversed axes of `plan`'s basic part
    (`skip_integers`: integer indices are applied already, their axes have size 1)."""
    ndim = len(shape)
    start = [0] * ndim
    limit = list(shape)
    stride = [1] * ndim
    reversed_axes = []
    for entry in plan.entries:
        if isinstance(entry, IntegerIndex):
            if not skip_integers:
                start[entry.axis], limit[entry.axis] = entry.value, entry.value + 1
        elif isinstance(entry, SliceIndex) and not entry.is_full:
            if entry.length == 0:
                start[entry.axis] = limit[entry.axis] = 0
                continue
            last = entry.start + (entry.length - 1) * entry.step
            low, high = min(entry.start, last), max(entry.start, last)
            start[entry.axis], limit[entry.axis], stride[entry.axis] = low, high + 1, abs(entry.step)
            if entry.step < 0 and entry.length > 1:
                reversed_axes.append(entry.axis)
    attributes = None
    if tuple(start) != (0,) * ndim or tuple(limit) != tuple(shape) or any(s != 1 for s in stride):
        attributes = {"start": tuple(start), "limit": tuple(limit), "stride": tuple(stride)}
    return attributes, tuple(reversed_axes)


def _index_node(parts: list, batch_shape: tuple[int, ...]) -> Instruction:
    """Stack index parts (NumPy arrays or lazy int64 nodes, each broadcastable to
    `batch_shape`) into one int64 index array of shape batch_shape + (len(parts),)."""
    if all(isinstance(part, np.ndarray) for part in parts):
        stacked = np.stack([np.broadcast_to(part, batch_shape) for part in parts], axis=-1)
        return constant(stacked.astype(np.int64))
    columns = []
    for part in parts:
        node = constant(part) if isinstance(part, np.ndarray) else part
        node = broadcast_to(convert(node, np.int64), batch_shape)
        columns.append(_reshaped(node, batch_shape + (1,)))
    if len(columns) == 1:
        return columns[0]
    return make("concatenate", columns, dimension=len(batch_shape))


def _gather(node: Instruction, plan: IndexPlan) -> Instruction:
    """Gather the advanced axes, then move the batch dims where NumPy places them."""
    batch = plan.advanced_shape
    axes, parts = [], []
    for entry in plan.advanced_entries():
        axes.extend(entry.axes)
        parts.extend(entry.parts)
    if not axes:  # only boolean scalars: a new axis of length 1 (True) or 0 (False)
        return make(
            "broadcast", [node], shape=batch + node.shape,
            dimensions=tuple(range(len(batch), len(batch) + node.ndim)),
        )
    result = make("gather", [node, _index_node(parts, batch)], index_dims=tuple(axes))
    before = plan.slices_before_advanced()
    if before:
        rank, count = result.ndim, len(batch)
        permutation = (
            tuple(range(count, count + before)) + tuple(range(count))
            + tuple(range(count + before, rank))
        )
        result = make("transpose", [result], permutation=permutation)
    return result


# -- assignment -----------------------------------------------------------------------------


def setitem(array, key, value) -> Instruction:
    """The node of `array` with `array[key] = value` applied (NumPy's semantics); the caller
    gives it to the array (views.assign), as `a[key] = value` does.

    Not wrapped in an Array: a wrapper as deep as the new value would make the bounded-pending
    check (array.track_pending) cut the loop before `assign` moves the array to it, and that
    cut would evaluate the array's old value beside the new one. assign checks once it has.

    The value is converted to the array's dtype as NumPy's assignment converts it (a float
    truncates into an integer array; a Python int out of the dtype's range raises
    OverflowError) and broadcast to the indexed shape.

    >>> import numpy as np, lazyarr as la
    >>> x = la.asarray(np.arange(5))
    >>> np.asarray(la.Array(setitem(x, [0, 2], 0)))
    array([0, 1, 0, 3, 4])
    """
    plain = type(key) is int or _is_plain_basic(key)
    if plain and type(array) is Array and type(value) is Array:  # hot: `u[1:-1, 1:-1] = ...` in a loop
        recipe = basic_key(array.shape, key)  # raises IndexError for a bad key
        base, update = array._node, value._node
        signature = (recipe, base.shape, base.dtype, update.shape, update.dtype)
        written = _SETITEMS.build(signature, lambda node, new: _written(
            node, recipe.plan, _update_node(wrap(new), node.dtype, recipe.plan.result_shape(), False)), base, update)
        if NOTING_VIEW_CHAINS[0] and (type(key) is tuple or type(key) is slice):
            _note_setitem(key, signature)
        return written
    array = as_array(array, where="__setitem__")
    if not plain and _is_leading_mask(array.shape, key) and _is_zero_dimensional(value):
        return _masked_fill(array, key, value)
    if not plain:
        replayed = _replayed_scatter(array, key, value)
        if replayed is not None:
            return replayed
    plan = basic_key(array.shape, key).plan if plain else parse_key(array.shape, key)
    update = _update_node(value, array.dtype, plan.result_shape(), plan.is_advanced)
    return _written(array._node, plan, update)


def _is_zero_dimensional(value) -> bool:
    """Whether a value to assign is 0-d, without evaluating it (np.ndim of a lazy array would)."""
    if isinstance(value, Array):
        return value.ndim == 0
    return not isinstance(value, (list, tuple)) and np.ndim(value) == 0


def _is_leading_mask(shape: tuple, key) -> bool:
    """Whether `key` is a boolean array (lazy or NumPy) of `shape`'s leading dimensions."""
    if type(key) is not Array and type(key) is not np.ndarray:
        return False
    return key.dtype == np.bool_ and 1 <= key.ndim <= len(shape) and tuple(key.shape) == shape[:key.ndim]


def _masked_fill(array: Array, mask, value) -> Instruction:
    """`array[mask] = scalar` as `where(mask, scalar, array)`: the same elements change to the
    same value, with no data-dependent count (nothing evaluates, nothing compiles per count,
    and the fill fuses with what reads it: Game of Life's `Z[1:-1, 1:-1][birth | survive] = 1`)."""
    mask_node = as_array(mask, where="__setitem__")._node
    fill = _update_node(value, array.dtype, array.shape, False)  # NumPy's conversion (OverflowError, ...)
    predicate = _reshaped(mask_node, mask_node.shape + (1,) * (array.ndim - mask_node.ndim))
    # (the select node itself, not elementwise.where: its result, an array as deep as the new
    # value, could be cut before views.assign moves the array to it; see setitem)
    return make("select", [broadcast_to(predicate, array.shape), fill, array._node])


# `array[basic key] = array` by (key's recipe, both signatures): the graph replayed
# (hlo/template.py), the value's conversion and broadcast checks skipped.
_SETITEMS = Templates()
# The C `Array.__setitem__` (frontend/fast_paths.py) replays these: _SETITEMS's template of a
# plain key's write, under (key parts as views.VIEW_CHAINS has them, the shapes and dtypes).
SETITEM_TEMPLATES: dict[tuple, object] = {}


def _note_setitem(key, signature: tuple) -> None:
    """Enter the template _SETITEMS holds under `signature` in SETITEM_TEMPLATES for `key`."""
    parts = _key_parts(key if type(key) is tuple else (key,))
    template = _SETITEMS.table.get(signature)
    if parts is None or template is None:
        return
    memo = (parts, *signature[1:])
    if memo not in SETITEM_TEMPLATES:
        if len(SETITEM_TEMPLATES) >= 1024:
            SETITEM_TEMPLATES.clear()
        SETITEM_TEMPLATES[memo] = template


def _written(node: Instruction, plan: IndexPlan, update: Instruction) -> Instruction:
    """`node` with the elements `plan` selects replaced by `update` (of the indexed shape)."""
    if math.prod(update.shape) == 0:
        return node
    update = _reshaped(update, plan.result_shape(with_new_axes=False))
    if not plan.is_advanced and all(entry.step == 1 for entry in plan.slices()):
        return _update_block(node, plan, update)
    return _scatter(node, plan, update)


def _update_node(value, dtype, target_shape, advanced: bool) -> Instruction:
    """`value` converted to `dtype` as NumPy's assignment converts, broadcast to target_shape."""
    kind = type(value)
    if kind is int or kind is bool or (kind is float and value and value == value):
        # (a loop writing `x[i] = 0.5`: one constant per value and dtype, not one per write;
        # float zeros and NaNs go the general way: 0.0 == -0.0, NaN != NaN as keys)
        key = (kind, value, dtype)
        node = _SCALAR_UPDATES.get(key)
        if node is None:
            buffer = np.empty((), dtype=dtype)
            buffer[...] = value  # NumPy's conversion: OverflowError, truncation (nothing kept)
            node = constant(buffer)
            if len(_SCALAR_UPDATES) >= 1024:
                _SCALAR_UPDATES.clear()
            _SCALAR_UPDATES[key] = node
        return broadcast_to(node, target_shape)
    if isinstance(value, Array) or (isinstance(value, (list, tuple)) and contains_lazy(value)):
        node = convert(as_array(value, where="__setitem__")._node, dtype)
    else:
        buffer = np.empty(np.shape(value), dtype=dtype)
        buffer[...] = value  # NumPy's own conversion rules (OverflowError, truncation, ...)
        node = constant(buffer)
    shape = node.shape
    while len(shape) > len(target_shape) and shape[0] == 1:
        shape = shape[1:]  # NumPy drops leading size-1 dims of the value
    offset = len(target_shape) - len(shape)
    fits = offset >= 0 and all(
        size in (1, target_shape[offset + axis]) for axis, size in enumerate(shape)
    )
    if not fits:
        if advanced:
            raise ValueError(
                f"shape mismatch: value array of shape {format_shape(node.shape)} could not be "
                f"broadcast to indexing result of shape {format_shape(target_shape)}"
            )
        raise ValueError(
            f"could not broadcast input array from shape {format_shape(node.shape)} into shape "
            f"{format_shape(target_shape)}"
        )
    return broadcast_to(_reshaped(node, shape), target_shape)


def _update_block(node: Instruction, plan: IndexPlan, update: Instruction) -> Instruction:
    """A unit-step basic key selects one block: dynamic-update-slice with constant starts."""
    starts = [0] * node.ndim
    block = list(node.shape)
    for entry in plan.entries:
        if isinstance(entry, IntegerIndex):
            starts[entry.axis], block[entry.axis] = entry.value, 1
        elif isinstance(entry, SliceIndex):
            starts[entry.axis], block[entry.axis] = entry.start, entry.length
    update = _reshaped(update, block)
    if tuple(block) == node.shape:
        return update
    return _UPDATE_SLICE(node, update, *[_start_constant(start) for start in starts])


_UPDATE_SLICE = Maker("dynamic-update-slice")  # (its rules run once per operand signature)
# (Python scalar type, value, dtype) -> the constant an assignment writes (_update_node)
_SCALAR_UPDATES: dict[tuple, Instruction] = {}


@functools.lru_cache(maxsize=1024)
def _start_constant(start: int) -> Instruction:
    """The int64 constant node of a start index (nodes are immutable: one per value)."""
    return constant(np.int64(start))


def _scatter(node: Instruction, plan: IndexPlan, update: Instruction) -> Instruction:
    """Every other key: scatter over the advanced, integer and partial-slice axes.

    The update arrives in the result's order (without new axes); it is permuted to the
    scatter's order: advanced batch dims, then the partial slices' dims, then the full
    slices' dims (the operand dims the scatter leaves whole).
    """
    batch = plan.advanced_shape or ()
    slices = plan.slices()
    # Update dims in result order -> natural order (advanced batch dims first).
    before = plan.slices_before_advanced()
    count = len(batch)
    natural = tuple(range(before, before + count)) + tuple(range(before)) + tuple(
        range(before + count, update.ndim)
    )
    partial = [index for index, entry in enumerate(slices) if not entry.is_full]
    full = [index for index, entry in enumerate(slices) if entry.is_full]
    order = tuple(natural[:count]) + tuple(natural[count + index] for index in partial + full)
    if order != tuple(range(update.ndim)):
        update = make("transpose", [update], permutation=order)
    grid = batch + tuple(slices[index].length for index in partial)
    trailing = (1,) * len(partial)
    parts_by_axis = {}
    for entry in plan.entries:
        if isinstance(entry, AdvancedIndex):
            for axis, part in zip(entry.axes, entry.parts):
                parts_by_axis[axis] = _grid_part(part, batch, trailing, grid)
        elif isinstance(entry, IntegerIndex):
            parts_by_axis[entry.axis] = np.full(grid, entry.value, dtype=np.int64)
    for position, index in enumerate(partial):
        entry = slices[index]
        view = [1] * len(grid)
        view[count + position] = entry.length
        parts_by_axis[entry.axis] = entry.positions().reshape(view)
    if not parts_by_axis:  # only boolean scalars: `x[True] = v` replaces the whole array
        return _reshaped(update, node.shape)
    axes = tuple(sorted(parts_by_axis))
    indices = _index_node([parts_by_axis[axis] for axis in axes], grid)
    return make("scatter", [node, indices, update], index_dims=axes, mode="set")


def _grid_part(part, batch, trailing, grid):
    """An advanced index part (shape broadcastable to `batch`) laid out over the full grid."""
    if isinstance(part, np.ndarray):
        return np.broadcast_to(part, batch).reshape(batch + trailing)
    node = broadcast_to(part, batch)
    return broadcast_to(_reshaped(node, batch + trailing), grid)


def block(array: Array, bounds) -> Array:
    """`array[b0:e0, b1:e1, ...]` (one (begin, end) per axis) as a dynamic-slice whose starts are
    buffers (0-d int64 leaves, never constants: evaluation would keep small constant starts such
    as 0 in the code): every block of one shape, at any position, is one compiled program.
    `lazyarr.dask` cuts 2-D chunks this way; a basic slice keeps its bounds in the code (a
    stencil's offsets)."""
    bounds = tuple(bounds)
    if len(bounds) != array.ndim or any(not 0 <= begin <= end <= size
                                         for (begin, end), size in zip(bounds, array.shape)):
        raise IndexError(f"block: bounds {bounds} do not lie within shape {array.shape}")
    starts = [leaf_for(np.array(begin, dtype=np.int64)) for begin, _ in bounds]
    return wrap(make("dynamic-slice", [array._node, *starts], sizes=tuple(end - begin for begin, end in bounds)))
