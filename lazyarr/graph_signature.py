"""The codes of the compile driver's graph signatures (compile.Linearized.signature).

A signature is int64 words, per node in post order: a leaf's 2 * code + 1, the code of its
(shape, dtype, buffer type); an interior node's 2 * code (its `_identity` when that is an int, a
small number standing for its op and attributes, else the negative code of the identity), its
operand count and their positions. The C walk (`_graph_walk.c`) writes the same words from the
same tables, calling `new_code` for a key they do not hold yet.
"""

from __future__ import annotations

import itertools

from .hlo import Instruction, Literal
from .passes.fusion_policy import FusionPolicy

# A leaf's (shape, dtype, buffer type) -> a positive number, an `_identity` other than an int (a
# constant's, with its Literal) -> a negative one. Numbers are never given twice (a table full
# past _CODES_LIMIT starts afresh, and an executable keyed by an old number is planned again,
# never mistaken).
LEAF_CODES: dict[tuple, int] = {}
IDENTITY_CODES: dict[object, int] = {}
_CODE_NUMBERS = itertools.count(1)
_CODES_LIMIT = 1 << 16
_INLINED_CONSTANT_ELEMENTS = FusionPolicy.max_constant_elements  # (larger ones: compile's lifted constants)


def new_code(table: dict, key) -> int:
    """The code of `key` in `table` (one of the two above), made now if it has none.

    An identity holding a constant larger than kernels inline gets a code of its own each time,
    not kept: the table would keep its Literal (the data, twice) alive. Only walks that leave
    such constants in the code meet one (`build_module` for la.jit and device modules), and no
    executable is looked up by their signatures."""
    number = next(_CODE_NUMBERS)
    if table is IDENTITY_CODES and _holds_large_literal(key):
        return -number
    if len(table) >= _CODES_LIMIT:
        table.clear()
    return table.setdefault(key, number if table is LEAF_CODES else -number)  # (racing threads agree)


def _holds_large_literal(identity) -> bool:
    """Whether a node identity (op name, attributes, their types) holds a Literal of more than
    a kernel inlines."""
    attributes = identity[1] if type(identity) is tuple and len(identity) > 1 else ()
    return any(type(value) is Literal and value.array.size > _INLINED_CONSTANT_ELEMENTS
               for _, value in attributes)


def leaf_word(node: Instruction, buffer) -> int:
    """A leaf's word: 2 * the code of its (shape, dtype, buffer type) + 1."""
    key = (node.shape, node.dtype, type(buffer))
    code = LEAF_CODES.get(key)
    return 2 * (new_code(LEAF_CODES, key) if code is None else code) + 1


def identity_word(identity) -> int:
    """An interior node's first word: 2 * the code of its identity."""
    if type(identity) is int:
        return 2 * identity
    code = IDENTITY_CODES.get(identity)
    return 2 * (new_code(IDENTITY_CODES, identity) if code is None else code)
