"""AlgebraicSimplifier: a table of small rewrite rules, each "before -> after", applied bottom-up.

Every rule is exactly value-preserving under NumPy semantics, bit for bit, for every dtype it
fires on: NaN, infinities, -0.0 and integer wraparound included. That rules out much of the
textbook algebra: `x + 0.0` turns -0.0 into +0.0 (so floats use `x + (-0.0) -> x`), `x * 0.0`
is NaN for inf and NaN, a float `sum` over no dimensions adds +0.0, and NumPy's complex
product computes `x.imag * 0` in the real part (inf * 0 = NaN), so `x * 1` is not `x` for
complex. Each rule's comment says which dtypes it fires on and why; the tests check every
rule against the NumPy evaluator on edge values.

A rule that would drop a subgraph (`x * 0 -> 0` drops `x`) does so only when that subgraph
cannot raise at evaluation (gather's IndexError, a custom-call's LinAlgError): simplifying
must not make an error disappear.

A rule is `rule(instruction, operands) -> Instruction | None`: given an instruction whose
operands are already simplified, return the replacement, or None when it does not apply.
The replacement has the instruction's shape and dtype. Rules see one instruction and its
operands only; they never walk the graph (so deep graphs cost nothing extra).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from .. import dtypes
from ..hlo.instruction import Instruction, constant, make
from ..hlo.module import Module
from ..hlo.op import HOST, HloError
from .pipeline import rebuild, rewrite_entry

Rule = Callable[[Instruction, tuple[Instruction, ...]], "Instruction | None"]

# ------------------------------------------------------------------------------ helpers


def splat_value(instruction: Instruction) -> np.ndarray | None:
    """The one value of a constant splat, as a 0-d array, or None if it is not one.

    A splat is `broadcast(constant)` or a `constant` whose elements are all equal, compared by
    their bits (so -0.0 and +0.0, or two NaNs with different payloads, are different values).
    """
    source = instruction.operands[0] if instruction.opcode == "broadcast" else instruction
    if source.opcode != "constant":
        return None
    flat = source.attr("literal").array.reshape(-1)
    if flat.size == 0:
        return None
    if flat.size > 1:
        rows = flat.view(np.uint8).reshape(flat.size, flat.dtype.itemsize)
        if not (rows == rows[0]).all():
            return None
    return flat[:1].reshape(())


def is_splat(instruction: Instruction, value) -> bool:
    """Whether `instruction` is a splat of exactly `value` (converted to its dtype), bit for bit."""
    found = splat_value(instruction)
    return found is not None and found.tobytes() == np.array(value, instruction.dtype).tobytes()


def splat(value, like: Instruction) -> Instruction:
    """`value` in every element of `like`'s shape and dtype: broadcast(constant(value))."""
    scalar = constant(value, like.dtype)
    if like.shape == ():
        return scalar
    return make("broadcast", [scalar], shape=like.shape, dimensions=())


RAISING_OPS = frozenset({"gather", "scatter", "custom-call", "fusion"})
_RAISES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def may_raise(root: Instruction) -> bool:
    """Whether evaluating `root` may raise: it uses gather/scatter (IndexError), a custom-call
    or host op (LinAlgError), or a fusion (which may hold those). Memoized per instruction,
    which is sound because instructions are immutable; the walk is iterative."""
    known = _RAISES.get(root)
    if known is not None:
        return known
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if node in _RAISES:
            continue
        if expanded:
            _RAISES[node] = (
                node.opcode in RAISING_OPS
                or node.op.has(HOST)
                or any(_RAISES[operand] for operand in node.operands)
            )
        else:
            stack.append((node, True))
            stack.extend((operand, False) for operand in node.operands if operand not in _RAISES)
    return _RAISES[root]


def exact_conversion(source: np.dtype, target: np.dtype) -> bool:
    """Whether every value of `source` converts to `target` exactly (NaN, inf, -0.0 included).

    The exact pairs: bool to anything; an integer to an integer type holding its whole range
    (int8 -> int16, uint8 -> int16, not int8 -> uint16); an integer to a float (or complex)
    whose significand holds all its bits (8-bit ints -> f16, 16-bit -> f32, 32-bit -> f64);
    a float or complex to a float or complex of at least its precision (f16 -> f32 -> f64,
    f32 -> c64 -> c128). Never to bool, never float to integer, never complex to real.
    """
    if source == target or source == dtypes.bool_:
        return True
    if target == dtypes.bool_:
        return False
    if dtypes.is_integer(source):
        magnitude_bits = source.itemsize * 8 - dtypes.is_signed_integer(source)
        if dtypes.is_integer(target):
            if dtypes.is_signed_integer(source) and not dtypes.is_signed_integer(target):
                return False
            return target.itemsize * 8 - dtypes.is_signed_integer(target) >= magnitude_bits
        return magnitude_bits <= np.finfo(target).nmant + 1
    if dtypes.is_integer(target) or (dtypes.is_complex(source) and not dtypes.is_complex(target)):
        return False
    return dtypes.real_dtype(target).itemsize >= dtypes.real_dtype(source).itemsize


def _is_integer_or_bool(dtype) -> bool:
    return dtype == dtypes.bool_ or dtypes.is_integer(dtype)


def _negative_zero(dtype):
    """The additive identity that keeps -0.0: -0.0 for floats, (-0.0, -0.0) for complex."""
    if dtypes.is_complex(dtype):
        return complex(-0.0, -0.0)
    return -0.0 if dtypes.is_floating(dtype) else 0


# -------------------------------------------------------------------- elementwise rules


def add_zero(instruction, operands):
    """x + 0 -> x, 0 + x -> x for integers and bool (bool add is `or`);
    x + (-0.0) -> x for floats and complex (x + 0.0 would turn -0.0 into +0.0)."""
    zero = _negative_zero(instruction.dtype)
    left, right = operands
    if is_splat(right, zero):
        return left
    if is_splat(left, zero):
        return right
    return None


def subtract_zero(instruction, operands):
    """x - 0 -> x for every dtype (x - (+0.0) keeps -0.0: -0.0 - 0.0 == -0.0)."""
    left, right = operands
    return left if is_splat(right, 0) else None


def multiply_one(instruction, operands):
    """x * 1 -> x, 1 * x -> x for bool, integers and floats (x * 1.0 keeps -0.0, NaN, inf).
    Not complex: NumPy's complex product adds x.imag * 0 to the real part (inf * 0 is NaN)."""
    if dtypes.is_complex(instruction.dtype):
        return None
    left, right = operands
    if is_splat(right, 1):
        return left
    if is_splat(left, 1):
        return right
    return None


def multiply_zero(instruction, operands):
    """x * 0 -> 0, 0 * x -> 0 for integers and bool only (a float x may be NaN or inf)."""
    if not _is_integer_or_bool(instruction.dtype):
        return None
    left, right = operands
    for zero, other in ((right, left), (left, right)):
        if is_splat(zero, 0) and not may_raise(other):
            return zero
    return None


def divide_one(instruction, operands):
    """x / 1 -> x for floats (exact, -0.0 and NaN kept). Not complex (as multiply_one)."""
    if dtypes.is_complex(instruction.dtype):
        return None
    left, right = operands
    return left if is_splat(right, 1) else None


def negate_negate(instruction, operands):
    """negate(negate(x)) -> x: an involution for floats, complex and (wrapping) integers."""
    (operand,) = operands
    return operand.operands[0] if operand.opcode == "negate" else None


def not_not(instruction, operands):
    """not(not(x)) -> x: bitwise invert is an involution on bool and integers."""
    (operand,) = operands
    return operand.operands[0] if operand.opcode == "not" else None


def _scalar_exponent(exponent: Instruction) -> bool:
    """Whether the evaluator hands power's reference this exponent as a zero-stride scalar:
    a broadcast of one element or a 0-d constant. NumPy's float power takes its own path for
    a scalar exponent (elementwise.py `_power`), which computes x ** 2 as x * x; the general
    path (a dense exponent array) calls pow, which can differ in the last bit."""
    if exponent.opcode == "broadcast":
        return exponent.operands[0].size == 1
    return exponent.ndim == 0


def power_one(instruction, operands):
    """x ** 1 -> x for integers and floats (both of NumPy's power paths return x). Not complex."""
    if dtypes.is_complex(instruction.dtype):
        return None
    base, exponent = operands
    return base if is_splat(exponent, 1) else None


def power_two(instruction, operands):
    """x ** 2 -> x * x for integers (wrapping products agree), float16 (computed in float32,
    where the square is exact), and float32/float64 when the exponent reaches the evaluator as
    a scalar (see `_scalar_exponent`). Not complex: NumPy's complex power has its own kernel."""
    dtype = instruction.dtype
    base, exponent = operands
    if not is_splat(exponent, 2) or dtypes.is_complex(dtype):
        return None
    if dtype in (dtypes.float32, dtypes.float64) and not _scalar_exponent(exponent):
        return None
    return make("multiply", [base, base])


def power_half_or_minus_one(instruction, operands):
    """x ** 0.5 -> sqrt(x) and x ** -1 -> reciprocal(x) for float32/float64 when the exponent
    reaches the evaluator as a scalar (`_scalar_exponent`): NumPy's loop takes those paths for
    a scalar exponent, so sqrt(-0.0) = -0.0 and sqrt(-inf) = NaN (pow gives +0.0 and inf), and
    x ** -1 is 1 / x exactly. Not float16 (NumPy's half power calls pow) nor complex."""
    base, exponent = operands
    if instruction.dtype not in (dtypes.float32, dtypes.float64) or not _scalar_exponent(exponent):
        return None
    if is_splat(exponent, 0.5):
        return make("sqrt", [base])
    if is_splat(exponent, -1):
        return make("reciprocal", [base])
    return None


def power_zero(instruction, operands):
    """x ** 0 -> 1 for integers (NumPy's integer power gives 1, also for 0 ** 0).
    Not floats: float16 power of a signaling NaN gives NaN."""
    base, exponent = operands
    if dtypes.is_integer(instruction.dtype) and is_splat(exponent, 0) and not may_raise(base):
        return splat(1, instruction)
    return None


def compare_same(instruction, operands):
    """compare(x, x) -> splat(true) for EQ LE GE, splat(false) for NE LT GT, on integers and
    bool only (a float x may be NaN, which compares unequal to itself)."""
    left, right = operands
    if left is not right or not _is_integer_or_bool(left.dtype) or may_raise(left):
        return None
    return splat(instruction.attr("direction") in ("EQ", "LE", "GE"), instruction)


def select_same(instruction, operands):
    """select(c, x, x) -> x."""
    predicate, on_true, on_false = operands
    if on_true is on_false and not may_raise(predicate):
        return on_true
    return None


def select_constant(instruction, operands):
    """select(splat(true), a, b) -> a; select(splat(false), a, b) -> b."""
    predicate, on_true, on_false = operands
    if is_splat(predicate, True) and not may_raise(on_false):
        return on_true
    if is_splat(predicate, False) and not may_raise(on_true):
        return on_false
    return None


def convert_same(instruction, operands):
    """convert(x) to x's own dtype -> x."""
    (operand,) = operands
    return operand if operand.dtype == instruction.dtype else None


def convert_convert(instruction, operands):
    """convert(convert(x, middle), target) -> convert(x, target) when x -> middle and
    middle -> target are both exact (int8 -> int32 -> int64 is int8 -> int64);
    convert(convert(x, middle), x's dtype) -> x when x -> middle is exact (the round trip
    f32 -> f64 -> f32 is the identity). See `exact_conversion` for the exact pairs."""
    (operand,) = operands
    if operand.opcode != "convert":
        return None
    source = operand.operands[0]
    middle, target = operand.dtype, instruction.dtype
    if not exact_conversion(source.dtype, middle):
        return None
    if target == source.dtype:
        return source
    if exact_conversion(middle, target):
        return make("convert", [source], dtype=target)
    return None


def reduce_nothing(instruction, operands):
    """reduce over no dimensions -> x for max, min, and, or (every dtype) and for integer
    sum and prod. Not float sum (NumPy adds +0.0: -0.0 becomes +0.0) nor complex prod."""
    (operand,) = operands
    if instruction.attr("dimensions"):
        return None
    kind = instruction.attr("kind")
    if kind in ("max", "min", "and", "or") or dtypes.is_integer(operand.dtype):
        return operand
    return None


def reduce_broadcast(instruction, operands):
    """reduce(broadcast(x)) -> broadcast(reduce(broadcast'(x))): dimensions the broadcast added
    and the reduce keeps are broadcast after reducing, since every output element along them
    reduces the same elements in the same order (all kinds). For max, min, and, or an added
    dimension that is reduced is dropped too (repeats do not change those results), unless
    it is empty (`all` over nothing is true). Saves work, and keeps kernels from reducing
    values that do not depend on the output index (long uniform chains LLVM handles badly)."""
    (operand,) = operands
    if operand.opcode != "broadcast":
        return None
    source = operand.operands[0]
    shape, reduced = operand.shape, set(instruction.attr("dimensions"))
    added = set(range(len(shape))) - set(operand.attr("dimensions"))
    idempotent = instruction.attr("kind") in ("max", "min", "and", "or")
    removed = {axis for axis in added if axis not in reduced or (idempotent and shape[axis] > 0)}
    if not removed:
        return None
    kept = [axis for axis in range(len(shape)) if axis not in removed]
    mapping = tuple(kept.index(axis) for axis in operand.attr("dimensions"))
    narrowed = source if mapping == tuple(range(len(kept))) else make(
        "broadcast", [source], shape=tuple(shape[axis] for axis in kept), dimensions=mapping,
    )
    inner = make(
        "reduce", [narrowed], kind=instruction.attr("kind"),
        dimensions=tuple(kept.index(axis) for axis in sorted(reduced) if axis not in removed),
    )
    if inner.shape == instruction.shape:
        return inner
    outputs = [axis for axis in range(len(shape)) if axis not in reduced]
    return make(
        "broadcast", [inner], shape=instruction.shape,
        dimensions=tuple(outputs.index(axis) for axis in kept if axis not in reduced),
    )


# ------------------------------------------------------------------------- layout rules


def transpose_transpose(instruction, operands):
    """transpose(x, identity) -> x; transpose(transpose(x, p), q) -> transpose(x, p[q[i]])."""
    (operand,) = operands
    permutation = instruction.attr("permutation")
    if operand.opcode == "transpose":
        inner = operand.attr("permutation")
        permutation = tuple(inner[axis] for axis in permutation)
        operand = operand.operands[0]
    if permutation == tuple(range(len(permutation))):
        return operand
    if operand is operands[0]:
        return None
    return make("transpose", [operand], permutation=permutation)


def reshape_reshape(instruction, operands):
    """reshape(x) to x's own shape -> x; reshape(reshape(x)) -> reshape(x) (row-major both)."""
    (operand,) = operands
    if operand.shape == instruction.shape:
        return operand
    if operand.opcode == "reshape":
        return make("reshape", [operand.operands[0]], shape=instruction.shape)
    return None


def broadcast_broadcast(instruction, operands):
    """broadcast(x) to x's own shape -> x (its dimensions are then 0..n-1);
    broadcast(broadcast(x, d1), d2) -> broadcast(x, d2[d1[i]])."""
    (operand,) = operands
    if operand.shape == instruction.shape:
        return operand
    if operand.opcode == "broadcast":
        outer = instruction.attr("dimensions")
        dimensions = tuple(outer[axis] for axis in operand.attr("dimensions"))
        return make("broadcast", [operand.operands[0]], shape=instruction.shape, dimensions=dimensions)
    return None


def slice_slice(instruction, operands):
    """slice(x) keeping x's whole shape -> x (equal shapes force start 0 and every element);
    slice(slice(x, s1, l1, t1), s2, l2, t2) -> slice(x, s1 + s2*t1, ..., t1*t2)."""
    (operand,) = operands
    if operand.shape == instruction.shape:
        return operand
    if operand.opcode != "slice":
        return None
    source = operand.operands[0]
    start, limit, stride = [], [], []
    for axis, count in enumerate(instruction.shape):
        inner_start, inner_stride = operand.attr("start")[axis], operand.attr("stride")[axis]
        step = inner_stride * instruction.attr("stride")[axis]
        first = inner_start + instruction.attr("start")[axis] * inner_stride
        if count == 0:  # nothing selected; the composed start could lie past the end
            first, step = 0, 1
        start.append(first)
        limit.append(first + (count - 1) * step + 1 if count else first)
        stride.append(step)
    return make("slice", [source], start=tuple(start), limit=tuple(limit), stride=tuple(stride))


def reverse_reverse(instruction, operands):
    """reverse(x) on dimensions of extent <= 1 only -> x; reverse(reverse(x, a), b) ->
    reverse(x, a xor b) (reversing a dimension twice restores it), or x when that is empty."""
    (operand,) = operands
    shape = instruction.shape
    dimensions = {axis for axis in instruction.attr("dimensions") if shape[axis] > 1}
    if operand.opcode == "reverse":
        dimensions ^= {axis for axis in operand.attr("dimensions") if shape[axis] > 1}
        operand = operand.operands[0]
    if not dimensions:
        return operand
    if operand is operands[0] and dimensions == set(instruction.attr("dimensions")):
        return None
    return make("reverse", [operand], dimensions=tuple(sorted(dimensions)))


def concatenate_single(instruction, operands):
    """concatenate(x) -> x; operands of extent 0 on the joined dimension are dropped
    (concatenate(x, empty) -> x)."""
    dimension = instruction.attr("dimension")
    kept = [operand for operand in operands if operand.shape[dimension] > 0]
    dropped = [operand for operand in operands if operand.shape[dimension] == 0]
    if not kept:
        kept, dropped = [operands[0]], list(operands[1:])
    if len(kept) == len(operands) and len(kept) > 1:
        return None
    if any(may_raise(operand) for operand in dropped):
        return None
    if len(kept) == 1:
        return kept[0]
    return make("concatenate", kept, dimension=dimension)


def pad_nothing(instruction, operands):
    """pad(x, v) with all-zero low, high and interior padding -> x."""
    operand, padding_value = operands
    widths = instruction.attr("low") + instruction.attr("high") + instruction.attr("interior")
    if any(widths) or may_raise(padding_value):
        return None
    return operand


def empty_result(instruction, operands):
    """An empty value computed from operands -> broadcast(0): nothing to compute, whatever
    the operands hold (`sum` over axis 0 of a (2**41, 0) array reduced 2**41 zeros for no
    output element). Not where evaluating the operands may raise (`may_raise`): an index
    error still comes, as NumPy's."""
    if not operands or instruction.size:  # (parameters, constants and iota have no operands)
        return None
    if instruction.opcode == "broadcast" and operands[0].opcode == "constant":
        return None
    if may_raise(instruction):
        return None
    return splat(0, instruction)


# ------------------------------------------------------------------------------ the table

# opcode -> rules tried in order; the first that applies wins, then the result is tried again.
# EVERY_OP's rules are tried first, for every opcode.
EVERY_OP = "*"
TABLE: list[tuple[str, Rule]] = [
    (EVERY_OP, empty_result),               # an empty value -> broadcast(0)
    ("add", add_zero),                      # x + 0 -> x (ints, bool); x + (-0.0) -> x (floats)
    ("subtract", subtract_zero),            # x - 0 -> x
    ("multiply", multiply_one),             # x * 1 -> x (not complex)
    ("multiply", multiply_zero),            # x * 0 -> 0 (ints, bool)
    ("divide", divide_one),                 # x / 1 -> x (not complex)
    ("negate", negate_negate),              # -(-x) -> x
    ("not", not_not),                       # not(not(x)) -> x
    ("power", power_one),                   # x ** 1 -> x
    ("power", power_two),                   # x ** 2 -> x * x
    ("power", power_zero),                  # x ** 0 -> 1 (ints)
    ("power", power_half_or_minus_one),     # x ** 0.5 -> sqrt(x), x ** -1 -> 1 / x (floats)
    ("compare", compare_same),              # x == x -> true, x < x -> false (ints, bool)
    ("select", select_same),                # select(c, x, x) -> x
    ("select", select_constant),            # select(true, a, b) -> a
    ("convert", convert_same),              # convert(x: T, T) -> x
    ("convert", convert_convert),           # convert(convert(x)) -> convert(x) if exact
    ("reduce", reduce_nothing),             # reduce(x, dimensions={}) -> x (not float sum)
    ("reduce", reduce_broadcast),           # reduce(broadcast(x)) -> broadcast(reduce(x))
    ("transpose", transpose_transpose),     # transpose(transpose(x)) -> transpose(x) or x
    ("reshape", reshape_reshape),           # reshape(reshape(x)) -> reshape(x) or x
    ("broadcast", broadcast_broadcast),     # broadcast(broadcast(x)) -> broadcast(x) or x
    ("slice", slice_slice),                 # slice(slice(x)) -> slice(x) or x
    ("reverse", reverse_reverse),           # reverse(reverse(x)) -> x
    ("concatenate", concatenate_single),    # concatenate(x) -> x
    ("pad", pad_nothing),                   # pad(x, v, 0, 0, 0) -> x
]


class AlgebraicSimplifier:
    """Apply the rule TABLE to the entry computation, bottom-up, until nothing applies.

    Each instruction is rebuilt over its simplified operands, then its rules are tried until
    none applies (a rule's result is tried again: transpose(transpose(x)) may become x).
    Whole-graph rounds repeat while anything changed, at most `max_rounds` times. Fused
    computations are left alone: the pipeline simplifies before it fuses.

    >>> from lazyarr.hlo import text
    >>> module = text.parse('''HloModule m
    ... ENTRY main {
    ...   p0 = s32[2] parameter(0)
    ...   n = s32[2] negate(p0)
    ...   ROOT r = s32[2] negate(n)
    ... }''')
    >>> AlgebraicSimplifier().run(module), module.entry.outputs[0].opcode
    (True, 'parameter')
    """

    name = "simplify"

    def __init__(self, table: list[tuple[str, Rule]] | None = None, *, max_rounds: int = 8):
        rules: dict[str, list[Rule]] = {}
        for opcode, rule in TABLE if table is None else table:
            rules.setdefault(opcode, []).append(rule)
        # Each opcode's rules after EVERY_OP's, joined once here; other opcodes get EVERY_OP's.
        self.every_op: tuple[Rule, ...] = tuple(rules.pop(EVERY_OP, ()))
        self.rules = {opcode: self.every_op + tuple(own) for opcode, own in rules.items()}
        self.max_rounds = max_rounds
        self.settled = False  # whether the last run ended at a fixed point (FixedPoint reads it)

    def run(self, module: Module) -> bool:
        changed = self.settled = False
        for _ in range(self.max_rounds):
            if not rewrite_entry(module, self._simplify):
                self.settled = True
                break
            changed = True
        return changed

    def _simplify(self, node: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
        node = rebuild(node, operands)
        for _ in range(64):  # each rule removes or cheapens an op; the bound guards a faulty table
            for rule in self.rules.get(node.opcode, self.every_op):
                result = rule(node, node.operands)
                if result is not None and result is not node:
                    if result.shape != node.shape or result.dtype != node.dtype:
                        raise HloError(
                            f"simplify: rule {rule.__name__} turned {node!r} into {result!r}, "
                            "changing its shape or dtype"
                        )
                    node = result
                    break
            else:
                return node
        return node
