"""Pytrees: the nested tuples, lists, dicts and None that `la.jit` arguments and results are made of.

`flatten(tree)` lists the leaves left to right and returns a *treedef*, the structure without the
leaves; `unflatten(treedef, leaves)` puts leaves back into that structure. A treedef is a nested
tuple of plain values, so it hashes and compares cheaply and can key a cache (`la.jit` keys its
executables by it).

Containers are tuples, lists, dicts (keys in insertion order), named tuples and None (a
container with no leaves, as in JAX). Anything else is a leaf, including subclasses of list
and dict other than named tuples.

>>> leaves, treedef = flatten({"w": (1, 2), "b": None})
>>> leaves
[1, 2]
>>> unflatten(treedef, ["x", "y"])
{'w': ('x', 'y'), 'b': None}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

# The treedef of a leaf; compared by identity.
LEAF = "*"


def flatten(tree) -> tuple[list, object]:
    """(leaves left to right, treedef) of `tree`."""
    leaves: list = []
    treedef = _flatten_into(tree, leaves)
    return leaves, treedef


def _flatten_into(tree, leaves: list):
    kind = type(tree)
    if kind is tuple or kind is list:
        return (kind, tuple([_flatten_into(child, leaves) for child in tree]))
    if kind is dict:
        return (dict, tuple(tree), tuple([_flatten_into(child, leaves) for child in tree.values()]))
    if tree is None:
        return None
    if isinstance(tree, tuple) and hasattr(kind, "_fields"):  # a named tuple
        return (kind, tuple([_flatten_into(child, leaves) for child in tree]))
    leaves.append(tree)
    return LEAF


def unflatten(treedef, leaves: Sequence):
    """The tree of structure `treedef` holding `leaves` (as many as `flatten` produced)."""
    iterator = iter(leaves)
    tree = _build(treedef, iterator)
    if next(iterator, _END) is not _END:
        raise ValueError(f"unflatten: more leaves than the structure holds ({len(leaves)} given)")
    return tree


_END = object()


def _build(treedef, leaves: Iterator):
    if treedef is LEAF:
        leaf = next(leaves, _END)
        if leaf is _END:
            raise ValueError("unflatten: fewer leaves than the structure holds")
        return leaf
    if treedef is None:
        return None
    kind = treedef[0]
    if kind is dict:
        return {key: _build(child, leaves) for key, child in zip(treedef[1], treedef[2])}
    children = [_build(child, leaves) for child in treedef[1]]
    if kind is list:
        return children
    if kind is tuple:
        return tuple(children)
    return kind(*children)  # a named tuple


def leaf_count(treedef) -> int:
    """How many leaves a tree of structure `treedef` holds."""
    if treedef is LEAF:
        return 1
    if treedef is None:
        return 0
    return sum(leaf_count(child) for child in treedef[-1])


def leaf_paths(tree, prefix: str = "") -> list[str]:
    """Where each leaf sits, as Python indexing (`[0]['w']`), in `flatten` order; for error messages."""
    kind = type(tree)
    if kind is dict:
        return [path for key, child in tree.items() for path in leaf_paths(child, f"{prefix}[{key!r}]")]
    if kind is tuple or kind is list or (isinstance(tree, tuple) and hasattr(kind, "_fields")):
        return [path for index, child in enumerate(tree) for path in leaf_paths(child, f"{prefix}[{index}]")]
    if tree is None:
        return []
    return [prefix]
