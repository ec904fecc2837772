"""CommonSubexpressionEliminator: put commutative operands in one order so interning merges them.

Interning already makes structurally equal instructions one object, which is most of CSE.
What it cannot see is that `add(a, b)` and `add(b, a)`, or `compare(a, b), direction=LT` and
`compare(b, a), direction=GT`, are the same value. This pass orders the operands of such
instructions by a structural key, so both spellings are rebuilt as one instruction:

    add(a, b), add(b, a)                  -> add(a, b) twice (one instruction)
    compare(b, a, GT)                     -> compare(a, b, LT)        (when key(a) < key(b))

The key is a digest of the instruction's structure (opcode, type, attributes, the keys of its
operands), so it depends on neither the process nor the graph's traversal order: running
the pass again changes nothing. Constants sort last, so `add(x, 1)` keeps its constant on
the right, where XLA's canonical form puts it.

Only operand swaps that are bit-exact in NumPy are made. The COMMUTATIVE ops qualify except
maximum/minimum/fmax/fmin on floats and complex (on +0.0 and -0.0, which compare equal,
NumPy returns one operand or the other by position) and complex multiply (NumPy's kernel
rounds a*d + b*c in an order that depends on which operand is which).
"""

from __future__ import annotations

import hashlib

from .. import dtypes
from ..hlo.instruction import Instruction, Literal, make
from ..hlo.module import Computation, Module
from ..hlo.op import COMMUTATIVE
from ..hlo.op import get as get_op
from ..shapes import is_symbolic_size
from .pipeline import rebuild, rewrite_entry

MIRRORED_DIRECTION = {"EQ": "EQ", "NE": "NE", "LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE"}
ORDER_PICKING_OPS = frozenset({"maximum", "minimum", "fmax", "fmin"})


def swappable(node: Instruction) -> bool:
    """Whether `node`'s two operands may trade places (a compare by mirroring its direction)."""
    if node.opcode == "compare":
        return True
    if not node.op.has(COMMUTATIVE) or len(node.operands) != 2:
        return False
    if node.opcode in ORDER_PICKING_OPS and dtypes.is_inexact(node.dtype):
        return False
    return not (node.opcode == "multiply" and dtypes.is_complex(node.dtype))


def _encoded_attribute(value) -> bytes:
    if isinstance(value, Literal):
        array = value.array
        return f"literal {array.dtype.str} {array.shape} ".encode() + array.tobytes()
    if isinstance(value, Computation):
        return f"computation {value.name}".encode()
    return f"{type(value).__name__} {value!r}".encode()


class CommonSubexpressionEliminator:
    """Order the operands of commutative instructions and compares by their structural key.

    >>> from lazyarr.hlo import text
    >>> module = text.parse('''HloModule m
    ... ENTRY main {
    ...   p0 = f32[2] parameter(0)
    ...   p1 = f32[2] parameter(1)
    ...   a = f32[2] add(p0, p1)
    ...   b = f32[2] add(p1, p0)
    ...   ROOT r = f32[2] multiply(a, b)
    ... }''')
    >>> CommonSubexpressionEliminator().run(module)
    True
    >>> product = module.entry.outputs[0]
    >>> product.operands[0] is product.operands[1]
    True
    """

    name = "cse"

    def run(self, module: Module) -> bool:
        keys: dict[int, tuple[Instruction, bytes]] = {}  # id -> (node kept alive, its key)

        def canonical(node: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
            if swappable(node) and keys[id(operands[1])][1] < keys[id(operands[0])][1]:
                node = swapped(node, operands)
            else:
                node = rebuild(node, operands)
            if id(node) not in keys:
                keys[id(node)] = (node, structural_key(node, [keys[id(operand)][1] for operand in node.operands]))
            return node

        return rewrite_entry(module, canonical)


def swapped(node: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
    """`node` over its two `operands` in the other order (a compare with its direction mirrored)."""
    attrs = dict(node.attrs)
    if node.opcode == "compare":
        attrs["direction"] = MIRRORED_DIRECTION[attrs["direction"]]
    return make(node.op, (operands[1], operands[0]), **attrs)


def generic_sizes(value):
    """`value` (a shape, or any attribute) with every placeholder size written as '?':
    modules number their placeholders differently, so keys that must agree across modules
    (a kernel's, fusion._local_swaps) leave the numbers out."""
    if isinstance(value, tuple) and any(isinstance(size, int) and is_symbolic_size(size) for size in value):
        return tuple("?" if isinstance(size, int) and is_symbolic_size(size) else size for size in value)
    return value


def structural_key(node: Instruction, operand_keys: list[bytes], *, any_sizes: bool = False) -> bytes:
    """A digest of `node`'s structure over its operands' keys, led by one byte that sorts
    constants (and splats of them) after everything else: `add(x, constant)` reads as XLA
    writes it. `any_sizes`: placeholder sizes all read alike (`generic_sizes`)."""
    identity = node._identity
    plain = type(identity) is int and node.op is not _BROADCAST
    memo = (identity, node.shape, node.dtype, any_sizes) if plain else None
    local = _LOCAL_PARTS.get(memo) if memo is not None else None
    if local is None:
        local = _local_part(node, any_sizes)
        if memo is not None:
            if len(_LOCAL_PARTS) >= 1 << 16:
                _LOCAL_PARTS.clear()
            _LOCAL_PARTS[memo] = local
    lead, text = local
    digest = hashlib.blake2b(text, digest_size=16)
    for operand_key in operand_keys:
        digest.update(b"\1" + operand_key)
    return lead + digest.digest()


def _local_part(node: Instruction, any_sizes: bool) -> tuple[bytes, bytes]:
    """(leading byte, what the digest reads before the operands' keys) of `node`'s key."""
    source = node.operands[0] if node.opcode == "broadcast" else node
    shape = generic_sizes(node.shape) if any_sizes else node.shape
    parts = [f"{node.opcode} {node.dtype.str} {shape}".encode()]
    for name, value in node.attrs:
        value = generic_sizes(value) if any_sizes else value
        parts.append(b"\0" + name.encode() + b"=" + _encoded_attribute(value))
    return (b"\1" if source.opcode == "constant" else b"\0"), b"".join(parts)


# (plain node identity, shape, dtype, any_sizes) -> `_local_part`: a pass keys every node, and
# a loop's steps repeat the same few kinds of node. Plain identities only (an int standing for
# op and attributes, never a Literal: no constant is kept alive here). A broadcast's leading
# byte depends on its operand (a constant or not), which its identity does not say: not memoized.
_LOCAL_PARTS: dict[tuple, tuple[bytes, bytes]] = {}
_BROADCAST = get_op("broadcast")

