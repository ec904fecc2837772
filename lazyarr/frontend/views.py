"""NumPy's write semantics on lazy arrays: in-place updates reach every name, views write through.

In NumPy `a += b` and `a[i] = v` change the array object, so every reference to it (a caller's
argument, an attribute) sees the new value; and the result of a basic index, a transpose, a
reshape that needs no copy, `squeeze`, `.real`, `split` ... is a *view*: `row = A[2]; row[:] = 0`
zeroes a row of `A`, and a later write to `A` shows in `row`.

Lazy arrays keep immutable graphs, so a write makes a new graph node and `assign` moves the
array object to it. A view remembers its base and two functions: `read(base node) -> view
node` and `write(base node, view value) -> base node` (a slice and a dynamic-update-slice for
basic keys, two transposes for a transpose). Writing a view writes its base (up the chain of
views to the array that owns its value), and every live view of a written array re-reads it
(down the chain), so values agree as they do in NumPy. A base holds its views weakly:
temporaries such as `u[1:-1] + u[2:]` leave nothing behind.

Whether NumPy's reshape (or ravel) returns a view depends on the memory layout of its input,
which lazy arrays do not have. Each view therefore also remembers its `layout` step, the same
NumPy operation applied to a *stride dummy* (`strided`): an array with the view's shape, dtype
and the strides NumPy's own view would have, pointing at one scratch element and never read.
An array that owns its value counts as C-contiguous (as every lazyarr input and result is), so
`A.reshape(12)` is a view at once, and `A.T.reshape(-1)` asks NumPy itself (`reshape(...,
copy=False)` on the dummy raises where NumPy would copy) and gets a copy. A view that NumPy
makes read-only (`diagonal`, `broadcast_to`), or one whose writes lazyarr cannot follow, has
no `write` but a `refusal`: writing it raises ValueError with that message, and nothing changes.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..hlo import Instruction, chain_templates, fresh_parameter, set_holder
from .array import Array, deferred_cuts, holders_with, track_pending

Read = Callable[[Instruction], Instruction]
Write = Callable[[Instruction, Instruction], Instruction]
Layout = Callable[[np.ndarray], np.ndarray]


def read_only(what: str) -> str:
    """The refusal of a result NumPy makes read-only (`diagonal`, `broadcast_to`)."""
    return (
        f"assignment destination is read-only: the result of {what} is read-only, as in NumPy "
        "(write to a .copy() of it, or to the base array)"
    )


class ViewOf:
    """How a view derives from its base: `read` gives the view's node from the base's node,
    `write` gives the base's node after the view's value becomes a given node (None: writes
    raise ValueError(`refusal`)); `layout` is the same step on a NumPy stride dummy (None:
    unknown), and `strided` caches the view's dummy once computed."""

    __slots__ = ("base", "read", "write", "layout", "refusal", "strided")

    def __init__(self, base: Array, read: Read, write: Write | None, layout: Layout | None = None,
                 refusal: str | None = None):
        self.base, self.read, self.write = base, read, write
        self.layout, self.refusal, self.strided = layout, refusal, None


# (shape, dtype, what) -> (read, write, layout, chain) of a view made the same way of every array of
# that shape and dtype (`what`: a plain view key's parts, indexing._key_parts; "T" for `.T`), its
# read being a chain of single-operand nodes (hlo.chain_templates); None where it is not. Noted by
# the Python paths once per view kind, shape and dtype where the C extension reads it
# (`note_view_chains`): its `__getitem__` and `.T` then make such views without a Python call
# (frontend/_fast_paths.c), the same nodes, ViewOf and weak reference as make_view's.
VIEW_CHAINS: dict[tuple, tuple | None] = {}
_VIEW_CHAINS_LIMIT = 4096
_SEEN_ONCE: set[tuple] = set()  # view kinds asked for once, not noted yet
NOTING_VIEW_CHAINS = [False]


def note_view_chains() -> None:
    """Have the Python paths note VIEW_CHAINS (fast_paths.py, where the C extension reads them)."""
    NOTING_VIEW_CHAINS[0] = True


def note_view_chain(memo: tuple, node: Instruction, read: Read, write: Write | None, layout: Layout | None) -> None:
    """Enter under `memo` how `read` makes the view of arrays shaped like `node` (see VIEW_CHAINS),
    the second time it is asked: a key seen once (a sliding window `x[i:i + 3]`) costs no chain."""
    if memo in VIEW_CHAINS:
        return
    if memo not in _SEEN_ONCE:
        if len(_SEEN_ONCE) >= _VIEW_CHAINS_LIMIT:
            _SEEN_ONCE.clear()
        _SEEN_ONCE.add(memo)
        return
    _SEEN_ONCE.discard(memo)
    sample = fresh_parameter(node.shape, node.dtype)  # (a leaf of its own: the chain's nodes die with it)
    chain = chain_templates(read(sample), sample)
    if len(VIEW_CHAINS) >= _VIEW_CHAINS_LIMIT:
        VIEW_CHAINS.clear()
    VIEW_CHAINS[memo] = None if chain is None else (read, write, layout, chain)


def make_view(base: Array, read: Read, write: Write | None, node: Instruction | None = None, *,
              layout: Layout | None = None, refusal: str | None = None) -> Array:
    """A new array viewing `base` (its value is `read(base._node)`, writes go through `write`).

    `node`, when given, is that value already in hand (a leaf bound to NumPy's view of an
    evaluated base's buffer); later writes to the base re-read through `read` as usual.
    `layout` maps NumPy's view of the base to NumPy's view of the result (`lambda d: d.T`);
    with `write=None`, writing the view raises ValueError(`refusal`). Reading a view of an
    evaluated host array takes NumPy's view of its buffer (array.read_as_numpy_view)."""
    view = Array(read(base._node) if node is None else node)
    view._base = ViewOf(base, read, write, layout, refusal)
    views = base._views
    if views is None:
        base._views = [weakref.ref(view)]
        return view
    count = len(views)
    if count >= 8 and count & (count - 1) == 0:  # at powers of two: amortized O(1) per view
        views[:] = [reference for reference in views if reference() is not None]
    views.append(weakref.ref(view))
    return view


def assign(array: Array, node: Instruction, consumed: tuple[Array, ...] = ()) -> None:
    """Give `array` the value `node` (same shape and dtype), as a NumPy in-place write does:
    the object itself changes, its bases are written through, its views re-read. A view that
    refuses writes (read-only in NumPy) raises ValueError before anything changes.
    `consumed`: arrays the write used up and nothing else holds (track_pending)."""
    if node.shape != array.shape or node.dtype != array.dtype:
        raise AssertionError(f"assign: {node.dtype}{list(node.shape)} into {array.dtype}{list(array.shape)}")
    owner = array
    while owner._base is not None:  # up: the view's new value becomes its base's new value
        link = owner._base
        if link.write is None:
            raise ValueError(link.refusal)
        node = link.write(link.base._node, node)
        owner = link.base
    owner._node = node
    if node.depth:
        holder = node._holder  # (as Array() records: see array.evaluate_arrays)
        set_holder(node, weakref.ref(owner) if holder is None else holders_with(holder, weakref.ref(owner)))
    stack = [owner]
    while stack:  # down: every live view of a written array reads its new value
        written = stack.pop()
        if written._views:
            live = [view for view in (reference() for reference in written._views) if view is not None]
            written._views = [weakref.ref(view) for view in live] or None
            for view in live:
                view._node = view._base.read(written._node)
                stack.append(view)
    track_pending(owner, True, consumed)  # a loop of writes (`u[1:-1] = ...`) is bounded as any other


def assign_result(array: Array, compute: Callable[[], Array]) -> None:
    """`array` becomes `compute()`'s value in place (a sort, a partition), as `assign` gives it;
    a loop cut waits for the write and leaves the result out (it is the array's new value)."""
    with deferred_cuts():
        result = compute()
    assign(array, result._node, (result,))


# -- layouts: NumPy's strides for views, on dummies that are never read -----------------------
_SCRATCH: dict[np.dtype, np.ndarray] = {}


def contiguous_dummy(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A read-only NumPy array of `shape` and `dtype` with C-contiguous strides, pointing at one
    scratch element: only its shape and strides are ever looked at."""
    scratch = _SCRATCH.get(dtype)
    if scratch is None:
        scratch = _SCRATCH[dtype] = np.zeros(1, dtype)
    strides, step = [], dtype.itemsize
    for size in reversed(shape):
        strides.append(step)
        step *= size or 1
    return as_strided(scratch, shape, tuple(reversed(strides)), writeable=False)


def strided(array: Array) -> np.ndarray | None:
    """`array`'s stride dummy: NumPy's layout of the same view chain from a C-contiguous owner,
    or None when some link of the chain has no known layout. Iterative, cached per link."""
    pending = []
    current = array
    while current._base is not None and current._base.strided is None:
        pending.append(current._base)
        current = current._base.base
    try:
        dummy = contiguous_dummy(current.shape, current.dtype) if current._base is None else current._base.strided
        for link in reversed(pending):
            if link.layout is None:
                return None
            dummy = link.strided = link.layout(dummy)
    except (ValueError, TypeError):  # a shape NumPy cannot describe (too big): unknown
        return None
    return dummy


def is_owner(array: Array) -> bool:
    """Whether `array` owns its value (no view): C-contiguous, so any C-order reshape is a view."""
    return array._base is None


def undecided(where: str) -> str:
    """The refusal of a view whose NumPy layout lazyarr cannot tell."""
    return (
        f"{where}: lazyarr cannot tell whether NumPy would return a view or a copy here, so writes "
        "to this result are refused rather than risk losing them; write to a .copy() of it, or "
        "assign to the base array explicitly"
    )


def numpy_reshape(dummy: np.ndarray, target, order: str, ravel: bool, where: str):
    """NumPy's reshape (or ravel) of the stride dummy of an array, as a pair: (NumPy's view,
    None) where NumPy's result is a view, (None, None) where it copies, and (its view, a
    refusal) where NumPy's is a view in memory order that lazyarr's values do not follow
    ('A' and 'K' act as 'C'). `order` is 'C', 'F', 'A' or (ravel) 'K'."""
    flags = dummy.flags
    if order == "A" and flags.f_contiguous and not flags.c_contiguous:
        return dummy.reshape(target, order="F"), _memory_order_refusal(where, order)
    if ravel:  # NumPy's ravel is a view only of an array contiguous in that order
        if order == "F":
            return (dummy.reshape(target, order="F"), None) if flags.f_contiguous else (None, None)
        if flags.c_contiguous:
            return dummy.reshape(target), None
        if order != "K":
            return None, None
        if flags.f_contiguous:
            return dummy.reshape(target, order="F"), _memory_order_refusal(where, order)
        if _flat_in_memory_order(dummy):
            return as_strided(dummy, target, (dummy.itemsize,), writeable=False), _memory_order_refusal(where, order)
        return None, None
    try:
        return dummy.reshape(target, order="F" if order == "F" else "C", copy=False), None
    except ValueError:  # NumPy would copy
        return None, None


def _memory_order_refusal(where: str, order: str) -> str:
    return (
        f"{where}(order={order!r}) of this view: NumPy returns a view in memory order, which "
        "lazyarr does not follow ('A' and 'K' act as 'C'), so writes to it are refused; use "
        "order='C' or 'F', or write to a .copy()"
    )


def _flat_in_memory_order(dummy: np.ndarray) -> bool:
    """NumPy's ravel(order='K') test: the axes sorted by |stride| (stable) tile memory
    contiguously, size-1 axes aside (PyArray_Ravel)."""
    stride = dummy.itemsize
    axes = sorted(range(dummy.ndim), key=lambda axis: -abs(dummy.strides[axis]))
    for axis in reversed(axes):
        if dummy.shape[axis] == 1:
            continue
        if dummy.strides[axis] != stride:
            return False
        stride *= dummy.shape[axis]
    return True
