"""Instruction: a frozen, interned HLO node, built only through `make()`.

Interning makes structural equality identity: building the same op on the same operands
with the same attributes twice returns the same object, so hashing is O(1), equality is `is`,
and common subexpressions are shared as they are built (tinygrad's UOp does the same).
The intern table holds instructions weakly: a graph nobody references is freed.

Attributes are stored as a sorted tuple of (name, value) pairs; every value is hashable
(ints, floats, strings, bools, tuples of those, NumPy dtypes, or a `Literal`).
"""

from __future__ import annotations

import itertools
import operator
import threading
import weakref
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import numpy as np

from .. import dtypes as _dtypes
from .op import HloError, OpDef, get


class Literal:
    """An immutable array value for `constant`, hashed and compared by dtype, shape and bytes."""

    __slots__ = ("array", "_key", "__weakref__")

    def __init__(self, value, dtype=None):
        array = np.array(value, dtype=dtype, copy=True, order="C")
        _dtypes.as_dtype(array.dtype, where="constant")
        array.flags.writeable = False
        self.array = array
        self._key = (array.dtype.str, array.shape, array.tobytes())

    @property
    def shape(self):
        return self.array.shape

    @property
    def dtype(self):
        return self.array.dtype

    def __eq__(self, other):
        return isinstance(other, Literal) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"Literal({self.array!r})"


_PLAIN = (int, str, float, bool, np.dtype)
_PLAIN_OR_TUPLE = (*_PLAIN, tuple)


def _freeze(value):
    """Make an attribute value hashable and canonical (lists become tuples, dtypes normalized)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value)  # np.float32 and np.dtype("float32") are one attribute value
    return value


class _Fields:
    """The storage of an instruction. `_interned` fills a fresh `_Unfrozen` (plain attribute
    writes, ~5x cheaper than object.__setattr__ through a guard) and then makes it an
    `Instruction`, whose __setattr__ refuses writes: the two share this layout."""

    # _local: (op name, attrs, attribute types), the node's identity apart from its operands
    # (what the compile driver's structural key records per node). _bound: the buffer the
    # evaluator bound to this node (its computed value), or None; the only mutable field.
    # depth: the longest chain of operations from a leaf (0 for parameters and constants).
    # constant_only: no parameter anywhere below (a function of constants alone).
    # _identity: local_key(_local), what stands for _local in keys (the compile driver's too).
    # _holder: a weak reference to what holds the node for a program (the frontend's array), a
    # tuple of them (several arrays wrap it), or None; written with set_holder, read by the
    # compile driver's `keep` (evaluate_graph_keeping).
    # _lifted: on a constant, the compile driver's decision whether it is a runtime parameter
    # (its value, or False), remembered once taken (set_lifted); unset until then.
    __slots__ = ("op", "shape", "dtype", "operands", "attrs", "_attr_map", "_local", "_identity", "_bound", "depth",
                 "constant_only", "_holder", "_lifted", "__weakref__")


class _Unfrozen(_Fields):
    __slots__ = ()


class Instruction(_Fields):
    """One HLO value: `op` applied to `operands` with `attrs`, of `shape` and `dtype`.

    Never construct directly; use `make()`. Instances are immutable and interned (except the
    leaves `fresh_parameter` numbers uniquely).
    """

    __slots__ = ()

    op: OpDef
    shape: tuple[int, ...]
    dtype: np.dtype
    operands: tuple[Instruction, ...]
    attrs: tuple[tuple[str, object], ...]

    def __setattr__(self, name, value):
        raise AttributeError("Instruction is immutable")

    @property
    def opcode(self) -> str:
        return self.op.name

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        result = 1
        for extent in self.shape:
            result *= extent
        return result

    def attr(self, name: str):
        attributes = self._attr_map
        if attributes is None:
            attributes = self._built_attributes()
        return attributes[name]

    @property
    def attributes(self) -> Mapping[str, object]:
        attributes = self._attr_map
        return self._built_attributes() if attributes is None else attributes

    def _built_attributes(self) -> Mapping[str, object]:
        """The attribute map of a leaf made by fresh_parameter, built when first asked for (every
        evaluation and `la.jit` call makes leaves; few are ever asked for an attribute)."""
        attributes = MappingProxyType(dict(self.attrs))
        object.__setattr__(self, "_attr_map", attributes)
        return attributes

    def __repr__(self):
        attrs = ", ".join(f"{key}={value!r}" for key, value in self.attrs)
        return (
            f"<{_dtypes.short_name(self.dtype)}{list(self.shape)} {self.op.name}"
            f"({len(self.operands)} operands{', ' + attrs if attrs else ''})>"
        )

    def __reduce__(self):
        raise TypeError("Instruction is not picklable; print it with lazyarr.hlo.text instead")


# (node's `_local`, id of each operand) -> a weak reference to the instruction. A plain dict
# of weak references (not a WeakValueDictionary, whose Python-level get() costs a microsecond
# on every make()). Operands are keyed by id, so an entry keeps no graph alive; a live entry's
# instruction holds its operands, so their ids cannot have been reused, and a dead entry is a
# miss. Dead entries are swept when the table doubles (amortized, instead of a callback per
# dying node: a Python call during every node's deallocation cost a sixth of a recorded op).
_INTERN: dict[tuple, weakref.ref] = {}
_SWEEP_FLOOR = 4096
_sweep_at = _SWEEP_FLOOR
_SWEEPING = threading.Lock()


def _sweep() -> None:
    """Drop the entries of dead instructions; the next sweep waits until the table doubles.

    One thread sweeps at a time (another one that finds the table due skips it), and it walks
    a copy: dict.copy() is one step under the GIL, where list(_INTERN.items()) could let
    another thread insert while it ran ("dictionary changed size during iteration", seen under
    dask's threaded scheduler)."""
    global _sweep_at
    if not _SWEEPING.acquire(blocking=False):
        return
    try:
        if _fast_sweep is not None:  # the same in C (frontend/_fast_paths.c), ~8x faster
            _fast_sweep(_INTERN)
        else:
            for key, entry in _INTERN.copy().items():
                if entry() is None and _INTERN.get(key) is entry:
                    del _INTERN[key]
        _sweep_at = max(_SWEEP_FLOOR, 2 * len(_INTERN))
    finally:
        _SWEEPING.release()


_fast_sweep = None  # sweep_intern_table(table) of the frontend's C extension, where built (use_fast_sweep)


def use_fast_sweep(function) -> None:
    """Sweep the intern table with `function(table)` (the C extension's: fast_paths.py)."""
    global _fast_sweep
    _fast_sweep = function
_NO_ATTRIBUTES = MappingProxyType({})
# (op name, attributes as given, their types) -> the node's `_local` (attributes frozen and
# sorted): a loop recording the same step skips freezing. Plain values only (no Literal kept).
_LOCALS: dict[tuple, tuple] = {}
# (op, attributes, operand shapes and dtypes) -> (shape, dtype, attribute map) the op's rules gave.
_CHECKED: dict[tuple, tuple] = {}
# A plain `_local` -> the int standing for it in the keys of _INTERN and _CHECKED: a tuple of
# attributes is hashed element by element at every lookup (four per new slice or broadcast),
# an int at once. Never cleared, so a number always means one local; past the bound, and for
# locals holding a Literal or Computation, the local stands for itself.
_LOCAL_KEYS: dict[tuple, int] = {}
_LOCAL_NUMBERS = itertools.count()
_LOCAL_KEYS_LIMIT = 1 << 20
# op name -> (its attribute-less local, that local's key): make_plain's key without hashing.
_PLAIN_LOCALS: dict[str, tuple] = {}


def local_key(local: tuple):
    """What stands for the node identity `local` (op, attributes) in the intern table's keys."""
    key = _LOCAL_KEYS.get(local)
    if key is None:
        if len(_LOCAL_KEYS) >= _LOCAL_KEYS_LIMIT or not all(issubclass(kind, _PLAIN_OR_TUPLE) for kind in local[2]):
            return local
        key = _LOCAL_KEYS.setdefault(local, next(_LOCAL_NUMBERS))  # atomic: racing threads agree
    return key


def _plain_local(name: str) -> tuple:
    plain = _PLAIN_LOCALS.get(name)
    if plain is None:
        local = (name, (), ())
        plain = _PLAIN_LOCALS[name] = (local, local_key(local))
    return plain


def make(op: str | OpDef, operands: Sequence[Instruction] = (), **attrs) -> Instruction:
    """Build (or find) the instruction `op(operands, attrs)`, running the op's rules.

    Hot: every recorded frontend op calls it, so the path that finds an interned instruction
    does only what the key needs.

    >>> from lazyarr.hlo import ops  # registers the ops
    >>> x = make("parameter", number=0, shape=(3,), dtype=np.dtype("float32"))
    >>> make("negate", [x]).shape
    (3,)
    """
    opdef = op if type(op) is OpDef else get(op)
    operands = tuple(operands)
    for operand in operands:
        if type(operand) is not Instruction:
            raise HloError(f"{opdef.name}: operand {operand!r} is not an Instruction")
    if attrs or opdef.optional_attrs:
        if opdef.optional_attrs:
            attrs = {**opdef.optional_attrs, **attrs}
        given = (opdef.name, tuple(attrs.items()), tuple([type(value) for value in attrs.values()]))
        try:
            remembered = _LOCALS.get(given)
        except TypeError:  # an unhashable value (a list): frozen below, not remembered
            remembered, given = None, None
        if remembered is None:
            attr_tuple = tuple(sorted([(name, _freeze(value)) for name, value in attrs.items()]))
            # Types join the key: `True == 1` and `1 == 1.0` must not make two instructions one.
            local = (opdef.name, attr_tuple, tuple([type(value) for _, value in attr_tuple]))
            remembered = (local, local_key(local))
            if given is not None and all(issubclass(kind, _PLAIN_OR_TUPLE) for kind in local[2]):
                if len(_LOCALS) >= 8192:
                    _LOCALS.clear()
                _LOCALS[given] = remembered
        local, identity = remembered
        attr_tuple = local[1]
    else:
        attr_tuple = ()
        local, identity = _plain_local(opdef.name)
    key = (identity, *[id(operand) for operand in operands])
    entry = _INTERN.get(key)
    if entry is not None:
        found = entry()
        if found is not None:  # an interned instruction already passed the checks below
            return found
    # The rules' verdict depends only on the op, its attributes and the operands' types:
    # remembered, so a loop recording the same step builds each new node without them.
    count = len(operands)
    if count == 2:
        first, second = operands
        signature = (identity, first.shape, first.dtype, second.shape, second.dtype)
    elif count == 1:
        signature = (identity, operands[0].shape, operands[0].dtype)
    else:
        signature = (identity, *[part for operand in operands for part in (operand.shape, operand.dtype)])
    checked = _CHECKED.get(signature)
    if checked is not None:
        return _interned(key, local, opdef, checked[0], checked[1], operands, checked[2])
    if opdef.arity is not None and len(operands) != opdef.arity:
        raise HloError(f"{opdef.name}: expects {opdef.arity} operands, got {len(operands)}")
    missing = [name for name in opdef.attrs if name not in attrs]
    if missing:
        raise HloError(f"{opdef.name}: missing attribute(s) {missing}")
    unknown = [name for name in attrs if name not in opdef.attrs and name not in opdef.optional_attrs]
    if unknown:
        raise HloError(f"{opdef.name}: unknown attribute(s) {unknown}")
    attr_map = MappingProxyType(dict(attr_tuple)) if attr_tuple else _NO_ATTRIBUTES
    shape = tuple(map(int, opdef.shape_rule(operands, attr_map)))
    dtype = opdef.dtype_rule(operands, attr_map)
    if not isinstance(dtype, np.dtype):
        dtype = np.dtype(dtype)
    if all(issubclass(kind, _PLAIN_OR_TUPLE) for kind in local[2]):  # never keep a Literal or Computation alive
        if len(_CHECKED) >= 8192:
            _CHECKED.clear()
        _CHECKED[signature] = (shape, dtype, attr_map)
    return _interned(key, local, opdef, shape, dtype, operands, attr_map)


def make_plain(opdef: OpDef, operands: tuple[Instruction, ...]) -> Instruction:
    """`make(opdef, operands)` for an op with no attributes: the elementwise ops' hot path.

    The same node as make() gives; only the generic work for attributes is skipped, and an
    op whose rules have not yet run on these operand types goes through make()."""
    if opdef.optional_attrs:
        return make(opdef, operands)
    local, identity = _plain_local(opdef.name)
    if len(operands) == 2:
        first, second = operands
        key = (identity, id(first), id(second))
    else:
        key = (identity, *[id(operand) for operand in operands])
    entry = _INTERN.get(key)
    if entry is not None:
        found = entry()
        if found is not None:
            return found
    if len(operands) == 2:
        if type(first) is not Instruction or type(second) is not Instruction:
            return make(opdef, operands)  # make() names the bad operand
        signature = (identity, first.shape, first.dtype, second.shape, second.dtype)
    elif len(operands) == 1 and type(operands[0]) is Instruction:
        signature = (identity, operands[0].shape, operands[0].dtype)
    else:
        return make(opdef, operands)
    checked = _CHECKED.get(signature)
    if checked is None:
        return make(opdef, operands)
    return _interned(key, local, opdef, checked[0], checked[1], operands, checked[2])


class Maker:
    """`make(op, operands, **attrs)` with the op and attributes fixed and frozen once: a
    frontend that builds the same kind of node over and over (a stencil's slices, a loop's
    converts and reductions) calls `maker(*operands)` and skips freezing and hashing the
    attributes. The same node make() gives; the op's rules run through make() the first time
    they meet an operand signature, and always for attributes make() would not remember."""

    __slots__ = ("opdef", "attrs", "local", "identity")

    def __init__(self, op: str | OpDef, **attrs):
        self.opdef = op if type(op) is OpDef else get(op)
        self.attrs = {**self.opdef.optional_attrs, **attrs}
        frozen = tuple(sorted([(name, _freeze(value)) for name, value in self.attrs.items()]))
        types = tuple([type(value) for _, value in frozen])
        plain = all(issubclass(kind, _PLAIN_OR_TUPLE) for kind in types)
        self.local = (self.opdef.name, frozen, types) if plain else None
        self.identity = None if self.local is None else local_key(self.local)

    def __call__(self, *operands: Instruction) -> Instruction:
        local = self.local
        if local is None:
            return make(self.opdef, operands, **self.attrs)
        if len(operands) == 1:  # unrolled: a slice, reshape, convert or reduction of one node
            operand = operands[0]
            if type(operand) is not Instruction:
                return make(self.opdef, operands, **self.attrs)  # make() names the bad operand
            key = (self.identity, id(operand))
            entry = _INTERN.get(key)
            if entry is not None:
                found = entry()
                if found is not None:
                    return found
            checked = _CHECKED.get((self.identity, operand.shape, operand.dtype))
        else:
            for operand in operands:
                if type(operand) is not Instruction:
                    return make(self.opdef, operands, **self.attrs)
            key = (self.identity, *[id(operand) for operand in operands])
            entry = _INTERN.get(key)
            if entry is not None:
                found = entry()
                if found is not None:
                    return found
            checked = _CHECKED.get(
                (self.identity, *[part for operand in operands for part in (operand.shape, operand.dtype)]))
        if checked is None:
            return make(self.opdef, operands, **self.attrs)
        return _interned(key, local, self.opdef, checked[0], checked[1], operands, checked[2])


def python_replay(steps: tuple[tuple, ...], slots: list) -> list:
    """Make the nodes of a recorded graph (hlo.template) on new leaves: `slots` holds the leaves,
    and each step (op, `_local`, its `local_key`, operand slots, shape, dtype, attribute map), whose rules gave
    that shape, dtype and map on operands of these shapes and dtypes, appends its node, the
    one a checked `make` gives (no rules run). Returns `slots`."""
    intern_get = _INTERN.get
    for opdef, local, identity, positions, shape, dtype, attr_map in steps:
        if len(positions) == 1:
            operand = slots[positions[0]]
            operands = (operand,)
            key = (identity, id(operand))
        elif len(positions) == 2:
            first, second = slots[positions[0]], slots[positions[1]]
            operands = (first, second)
            key = (identity, id(first), id(second))
        else:
            operands = tuple([slots[position] for position in positions])
            key = (identity, *[id(operand) for operand in operands])
        entry = intern_get(key)
        found = entry() if entry is not None else None
        slots.append(found if found is not None else _interned(key, local, opdef, shape, dtype, operands, attr_map))
    return slots


# `replay`: python_replay, or its C twin where the frontend's C extension is built (it calls
# use_fast_replay: frontend/fast_paths.py); templates call it through this module's attribute.
replay = python_replay


def use_fast_replay(function) -> None:
    """Replay templates with `function` (the same contract as python_replay)."""
    global replay
    replay = function


def node_template(node: Instruction) -> tuple:
    """What `make_like` needs to make `node`'s op again, on other operands of the shapes and
    dtypes `node`'s operands have: (op, `_local`, its key, shape, dtype, attribute map).

    A frontend that memoizes how it built a node for an operand signature (elementwise.py's
    direct path) keeps this, and records the next such op with one intern lookup: the op's
    rules, already run for that signature, do not run again."""
    return (node.op, node._local, node._identity, node.shape, node.dtype, node._attr_map)


def make_like(template: tuple, *operands: Instruction) -> Instruction:
    """The node `template` (node_template) describes, of operands of the signature it was made
    for: the node make() gives them, found in the intern table or made unchecked."""
    opdef, local, identity, shape, dtype, attr_map = template
    if len(operands) == 2:  # unrolled: the elementwise ops' hot path
        key = (identity, id(operands[0]), id(operands[1]))
    elif len(operands) == 1:
        key = (identity, id(operands[0]))
    else:
        key = (identity, *[id(operand) for operand in operands])
    entry = _INTERN.get(key)
    if entry is not None:
        found = entry()
        if found is not None:
            return found
    return _interned(key, local, opdef, shape, dtype, operands, attr_map)


def chain_templates(node: Instruction, source: Instruction) -> tuple | None:
    """The node templates of the single-operand nodes leading from `source` up to `node`, in
    order (what `make_through` rebuilds on another operand of `source`'s shape and dtype: a
    broadcast, a view's slice and reshape), or None where a node on the way has other operands."""
    chain = []
    while node is not source:
        if len(node.operands) != 1:
            return None
        chain.append(node_template(node))
        node = node.operands[0]
    return tuple(reversed(chain))


def make_through(chain: tuple, node: Instruction) -> Instruction:
    """`node` through the templates of `chain` (chain_templates) in order: the nodes make()
    gives, one intern lookup each, no rules run."""
    for template in chain:
        node = make_like(template, node)
    return node


def remake(node: Instruction, operands: Sequence[Instruction]) -> Instruction:
    """`make(node.op, operands, **node.attributes)`: `node`'s op and attributes over other
    operands, as passes rebuild a graph. Where every operand has the shape and dtype of the
    one it replaces (the common case: a value rewritten into an equal one, a parameter standing
    for a node) the op's rules gave `node`'s result already: one intern lookup, no rules."""
    old = node.operands
    operands = tuple(operands)
    if len(operands) != len(old) or not old:
        return make(node.op, operands, **node.attributes)
    for new, previous in zip(operands, old):
        if type(new) is not Instruction or new.shape != previous.shape or (
                new.dtype is not previous.dtype and new.dtype != previous.dtype):
            return make(node.op, operands, **node.attributes)
    return make_like(node_template(node), *operands)


def _interned(key, local, opdef, shape, dtype, operands, attr_map) -> Instruction:
    """The instruction for `key`: a new one from these checked fields unless one is interned.

    (make_like and this are mirrored in the frontend's C extension, frontend/_fast_paths.c: a
    change here changes it too; tests/frontend/test_recording_in_c.py holds the two together.)"""
    instruction = _Unfrozen()  # (no __init__: the class call is ~25 ns faster than object.__new__)
    instruction.op = opdef
    instruction.shape = shape
    instruction.dtype = dtype
    instruction.operands = operands
    instruction.attrs = local[1]
    instruction._attr_map = attr_map
    instruction._local = local
    instruction._identity = key[0]
    instruction._bound = None
    instruction._holder = None
    count = len(operands)
    if count == 2:  # the common cases unrolled: this runs for every recorded op
        first, second = operands
        depth = first.depth if first.depth > second.depth else second.depth
        instruction.depth = depth + 1
        instruction.constant_only = first.constant_only and second.constant_only
    elif count == 1:
        instruction.depth = operands[0].depth + 1
        instruction.constant_only = operands[0].constant_only
    else:
        depth, constant_only = 0, opdef.name != "parameter"
        for operand in operands:
            if operand.depth >= depth:
                depth = operand.depth + 1
            if not operand.constant_only:
                constant_only = False
        instruction.depth = depth
        instruction.constant_only = constant_only
    instruction.__class__ = Instruction
    entry = _new_reference(instruction)
    # setdefault is one atomic step under the GIL: of two threads making the same node, the
    # second gets the first's (no lock: taking one cost a fifth of a recorded op).
    existing = _INTERN.setdefault(key, entry)
    if existing is not entry:
        found = existing()
        if found is not None:
            return found
        _INTERN[key] = entry  # a dead instruction's entry, not yet swept
    if len(_INTERN) > _sweep_at:
        _sweep()
    return instruction


_new_reference = weakref.ref


# Leaves of user graphs are numbered from 2**32, so they never coincide with the parameters
# 0..n-1 of a module built for compilation (which the compile cache keeps alive).
_PARAMETER_NUMBERS = itertools.count(1 << 32)


# (shape, dtype) as given -> (a parameter make() checked, its attribute types), so that
# fresh_parameter runs the parameter op's rules once per signature (it is on every evaluation
# and every la.jit call, where make()'s generic checks cost several microseconds).
_CHECKED_PARAMETERS: dict[tuple, tuple] = {}


def fresh_parameter(shape, dtype, bound=None) -> Instruction:
    """A parameter leaf with a process-unique number: the graph node of a materialized buffer.

    Not entered in the intern table: no make() call can ask for a number never given out
    before, so the entry would only cost its making and, when the leaf dies, its removal
    (every evaluation and `la.jit` call makes leaves for its results). `bound`: its buffer,
    bound at once (`bind`, without a second write through the immutable instruction's guard)."""
    if _fast_parameter is not None:
        leaf = _fast_parameter(shape, dtype, bound)  # (None: a (shape, dtype) not checked yet)
        if leaf is not None:
            return leaf
    number = next(_PARAMETER_NUMBERS)
    given = (shape if type(shape) is tuple else tuple(shape), dtype)
    checked = _CHECKED_PARAMETERS.get(given)
    if checked is None:
        # The model is a leaf of its own, never bound: the table must not keep a buffer alive.
        model = make("parameter", number=next(_PARAMETER_NUMBERS), shape=given[0], dtype=dtype)
        if len(_CHECKED_PARAMETERS) >= 4096:
            _CHECKED_PARAMETERS.clear()
        checked = _CHECKED_PARAMETERS[given] = (model, tuple(type(value) for _, value in model.attrs))
    model, attribute_types = checked
    shape, dtype = model.shape, model.dtype
    attr_tuple = (("dtype", dtype), ("number", number), ("shape", shape))  # as make()
    if _fast_leaf is not None:
        return _fast_leaf(model.op, shape, dtype, attr_tuple, ("parameter", attr_tuple, attribute_types), bound)
    leaf = _Unfrozen()
    leaf.op = model.op
    leaf.shape = shape
    leaf.dtype = dtype
    leaf.operands = ()
    leaf.attrs = attr_tuple
    leaf._attr_map = None  # built when asked for: Instruction._built_attributes
    leaf._local = leaf._identity = ("parameter", attr_tuple, attribute_types)  # unique: never a key
    leaf._bound = bound
    leaf._holder = None
    leaf.depth = 0
    leaf.constant_only = False
    leaf.__class__ = Instruction
    return leaf


_fast_leaf = None  # new_leaf(op, shape, dtype, attrs, identity, bound) of the frontend's C extension (use_fast_leaf)


_fast_parameter = None  # parameter_leaf(shape, dtype, bound): all of fresh_parameter for a checked (shape, dtype)


def use_fast_leaf(function, parameter=None) -> None:
    """Make fresh_parameter's leaves with `function` (the same fields, in C), and, given
    `parameter`, whole leaves of a (shape, dtype) checked before with it (the number too)."""
    global _fast_leaf, _fast_parameter
    _fast_leaf, _fast_parameter = function, parameter


# bind(node, buffer): record `buffer` as the computed value of `node` (the evaluator's only
# write to a node). The slot's C-level setter, past the immutable instruction's guard, as
# set_holder: every evaluation binds its results.
bind = _Fields._bound.__set__


# Record what holds a node for a program (a weak reference, or None): a C-level setter that
# bypasses the immutable instruction's guard, since every recorded array sets it.
set_holder = _Fields._holder.__set__
# Remember a constant's leaf decision (compile._leaf_decision): a C-level setter, as set_holder.
set_lifted = _Fields._lifted.__set__

# The buffer bound to a node, or None (a C-level getter: graph walks call it on every node).
bound_buffer = operator.attrgetter("_bound")


def constant(value, dtype=None) -> Instruction:
    """A `constant` instruction holding `value` (converted with NumPy to `dtype`).

    The node make("constant", literal=...) gives, without make()'s generic attribute work: a
    Literal is never remembered there (a key must not keep a value alive), so every new Python
    scalar in a loop (`x * t`) paid all of it, ~12 of a recorded op's ~14 us."""
    literal = Literal(value, dtype)
    local = ("constant", (("literal", literal),), _LITERAL_TYPES)  # its own identity (local_key)
    key = (local,)
    entry = _INTERN.get(key)
    if entry is not None:
        found = entry()
        if found is not None:
            return found
    return _interned(key, local, get("constant"), literal.shape, literal.dtype, (),
                     MappingProxyType({"literal": literal}))


_LITERAL_TYPES = (Literal,)


def interned_count() -> int:
    """How many instructions are alive (tests use it to check graphs are freed).

    Swept until nothing more goes: the key of a fusion's entry holds its computation, so the
    fused graph's own instructions die only once a sweep has dropped that entry."""
    while True:
        before = len(_INTERN)
        _sweep()
        if len(_INTERN) == before:
            return before
