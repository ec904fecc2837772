/* Frontend fast paths in C: recording elementwise ops and graph templates, element reads, and
the buffers of a jitted call's arguments. Installed by fast_paths.py; optional (setup.py).

Each is a piece of Python that a loop runs for every op or read, where a frame, bytecode and
attribute reads cost more than NumPy's whole op on small arrays; each does exactly what its
Python twin does in the common case and hands everything else to it:

- `FastSlot(kind, fallback[, name])`: a method descriptor that CPython's type slots call without
  a frame, installed as `Array.__getitem__` (an evaluated host buffer read with one integer per
  axis: an Element holding NumPy's own scalar), the Element conversions (`float`, `int`, `bool`,
  `operator.index` of a real NumPy scalar) and the Array operators (`record_binary` /
  `record_unary` below); anything else calls `fallback`, the Python method, with the same
  arguments.
- `record_binary(name, x1, x2)` / `record_unary(name, x)`: direct_recording.py's
  python_record_binary / python_record_unary, the memoized direct path of elementwise ops (an
  operand signature seen before: the node from the intern table or made from its
  template as hlo.instruction's make_like and _interned make it, a new Array as array.py's
  __init__ makes it, a deep one noted for loop cuts as track_pending notes it); None wherever the
  Python function would do anything else. A NumPy scalar operand (`x * np.float32(0.5)`) is the
  constant elementwise.numpy_scalar_operand remembered for it (`configure_numpy_operands`), as
  elementwise.binary takes it.
- `FastSlot("ufunc", array_ufunc)` as `Array.__array_ufunc__`: NumPy's own one- or two-operand
  ufunc called without keywords (`np.float32(0.1) * x` lands here, as `np.exp(x)` does) records
  through record_binary / record_unary; anything else calls interop.array_ufunc.
- In `Array.__getitem__`'s FastSlot, after element reads: a plain view key (slices, None,
  Ellipsis) noted in views.VIEW_CHAINS for the array's shape and dtype makes the view as
  indexing.getitem does (the nodes from the chain's templates, NumPy's view of an evaluated
  buffer, views.make_view's ViewOf and weak reference); `configure_views` hands over the table.
  `FastView("T", getter)`, installed as `Array.T`, makes `.T` from it the same way, and
  `FastSlot("reshape", method)`, installed as `Array.reshape`, `x.reshape(h, w)` of an array owning
  its value (exact int arguments, or one tuple of them; manipulation.reshape_method notes it).
- `Array.__matmul__` as a FastSlot: `x1 @ x2` of two arrays whose shapes and dtypes have a
  template in linalg's table (`configure_templates`) replays it as Templates.build does.
- Reductions as FastSlots (`x.sum()`, `x.max(axis=-1, keepdims=True)`, `la.mean(x, 0)`: the
  Array methods and namespace functions sum, prod, mean, max, min, amax, amin): a call with
  only `axis` and `keepdims` of an array whose key has a template in reduction_support's table
  replays it as templated() does.
- `Array.__setitem__` as a FastSlot: `u[1:-1, 1:-1] = value` of a pending array value into an
  array that is no view and has no live view, with a plain view key whose write indexing.setitem
  noted (SETITEM_TEMPLATES), replays the write's template and gives the array its node as
  views.assign does, where no loop cut is due; methods._setitem does everything else.
- `FastSlot("replayed", function, name)` as `la.where`, `la.clip`, `la.outer`: a call with
  positional arrays, Python scalars and None replays the template templated_calls.replayed
  recorded under the same key (scalar_key's parts: 0.0, -0.0 and NaN by their bits;
  `configure_replayed_calls`), else the function.
- `replay(steps, slots)`: hlo.instruction.python_replay (graph templates: `mean`, `@`, reductions);
  `sweep_intern_table(table)`: its sweep of dead intern entries.
- `host_buffers(args, layouts)`: jit.py's host_buffers_of_layouts (a jitted function called again
  with evaluated host arrays of its last call's shapes and dtypes).
- `adopt_evaluated(array, node, result, held)`: array.python_adopt_evaluated (one evaluated array
  and the values kept with it take their leaves: bind, read-only, a fresh parameter leaf, the
  owner found through the node's holders); `parameter_leaf(shape, dtype, bound)`: all of
  hlo.instruction.fresh_parameter for a (shape, dtype) it checked before (`configure_evaluation`);
  `evaluate_one(array)`: array.evaluate_arrays([array]) where compile's plan for its graph is cached
  (compile's run_cached, then the leaves), declining everything else (`configure_cached_evaluation`);
  `FastSlot("array_float", method)` as `Array.__float__`: a one-element array evaluated so and its
  buffer's `item()` converted (`float(loss)` each step); other sizes and declines: the method.

The Python functions mirrored say so; tests/frontend/test_recording_in_c.py and
test_element_reads.py hold the two together. One rule keeps the C safe: anything read from a
slot or a table is held (a strong reference) across any call that may run Python code, since
an allocation may run a collection whose finalizers rebind arrays, free nodes and change tables
(two fuzzing reviews found use-after-frees where it was not).

`configure(...)` and `configure_recording(...)` hand over the classes, tables and slot
descriptors (whose offsets the fast paths read); until then every path declines.
*/
#include "../_slot_offsets.h"
#include <math.h>

/* What configure() gave: the classes and slot offsets the fast paths read (borrowed from
   configure's arguments, kept alive by the references held below). */
static PyTypeObject *array_type, *element_type, *instruction_type, *ndarray_type;
static Py_ssize_t node_offset, bound_offset, value_offset, leaf_offset, base_offset, views_offset;
static Py_ssize_t shape_offset, dtype_offset;
static PyObject *configured;  /* the tuple of configure's arguments: keeps them alive */
#define MOST_SCALAR_TYPES 32
static PyTypeObject *real_types[MOST_SCALAR_TYPES], *integer_types[MOST_SCALAR_TYPES];
static Py_ssize_t real_count, integer_count;


/* What configure_recording() gave (recording.configured: its arguments, kept alive). */
static struct {
    PyObject *configured;
    PyObject *direct, *scalar_operands, *intern, *instruction_globals;  /* dicts */
    PyObject *sweep, *interned, *scalar_operand, *holders_with, *track_pending;  /* callables */
    PyObject *flags_module;
    PyObject *tracing_state, *template_state, *pending_state;  /* array.py's thread-local states */
    Py_ssize_t op, operands, attrs, attr_map, local, identity, depth, constant_only, holder;  /* offsets */
} recording;
static PyObject *sweep_at_name, *flags_name, *budget_name, *traces_name, *depth_name, *arrays_name, *prune_at_name;

/* What configure_views() gave (views.py's view chains and ViewOf). */
static struct {
    PyObject *configured;
    PyObject *chains;                                      /* views.VIEW_CHAINS (a dict) */
    PyTypeObject *view_of_type;                            /* views.ViewOf */
    PyObject *leaf_for;                                    /* array.leaf_for */
    Py_ssize_t base, read, write, layout, refusal, strided; /* ViewOf's slots */
} views;
static PyObject *ndarray_flags_name, *c_contiguous_name, *writeable_name, *shape_name, *strides_name,
    *dtype_name, *reshape_name, *item_name;

/* What configure_templates() gave (linalg.py's `x1 @ x2` templates, indexing.py's writes,
   hlo.template.Template). */
static struct {
    PyObject *configured;
    PyObject *matmuls;            /* linalg.MATMUL_TEMPLATES's table: (shapes and dtypes) -> Template or None */
    PyObject *setitems;           /* indexing.SETITEM_TEMPLATES: (key parts, shapes and dtypes) -> Template */
    PyObject *reductions;         /* reduction_support's table: (name, shape, dtype, axis, keepdims) -> Template */
    PyObject *no_value;           /* NumPy's "argument not given" marker (np._NoValue) */
    PyTypeObject *template_type;  /* hlo.template.Template */
    Py_ssize_t fixed, steps, outputs;
} templates;

enum kind { GETITEM, FLOAT, INT, BOOL, INDEX, BINARY, REFLECTED, UNARY, MATMUL, SETITEM, REDUCTION, UFUNC,
            RESHAPE, ARRAY_FLOAT, REPLAYED, KIND_COUNT };
static const char *const kind_names[KIND_COUNT] = {"getitem", "float", "int", "bool", "index",
                                                   "binary", "reflected", "unary", "matmul", "setitem",
                                                   "reduction", "ufunc", "reshape", "array_float", "replayed"};

/* What configure_replayed_calls() gave: templated_calls' table and the functions replayed from it. */
static struct {
    PyObject *configured;
    PyObject *table;    /* templated_calls.CALLS's templates: (name, statics, parts...) -> Template or None */
    PyObject *arities;  /* name -> the number of arguments its key holds (missing trailing ones: None) */
    PyObject *no_statics;
} replayed_calls;

/* What configure_numpy_operands() gave: elementwise.numpy_scalar_operand's table and NumPy's own
   ufuncs by the elementwise function they stand for (interop.array_ufunc). */
static struct {
    PyObject *configured;
    PyObject *constants;      /* (NumPy scalar type, value) -> its interned constant node */
    PyObject *scalar_types;   /* a frozenset of the NumPy scalar types of supported dtypes */
    PyObject *binary_ufuncs;  /* NumPy's two-operand ufunc -> its elementwise name */
    PyObject *unary_ufuncs;   /* NumPy's one-operand ufunc -> its elementwise name */
    PyObject *call_name;      /* "__call__" */
} numpy_operands;

static int
is_one_of(PyTypeObject *type, PyTypeObject *const *types, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++) {
        if (types[i] == type) {
            return 1;
        }
    }
    return 0;
}

/* A new Element holding `value` (a reference stolen), as indexing._element_read makes it. */
static PyObject *
new_element(PyObject *value)
{
    PyObject *element = element_type->tp_alloc(element_type, 0);
    if (element == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    SLOT(element, value_offset) = value;
    SLOT(element, leaf_offset) = Py_NewRef(Py_None);
    SLOT(element, base_offset) = Py_NewRef(Py_None);
    SLOT(element, views_offset) = Py_NewRef(Py_None);
    return element;
}

/* `array[key]` of an evaluated host array with one integer per axis: an Element, or NULL
   (no error set) where the Python path decides. */
static PyObject *
read_element(PyObject *array, PyObject *key)
{
    if (Py_TYPE(array) != array_type) {
        return NULL;
    }
    PyObject *node = SLOT(array, node_offset);
    if (node == NULL || Py_TYPE(node) != instruction_type) {
        return NULL;
    }
    PyObject *buffer = SLOT(node, bound_offset);
    if (buffer == NULL || Py_TYPE(buffer) != ndarray_type) {
        return NULL;
    }
    if (!PyLong_CheckExact(key)) {
        if (!PyTuple_CheckExact(key)) {
            return NULL;
        }
        for (Py_ssize_t i = 0, n = PyTuple_GET_SIZE(key); i < n; i++) {
            if (!PyLong_CheckExact(PyTuple_GET_ITEM(key, i))) {
                return NULL;
            }
        }
    }
    Py_INCREF(buffer); /* (held: NumPy's indexing may run a collection whose finalizers rebind the array) */
    PyObject *value = PyObject_GetItem(buffer, key);
    Py_DECREF(buffer);
    if (value == NULL) {
        PyErr_Clear(); /* out of bounds: the Python path raises lazyarr's error, naming the axis */
        return NULL;
    }
    if (Py_TYPE(value) == ndarray_type || PyObject_TypeCheck(value, ndarray_type)) {
        Py_DECREF(value); /* fewer integers than axes: a view, made by the Python path */
        return NULL;
    }
    return new_element(value);
}

/* The NumPy scalar an exact Element holds, if it is one of `types` (borrowed), else NULL. */
static PyObject *
element_value(PyObject *element, PyTypeObject *const *types, Py_ssize_t count)
{
    if (Py_TYPE(element) != element_type) {
        return NULL;
    }
    PyObject *value = SLOT(element, value_offset);
    if (value == NULL || value == Py_None) {
        return NULL; /* written in place: an ordinary array now */
    }
    if (types != NULL && !is_one_of(Py_TYPE(value), types, count)) {
        return NULL;
    }
    return value;
}


/* -- recording: direct_recording.py's direct path -------------------------------------------- */

/* The referent of a weak reference (a new reference), or NULL without an error when dead. */
static PyObject *
referent(PyObject *reference)
{
    if (!PyWeakref_CheckRef(reference)) {
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030D0000 /* (PyWeakref_GET_OBJECT is deprecated from 3.13) */
    PyObject *object;
    if (PyWeakref_GetRef(reference, &object) < 0) {
        PyErr_Clear();
        return NULL;
    }
    return object;
#else
    PyObject *object = PyWeakref_GET_OBJECT(reference);
    return object == Py_None ? NULL : Py_NewRef(object);
#endif
}

static int
set_slot(PyObject *object, Py_ssize_t offset, PyObject *value)
{
    PyObject *old = SLOT(object, offset);
    SLOT(object, offset) = Py_NewRef(value);
    Py_XDECREF(old);
    return 0;
}

/* `object`, which no reference cycle can run through, taken out of the cycle collector's
   lists, as CPython does for tuples and dicts of atomic values. A loop records ~4 such objects
   per op; each of the collections their allocations trigger walked all the young ones: ~6 % of
   an eager logistic-regression loop (its gen-0 collections 0.67 -> 0.35 ms a run). Freed by
   reference counting as before; a leak would need a cycle, which their fields cannot close. */
static void
untracked(PyObject *object)
{
    if (PyObject_GC_IsTracked(object)) {
        PyObject_GC_UnTrack(object);
    }
}

/* The interned node of op `opdef` (with its `local`, `identity` and checked `shape`, `dtype`,
   `attr_map`) over `operands`: hlo.instruction's make_like and replay steps with _interned. */
static PyObject *
intern_node(PyObject *opdef, PyObject *local, PyObject *identity, PyObject *shape, PyObject *dtype,
            PyObject *attr_map, PyObject *const *operands, Py_ssize_t count)
{
    if (!PyTuple_Check(local) || PyTuple_GET_SIZE(local) < 2) {
        PyErr_SetString(PyExc_SystemError, "record: a node's _local must be a tuple (name, attrs, ...)");
        return NULL;
    }
    PyObject *key = PyTuple_New(count + 1);
    if (key == NULL) {
        return NULL;
    }
    PyTuple_SET_ITEM(key, 0, Py_NewRef(identity));
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *id = PyLong_FromVoidPtr(operands[i]); /* id(operand) */
        if (id == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(key, i + 1, id);
    }
    /* (the table holds it as long as its node lives: identity and ints, no cycle through it) */
    untracked(key);
    PyObject *entry = PyDict_GetItemWithError(recording.intern, key);
    if (entry != NULL) {
        PyObject *found = referent(entry);
        if (found != NULL) {
            Py_DECREF(key);
            return found;
        }
    }
    else if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    if (count == 0) { /* (a leaf's depth and constant_only follow other rules: Python's _interned) */
        PyObject *no_operands = PyTuple_New(0);
        PyObject *made = no_operands == NULL ? NULL : PyObject_CallFunctionObjArgs(
            recording.interned, key, local, opdef, shape, dtype, no_operands, attr_map, NULL);
        Py_XDECREF(no_operands);
        Py_DECREF(key);
        return made;
    }
    /* _interned: a new instruction of these checked fields */
    Py_ssize_t depth = 0;
    int constant_only = 1;
    PyObject *constant_only_value = Py_True;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *operand_depth = SLOT(operands[i], recording.depth);
        PyObject *operand_constant = SLOT(operands[i], recording.constant_only);
        if (operand_depth == NULL || operand_constant == NULL) {
            PyErr_SetString(PyExc_SystemError, "record: an operand without depth or constant_only");
            Py_DECREF(key);
            return NULL;
        }
        Py_ssize_t value = PyLong_AsSsize_t(operand_depth);
        if (value == -1 && PyErr_Occurred()) {
            Py_DECREF(key);
            return NULL;
        }
        if (value > depth) {
            depth = value;
        }
        /* `first.constant_only and second.constant_only` (one operand: its own) */
        if (constant_only) {
            int truth = PyObject_IsTrue(operand_constant);
            if (truth < 0) {
                Py_DECREF(key);
                return NULL;
            }
            constant_only_value = operand_constant;
            constant_only = truth;
        }
    }
    PyObject *depth_value = PyLong_FromSsize_t(depth + 1);
    PyObject *instruction = instruction_type->tp_alloc(instruction_type, 0);
    /* (filled before anything else is allocated: a collection never sees an empty item) */
    PyObject *operand_tuple = instruction == NULL ? NULL : PyTuple_New(count);
    if (operand_tuple == NULL || depth_value == NULL || instruction == NULL) {
        Py_XDECREF(operand_tuple);
        Py_XDECREF(depth_value);
        Py_XDECREF(instruction);
        Py_DECREF(key);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyTuple_SET_ITEM(operand_tuple, i, Py_NewRef(operands[i]));
    }
    untracked(operand_tuple); /* (older nodes only, as the node itself: see below) */
    set_slot(instruction, recording.op, opdef);
    set_slot(instruction, shape_offset, shape);
    set_slot(instruction, dtype_offset, dtype);
    set_slot(instruction, recording.operands, operand_tuple);
    set_slot(instruction, recording.attrs, PyTuple_GET_ITEM(local, 1));
    set_slot(instruction, recording.attr_map, attr_map);
    set_slot(instruction, recording.local, local);
    set_slot(instruction, recording.identity, identity);
    set_slot(instruction, bound_offset, Py_None);
    set_slot(instruction, recording.holder, Py_None);
    set_slot(instruction, recording.depth, depth_value);
    set_slot(instruction, recording.constant_only, constant_only_value);
    /* Out of the cycle collector's lists (see untracked() below): a recorded node holds its
       operands (older nodes), plain attributes, a buffer and weak references to its holders,
       so no cycle runs through it, and every collection would only walk it again. */
    untracked(instruction);
    Py_DECREF(operand_tuple);
    Py_DECREF(depth_value);
    PyObject *reference = PyWeakref_NewRef(instruction, NULL);
    if (reference == NULL) {
        Py_DECREF(instruction);
        Py_DECREF(key);
        return NULL;
    }
    untracked(reference); /* (a weak reference without a callback holds nothing) */
    /* setdefault: of two threads making the same node, the second gets the first's */
    PyObject *existing = PyDict_SetDefault(recording.intern, key, reference);
    if (existing == NULL) {
        Py_DECREF(reference);
        Py_DECREF(instruction);
        Py_DECREF(key);
        return NULL;
    }
    if (existing != reference) {
        PyObject *found = referent(existing);
        if (found != NULL) {
            Py_DECREF(reference);
            Py_DECREF(instruction);
            Py_DECREF(key);
            return found;
        }
        if (PyDict_SetItem(recording.intern, key, reference) < 0) { /* a dead entry, not yet swept */
            Py_DECREF(reference);
            Py_DECREF(instruction);
            Py_DECREF(key);
            return NULL;
        }
    }
    Py_DECREF(reference);
    Py_DECREF(key);
    PyObject *sweep_at = PyDict_GetItemWithError(recording.instruction_globals, sweep_at_name);
    if (sweep_at != NULL) {
        Py_ssize_t limit = PyLong_AsSsize_t(sweep_at);
        if (limit == -1 && PyErr_Occurred()) {
            Py_DECREF(instruction);
            return NULL;
        }
        if (PyDict_GET_SIZE(recording.intern) > limit) {
            PyObject *swept = PyObject_CallNoArgs(recording.sweep);
            if (swept == NULL) {
                Py_DECREF(instruction);
                return NULL;
            }
            Py_DECREF(swept);
        }
    }
    else if (PyErr_Occurred()) {
        Py_DECREF(instruction);
        return NULL;
    }
    return instruction;
}

/* hlo.instruction.fresh_parameter's node: new_leaf(op, shape, dtype, attrs, identity, bound), a
   parameter leaf with these checked fields (`identity` its `_local` too), made without the
   Python attribute writes and class change (~1.2 -> ~0.3 us; every evaluation makes one per
   result and kept value). */
static PyObject *
make_leaf(PyObject *const *args)
{
    PyObject *leaf = instruction_type->tp_alloc(instruction_type, 0);
    if (leaf == NULL) {
        return NULL;
    }
    PyObject *no_operands = PyTuple_New(0), *depth = PyLong_FromLong(0);
    if (no_operands == NULL || depth == NULL) {
        Py_XDECREF(no_operands);
        Py_XDECREF(depth);
        Py_DECREF(leaf);
        return NULL;
    }
    set_slot(leaf, recording.op, args[0]);
    set_slot(leaf, shape_offset, args[1]);
    set_slot(leaf, dtype_offset, args[2]);
    set_slot(leaf, recording.operands, no_operands);
    set_slot(leaf, recording.attrs, args[3]);
    set_slot(leaf, recording.attr_map, Py_None);
    set_slot(leaf, recording.local, args[4]);
    set_slot(leaf, recording.identity, args[4]);
    set_slot(leaf, bound_offset, args[5]);
    set_slot(leaf, recording.holder, Py_None);
    set_slot(leaf, recording.depth, depth);
    set_slot(leaf, recording.constant_only, Py_False);
    untracked(leaf); /* (as intern_node's nodes: fields and a buffer, no cycle through it) */
    Py_DECREF(no_operands);
    Py_DECREF(depth);
    return leaf;
}

static PyObject *
new_leaf(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyTuple_CheckExact(args[1]) || !PyTuple_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "new_leaf(op, shape: tuple, dtype, attrs: tuple, identity, bound)");
        return NULL;
    }
    if (recording.configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "new_leaf: configure_recording() was not called");
        return NULL;
    }
    return make_leaf(args);
}

/* hlo.instruction.make_like(template, *operands): `template` is (op, local, identity, shape,
   dtype, attribute map), a node_template. */
static PyObject *
make_like(PyObject *template, PyObject *const *operands, Py_ssize_t count)
{
    if (!PyTuple_CheckExact(template) || PyTuple_GET_SIZE(template) != 6) {
        PyErr_SetString(PyExc_SystemError, "record: a node template must be a 6-tuple");
        return NULL;
    }
    return intern_node(PyTuple_GET_ITEM(template, 0), PyTuple_GET_ITEM(template, 1), PyTuple_GET_ITEM(template, 2),
                       PyTuple_GET_ITEM(template, 3), PyTuple_GET_ITEM(template, 4), PyTuple_GET_ITEM(template, 5),
                       operands, count);
}

/* hlo.instruction.python_replay(steps, slots): each step (op, local, identity, operand slots,
   shape, dtype, attribute map) appends its node to `slots`; returns `slots`. */
static PyObject *
replay(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_Check(args[0]) || !PyList_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "replay(steps: tuple, slots: list)");
        return NULL;
    }
    if (recording.configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "replay: configure_recording() was not called");
        return NULL;
    }
    PyObject *steps = args[0], *slots = args[1];
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(steps); i++) {
        PyObject *step = PyTuple_GET_ITEM(steps, i);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 7 || !PyTuple_Check(PyTuple_GET_ITEM(step, 3))) {
            PyErr_SetString(PyExc_SystemError, "replay: a step must be (op, local, identity, positions, shape, "
                                               "dtype, attr_map)");
            return NULL;
        }
        PyObject *positions = PyTuple_GET_ITEM(step, 3);
        Py_ssize_t count = PyTuple_GET_SIZE(positions);
        PyObject *stack_operands[4], **operands = stack_operands;
        if (count > 4 && (operands = PyMem_Malloc(count * sizeof(PyObject *))) == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        int failed = 0;
        for (Py_ssize_t j = 0; j < count && !failed; j++) {
            Py_ssize_t position = PyLong_AsSsize_t(PyTuple_GET_ITEM(positions, j));
            if (position < 0 || position >= PyList_GET_SIZE(slots)) {
                if (!PyErr_Occurred()) {
                    PyErr_SetString(PyExc_IndexError, "replay: an operand slot out of range");
                }
                failed = 1;
            }
            else {
                operands[j] = PyList_GET_ITEM(slots, position);
                if (Py_TYPE(operands[j]) != instruction_type) {
                    PyErr_SetString(PyExc_TypeError, "replay: slots must hold Instructions");
                    failed = 1;
                }
            }
        }
        Py_ssize_t held = failed ? 0 : count;
        for (Py_ssize_t j = 0; j < held; j++) {
            Py_INCREF(operands[j]); /* (held while the node is made: code run meanwhile may change `slots`) */
        }
        PyObject *node = failed ? NULL : intern_node(
            PyTuple_GET_ITEM(step, 0), PyTuple_GET_ITEM(step, 1), PyTuple_GET_ITEM(step, 2), PyTuple_GET_ITEM(step, 4),
            PyTuple_GET_ITEM(step, 5), PyTuple_GET_ITEM(step, 6), operands, count);
        for (Py_ssize_t j = 0; j < held; j++) {
            Py_DECREF(operands[j]);
        }
        if (operands != stack_operands) {
            PyMem_Free(operands);
        }
        if (node == NULL) {
            return NULL;
        }
        failed = PyList_Append(slots, node) < 0;
        Py_DECREF(node);
        if (failed) {
            return NULL;
        }
    }
    return Py_NewRef(slots);
}

/* The truth of an attribute of a thread-local state (-1 with an error set on failure). */
static int
state_truth(PyObject *state, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(state, name);
    if (value == NULL) {
        return -1;
    }
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

/* An integer attribute of a thread-local state (-1 with an error set on failure). */
static Py_ssize_t
state_number(PyObject *state, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(state, name);
    if (value == NULL) {
        return -1;
    }
    Py_ssize_t number = PyLong_AsSsize_t(value);
    Py_DECREF(value);
    return number;
}

/* array.track_pending for a new array deep enough to note but not to cut (depth in [budget/2,
   budget)): outside traces and template recordings, (re-)enter it at the end of this thread's
   pending arrays. 1: noted (or nothing to do); 0: let track_pending decide (the table is due
   for pruning); -1: an error. */
static int
note_pending(PyObject *array)
{
    /* `_TRACING.traces or _RECORDING.depth`: inside la.jit / grad traces or a template recording */
    int busy = state_truth(recording.tracing_state, traces_name);
    if (busy == 0) {
        busy = state_truth(recording.template_state, depth_name);
    }
    if (busy != 0) {
        return busy < 0 ? -1 : 1; /* (track_pending returns at once) */
    }
    Py_ssize_t prune_at = state_number(recording.pending_state, prune_at_name);
    PyObject *pending = prune_at == -1 && PyErr_Occurred() ? NULL : PyObject_GetAttr(recording.pending_state, arrays_name);
    if (pending == NULL) {
        return -1;
    }
    if (!PyDict_CheckExact(pending) || PyDict_GET_SIZE(pending) + 1 >= prune_at) {
        Py_DECREF(pending);
        return 0;
    }
    PyObject *key = PyLong_FromVoidPtr(array); /* id(array) */
    PyObject *reference = key == NULL ? NULL : PyWeakref_NewRef(array, NULL);
    int failed = reference == NULL;
    if (!failed) {
        untracked(reference); /* (no callback: it holds nothing) */
    }
    if (!failed) { /* re-inserted at the end: a cut evaluates in the order the program touched them */
        int present = PyDict_Contains(pending, key);
        failed = present < 0 || (present && PyDict_DelItem(pending, key) < 0)
                 || PyDict_SetItem(pending, key, reference) < 0;
    }
    Py_XDECREF(key);
    Py_XDECREF(reference);
    Py_DECREF(pending);
    return failed ? -1 : 1;
}

/* hlo.instruction's sweep of its intern table: drop the entries whose instruction is dead.
   The walk finds them without allocating any Python object (the pairs go to a PyMem array,
   which never runs a collection), so no Python code can change the table while it walks, and
   no copy of the table is needed. Most entries of a loop's table are dead (each step's nodes
   die with its evaluation): then the live pairs are held, the table cleared and they are put
   back (setdefault: an entry made meanwhile stays), which frees the dead without looking each
   up again (~3x cheaper a dead entry); else each dead one is deleted if it is still the dead
   one found. Both lookups hash keys again, which for a constant's Literal runs Python code
   that may run a collection whose finalizers record nodes and replace entries meanwhile; the
   pairs are held until the end. Returns the number left. */
static PyObject *
sweep_intern_table(PyObject *module, PyObject *table)
{
    if (!PyDict_CheckExact(table)) {
        PyErr_SetString(PyExc_TypeError, "sweep_intern_table(table: dict)");
        return NULL;
    }
    Py_ssize_t total = PyDict_GET_SIZE(table), dead_count = 0, position = 0;
    PyObject *key, *entry;
    while (PyDict_Next(table, &position, &key, &entry)) { /* count only: nothing allocated */
        if (PyWeakref_CheckRef(entry)) {
            PyObject *alive = referent(entry); /* (a live object's count back where it was) */
            if (alive == NULL) {
                dead_count++;
            }
            else {
                Py_DECREF(alive);
            }
        }
    }
    int keep_live = 2 * dead_count > total; /* hold the live pairs (fewer), else the dead ones */
    Py_ssize_t count = 0, capacity = keep_live ? total - dead_count : dead_count;
    PyObject **pairs = capacity ? PyMem_Malloc(2 * capacity * sizeof(PyObject *)) : NULL;
    if (capacity && pairs == NULL) {
        return PyErr_NoMemory();
    }
    position = 0;
    while (count < capacity && PyDict_Next(table, &position, &key, &entry)) {
        PyObject *alive = PyWeakref_CheckRef(entry) ? referent(entry) : Py_NewRef(entry);
        Py_XDECREF(alive);
        if ((alive != NULL) == keep_live) {
            pairs[2 * count] = Py_NewRef(key);
            pairs[2 * count + 1] = Py_NewRef(entry);
            count++;
        }
    }
    int failed = 0;
    if (keep_live) {
        PyDict_Clear(table);
        for (Py_ssize_t i = 0; i < count && !failed; i++) {
            failed = PyDict_SetDefault(table, pairs[2 * i], pairs[2 * i + 1]) == NULL;
        }
    }
    else {
        for (Py_ssize_t i = 0; i < count && !failed; i++) {
            PyObject *current = PyDict_GetItemWithError(table, pairs[2 * i]);
            if (current == NULL) {
                failed = PyErr_Occurred() != NULL;
            }
            else if (current == pairs[2 * i + 1]) {
                failed = PyDict_DelItem(table, pairs[2 * i]) < 0;
            }
        }
    }
    for (Py_ssize_t i = 0; i < 2 * count; i++) {
        Py_DECREF(pairs[i]);
    }
    PyMem_Free(pairs);
    return failed ? NULL : PyLong_FromSsize_t(PyDict_GET_SIZE(table));
}

/* Record `array` among the holders of its (computed) `node`, as Array() and views.assign do: a
   weak reference to it, or with the node's live holders (array.holders_with). -1 on error. */
static int
add_holder(PyObject *node, PyObject *array)
{
    PyObject *reference = PyWeakref_NewRef(array, NULL);
    if (reference == NULL) {
        return -1;
    }
    untracked(reference);
    PyObject *holder = SLOT(node, recording.holder);
    if (holder == NULL || holder == Py_None) {
        set_slot(node, recording.holder, reference);
    }
    else { /* a node wrapped again: every live wrapper may be the one kept */
        PyObject *holders = PyObject_CallFunctionObjArgs(recording.holders_with, holder, reference, NULL);
        if (holders == NULL) {
            Py_DECREF(reference);
            return -1;
        }
        set_slot(node, recording.holder, holders);
        Py_DECREF(holders);
    }
    Py_DECREF(reference);
    return 0;
}

/* --max_pending_depth (track_pending's budget: 0 for none, a negative one cuts at every op), or
   -1 with an error set (callers test PyErr_Occurred: -1 is a budget too). */
static Py_ssize_t
pending_budget(void)
{
    PyObject *flags = PyObject_GetAttr(recording.flags_module, flags_name);
    PyObject *budget = flags == NULL ? NULL : PyObject_GetAttr(flags, budget_name);
    Py_XDECREF(flags);
    Py_ssize_t limit = budget == NULL ? -1 : PyLong_AsSsize_t(budget);
    Py_XDECREF(budget);
    return limit;
}

/* Array(node) (array.py's __init__): the node's holder noted, a deep one tracked for loop cuts.
   Steals the reference to `node`. */
static PyObject *
new_array(PyObject *node)
{
    if (node == NULL) {
        return NULL;
    }
    PyObject *array = array_type->tp_alloc(array_type, 0);
    if (array == NULL) {
        Py_DECREF(node);
        return NULL;
    }
    SLOT(array, node_offset) = node;
    SLOT(array, base_offset) = Py_NewRef(Py_None);
    SLOT(array, views_offset) = Py_NewRef(Py_None);
    untracked(array); /* (it holds a node, its base array and weak references to its views) */
    Py_ssize_t depth = PyLong_AsSsize_t(SLOT(node, recording.depth));
    if (depth == -1 && PyErr_Occurred()) {
        Py_DECREF(array);
        return NULL;
    }
    if (depth == 0) {
        return array; /* (a leaf is never computed on the way) */
    }
    Py_ssize_t limit = 0;
    if (add_holder(node, array) < 0 || ((limit = pending_budget()) == -1 && PyErr_Occurred())) {
        Py_DECREF(array);
        return NULL;
    }
    if (depth * 2 >= limit) { /* track_pending's first test, as __init__ makes it */
        int noted = depth < limit ? note_pending(array) : 0;
        if (noted < 0) {
            Py_DECREF(array);
            return NULL;
        }
        if (noted) {
            return array;
        }
        PyObject *tracked = PyObject_CallOneArg(recording.track_pending, array);
        if (tracked == NULL) {
            Py_DECREF(array);
            return NULL;
        }
        Py_DECREF(tracked);
    }
    return array;
}

/* `node` through the node templates of `chain` (hlo.make_through: the reshape and broadcast
   core.broadcast_to made, a view's slice and reshape, in order), or `node` itself when it is None. */
static PyObject *
broadcast(PyObject *node, PyObject *chain)
{
    if (chain == Py_None) {
        return Py_NewRef(node);
    }
    if (!PyTuple_CheckExact(chain)) {
        PyErr_SetString(PyExc_SystemError, "record: a broadcast must be a tuple of node templates");
        return NULL;
    }
    PyObject *current = Py_NewRef(node);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(chain) && current != NULL; i++) {
        PyObject *next = make_like(PyTuple_GET_ITEM(chain, i), &current, 1);
        Py_DECREF(current);
        current = next;
    }
    return current;
}

/* The constant operand of a Python scalar (direct_recording.scalar_operand), if `value` is within
   [low, high] of `spec` = (dtype, shape, low, high); Py_None (a new reference) when not. */
static PyObject *
scalar_operand(PyObject *value, PyObject *spec)
{
    if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 4) {
        PyErr_SetString(PyExc_SystemError, "record: a scalar spec must be (dtype, shape, low, high)");
        return NULL;
    }
    int above = PyObject_RichCompareBool(PyTuple_GET_ITEM(spec, 2), value, Py_LE);
    int below = above == 1 ? PyObject_RichCompareBool(value, PyTuple_GET_ITEM(spec, 3), Py_LE) : above;
    if (above < 0 || below < 0) {
        return NULL;
    }
    if (!above || !below) {
        Py_RETURN_NONE;
    }
    PyObject *dtype = PyTuple_GET_ITEM(spec, 0), *shape = PyTuple_GET_ITEM(spec, 1);
    if (PyFloat_CheckExact(value) && PyFloat_AS_DOUBLE(value) == 0.0 && signbit(PyFloat_AS_DOUBLE(value))) {
        /* -0.0 equals the remembered 0.0 but is another constant: never looked up (scalar_operand) */
        return PyObject_CallFunctionObjArgs(recording.scalar_operand, value, dtype, shape, NULL);
    }
    PyObject *key = PyTuple_Pack(4, (PyObject *)Py_TYPE(value), value, dtype, shape);
    if (key == NULL) {
        return NULL;
    }
    PyObject *node = PyDict_GetItemWithError(recording.scalar_operands, key);
    Py_DECREF(key);
    if (node != NULL) {
        return Py_NewRef(node);
    }
    if (PyErr_Occurred()) {
        return NULL;
    }
    return PyObject_CallFunctionObjArgs(recording.scalar_operand, value, dtype, shape, NULL);
}

static PyObject *
direct_entry(PyObject *key)
{
    if (key == NULL) {
        return NULL;
    }
    PyObject *entry = PyDict_GetItemWithError(recording.direct, key);
    Py_DECREF(key);
    if (entry == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) < 1) {
        PyErr_SetString(PyExc_SystemError, "record: a direct entry must be a tuple");
        return NULL;
    }
    return Py_NewRef(entry);
}

static int
is_python_scalar(PyObject *value)
{
    return PyLong_CheckExact(value) || PyFloat_CheckExact(value);
}

/* The node of `x` if it is an Array (exactly) holding a complete Instruction (a new reference),
   else NULL: the recording functions hold it while Python code (scalar_operand,
   a collection's finalizers) may rebind the array and drop its old node. */
static PyObject *
held_node(PyObject *x)
{
    if (Py_TYPE(x) != array_type) {
        return NULL;
    }
    PyObject *node = SLOT(x, node_offset);
    if (node == NULL || Py_TYPE(node) != instruction_type || SLOT(node, dtype_offset) == NULL
        || SLOT(node, shape_offset) == NULL || SLOT(node, recording.depth) == NULL) {
        return NULL;
    }
    return Py_NewRef(node);
}

static PyObject *record_binary_nodes(PyObject *name, PyObject *x1, PyObject *x2, PyObject *node1, PyObject *node2);

/* The constant node elementwise.numpy_scalar_operand made for a NumPy scalar operand (`x *
   np.float32(0.5)`; NEP 50: of the scalar's own dtype) and remembered (a new reference), else
   NULL (with an error only on failure): the Python path makes it, then remembers it. */
static PyObject *
numpy_scalar_node(PyObject *value)
{
    if (numpy_operands.configured == NULL) {
        return NULL;
    }
    int numpy_scalar = PySet_Contains(numpy_operands.scalar_types, (PyObject *)Py_TYPE(value));
    if (numpy_scalar != 1) {
        return NULL;
    }
    PyObject *key = PyTuple_Pack(2, (PyObject *)Py_TYPE(value), value);
    PyObject *node = key == NULL ? NULL : PyDict_GetItemWithError(numpy_operands.constants, key);
    Py_XDECREF(key);
    if (node == NULL || Py_TYPE(node) != instruction_type || SLOT(node, dtype_offset) == NULL
        || SLOT(node, shape_offset) == NULL || SLOT(node, recording.depth) == NULL) {
        return NULL;
    }
    return Py_NewRef(node);
}

/* direct_recording.python_record_binary: the new Array, or Py_None where it does not apply. */
static PyObject *
record_binary_call(PyObject *name, PyObject *x1, PyObject *x2)
{
    if (recording.configured == NULL) {
        Py_RETURN_NONE;
    }
    int array1 = Py_TYPE(x1) == array_type, array2 = Py_TYPE(x2) == array_type;
    PyObject *node1 = array1 ? held_node(x1) : numpy_scalar_node(x1);
    PyObject *node2 = node1 == NULL && PyErr_Occurred() ? NULL : array2 ? held_node(x2) : numpy_scalar_node(x2);
    if (PyErr_Occurred()) {
        Py_XDECREF(node1);
        Py_XDECREF(node2);
        return NULL;
    }
    PyObject *result;
    if ((array1 && node1 == NULL) || (array2 && node2 == NULL)) {
        result = Py_NewRef(Py_None);
    }
    else {
        result = record_binary_nodes(name, x1, x2, node1, node2);
    }
    Py_XDECREF(node1);
    Py_XDECREF(node2);
    return result;
}

/* record_binary_call with the operands' nodes held (NULL for a Python scalar operand). */
static PyObject *
record_binary_nodes(PyObject *name, PyObject *x1, PyObject *x2, PyObject *node1, PyObject *node2)
{
    int array1 = node1 != NULL, array2 = node2 != NULL;
    PyObject *entry, *operands[2] = {NULL, NULL};
    if (array1 && array2) {
        entry = direct_entry(PyTuple_Pack(5, name, SLOT(node1, dtype_offset), SLOT(node1, shape_offset),
                                          SLOT(node2, dtype_offset), SLOT(node2, shape_offset)));
        if (entry == NULL || entry == Py_None) {
            return entry;
        }
        if (PyTuple_GET_SIZE(entry) == 3) {
            operands[0] = broadcast(node1, PyTuple_GET_ITEM(entry, 1));
            operands[1] = operands[0] == NULL ? NULL : broadcast(node2, PyTuple_GET_ITEM(entry, 2));
        }
    }
    else if (array1 && is_python_scalar(x2)) {
        entry = direct_entry(PyTuple_Pack(4, name, SLOT(node1, dtype_offset), SLOT(node1, shape_offset),
                                          (PyObject *)Py_TYPE(x2)));
        if (entry == NULL || entry == Py_None) {
            return entry;
        }
        if (PyTuple_GET_SIZE(entry) == 3) {
            operands[1] = scalar_operand(x2, PyTuple_GET_ITEM(entry, 2));
            if (operands[1] == Py_None) {
                Py_DECREF(entry);
                return operands[1];
            }
            operands[0] = operands[1] == NULL ? NULL : broadcast(node1, PyTuple_GET_ITEM(entry, 1));
        }
    }
    else if (array2 && is_python_scalar(x1)) {
        entry = direct_entry(PyTuple_Pack(4, name, (PyObject *)Py_TYPE(x1), SLOT(node2, dtype_offset),
                                          SLOT(node2, shape_offset)));
        if (entry == NULL || entry == Py_None) {
            return entry;
        }
        if (PyTuple_GET_SIZE(entry) == 3) {
            operands[0] = scalar_operand(x1, PyTuple_GET_ITEM(entry, 1));
            if (operands[0] == Py_None) {
                Py_DECREF(entry);
                return operands[0];
            }
            operands[1] = operands[0] == NULL ? NULL : broadcast(node2, PyTuple_GET_ITEM(entry, 2));
        }
    }
    else {
        Py_RETURN_NONE;
    }
    PyObject *result = NULL;
    if (PyTuple_GET_SIZE(entry) != 3) {
        PyErr_SetString(PyExc_SystemError, "record: a binary direct entry must be a 3-tuple");
    }
    else if (operands[0] != NULL && operands[1] != NULL) {
        if (Py_TYPE(operands[0]) != instruction_type || Py_TYPE(operands[1]) != instruction_type) {
            PyErr_SetString(PyExc_SystemError, "record: operands must be Instructions");
        }
        else {
            result = new_array(make_like(PyTuple_GET_ITEM(entry, 0), operands, 2));
        }
    }
    Py_XDECREF(operands[0]);
    Py_XDECREF(operands[1]);
    Py_DECREF(entry);
    return result;
}

/* direct_recording.python_record_unary: the new Array, or Py_None where it does not apply. */
static PyObject *
record_unary_call(PyObject *name, PyObject *x)
{
    PyObject *node = recording.configured == NULL ? NULL : held_node(x);
    if (node == NULL) {
        Py_RETURN_NONE;
    }
    PyObject *result = direct_entry(PyTuple_Pack(3, name, SLOT(node, dtype_offset), SLOT(node, shape_offset)));
    if (result != NULL && result != Py_None) {
        PyObject *template = result;
        result = new_array(make_like(template, &node, 1));
        Py_DECREF(template);
    }
    Py_DECREF(node);
    return result;
}

static PyObject *
record_binary(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "record_binary(name, x1, x2)");
        return NULL;
    }
    return record_binary_call(args[0], args[1], args[2]);
}

static PyObject *
record_unary(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "record_unary(name, x)");
        return NULL;
    }
    return record_unary_call(args[0], args[1]);
}

static PyObject *
configure_recording(PyObject *module, PyObject *args)
{
    PyObject *direct, *scalars, *intern, *globals, *sweep, *interned, *scalar, *holders, *track;
    PyObject *flags, *tracing_state, *template_state, *pending_state;
    PyObject *op, *operands, *attrs, *attr_map, *local, *identity, *depth, *constant_only, *holder;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OOOOOOOOOOOOOOOOOO:configure_recording", &PyDict_Type, &direct,
                          &PyDict_Type, &scalars, &PyDict_Type, &intern, &PyDict_Type, &globals, &sweep, &interned,
                          &scalar, &holders, &track, &flags, &tracing_state, &template_state,
                          &pending_state, &op, &operands, &attrs, &attr_map, &local, &identity, &depth,
                          &constant_only, &holder)) {
        return NULL;
    }
    if (configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_recording: configure() first");
        return NULL;
    }
    Py_ssize_t offsets[9];
    if (slot_offset(op, "op", &offsets[0]) < 0 || slot_offset(operands, "operands", &offsets[1]) < 0
        || slot_offset(attrs, "attrs", &offsets[2]) < 0 || slot_offset(attr_map, "_attr_map", &offsets[3]) < 0
        || slot_offset(local, "_local", &offsets[4]) < 0 || slot_offset(identity, "_identity", &offsets[5]) < 0
        || slot_offset(depth, "depth", &offsets[6]) < 0
        || slot_offset(constant_only, "constant_only", &offsets[7]) < 0
        || slot_offset(holder, "_holder", &offsets[8]) < 0) {
        return NULL;
    }
    if (sweep_at_name == NULL) {
        sweep_at_name = PyUnicode_InternFromString("_sweep_at");
        flags_name = PyUnicode_InternFromString("FLAGS");
        budget_name = PyUnicode_InternFromString("max_pending_depth");
        traces_name = PyUnicode_InternFromString("traces");
        depth_name = PyUnicode_InternFromString("depth");
        arrays_name = PyUnicode_InternFromString("arrays");
        prune_at_name = PyUnicode_InternFromString("prune_at");
        if (sweep_at_name == NULL || flags_name == NULL || budget_name == NULL || traces_name == NULL
            || depth_name == NULL || arrays_name == NULL || prune_at_name == NULL) {
            return NULL;
        }
    }
    Py_XSETREF(recording.configured, Py_NewRef(args));
    recording.direct = direct;
    recording.scalar_operands = scalars;
    recording.intern = intern;
    recording.instruction_globals = globals;
    recording.sweep = sweep;
    recording.interned = interned;
    recording.scalar_operand = scalar;
    recording.holders_with = holders;
    recording.track_pending = track;
    recording.flags_module = flags;
    recording.tracing_state = tracing_state;
    recording.template_state = template_state;
    recording.pending_state = pending_state;
    recording.op = offsets[0];
    recording.operands = offsets[1];
    recording.attrs = offsets[2];
    recording.attr_map = offsets[3];
    recording.local = offsets[4];
    recording.identity = offsets[5];
    recording.depth = offsets[6];
    recording.constant_only = offsets[7];
    recording.holder = offsets[8];
    Py_RETURN_NONE;
}

/* -- views: indexing.getitem's plain view keys ------------------------------------------------ */

/* A slice bound the C views take: an exact int or None (a dict key that hashes and compares
   without running Python code, and no float or bool equal to an int). */
static int
plain_bound(PyObject *bound)
{
    return bound == Py_None || PyLong_CheckExact(bound);
}

/* The dict key indexing._key_parts makes of a view key (a slice of int or None bounds, or a
   tuple of such slices, ints, None and Ellipsis), or NULL for any other key (an error set only
   when an allocation failed). */
static PyObject *
key_parts(PyObject *key)
{
    PyObject *const *items = &key;
    Py_ssize_t count = 1;
    if (PyTuple_CheckExact(key)) {
        items = &PyTuple_GET_ITEM(key, 0);
        count = PyTuple_GET_SIZE(key);
    }
    else if (!PySlice_Check(key)) {
        return NULL;
    }
    PyObject *parts = PyTuple_New(count);
    if (parts == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = items[i], *part;
        if (PySlice_Check(item)) {
            PySliceObject *bounds = (PySliceObject *)item;
            if (!plain_bound(bounds->start) || !plain_bound(bounds->stop) || !plain_bound(bounds->step)) {
                Py_DECREF(parts); /* (an Element, a NumPy integer, 1.0: the Python path) */
                return NULL;
            }
            part = PyTuple_Pack(4, (PyObject *)&PySlice_Type, bounds->start, bounds->stop, bounds->step);
            if (part == NULL) {
                Py_DECREF(parts);
                return NULL;
            }
        }
        else if (PyLong_CheckExact(item) || item == Py_None || item == Py_Ellipsis) {
            part = Py_NewRef(item);
        }
        else {
            Py_DECREF(parts);
            return NULL;
        }
        PyTuple_SET_ITEM(parts, i, part);
    }
    return parts;
}

/* views.make_view(base, read, write, node, layout=layout) with the read, write and layout of a
   VIEW_CHAINS `entry`: the view Array of `node` (a reference stolen), its ViewOf, and a weak
   reference among its base's views. */
static PyObject *
make_view(PyObject *base, PyObject *entry, PyObject *node)
{
    PyObject *view = new_array(node);
    if (view == NULL) {
        return NULL;
    }
    PyObject *link = views.view_of_type->tp_alloc(views.view_of_type, 0);
    PyObject *reference = link == NULL ? NULL : PyWeakref_NewRef(view, NULL);
    if (reference == NULL) {
        Py_XDECREF(link);
        Py_DECREF(view);
        return NULL;
    }
    untracked(reference);
    SLOT(link, views.base) = Py_NewRef(base);
    SLOT(link, views.read) = Py_NewRef(PyTuple_GET_ITEM(entry, 0));
    SLOT(link, views.write) = Py_NewRef(PyTuple_GET_ITEM(entry, 1));
    SLOT(link, views.layout) = Py_NewRef(PyTuple_GET_ITEM(entry, 2));
    SLOT(link, views.refusal) = Py_NewRef(Py_None);
    SLOT(link, views.strided) = Py_NewRef(Py_None);
    set_slot(view, base_offset, link);
    Py_DECREF(link);
    PyObject *known = SLOT(base, views_offset);
    int failed = 0;
    if (known == NULL || !PyList_CheckExact(known)) { /* (None: its first view) */
        PyObject *list = PyList_New(1);
        if (list == NULL) {
            failed = 1;
        }
        else {
            PyList_SET_ITEM(list, 0, Py_NewRef(reference));
            set_slot(base, views_offset, list);
            Py_DECREF(list);
        }
    }
    else {
        Py_INCREF(known); /* (held: dropping a dead reference frees nothing that runs code, but be safe) */
        Py_ssize_t count = PyList_GET_SIZE(known);
        if (count >= 8 && (count & (count - 1)) == 0) { /* at powers of two: amortized O(1) a view */
            PyObject *live = PyList_New(0);
            for (Py_ssize_t i = 0; live != NULL && i < PyList_GET_SIZE(known); i++) {
                PyObject *item = PyList_GET_ITEM(known, i);
                PyObject *alive = referent(item);
                if (alive != NULL) {
                    Py_DECREF(alive);
                    if (PyList_Append(live, item) < 0) {
                        Py_CLEAR(live);
                    }
                }
            }
            failed = live == NULL || PyList_SetSlice(known, 0, PyList_GET_SIZE(known), live) < 0;
            Py_XDECREF(live);
        }
        failed = failed || PyList_Append(known, reference) < 0;
        Py_DECREF(known);
    }
    Py_DECREF(reference);
    if (failed) {
        Py_DECREF(view);
        return NULL;
    }
    return view;
}

/* The VIEW_CHAINS entry (read, write, layout, chain) of views `what` of `node`'s shape and dtype
   (a new reference), or NULL: without an error where none is noted. The caller holds `node`. */
static PyObject *
view_entry(PyObject *node, PyObject *what)
{
    PyObject *shape = SLOT(node, shape_offset), *dtype = SLOT(node, dtype_offset);
    if (shape == NULL || dtype == NULL) {
        return NULL; /* (an incomplete node: the Python path raises) */
    }
    PyObject *memo = PyTuple_Pack(3, shape, dtype, what);
    if (memo == NULL) {
        return NULL;
    }
    PyObject *entry = PyDict_GetItemWithError(views.chains, memo);
    Py_DECREF(memo);
    if (entry == NULL || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 4
        || !PyTuple_CheckExact(PyTuple_GET_ITEM(entry, 3))) {
        return NULL; /* (not noted, or noted as no chain; a lookup that failed: an error set) */
    }
    return Py_NewRef(entry);
}

/* The node of `array` (exactly the class) if it is an Instruction, else NULL (borrowed). */
static PyObject *
array_node(PyObject *array)
{
    if (views.configured == NULL || Py_TYPE(array) != array_type) {
        return NULL;
    }
    PyObject *node = SLOT(array, node_offset);
    return node != NULL && Py_TYPE(node) == instruction_type ? node : NULL;
}

/* Whether NumPy arrays `a` and `b` have equal values of attribute `name` (1, 0, or -1 with an error). */
static int
same_attribute(PyObject *a, PyObject *b, PyObject *name)
{
    PyObject *first = PyObject_GetAttr(a, name);
    PyObject *second = first == NULL ? NULL : PyObject_GetAttr(b, name);
    int same = second == NULL ? -1 : PyObject_RichCompareBool(first, second, Py_EQ);
    Py_XDECREF(first);
    Py_XDECREF(second);
    return same;
}

/* The node of a view of an evaluated host array (`node`, bound to `buffer`) whose value is NumPy's
   view `value` of the buffer, as array.evaluated_view_node makes it: `node` itself where the view
   is contiguous with the buffer's shape, strides and dtype (the buffer as it is: `a[:]`); a
   leaf bound to `value` where it is contiguous; else the chain's last node (of `node`), bound to
   `value` (made read-only) unless bound already. New reference, or NULL with an error. */
static PyObject *
evaluated_view(PyObject *node, PyObject *buffer, PyObject *chain, PyObject *value)
{
    PyObject *made = NULL;
    PyObject *flags = PyObject_GetAttr(value, ndarray_flags_name);
    PyObject *layout = flags == NULL ? NULL : PyObject_GetAttr(flags, c_contiguous_name);
    int contiguous = layout == NULL ? -1 : PyObject_IsTrue(layout);
    Py_XDECREF(layout);
    if (contiguous == 1) { /* (only a contiguous view can be a contiguous buffer as it is) */
        int same = same_attribute(value, buffer, shape_name);
        if (same == 1) {
            same = same_attribute(value, buffer, strides_name);
        }
        if (same == 1) {
            same = same_attribute(value, buffer, dtype_name); /* (`.real` of a complex array has its strides) */
        }
        made = same == 1 ? Py_NewRef(node) : same == 0 ? PyObject_CallOneArg(views.leaf_for, value) : NULL;
    }
    else if (contiguous == 0) {
        made = broadcast(node, chain);
        if (made != NULL && SLOT(made, bound_offset) == Py_None) {
            if (PyObject_SetAttr(flags, writeable_name, Py_False) < 0) {
                Py_CLEAR(made);
            }
            else {
                set_slot(made, bound_offset, value);
            }
        }
    }
    Py_XDECREF(flags);
    return made;
}

/* `array[key]` for a plain view key noted in views.VIEW_CHAINS for the array's shape and dtype,
   as indexing.getitem makes it: of a pending array, the nodes of the chain; of an evaluated host
   array, NumPy's view of its buffer, a leaf where contiguous, else bound to the chain's last
   node. NULL without an error where the Python path decides. */
static PyObject *
read_view(PyObject *array, PyObject *key)
{
    PyObject *node = array_node(array);
    if (node == NULL) {
        return NULL;
    }
    PyObject *buffer = SLOT(node, bound_offset);
    if (buffer == NULL || (buffer != Py_None && Py_TYPE(buffer) != ndarray_type)) {
        return NULL; /* (a device buffer: the Python path) */
    }
    /* Held from here, before anything allocates: an allocation may run a collection whose
       finalizers rebind `array` (its old node and buffer freed), clear the table, or record. */
    Py_INCREF(node);
    Py_INCREF(buffer);
    PyObject *parts = key_parts(key), *entry = NULL, *made = NULL, *view = NULL;
    if (parts != NULL) {
        entry = view_entry(node, parts);
        Py_DECREF(parts);
    }
    if (entry == NULL) {
        PyErr_Clear(); /* (a failed lookup or allocation: the Python path meets it, or not) */
        goto done;
    }
    PyObject *chain = PyTuple_GET_ITEM(entry, 3);
    if (buffer == Py_None) {
        made = broadcast(node, chain);
    }
    else {
        PyObject *value = PyObject_GetItem(buffer, key);
        made = value == NULL ? NULL : evaluated_view(node, buffer, chain, value);
        Py_XDECREF(value);
    }
    view = made == NULL ? NULL : make_view(array, entry, made);
    Py_DECREF(entry);
done:
    Py_DECREF(buffer);
    Py_DECREF(node);
    return view;
}

/* A view `what` of `array` made by its noted chain alone (`.T`: manipulation_layout.transpose
   makes it so, evaluated or not), or NULL without an error where the Python path decides. */
static PyObject *
chained_view(PyObject *array, PyObject *what)
{
    PyObject *node = array_node(array);
    if (node == NULL) {
        return NULL;
    }
    Py_INCREF(node); /* (held before anything allocates: see read_view) */
    PyObject *entry = view_entry(node, what), *view = NULL;
    if (entry == NULL) {
        PyErr_Clear();
    }
    else {
        PyObject *made = broadcast(node, PyTuple_GET_ITEM(entry, 3));
        view = made == NULL ? NULL : make_view(array, entry, made);
        Py_DECREF(entry);
    }
    Py_DECREF(node);
    return view;
}

/* FastView(what, fallback): a read-only attribute (`Array.T`) whose value is the view `what` of
   its array from views.VIEW_CHAINS, else `fallback(array)` (the Python property's getter). */
typedef struct {
    PyObject_HEAD
    PyObject *what;
    PyObject *fallback;
} FastView;

static PyObject *
fast_view_get(PyObject *self, PyObject *object, PyObject *type)
{
    if (object == NULL || object == Py_None) {
        return Py_NewRef(self);
    }
    FastView *view = (FastView *)self;
    PyObject *made = chained_view(object, view->what);
    if (made != NULL || PyErr_Occurred()) {
        return made;
    }
    return PyObject_CallOneArg(view->fallback, object);
}

static int
fast_view_set(PyObject *self, PyObject *object, PyObject *value)
{
    PyErr_Format(PyExc_AttributeError, "attribute %R of %.100s objects is not writable", ((FastView *)self)->what,
                 object == NULL ? "?" : Py_TYPE(object)->tp_name);
    return -1;
}

static PyObject *
fast_view_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *what, *fallback;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "FastView(what, fallback) takes no keywords");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "UO:FastView", &what, &fallback)) {
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "FastView(what, fallback): fallback must be callable");
        return NULL;
    }
    FastView *self = (FastView *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->what = Py_NewRef(what);
        self->fallback = Py_NewRef(fallback);
    }
    return (PyObject *)self;
}

static void
fast_view_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    Py_CLEAR(((FastView *)self)->what);
    Py_CLEAR(((FastView *)self)->fallback);
    Py_TYPE(self)->tp_free(self);
}

static int
fast_view_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((FastView *)self)->fallback);
    return 0;
}

/* What the Python property answered: its getter (`fget`, `__wrapped__`) and its docstring. */
static PyObject *
fast_view_fallback(PyObject *self, void *closure)
{
    return Py_NewRef(((FastView *)self)->fallback);
}

static PyObject *
fast_view_doc(PyObject *self, void *closure)
{
    return PyObject_GetAttrString(((FastView *)self)->fallback, "__doc__");
}

static PyGetSetDef fast_view_getset[] = {
    {"fget", fast_view_fallback, NULL, PyDoc_STR("the Python getter (the property's fget)"), NULL},
    {"__wrapped__", fast_view_fallback, NULL, NULL, NULL},
    {"__doc__", fast_view_doc, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject fast_view_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lazyarr.frontend._fast_paths.FastView",
    .tp_basicsize = sizeof(FastView),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = PyDoc_STR("FastView(what, fallback): a read-only view attribute (Array.T) made in C where noted"),
    .tp_new = fast_view_new,
    .tp_dealloc = fast_view_dealloc,
    .tp_traverse = fast_view_traverse,
    .tp_descr_get = fast_view_get,
    .tp_descr_set = fast_view_set,
    .tp_getset = fast_view_getset,
};

/* -- templates: linalg.matmul's plain `x1 @ x2` ------------------------------------------------- */

/* The node of `template`'s (an hlo.template.Template) first output replayed on `operands` (held
   by the caller), as Template.__call__ makes it (a new reference); NULL with an error on failure. */
static PyObject *
replay_output(PyObject *template, PyObject *const *operands, Py_ssize_t count)
{
    PyObject *fixed = SLOT(template, templates.fixed), *steps = SLOT(template, templates.steps);
    PyObject *outputs = SLOT(template, templates.outputs);
    if (fixed == NULL || steps == NULL || outputs == NULL || !PyTuple_Check(fixed) || !PyTuple_Check(outputs)
        || PyTuple_GET_SIZE(outputs) < 1) {
        PyErr_SetString(PyExc_SystemError, "replay: a template must hold (fixed, steps, outputs) tuples");
        return NULL;
    }
    /* Held for the call (code run by a collection meanwhile could rebind a template's fields). */
    Py_INCREF(fixed);
    Py_INCREF(steps);
    Py_INCREF(outputs);
    PyObject *slots = PyList_New(count + PyTuple_GET_SIZE(fixed)), *result = NULL;
    if (slots == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyList_SET_ITEM(slots, i, Py_NewRef(operands[i]));
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fixed); i++) {
        PyList_SET_ITEM(slots, count + i, Py_NewRef(PyTuple_GET_ITEM(fixed, i)));
    }
    PyObject *arguments[2] = {steps, slots};
    PyObject *filled = replay(NULL, arguments, 2);
    if (filled != NULL) {
        Py_ssize_t position = PyLong_AsSsize_t(PyTuple_GET_ITEM(outputs, 0));
        if (position >= 0 && position < PyList_GET_SIZE(filled)) {
            result = Py_NewRef(PyList_GET_ITEM(filled, position));
        }
        else if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_SystemError, "replay: a template's output slot out of range");
        }
        Py_DECREF(filled);
    }
    Py_DECREF(slots);
done:
    Py_DECREF(fixed);
    Py_DECREF(steps);
    Py_DECREF(outputs);
    return result;
}

/* A new Array of `template`'s first output replayed on `operands` (held by the caller), as
   Template.__call__ and Array() make it; NULL with an error on failure. */
static PyObject *
replay_first(PyObject *template, PyObject *const *operands, Py_ssize_t count)
{
    return new_array(replay_output(template, operands, count));
}

/* reduction_support's `Array(template(node))`: replayed_array(template, node). */
static PyObject *
replayed_array(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || templates.configured == NULL || Py_TYPE(args[0]) != templates.template_type
        || Py_TYPE(args[1]) != instruction_type) {
        PyErr_SetString(PyExc_TypeError, "replayed_array(template: Template, node: Instruction) after configure_templates");
        return NULL;
    }
    return replay_first(args[0], &args[1], 1);
}

/* `x1 @ x2` of two arrays (exactly the class) whose shapes and dtypes have a recorded template
   in linalg.MATMUL_TEMPLATES, replayed on their nodes as Templates.build does (hlo.template); NULL
   without an error where the Python path decides. */
static PyObject *
record_matmul(PyObject *x1, PyObject *x2)
{
    if (templates.configured == NULL || Py_TYPE(x1) != array_type || Py_TYPE(x2) != array_type) {
        return NULL;
    }
    PyObject *left = SLOT(x1, node_offset), *right = SLOT(x2, node_offset);
    if (left == NULL || right == NULL || Py_TYPE(left) != instruction_type || Py_TYPE(right) != instruction_type
        || SLOT(left, shape_offset) == NULL || SLOT(left, dtype_offset) == NULL || SLOT(right, shape_offset) == NULL
        || SLOT(right, dtype_offset) == NULL) {
        return NULL;
    }
    /* Held before anything allocates (a collection's finalizers may rebind the arrays). */
    Py_INCREF(left);
    Py_INCREF(right);
    PyObject *key = PyTuple_Pack(4, SLOT(left, shape_offset), SLOT(left, dtype_offset), SLOT(right, shape_offset),
                                 SLOT(right, dtype_offset));
    PyObject *template = key == NULL ? NULL : PyDict_GetItemWithError(templates.matmuls, key);
    Py_XDECREF(key);
    if (template == NULL || Py_TYPE(template) != templates.template_type) {
        PyErr_Clear(); /* (not recorded yet, no template, or a failed lookup: the Python path) */
        Py_DECREF(left);
        Py_DECREF(right);
        return NULL;
    }
    Py_INCREF(template); /* (held: code run while nodes are made may clear the table) */
    PyObject *operands[2] = {left, right};
    PyObject *result = replay_first(template, operands, 2);
    Py_DECREF(template);
    Py_DECREF(left);
    Py_DECREF(right);
    return result;
}

/* `array[key] = value` as methods._setitem does it (views.assign of indexing.setitem's node) for a
   pending array `value` (an evaluated one may be written in place: element_writes) into an array
   (both exactly the class) that is no view and has no live view, with a plain view key whose write
   on these shapes and dtypes indexing.setitem noted in SETITEM_TEMPLATES, where the written node
   leaves no loop cut due (a deep one is noted for later cuts, as track_pending notes it). 1: done;
   0: the Python path decides (nothing changed); -1: an error. */
static int
record_setitem(PyObject *array, PyObject *key, PyObject *value)
{
    if (templates.configured == NULL || templates.setitems == NULL) {
        return 0;
    }
    PyObject *node = array_node(array), *update = array_node(value);
    if (node == NULL || update == NULL || SLOT(array, base_offset) != Py_None || SLOT(update, bound_offset) != Py_None
        || SLOT(node, shape_offset) == NULL || SLOT(node, dtype_offset) == NULL || SLOT(update, shape_offset) == NULL
        || SLOT(update, dtype_offset) == NULL) {
        return 0;
    }
    PyObject *known = SLOT(array, views_offset);
    if (known != NULL && known != Py_None) { /* views that are all dead are forgotten, as assign does */
        if (!PyList_CheckExact(known)) {
            return 0;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(known); i++) {
            PyObject *alive = referent(PyList_GET_ITEM(known, i));
            if (alive != NULL) {
                Py_DECREF(alive);
                return 0;
            }
        }
    }
    /* Held before anything allocates (a collection's finalizers may rebind the arrays). */
    Py_INCREF(node);
    Py_INCREF(update);
    PyObject *parts = key_parts(key), *template = NULL, *written = NULL;
    int outcome = 0;
    if (parts != NULL) {
        PyObject *memo = PyTuple_Pack(5, parts, SLOT(node, shape_offset), SLOT(node, dtype_offset),
                                      SLOT(update, shape_offset), SLOT(update, dtype_offset));
        template = memo == NULL ? NULL : PyDict_GetItemWithError(templates.setitems, memo);
        Py_XINCREF(template); /* (held at once: code run while nodes are made may clear the table) */
        Py_XDECREF(memo);
        Py_DECREF(parts);
    }
    if (template == NULL || Py_TYPE(template) != templates.template_type) {
        PyErr_Clear(); /* (not noted, or a failed lookup: the Python path) */
        Py_XDECREF(template);
        goto done;
    }
    PyObject *operands[2] = {node, update};
    written = replay_output(template, operands, 2);
    Py_DECREF(template);
    if (written == NULL || Py_TYPE(written) != instruction_type) {
        outcome = written == NULL ? -1 : 0;
        goto done;
    }
    Py_ssize_t depth = PyLong_AsSsize_t(SLOT(written, recording.depth)), limit = pending_budget();
    if ((depth == -1 || limit == -1) && PyErr_Occurred()) {
        outcome = -1;
        goto done;
    }
    if (limit != 0 && depth * 2 >= limit && (limit < 0 || depth >= limit)) {
        goto done; /* (track_pending may cut here: the Python path, which replays the same nodes) */
    }
    if (depth > 0 && add_holder(written, array) < 0) {
        outcome = -1;
        goto done;
    }
    known = SLOT(array, views_offset);
    if (known != NULL && known != Py_None) {
        set_slot(array, views_offset, Py_None);
    }
    set_slot(array, node_offset, written);
    outcome = 1;
    if (limit > 0 && depth * 2 >= limit) { /* deep, not yet due: noted for loop cuts as track_pending notes it */
        int noted = note_pending(array);
        if (noted == 0) { /* (the table is due for pruning: track_pending does it) */
            PyObject *tracked = PyObject_CallFunctionObjArgs(recording.track_pending, array, Py_True, NULL);
            noted = tracked == NULL ? -1 : 1;
            Py_XDECREF(tracked);
        }
        outcome = noted < 0 ? -1 : 1;
    }
done:
    Py_XDECREF(written);
    Py_DECREF(node);
    Py_DECREF(update);
    return outcome;
}

/* `name(a, axis=None, keepdims=<not given>)` (reduction_support.templated's plain call: no other
   argument) of an array (exactly the class) whose key (name, shape, dtype, axis, keepdims) has a
   template in reduction_support's table, replayed on its node as templated() does; NULL without
   an error where the Python path decides. `axis` None, an int or a tuple of ints, and
   `keepdims` a bool, exactly those types (`axis=0.0` equals 0 as a key and must still raise). */
static PyObject *
record_reduction(PyObject *name, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (templates.configured == NULL || nargs < 1 || nargs > 2) {
        return NULL;
    }
    PyObject *axis = nargs == 2 ? args[1] : NULL, *keepdims = NULL;
    Py_ssize_t keywords = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < keywords; i++) {
        PyObject *keyword = PyTuple_GET_ITEM(kwnames, i);
        if (axis == NULL && PyUnicode_CompareWithASCIIString(keyword, "axis") == 0) {
            axis = args[nargs + i];
        }
        else if (keepdims == NULL && PyUnicode_CompareWithASCIIString(keyword, "keepdims") == 0) {
            keepdims = args[nargs + i];
        }
        else {
            return NULL; /* (another argument, or one given twice: the Python path) */
        }
    }
    if (axis == NULL) {
        axis = Py_None;
    }
    if (keepdims == NULL) {
        keepdims = templates.no_value;
    }
    else if (keepdims != Py_True && keepdims != Py_False && keepdims != templates.no_value) {
        return NULL;
    }
    if (axis != Py_None && !PyLong_CheckExact(axis)) {
        if (!PyTuple_CheckExact(axis)) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(axis); i++) {
            if (!PyLong_CheckExact(PyTuple_GET_ITEM(axis, i))) {
                return NULL;
            }
        }
    }
    PyObject *node = array_node(args[0]);
    if (node == NULL || SLOT(node, shape_offset) == NULL || SLOT(node, dtype_offset) == NULL) {
        return NULL;
    }
    Py_INCREF(node); /* (held before anything allocates: a collection's finalizers may rebind the array) */
    PyObject *key = PyTuple_Pack(5, name, SLOT(node, shape_offset), SLOT(node, dtype_offset), axis, keepdims);
    PyObject *template = key == NULL ? NULL : PyDict_GetItemWithError(templates.reductions, key);
    Py_XINCREF(template); /* (held at once: code run while nodes are made may clear the table) */
    Py_XDECREF(key);
    PyObject *result = NULL;
    if (template == NULL || Py_TYPE(template) != templates.template_type) {
        PyErr_Clear(); /* (not recorded yet, no template, or a failed lookup: the Python path) */
    }
    else {
        result = replay_first(template, &node, 1);
    }
    Py_XDECREF(template);
    Py_DECREF(node);
    return result;
}

/* configure_templates(matmul_table, setitem_table, reduction_table, no_value, Template, Template.fixed,
   Template.steps, Template.outputs) */
static PyObject *
configure_templates(PyObject *module, PyObject *args)
{
    PyObject *matmuls, *setitems, *reductions, *no_value, *template_type, *fixed, *steps, *outputs;
    if (!PyArg_ParseTuple(args, "O!O!O!OO!OOO:configure_templates", &PyDict_Type, &matmuls, &PyDict_Type, &setitems,
                          &PyDict_Type, &reductions, &no_value, &PyType_Type, &template_type, &fixed, &steps,
                          &outputs)) {
        return NULL;
    }
    if (recording.configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_templates: configure_recording() first");
        return NULL;
    }
    Py_ssize_t offsets[3];
    if (slot_offset(fixed, "Template.fixed", &offsets[0]) < 0 || slot_offset(steps, "Template.steps", &offsets[1]) < 0
        || slot_offset(outputs, "Template.outputs", &offsets[2]) < 0) {
        return NULL;
    }
    Py_XSETREF(templates.configured, Py_NewRef(args));
    templates.matmuls = matmuls;
    templates.setitems = setitems;
    templates.reductions = reductions;
    templates.no_value = no_value;
    templates.template_type = (PyTypeObject *)template_type;
    templates.fixed = offsets[0];
    templates.steps = offsets[1];
    templates.outputs = offsets[2];
    Py_RETURN_NONE;
}

/* `array.reshape(*arguments)` of an array owning its value, as manipulation.reshape_method makes it
   (a view through the chain it noted for these arguments, the array's shape and dtype), for
   arguments that are exact ints or one tuple of them; NULL without an error where the Python
   method decides. */
static PyObject *
reshape_view(PyObject *array, PyObject *const *arguments, Py_ssize_t count)
{
    PyObject *shape = count == 1 && PyTuple_CheckExact(arguments[0]) ? Py_NewRef(arguments[0])
                      : PyTuple_New(count);
    if (shape == NULL) {
        return NULL;
    }
    int plain = 1;
    if (!(count == 1 && PyTuple_CheckExact(arguments[0]))) {
        for (Py_ssize_t i = 0; i < count; i++) {
            PyTuple_SET_ITEM(shape, i, Py_NewRef(arguments[i]));
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape) && plain; i++) {
        plain = PyLong_CheckExact(PyTuple_GET_ITEM(shape, i));
    }
    PyObject *raw = NULL, *what = NULL;
    if (plain) { /* (the method's own argument tuple: `(2, 3)` for reshape(2, 3), `((2, 3),)` for reshape((2, 3))) */
        raw = count == 1 && PyTuple_CheckExact(arguments[0]) ? PyTuple_Pack(1, arguments[0]) : Py_NewRef(shape);
        what = raw == NULL ? NULL : PyTuple_Pack(2, reshape_name, raw);
    }
    Py_XDECREF(raw);
    Py_DECREF(shape);
    if (what == NULL) {
        return NULL;
    }
    PyObject *view = chained_view(array, what);
    Py_DECREF(what);
    return view;
}

/* templated_calls.scalar_key(value): (type, value), or the float's little-endian bytes for 0.0, -0.0
   and NaN (equal keys must build the same graph), a complex number's always; NULL without an error
   for anything that is not a Python scalar. */
static PyObject *
scalar_key_part(PyObject *value)
{
    PyTypeObject *kind = Py_TYPE(value);
    if (kind == &PyLong_Type || kind == &PyBool_Type) {
        return PyTuple_Pack(2, (PyObject *)kind, value);
    }
    unsigned char bytes[2][8];
    if (kind == &PyFloat_Type) {
        double number = PyFloat_AS_DOUBLE(value);
        if (number != 0.0 && number == number) {
            return PyTuple_Pack(2, (PyObject *)kind, value);
        }
        if (PyFloat_Pack8(number, (char *)bytes[0], 1) < 0) {
            return NULL;
        }
        PyObject *packed = PyBytes_FromStringAndSize((const char *)bytes[0], 8);
        PyObject *part = packed == NULL ? NULL : PyTuple_Pack(2, (PyObject *)kind, packed);
        Py_XDECREF(packed);
        return part;
    }
    if (kind == &PyComplex_Type) {
        Py_complex number = PyComplex_AsCComplex(value);
        if (PyFloat_Pack8(number.real, (char *)bytes[0], 1) < 0 || PyFloat_Pack8(number.imag, (char *)bytes[1], 1) < 0) {
            return NULL;
        }
        PyObject *real = PyBytes_FromStringAndSize((const char *)bytes[0], 8);
        PyObject *imaginary = PyBytes_FromStringAndSize((const char *)bytes[1], 8);
        PyObject *part = real == NULL || imaginary == NULL ? NULL : PyTuple_Pack(3, (PyObject *)kind, real, imaginary);
        Py_XDECREF(real);
        Py_XDECREF(imaginary);
        return part;
    }
    return NULL;
}

/* templated_calls.replayed(name, function, arguments) with no statics, for positional `arguments`
   (missing trailing ones None, up to the name's arity): the template recorded under the key made
   in C, replayed on the arrays' nodes (a new Array); NULL without an error where the Python
   function decides (another argument kind, no template yet, one that cannot be replayed). */
static PyObject *
record_replayed_call(PyObject *name, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *arity_value = PyDict_GetItemWithError(replayed_calls.arities, name);
    Py_ssize_t arity = arity_value == NULL ? -1 : PyLong_AsSsize_t(arity_value);
    if (arity < 0 || nargs > arity || nargs > 8) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *key = PyTuple_New(2 + arity);
    if (key == NULL) {
        return NULL;
    }
    PyTuple_SET_ITEM(key, 0, Py_NewRef(name));
    PyTuple_SET_ITEM(key, 1, Py_NewRef(replayed_calls.no_statics));
    PyObject *nodes[8];
    Py_ssize_t count = 0;
    int plain = 1;
    for (Py_ssize_t i = 0; i < arity && plain; i++) {
        PyObject *argument = i < nargs ? args[i] : Py_None, *part = NULL;
        if (Py_TYPE(argument) == array_type) {
            PyObject *node = SLOT(argument, node_offset);
            if (node == NULL || Py_TYPE(node) != instruction_type || SLOT(node, shape_offset) == NULL
                || SLOT(node, dtype_offset) == NULL) {
                plain = 0;
                break;
            }
            nodes[count++] = Py_NewRef(node); /* (held: allocations below may run finalizers) */
            part = PyTuple_Pack(2, SLOT(node, shape_offset), SLOT(node, dtype_offset));
        }
        else if (argument == Py_None) {
            part = Py_NewRef(Py_None);
        }
        else {
            part = scalar_key_part(argument);
        }
        if (part == NULL) {
            plain = 0;
            break;
        }
        PyTuple_SET_ITEM(key, 2 + i, part);
    }
    PyObject *result = NULL;
    if (plain) {
        PyObject *template = PyDict_GetItemWithError(replayed_calls.table, key);
        if (template != NULL && Py_TYPE(template) == templates.template_type) {
            Py_INCREF(template); /* (held: code run while nodes are made may clear the table) */
            result = replay_first(template, nodes, count);
            Py_DECREF(template);
        }
    }
    if (result == NULL && !PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear(); /* (declined, or a key part that failed: the Python function decides and raises) */
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_DECREF(nodes[i]);
    }
    Py_DECREF(key); /* (partly filled on a decline: PyTuple_New's items are NULL until set) */
    return result;
}

static int evaluate_one(PyObject *array);

/* The one element of `array` (exactly the array class, one element) as its buffer's `item()` (a
   new reference), evaluating it first through evaluate_one; NULL without an error where the
   Python method decides (more than one element, a device buffer, a declined evaluation). */
static PyObject *
array_item(PyObject *array)
{
    PyObject *node = SLOT(array, node_offset);
    if (node == NULL || Py_TYPE(node) != instruction_type) {
        return NULL;
    }
    PyObject *shape = SLOT(node, shape_offset);
    if (shape == NULL || !PyTuple_CheckExact(shape)) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++) {
        PyObject *extent = PyTuple_GET_ITEM(shape, i);
        if (!PyLong_CheckExact(extent) || PyLong_AsLong(extent) != 1) {
            PyErr_Clear(); /* (an extent beyond a long is not 1 either) */
            return NULL; /* the Python method's TypeError names the shape */
        }
    }
    if (SLOT(node, bound_offset) == Py_None) {
        int done = evaluate_one(array);
        if (done <= 0) {
            return NULL;
        }
        node = SLOT(array, node_offset);
    }
    PyObject *buffer = SLOT(node, bound_offset);
    if (buffer == NULL || Py_TYPE(buffer) != ndarray_type) {
        return NULL;
    }
    Py_INCREF(buffer);
    PyObject *value = PyObject_CallMethodNoArgs(buffer, item_name);
    Py_DECREF(buffer);
    return value;
}

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback;
    PyObject *name; /* the op of an operator kind */
    int kind;
} FastSlot;

static PyObject *
fast_slot_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastSlot *self = (FastSlot *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (self->kind == REDUCTION) { /* (keywords allowed: `axis=`, `keepdims=`) */
        if (configured != NULL) {
            PyObject *value = record_reduction(self->name, args, nargs, kwnames);
            if (value != NULL || PyErr_Occurred()) {
                return value;
            }
        }
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    if (self->kind == UFUNC) { /* __array_ufunc__(self, ufunc, method, *inputs): NumPy's own ufunc, called */
        if (configured != NULL && numpy_operands.configured != NULL && kwnames == NULL && (nargs == 4 || nargs == 5)
            && PyUnicode_Check(args[2]) && PyUnicode_Compare(args[2], numpy_operands.call_name) == 0) {
            PyObject *table = nargs == 5 ? numpy_operands.binary_ufuncs : numpy_operands.unary_ufuncs;
            PyObject *name = PyDict_GetItemWithError(table, args[1]);
            if (name != NULL) {
                Py_INCREF(name);
                PyObject *value = nargs == 5 ? record_binary_call(name, args[3], args[4])
                                             : record_unary_call(name, args[3]);
                Py_DECREF(name);
                if (value != Py_None) {
                    return value;
                }
                Py_DECREF(value);
            }
            else if (PyErr_Occurred()) {
                return NULL;
            }
        }
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    if (self->kind == ARRAY_FLOAT) { /* float(x) of a one-element array: evaluated in C where its plan is cached */
        if (configured != NULL && kwnames == NULL && nargs == 1 && Py_TYPE(args[0]) == array_type) {
            PyObject *value = array_item(args[0]);
            if (value != NULL) {
                PyObject *converted = PyNumber_Float(value);
                Py_DECREF(value);
                return converted;
            }
            if (PyErr_Occurred()) {
                return NULL;
            }
        }
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    if (self->kind == REPLAYED) { /* `la.where(m, x, 0.0)`, `la.clip(x, 0, 1)`, `la.outer(u, v)`: a recorded template */
        if (configured != NULL && templates.configured != NULL && replayed_calls.configured != NULL
            && kwnames == NULL) {
            PyObject *value = record_replayed_call(self->name, args, nargs);
            if (value != NULL || PyErr_Occurred()) {
                return value;
            }
        }
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    if (self->kind == RESHAPE) { /* x.reshape(2, 3), x.reshape((2, -1)): a noted view chain (views.VIEW_CHAINS) */
        if (configured != NULL && views.configured != NULL && kwnames == NULL && nargs >= 2
            && Py_TYPE(args[0]) == array_type && SLOT(args[0], base_offset) == Py_None) {
            PyObject *view = reshape_view(args[0], args + 1, nargs - 1);
            if (view != NULL || PyErr_Occurred()) {
                return view;
            }
        }
        return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    }
    int arity = self->kind == SETITEM ? 3
                : self->kind == GETITEM || self->kind == BINARY || self->kind == REFLECTED || self->kind == MATMUL ? 2 : 1;
    if (configured != NULL && kwnames == NULL && nargs == arity) {
        PyObject *value;
        switch (self->kind) {
        case BINARY:
        case REFLECTED:
        case UNARY:
            value = self->kind == UNARY ? record_unary_call(self->name, args[0])
                    : self->kind == BINARY ? record_binary_call(self->name, args[0], args[1])
                                           : record_binary_call(self->name, args[1], args[0]);
            if (value != Py_None) {
                return value; /* the new array, or NULL with the error */
            }
            Py_DECREF(value);
            break;
        case MATMUL:
            value = record_matmul(args[0], args[1]);
            if (value != NULL || PyErr_Occurred()) {
                return value;
            }
            break;
        case SETITEM: {
            int done = record_setitem(args[0], args[1], args[2]);
            if (done != 0) {
                return done < 0 ? NULL : Py_NewRef(Py_None);
            }
            break;
        }
        case GETITEM:
            value = read_element(args[0], args[1]);
            if (value == NULL && !PyErr_Occurred()) {
                value = read_view(args[0], args[1]);
            }
            if (value != NULL || PyErr_Occurred()) {
                return value;
            }
            break;
        case FLOAT:
        case INT:
        case BOOL:
        case INDEX:
            /* (the value held while NumPy converts it: a finalizer run meanwhile may write the element) */
            value = self->kind == INDEX ? element_value(args[0], integer_types, integer_count)
                    : self->kind == BOOL ? element_value(args[0], NULL, 0)
                                         : element_value(args[0], real_types, real_count);
            if (value != NULL) {
                PyObject *converted;
                Py_INCREF(value);
                if (self->kind == FLOAT) {
                    converted = PyNumber_Float(value);
                }
                else if (self->kind == INT) {
                    converted = PyNumber_Long(value);
                }
                else if (self->kind == INDEX) {
                    converted = PyNumber_Index(value);
                }
                else {
                    int truth = PyObject_IsTrue(value);
                    converted = truth < 0 ? NULL : PyBool_FromLong(truth);
                }
                Py_DECREF(value);
                return converted;
            }
            break;
        }
    }
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *
fast_slot_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    const char *kind_name;
    PyObject *fallback, *name = Py_None;
    static char *keywords[] = {"kind", "fallback", "name", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|O:FastSlot", keywords, &kind_name, &fallback, &name)) {
        return NULL;
    }
    int kind = 0;
    while (kind < KIND_COUNT && strcmp(kind_names[kind], kind_name) != 0) {
        kind++;
    }
    if (kind == KIND_COUNT) {
        PyErr_Format(PyExc_ValueError, "FastSlot: unknown kind %s (getitem, float, int, bool, index, binary, "
                     "reflected, unary, matmul, setitem, reduction, ufunc, reshape, array_float or replayed)",
                     kind_name);
        return NULL;
    }
    if ((kind == BINARY || kind == REFLECTED || kind == UNARY || kind == REDUCTION || kind == REPLAYED)
        != PyUnicode_CheckExact(name)) {
        PyErr_SetString(PyExc_TypeError, "FastSlot: an operator or reduction kind takes its name (a str), no other "
                        "kind does");
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "FastSlot: the fallback must be callable");
        return NULL;
    }
    FastSlot *self = (FastSlot *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->vectorcall = fast_slot_call;
    self->fallback = Py_NewRef(fallback);
    self->name = Py_NewRef(name);
    self->kind = kind;
    return (PyObject *)self;
}

/* `instance.__getitem__` gives a bound method, `Class.__getitem__` the slot itself, as for a
   Python function. */
static PyObject *
fast_slot_get(PyObject *self, PyObject *instance, PyObject *owner)
{
    if (instance == NULL || instance == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, instance);
}

static int
fast_slot_traverse(FastSlot *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fallback);
    Py_VISIT(self->name);
    return 0;
}

static int
fast_slot_clear(FastSlot *self)
{
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->name);
    return 0;
}

static void
fast_slot_dealloc(FastSlot *self)
{
    PyObject_GC_UnTrack(self);
    fast_slot_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
fast_slot_repr(FastSlot *self)
{
    return PyUnicode_FromFormat("<FastSlot %s, falling back to %R>", kind_names[self->kind], self->fallback);
}

/* The fallback's name and docstring, so help() and introspection see the Python function. */
static PyObject *
fast_slot_getattro(PyObject *self, PyObject *name)
{
    if (PyUnicode_Check(name) && (PyUnicode_CompareWithASCIIString(name, "__doc__") == 0
                                  || PyUnicode_CompareWithASCIIString(name, "__name__") == 0
                                  || PyUnicode_CompareWithASCIIString(name, "__qualname__") == 0
                                  || PyUnicode_CompareWithASCIIString(name, "__module__") == 0)) {
        return PyObject_GetAttr(((FastSlot *)self)->fallback, name);
    }
    PyObject *value = PyObject_GenericGetAttr(self, name);
    if (value == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        /* what the function it stands for carries (a namespace ufunc's `reduce`, `nin`, `types`) */
        PyErr_Clear();
        value = PyObject_GetAttr(((FastSlot *)self)->fallback, name);
    }
    return value;
}

/* Pickled as what its fallback's module holds under the fallback's name (`la.max` is this slot
   there): fast_paths.restore(module, qualname) finds it again on loading. */
static PyObject *
fast_slot_reduce(PyObject *self, PyObject *unused)
{
    PyObject *fallback = ((FastSlot *)self)->fallback;
    PyObject *module = PyObject_GetAttrString(fallback, "__module__");
    PyObject *qualname = module == NULL ? NULL : PyObject_GetAttrString(fallback, "__qualname__");
    PyObject *paths = qualname == NULL ? NULL : PyImport_ImportModule("lazyarr.frontend.fast_paths");
    PyObject *restore = paths == NULL ? NULL : PyObject_GetAttrString(paths, "restore");
    PyObject *reduced = restore == NULL ? NULL : Py_BuildValue("(O(OO))", restore, module, qualname);
    Py_XDECREF(restore);
    Py_XDECREF(paths);
    Py_XDECREF(qualname);
    Py_XDECREF(module);
    return reduced;
}

static PyMethodDef fast_slot_methods[] = {
    {"__reduce__", fast_slot_reduce, METH_NOARGS, PyDoc_STR("pickled by its fallback's module and name")},
    {NULL},
};

static PyMemberDef fast_slot_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(FastSlot, fallback), READONLY, "the Python implementation"},
    {NULL},
};

static PyTypeObject FastSlotType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lazyarr.frontend._fast_paths.FastSlot",
    .tp_doc = PyDoc_STR("FastSlot(kind, fallback): a method whose common case runs in C (see the module)."),
    .tp_basicsize = sizeof(FastSlot),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = fast_slot_new,
    .tp_dealloc = (destructor)fast_slot_dealloc,
    .tp_traverse = (traverseproc)fast_slot_traverse,
    .tp_clear = (inquiry)fast_slot_clear,
    .tp_repr = (reprfunc)fast_slot_repr,
    .tp_getattro = fast_slot_getattro,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(FastSlot, vectorcall),
    .tp_descr_get = fast_slot_get,
    .tp_members = fast_slot_members,
    .tp_methods = fast_slot_methods,
};


static int
type_list(PyObject *types, PyTypeObject **out, Py_ssize_t *count, const char *what)
{
    if (!PyTuple_Check(types) || PyTuple_GET_SIZE(types) > MOST_SCALAR_TYPES) {
        PyErr_Format(PyExc_TypeError, "configure: %s must be a tuple of at most %d types", what,
                     MOST_SCALAR_TYPES);
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(types); i++) {
        if (!PyType_Check(PyTuple_GET_ITEM(types, i))) {
            PyErr_Format(PyExc_TypeError, "configure: %s must hold types only", what);
            return -1;
        }
        out[i] = (PyTypeObject *)PyTuple_GET_ITEM(types, i);
    }
    *count = PyTuple_GET_SIZE(types);
    return 0;
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *array, *element, *instruction, *ndarray, *node, *bound, *value, *leaf, *base, *views, *shape, *dtype;
    PyObject *reals, *integers;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OOOOOOOOO!O!:configure", &PyType_Type, &array, &PyType_Type, &element,
                          &PyType_Type, &instruction, &PyType_Type, &ndarray, &node, &bound, &value, &leaf, &base,
                          &views, &shape, &dtype, &PyTuple_Type, &reals, &PyTuple_Type, &integers)) {
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)element, (PyTypeObject *)array)) {
        PyErr_SetString(PyExc_TypeError, "configure: the element class must subclass the array class");
        return NULL;
    }
    Py_ssize_t offsets[8];
    PyTypeObject *reals_read[MOST_SCALAR_TYPES], *integers_read[MOST_SCALAR_TYPES];
    Py_ssize_t real_read, integer_read;
    if (slot_offset(node, "the array's _node", &offsets[0]) < 0
        || slot_offset(bound, "the instruction's _bound", &offsets[1]) < 0
        || slot_offset(value, "the element's _value", &offsets[2]) < 0
        || slot_offset(leaf, "the element's _leaf", &offsets[3]) < 0
        || slot_offset(base, "the array's _base", &offsets[4]) < 0
        || slot_offset(views, "the array's _views", &offsets[5]) < 0
        || slot_offset(shape, "the instruction's shape", &offsets[6]) < 0
        || slot_offset(dtype, "the instruction's dtype", &offsets[7]) < 0
        || type_list(reals, reals_read, &real_read, "the real scalar types") < 0
        || type_list(integers, integers_read, &integer_read, "the integer scalar types") < 0) {
        return NULL;
    }
    Py_XSETREF(configured, Py_NewRef(args));
    array_type = (PyTypeObject *)array;
    element_type = (PyTypeObject *)element;
    instruction_type = (PyTypeObject *)instruction;
    ndarray_type = (PyTypeObject *)ndarray;
    node_offset = offsets[0];
    bound_offset = offsets[1];
    value_offset = offsets[2];
    leaf_offset = offsets[3];
    base_offset = offsets[4];
    views_offset = offsets[5];
    shape_offset = offsets[6];
    dtype_offset = offsets[7];
    memcpy(real_types, reals_read, sizeof(reals_read));
    memcpy(integer_types, integers_read, sizeof(integers_read));
    real_count = real_read;
    integer_count = integer_read;
    Py_RETURN_NONE;
}

/* jit.py's _host_buffers_of_layouts: a list of the buffers, or None. */
static PyObject *
host_buffers(PyObject *module, PyObject *args)
{
    PyObject *arguments, *layouts;
    if (!PyArg_ParseTuple(args, "O!O!:host_buffers", &PyTuple_Type, &arguments, &PyTuple_Type, &layouts)) {
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(arguments);
    if (configured == NULL || count != PyTuple_GET_SIZE(layouts)) {
        Py_RETURN_NONE;
    }
    PyObject *buffers = PyList_New(count);
    if (buffers == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *argument = PyTuple_GET_ITEM(arguments, i), *layout = PyTuple_GET_ITEM(layouts, i);
        PyObject *node = Py_TYPE(argument) == array_type ? SLOT(argument, node_offset) : NULL;
        PyObject *buffer = node != NULL && Py_TYPE(node) == instruction_type ? SLOT(node, bound_offset) : NULL;
        if (buffer == NULL || Py_TYPE(buffer) != ndarray_type || !PyTuple_Check(layout) || PyTuple_GET_SIZE(layout) != 2
            || SLOT(node, dtype_offset) != PyTuple_GET_ITEM(layout, 1)) {
            Py_DECREF(buffers);
            Py_RETURN_NONE;
        }
        PyObject *shape = SLOT(node, shape_offset);
        int same = shape == NULL ? 0 : PyObject_RichCompareBool(shape, PyTuple_GET_ITEM(layout, 0), Py_EQ);
        if (same != 1) {
            Py_DECREF(buffers);
            if (same < 0) {
                return NULL;
            }
            Py_RETURN_NONE;
        }
        PyList_SET_ITEM(buffers, i, Py_NewRef(buffer));
    }
    return buffers;
}

/* configure_views(chains, ViewOf, leaf_for, and the slots ViewOf.base, .read, .write, .layout,
   .refusal, .strided) */
static PyObject *
configure_views(PyObject *module, PyObject *args)
{
    PyObject *chains, *view_of, *leaf_for, *descriptors[6];
    if (!PyArg_ParseTuple(args, "O!O!OOOOOOO:configure_views", &PyDict_Type, &chains, &PyType_Type, &view_of,
                          &leaf_for, &descriptors[0], &descriptors[1], &descriptors[2], &descriptors[3],
                          &descriptors[4], &descriptors[5])) {
        return NULL;
    }
    if (recording.configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_views: configure_recording() first");
        return NULL;
    }
    static const char *const what[6] = {"ViewOf.base", "ViewOf.read", "ViewOf.write", "ViewOf.layout",
                                        "ViewOf.refusal", "ViewOf.strided"};
    Py_ssize_t offsets[6];
    for (int i = 0; i < 6; i++) {
        if (slot_offset(descriptors[i], what[i], &offsets[i]) < 0) {
            return NULL;
        }
    }
    if (ndarray_flags_name == NULL) {
        ndarray_flags_name = PyUnicode_InternFromString("flags");
        c_contiguous_name = PyUnicode_InternFromString("c_contiguous");
        writeable_name = PyUnicode_InternFromString("writeable");
        shape_name = PyUnicode_InternFromString("shape");
        strides_name = PyUnicode_InternFromString("strides");
        dtype_name = PyUnicode_InternFromString("dtype");
        reshape_name = PyUnicode_InternFromString("reshape");
        item_name = PyUnicode_InternFromString("item");
        if (ndarray_flags_name == NULL || c_contiguous_name == NULL || writeable_name == NULL || shape_name == NULL
            || strides_name == NULL || dtype_name == NULL || reshape_name == NULL || item_name == NULL) {
            return NULL;
        }
    }
    Py_XSETREF(views.configured, Py_NewRef(args));
    views.chains = chains;
    views.view_of_type = (PyTypeObject *)view_of;
    views.leaf_for = leaf_for;
    views.base = offsets[0];
    views.read = offsets[1];
    views.write = offsets[2];
    views.layout = offsets[3];
    views.refusal = offsets[4];
    views.strided = offsets[5];
    Py_RETURN_NONE;
}

/* -- evaluation results: array.py's _kept and _keep_held for one evaluated array ----------------- */

/* What configure_evaluation() gave. */
static struct {
    PyObject *configured;
    PyObject *checked;         /* hlo.instruction._CHECKED_PARAMETERS: (shape, dtype) -> (model, attribute types) */
    PyObject *numbers;         /* hlo.instruction._PARAMETER_NUMBERS (an itertools.count) */
    PyObject *fresh_parameter; /* hlo.instruction.fresh_parameter (a (shape, dtype) not checked yet) */
    PyObject *kept;            /* array._kept (a result other than a NumPy array: a device buffer) */
    PyObject *note_kept;       /* array._note_kept_for_readers */
    /* evaluate_one's: compile's cached evaluation (compile.CACHED_EVALUATION) and the frontend's state */
    PyObject *run_cached, *decide, *plans, *compile_globals, *profiler_globals, *info;
    PyObject *keep;            /* array._worth_keeping */
    PyObject *tracers;         /* tracing._TRACER_ENTRIES (a dict: non-empty while a tracer lives) */
} evaluation;
static PyObject *parameter_key, *dtype_key, *number_key, *shape_key, *plans_flags_name, *active_name,
    *phase_name, *hits_name, *c_extensions_name;

/* hlo.instruction.fresh_parameter(shape, dtype, bound) for a (shape, dtype) checked before (a new
   reference); Py_None (a new reference) where it was not: the Python function checks it. */
static PyObject *
checked_parameter(PyObject *shape, PyObject *dtype, PyObject *bound)
{
    if (!PyTuple_CheckExact(shape)) {
        Py_RETURN_NONE;
    }
    PyObject *key = PyTuple_Pack(2, shape, dtype);
    if (key == NULL) {
        return NULL;
    }
    PyObject *checked = PyDict_GetItemWithError(evaluation.checked, key);
    Py_DECREF(key);
    if (checked == NULL || !PyTuple_CheckExact(checked) || PyTuple_GET_SIZE(checked) != 2
        || Py_TYPE(PyTuple_GET_ITEM(checked, 0)) != instruction_type) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    Py_INCREF(checked); /* (held while the table may change) */
    PyObject *model = PyTuple_GET_ITEM(checked, 0), *leaf = NULL;
    PyObject *model_shape = SLOT(model, shape_offset), *model_dtype = SLOT(model, dtype_offset);
    PyObject *number = PyIter_Next(evaluation.numbers);
    PyObject *attrs = NULL;
    if (number != NULL && model_shape != NULL && model_dtype != NULL) {
        PyObject *pairs[3] = {PyTuple_Pack(2, dtype_key, model_dtype), PyTuple_Pack(2, number_key, number),
                              PyTuple_Pack(2, shape_key, model_shape)};
        if (pairs[0] != NULL && pairs[1] != NULL && pairs[2] != NULL) {
            attrs = PyTuple_Pack(3, pairs[0], pairs[1], pairs[2]);
        }
        for (int i = 0; i < 3; i++) {
            Py_XDECREF(pairs[i]);
        }
    }
    PyObject *identity = attrs == NULL ? NULL : PyTuple_Pack(3, parameter_key, attrs, PyTuple_GET_ITEM(checked, 1));
    if (identity != NULL) {
        PyObject *leaf_args[6] = {SLOT(model, recording.op), model_shape, model_dtype, attrs, identity, bound};
        leaf = make_leaf(leaf_args);
    }
    else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_SystemError, "fresh parameter: no number, or a model without shape or dtype");
    }
    Py_XDECREF(identity);
    Py_XDECREF(attrs);
    Py_XDECREF(number);
    Py_DECREF(checked);
    return leaf;
}

static PyObject *
parameter_leaf(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "parameter_leaf(shape, dtype, bound)");
        return NULL;
    }
    if (evaluation.configured == NULL) {
        Py_RETURN_NONE;
    }
    return checked_parameter(args[0], args[1], args[2]);
}

/* array._kept(node, result): bind `result` to `node` (unless a function of constants alone) and
   make the read-only leaf standing for it; a result other than a NumPy array: the Python function. */
static PyObject *
kept_leaf(PyObject *node, PyObject *result)
{
    if (Py_TYPE(result) != ndarray_type) {
        return PyObject_CallFunctionObjArgs(evaluation.kept, node, result, NULL);
    }
    PyObject *constant = SLOT(node, recording.constant_only);
    int constant_only = constant == NULL ? -1 : PyObject_IsTrue(constant);
    if (constant_only < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_SystemError, "kept: a node without constant_only");
        }
        return NULL;
    }
    if (!constant_only) {
        set_slot(node, bound_offset, result);
    }
    PyObject *flags = PyObject_GetAttr(result, ndarray_flags_name);
    int failed = flags == NULL || PyObject_SetAttr(flags, writeable_name, Py_False) < 0;
    Py_XDECREF(flags);
    PyObject *shape = failed ? NULL : PyObject_GetAttr(result, shape_name);
    PyObject *dtype = shape == NULL ? NULL : PyObject_GetAttr(result, dtype_name);
    PyObject *leaf = dtype == NULL ? NULL : checked_parameter(shape, dtype, result);
    if (leaf == Py_None) {
        Py_DECREF(leaf);
        leaf = PyObject_CallFunctionObjArgs(evaluation.fresh_parameter, shape, dtype, result, NULL);
    }
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    return leaf;
}

/* array._owner(node): the live array holding `node` and owning its value (a new reference), or
   NULL without an error. */
static PyObject *
owner_of(PyObject *node)
{
    PyObject *holder = SLOT(node, recording.holder);
    if (holder == NULL || holder == Py_None) {
        return NULL;
    }
    int many = PyTuple_Check(holder);
    Py_ssize_t count = many ? PyTuple_GET_SIZE(holder) : 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *array = referent(many ? PyTuple_GET_ITEM(holder, i) : holder);
        if (array == NULL) {
            continue;
        }
        PyObject *base = Py_TYPE(array) == array_type ? SLOT(array, base_offset) : NULL;
        if (Py_TYPE(array) == array_type && SLOT(array, node_offset) == node && (base == NULL || base == Py_None)) {
            return array;
        }
        Py_DECREF(array);
    }
    return NULL;
}

static PyObject *adopt(PyObject *array, PyObject *node, PyObject *result, PyObject *held_sequence);

/* array._adopt_evaluated(array, node, result, held): `array` (which held `node`) takes the leaf of
   its evaluated value, and each held (node, buffer) its owner's (array._keep_held). */
static PyObject *
adopt_evaluated(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || Py_TYPE(args[0]) != array_type || Py_TYPE(args[1]) != instruction_type) {
        PyErr_SetString(PyExc_TypeError, "adopt_evaluated(array, node, result, held)");
        return NULL;
    }
    if (evaluation.configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "adopt_evaluated: configure_evaluation() was not called");
        return NULL;
    }
    return adopt(args[0], args[1], args[2], args[3]);
}

static PyObject *
adopt(PyObject *array, PyObject *node, PyObject *result, PyObject *held_sequence)
{
    PyObject *held = PySequence_Fast(held_sequence, "adopt_evaluated: held must be a sequence");
    if (held == NULL) {
        return NULL;
    }
    PyObject *leaf = kept_leaf(node, result);
    if (leaf == NULL) {
        Py_DECREF(held);
        return NULL;
    }
    set_slot(array, node_offset, leaf);
    Py_DECREF(leaf);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(held); i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(held, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || Py_TYPE(PyTuple_GET_ITEM(pair, 0)) != instruction_type) {
            PyErr_SetString(PyExc_TypeError, "adopt_evaluated: held must hold (node, buffer) pairs");
            Py_DECREF(held);
            return NULL;
        }
        PyObject *kept_node = PyTuple_GET_ITEM(pair, 0), *buffer = PyTuple_GET_ITEM(pair, 1);
        leaf = kept_leaf(kept_node, buffer);
        if (leaf == NULL) {
            Py_DECREF(held);
            return NULL;
        }
        PyObject *owner = owner_of(kept_node);
        int failed = 0;
        if (owner != NULL) {
            set_slot(owner, node_offset, leaf);
            Py_DECREF(owner);
        }
        else {
            PyObject *constant = SLOT(kept_node, recording.constant_only);
            int constant_only = constant == NULL ? 0 : PyObject_IsTrue(constant);
            PyObject *noted = constant_only ? Py_NewRef(Py_None)
                              : constant_only < 0 ? NULL
                              : PyObject_CallFunctionObjArgs(evaluation.note_kept, kept_node, buffer, NULL);
            failed = noted == NULL;
            Py_XDECREF(noted);
        }
        Py_DECREF(leaf);
        if (failed) {
            Py_DECREF(held);
            return NULL;
        }
    }
    Py_DECREF(held);
    Py_RETURN_NONE;
}

/* array.evaluate_arrays([array]) where compile's plan for the graph is cached and nothing else
   applies: the thread's pending phase reset, compile.evaluate_keeping_one's C path (run_cached:
   walk, kept positions, plan, run; a hit counted) and the results adopted. 1 when done, 0 where
   the Python function must run (a view of another array, a tracer alive, a deep array with
   pending siblings, flags changed or a profile recording, no plan yet), -1 with an error. */
static int
evaluate_one(PyObject *array)
{
    if (evaluation.configured == NULL || evaluation.run_cached == NULL || Py_TYPE(array) != array_type) {
        return 0;
    }
    PyObject *flags = PyObject_GetAttr(recording.flags_module, flags_name);
    if (flags == NULL) {
        return -1;
    }
    PyObject *plans_flags = PyDict_GetItemWithError(evaluation.compile_globals, plans_flags_name);
    PyObject *active = plans_flags == NULL ? NULL : PyDict_GetItemWithError(evaluation.profiler_globals, active_name);
    int current = plans_flags == flags && active == Py_None;
    PyObject *c_extensions = current ? PyObject_GetAttr(flags, c_extensions_name) : NULL;
    current = c_extensions == NULL ? 0 : PyObject_IsTrue(c_extensions); /* (--c_extensions=false: Python) */
    Py_XDECREF(c_extensions);
    Py_DECREF(flags);
    if (current < 0 || PyErr_Occurred()) {
        return -1;
    }
    if (!current) {
        return 0;
    }
    Py_ssize_t budget = pending_budget();
    if (budget == -1 && PyErr_Occurred()) {
        return -1;
    }
    /* The thread's pending state: its first use runs threading.local's __init__ (Python code that
       may collect garbage, whose finalizers may rebind the array), so the array's node is read
       only after it, and held. */
    PyObject *pending = budget ? PyObject_GetAttr(recording.pending_state, arrays_name) : Py_NewRef(Py_False);
    int siblings = pending == NULL ? -1 : PyObject_IsTrue(pending);
    Py_XDECREF(pending);
    /* a program's own evaluation point: its later cuts start afresh (evaluate_arrays, before it decides) */
    if (siblings < 0 || PyObject_SetAttr(recording.pending_state, phase_name, Py_None) < 0) {
        return -1;
    }
    PyObject *node = SLOT(array, node_offset);
    if (SLOT(array, base_offset) != Py_None || PyDict_GET_SIZE(evaluation.tracers) || node == NULL
        || Py_TYPE(node) != instruction_type || SLOT(node, bound_offset) != Py_None
        || SLOT(node, recording.depth) == NULL) {
        return 0;
    }
    if (siblings) {
        Py_ssize_t depth = PyLong_AsSsize_t(SLOT(node, recording.depth));
        if (depth == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (depth * 2 >= budget) {
            return 0; /* (a deep array: the loop's other results may come with it) */
        }
    }
    Py_INCREF(array);
    Py_INCREF(node); /* (held: the run may run code that rebinds the array) */
    PyObject *arguments[4] = {node, evaluation.decide, evaluation.plans, evaluation.keep};
    PyObject *ran = PyObject_Vectorcall(evaluation.run_cached, arguments, 4, NULL);
    int done = ran == NULL ? -1 : ran == Py_None ? 0 : 1;
    if (done == 1) {
        PyObject *hits = PyObject_GetAttr(evaluation.info, hits_name);
        PyObject *one = PyLong_FromLong(1);
        PyObject *more = hits == NULL || one == NULL ? NULL : PyNumber_Add(hits, one);
        Py_XDECREF(one);
        done = more == NULL || PyObject_SetAttr(evaluation.info, hits_name, more) < 0 ? -1 : 1;
        Py_XDECREF(more);
        Py_XDECREF(hits);
        if (done == 1 && (!PyTuple_Check(ran) || PyTuple_GET_SIZE(ran) != 2)) {
            PyErr_SetString(PyExc_SystemError, "evaluate_one: run_cached must answer (result, held)");
            done = -1;
        }
        if (done == 1) {
            PyObject *adopted = adopt(array, node, PyTuple_GET_ITEM(ran, 0), PyTuple_GET_ITEM(ran, 1));
            done = adopted == NULL ? -1 : 1;
            Py_XDECREF(adopted);
        }
    }
    Py_XDECREF(ran);
    Py_DECREF(node);
    Py_DECREF(array);
    return done;
}

static PyObject *
evaluate_one_call(PyObject *module, PyObject *array)
{
    int done = evaluate_one(array);
    return done < 0 ? NULL : PyBool_FromLong(done);
}

/* configure_cached_evaluation(run_cached, decide, plans, compile_globals, profiler_globals, info,
   worth_keeping, tracer_entries) */
static PyObject *
configure_cached_evaluation(PyObject *module, PyObject *args)
{
    PyObject *run, *decide, *plans, *compile_globals, *profiler_globals, *info, *keep, *tracers;
    if (!PyArg_ParseTuple(args, "OOO!O!O!OOO!:configure_cached_evaluation", &run, &decide, &PyDict_Type, &plans,
                          &PyDict_Type, &compile_globals, &PyDict_Type, &profiler_globals, &info, &keep,
                          &PyDict_Type, &tracers)) {
        return NULL;
    }
    if (evaluation.configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_cached_evaluation: configure_evaluation() first");
        return NULL;
    }
    if (plans_flags_name == NULL) {
        plans_flags_name = PyUnicode_InternFromString("_plans_flags");
        active_name = PyUnicode_InternFromString("_ACTIVE");
        phase_name = PyUnicode_InternFromString("phase");
        hits_name = PyUnicode_InternFromString("hits");
        c_extensions_name = PyUnicode_InternFromString("c_extensions");
        if (plans_flags_name == NULL || active_name == NULL || phase_name == NULL || hits_name == NULL
            || c_extensions_name == NULL) {
            return NULL;
        }
    }
    /* (kept alive by the tuple of arguments, as configure_evaluation's) */
    PyObject *both = PyTuple_Pack(2, evaluation.configured, args);
    if (both == NULL) {
        return NULL;
    }
    Py_SETREF(evaluation.configured, both);
    evaluation.run_cached = run;
    evaluation.decide = decide;
    evaluation.plans = plans;
    evaluation.compile_globals = compile_globals;
    evaluation.profiler_globals = profiler_globals;
    evaluation.info = info;
    evaluation.keep = keep;
    evaluation.tracers = tracers;
    Py_RETURN_NONE;
}

/* configure_replayed_calls(table, arities) */
static PyObject *
configure_replayed_calls(PyObject *module, PyObject *args)
{
    PyObject *table, *arities;
    if (!PyArg_ParseTuple(args, "O!O!:configure_replayed_calls", &PyDict_Type, &table, &PyDict_Type, &arities)) {
        return NULL;
    }
    if (templates.configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_replayed_calls: configure_templates() first");
        return NULL;
    }
    if (replayed_calls.no_statics == NULL && (replayed_calls.no_statics = PyTuple_New(0)) == NULL) {
        return NULL;
    }
    Py_XSETREF(replayed_calls.configured, Py_NewRef(args));
    replayed_calls.table = table;
    replayed_calls.arities = arities;
    Py_RETURN_NONE;
}

/* configure_numpy_operands(constants, scalar_types, binary_ufuncs, unary_ufuncs) */
static PyObject *
configure_numpy_operands(PyObject *module, PyObject *args)
{
    PyObject *constants, *types, *binary, *unary;
    if (!PyArg_ParseTuple(args, "O!O!O!O!:configure_numpy_operands", &PyDict_Type, &constants, &PyFrozenSet_Type,
                          &types, &PyDict_Type, &binary, &PyDict_Type, &unary)) {
        return NULL;
    }
    if (recording.configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_numpy_operands: configure_recording() first");
        return NULL;
    }
    if (numpy_operands.call_name == NULL && (numpy_operands.call_name = PyUnicode_InternFromString("__call__")) == NULL) {
        return NULL;
    }
    Py_XSETREF(numpy_operands.configured, Py_NewRef(args));
    numpy_operands.constants = constants;
    numpy_operands.scalar_types = types;
    numpy_operands.binary_ufuncs = binary;
    numpy_operands.unary_ufuncs = unary;
    Py_RETURN_NONE;
}

/* configure_evaluation(checked_parameters, parameter_numbers, fresh_parameter, kept, note_kept_for_readers) */
static PyObject *
configure_evaluation(PyObject *module, PyObject *args)
{
    PyObject *checked, *numbers, *fresh, *kept, *note;
    if (!PyArg_ParseTuple(args, "O!OOOO:configure_evaluation", &PyDict_Type, &checked, &numbers, &fresh, &kept,
                          &note)) {
        return NULL;
    }
    if (recording.configured == NULL || views.configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_evaluation: configure_recording() and configure_views() first");
        return NULL;
    }
    if (!PyIter_Check(numbers)) {
        PyErr_SetString(PyExc_TypeError, "configure_evaluation: parameter_numbers must be an iterator");
        return NULL;
    }
    if (parameter_key == NULL) {
        parameter_key = PyUnicode_InternFromString("parameter");
        dtype_key = PyUnicode_InternFromString("dtype");
        number_key = PyUnicode_InternFromString("number");
        shape_key = PyUnicode_InternFromString("shape");
        if (parameter_key == NULL || dtype_key == NULL || number_key == NULL || shape_key == NULL) {
            return NULL;
        }
    }
    Py_XSETREF(evaluation.configured, Py_NewRef(args));
    evaluation.run_cached = NULL; /* (configure_cached_evaluation's arguments went with the old tuple) */
    evaluation.checked = checked;
    evaluation.numbers = numbers;
    evaluation.fresh_parameter = fresh;
    evaluation.kept = kept;
    evaluation.note_kept = note;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     PyDoc_STR("configure(array_class, element_class, instruction_class, ndarray, node_slot, bound_slot, "
               "value_slot, leaf_slot, base_slot, views_slot, shape_slot, dtype_slot, real_scalar_types, "
               "integer_scalar_types)")},
    {"configure_recording", configure_recording, METH_VARARGS,
     PyDoc_STR("configure_recording(direct, scalar_operands, intern, instruction_globals, sweep, interned, "
               "scalar_operand, holders_with, track_pending, flags_module, tracing_state, template_state, pending_state, "
               "and the Instruction slots op, operands, "
               "attrs, _attr_map, _local, _identity, depth, constant_only, _holder)")},
    {"replayed_array", (PyCFunction)(void (*)(void))replayed_array, METH_FASTCALL,
     PyDoc_STR("replayed_array(template, node): Array(template(node)) (reduction_support.templated)")},
    {"configure_templates", configure_templates, METH_VARARGS,
     PyDoc_STR("configure_templates(matmul_table, setitem_table, reduction_table, no_value, Template, "
               "Template.fixed, Template.steps, Template.outputs)")},
    {"configure_views", configure_views, METH_VARARGS,
     PyDoc_STR("configure_views(view_chains, ViewOf, leaf_for, ViewOf.base, ViewOf.read, ViewOf.write, "
               "ViewOf.layout, ViewOf.refusal, ViewOf.strided)")},
    {"record_binary", (PyCFunction)(void (*)(void))record_binary, METH_FASTCALL,
     PyDoc_STR("record_binary(name, x1, x2): direct_recording.python_record_binary")},
    {"record_unary", (PyCFunction)(void (*)(void))record_unary, METH_FASTCALL,
     PyDoc_STR("record_unary(name, x): direct_recording.python_record_unary")},
    {"new_leaf", (PyCFunction)(void (*)(void))new_leaf, METH_FASTCALL,
     PyDoc_STR("new_leaf(op, shape, dtype, attrs, identity, bound): hlo.instruction.fresh_parameter's node")},
    {"configure_replayed_calls", configure_replayed_calls, METH_VARARGS,
     PyDoc_STR("configure_replayed_calls(templated_calls_table, arities)")},
    {"configure_numpy_operands", configure_numpy_operands, METH_VARARGS,
     PyDoc_STR("configure_numpy_operands(numpy_scalar_constants, numpy_scalar_types, binary_ufuncs, unary_ufuncs)")},
    {"configure_evaluation", configure_evaluation, METH_VARARGS,
     PyDoc_STR("configure_evaluation(checked_parameters, parameter_numbers, fresh_parameter, kept, "
               "note_kept_for_readers)")},
    {"parameter_leaf", (PyCFunction)(void (*)(void))parameter_leaf, METH_FASTCALL,
     PyDoc_STR("parameter_leaf(shape, dtype, bound): hlo.instruction.fresh_parameter for a checked "
               "(shape, dtype), else None")},
    {"configure_cached_evaluation", configure_cached_evaluation, METH_VARARGS,
     PyDoc_STR("configure_cached_evaluation(run_cached, decide, plans, compile_globals, profiler_globals, info, "
               "worth_keeping, tracer_entries)")},
    {"evaluate_one", evaluate_one_call, METH_O,
     PyDoc_STR("evaluate_one(array) -> bool: array.evaluate_arrays([array]) where a plan is cached (False: "
               "the Python function must run)")},
    {"adopt_evaluated", (PyCFunction)(void (*)(void))adopt_evaluated, METH_FASTCALL,
     PyDoc_STR("adopt_evaluated(array, node, result, held): array._adopt_evaluated")},
    {"sweep_intern_table", sweep_intern_table, METH_O,
     PyDoc_STR("sweep_intern_table(table): drop hlo.instruction's dead intern entries; the count left")},
    {"replay", (PyCFunction)(void (*)(void))replay, METH_FASTCALL,
     PyDoc_STR("replay(steps, slots): hlo.instruction.python_replay")},
    {"host_buffers", host_buffers, METH_VARARGS,
     PyDoc_STR("host_buffers(args, layouts): the buffers of `args` when each is an evaluated host array "
               "(exactly the array class) of the (shape, dtype) `layouts` lists in order, else None")},
    {NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    .m_name = "lazyarr.frontend._fast_paths",
    .m_doc = PyDoc_STR("Frontend fast paths in C (see fast_paths.py): FastSlot, host_buffers, configure."),
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__fast_paths(void)
{
    if (PyType_Ready(&FastSlotType) < 0 || PyType_Ready(&fast_view_type) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "FastSlot", (PyObject *)&FastSlotType) < 0
        || PyModule_AddObjectRef(module, "FastView", (PyObject *)&fast_view_type) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
