/* Frontend fast paths in C: element reads (`x[i]`, `x[i, j]`, `float(e)`, `int(e)`, `bool(e)`,
`operator.index(e)`) and the buffers of a jitted call's arguments.

A loop that reads evaluated results one element at a time (`total += float(x[i])`) runs NumPy's
scalar code in NumPy; in lazyarr each read is `Array.__getitem__` and the element's `__float__`,
two Python-level calls that cost several times NumPy's whole read (elements.py). This module
does the same work without a Python frame: `FastSlot(kind, fallback)` is a method descriptor
that CPython's type slots (mp_subscript, nb_float, ...) call directly; it handles the one case
elements.py and indexing.py already handle inline (an evaluated host buffer, integer keys; an
Element holding a real NumPy scalar) and calls `fallback`, the Python implementation, for
everything else, with the same arguments. Results and errors are the Python path's: the fast
path only ever returns what that path would build (an Element holding NumPy's own scalar), and
any doubt (an IndexError, a view, another type) is left to it.

`host_buffers(args, layouts)` is jit.py's `_host_buffers_of_layouts`: a jitted function called
again with evaluated host arrays of its last call's shapes and dtypes runs at once on their
buffers (W5: the whole call is ~4 us, and that check was 0.55 of them).

`configure(...)` hands over the classes and the slot descriptors whose offsets the fast paths
read; until it is called every FastSlot calls its fallback. The module is optional: without a
C compiler lazyarr runs the same Python code (fast_paths.py chooses).
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "structmember.h"

/* What configure() gave: the classes and slot offsets the fast paths read (borrowed from
   configure's arguments, kept alive by the references held below). */
static PyTypeObject *array_type, *element_type, *instruction_type, *ndarray_type;
static Py_ssize_t node_offset, bound_offset, value_offset, leaf_offset, base_offset, views_offset;
static Py_ssize_t shape_offset, dtype_offset;
static PyObject *configured;  /* the tuple of configure's arguments: keeps them alive */
#define MOST_SCALAR_TYPES 32
static PyTypeObject *real_types[MOST_SCALAR_TYPES], *integer_types[MOST_SCALAR_TYPES];
static Py_ssize_t real_count, integer_count;

#define SLOT(object, offset) (*(PyObject **)((char *)(object) + (offset)))

enum kind { GETITEM, FLOAT, INT, BOOL, INDEX, KIND_COUNT };
static const char *const kind_names[KIND_COUNT] = {"getitem", "float", "int", "bool", "index"};

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
    PyObject *value = PyObject_GetItem(buffer, key);
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

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback;
    int kind;
} FastSlot;

static PyObject *
fast_slot_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastSlot *self = (FastSlot *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (configured != NULL && kwnames == NULL && nargs == (self->kind == GETITEM ? 2 : 1)) {
        PyObject *value;
        switch (self->kind) {
        case GETITEM:
            value = read_element(args[0], args[1]);
            if (value != NULL || PyErr_Occurred()) {
                return value;
            }
            break;
        case FLOAT:
            value = element_value(args[0], real_types, real_count);
            if (value != NULL) {
                return PyNumber_Float(value);
            }
            break;
        case INT:
            value = element_value(args[0], real_types, real_count);
            if (value != NULL) {
                return PyNumber_Long(value);
            }
            break;
        case BOOL:
            value = element_value(args[0], NULL, 0);
            if (value != NULL) {
                int truth = PyObject_IsTrue(value);
                return truth < 0 ? NULL : PyBool_FromLong(truth);
            }
            break;
        case INDEX:
            value = element_value(args[0], integer_types, integer_count);
            if (value != NULL) {
                return PyNumber_Index(value);
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
    PyObject *fallback;
    static char *keywords[] = {"kind", "fallback", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO:FastSlot", keywords, &kind_name, &fallback)) {
        return NULL;
    }
    int kind = 0;
    while (kind < KIND_COUNT && strcmp(kind_names[kind], kind_name) != 0) {
        kind++;
    }
    if (kind == KIND_COUNT) {
        PyErr_Format(PyExc_ValueError, "FastSlot: unknown kind %R (getitem, float, int, bool or index)",
                     PyTuple_GET_ITEM(args, 0));
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
    return 0;
}

static int
fast_slot_clear(FastSlot *self)
{
    Py_CLEAR(self->fallback);
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
    return PyObject_GenericGetAttr(self, name);
}

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
};

/* The offset of an object slot (`__slots__` entry) from its member descriptor. */
static int
slot_offset(PyObject *descriptor, const char *what, Py_ssize_t *offset)
{
    if (!Py_IS_TYPE(descriptor, &PyMemberDescr_Type)
        || ((PyMemberDescrObject *)descriptor)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "configure: %s must be a __slots__ member descriptor, not %R", what,
                     descriptor);
        return -1;
    }
    *offset = ((PyMemberDescrObject *)descriptor)->d_member->offset;
    return 0;
}

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

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     PyDoc_STR("configure(array_class, element_class, instruction_class, ndarray, node_slot, bound_slot, "
               "value_slot, leaf_slot, base_slot, views_slot, shape_slot, dtype_slot, real_scalar_types, "
               "integer_scalar_types)")},
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
    if (PyType_Ready(&FastSlotType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "FastSlot", (PyObject *)&FastSlotType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
