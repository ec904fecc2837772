"""NumPy's write semantics on lazy arrays: in-place updates reach every name, views write through.

In NumPy `a += b` and `a[i] = v` change the array object, so every reference to it (a caller's
argument, an attribute) sees the new value; and a basic-index result or a transpose is a
*view*: `row = A[2]; row[:] = 0` zeroes a row of `A`, and a later write to `A` shows in `row`.

Lazy arrays keep immutable graphs, so a write makes a new graph node and `assign` moves the
array object to it. A view remembers its base and two functions: `read(base node) -> view
node` and `write(base node, view value) -> base node` (a slice and a dynamic-update-slice for
basic keys, two transposes for a transpose). Writing a view writes its base (up the chain of
views to the array that owns its value), and every live view of a written array re-reads it
(down the chain), so values agree as they do in NumPy. A base holds its views weakly:
temporaries such as `u[1:-1] + u[2:]` leave nothing behind.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from ..hlo import Instruction
from .array import Array, track_pending

Read = Callable[[Instruction], Instruction]
Write = Callable[[Instruction, Instruction], Instruction]


class ViewOf:
    """How a view derives from its base: `read` gives the view's node from the base's node,
    `write` gives the base's node after the view's value becomes a given node."""

    __slots__ = ("base", "read", "write")

    def __init__(self, base: Array, read: Read, write: Write):
        self.base, self.read, self.write = base, read, write


def make_view(base: Array, read: Read, write: Write, node: Instruction | None = None) -> Array:
    """A new array viewing `base` (its value is `read(base._node)`, writes go through `write`).

    `node`, when given, is that value already in hand (a leaf bound to NumPy's view of an
    evaluated base's buffer); later writes to the base re-read through `read` as usual."""
    view = Array(read(base._node) if node is None else node)
    view._base = ViewOf(base, read, write)
    views = base._views
    if views is None:
        base._views = [weakref.ref(view)]
        return view
    count = len(views)
    if count >= 8 and count & (count - 1) == 0:  # at powers of two: amortized O(1) per view
        views[:] = [reference for reference in views if reference() is not None]
    views.append(weakref.ref(view))
    return view


def assign(array: Array, node: Instruction) -> None:
    """Give `array` the value `node` (same shape and dtype), as a NumPy in-place write does:
    the object itself changes, its bases are written through, its views re-read."""
    if node.shape != array.shape or node.dtype != array.dtype:
        raise AssertionError(f"assign: {node.dtype}{list(node.shape)} into {array.dtype}{list(array.shape)}")
    owner = array
    while owner._base is not None:  # up: the view's new value becomes its base's new value
        link = owner._base
        node = link.write(link.base._node, node)
        owner = link.base
    owner._node = node
    stack = [owner]
    while stack:  # down: every live view of a written array reads its new value
        written = stack.pop()
        if written._views:
            live = [view for view in (reference() for reference in written._views) if view is not None]
            written._views = [weakref.ref(view) for view in live] or None
            for view in live:
                view._node = view._base.read(written._node)
                stack.append(view)
    track_pending(owner)  # a loop of writes (`u[1:-1] = ...`) is bounded as any other
