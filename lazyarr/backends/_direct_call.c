/* A CPU executable's direct call in C: CpuExecutable.direct_call's closure without its Python steps.

An executable that is one native run (W5's `(a + b) * c - a`, a solver's convergence test, most
jitted functions) runs each call as: its slots (the constants, the arguments in their parameters'
slots), a buffer for each value it writes (a fresh one for each output; for a temporary, the one
the run keeps between calls), one native dispatch call (llvm/dispatch.py), and the outputs. In Python that is ~1.5-2 us of frames, a slot-list copy, a
ctypes call converting its arguments, and the result list: as much as the native run of a small
kernel. `DirectCall(...)` does the same steps in C, calling the dispatch function's address itself:

- `call(arguments)`: the slots are `blank` copied; each argument must be exactly a NumPy array
  whose `flags.c_contiguous` is true (anything else: `fallback(arguments)`, the Python closure,
  which converts it); a temporary takes the run's kept buffer (`scratch[key][slot]`, while the
  run's `lock` is held: acquired without waiting, held through the dispatch; not acquired,
  another thread runs it: fresh buffers; no set for `key` yet: `fallback`, which makes it), every
  other value written comes from its `allocate(shape, dtype)` (NumPy's allocator or
  host_buffers.kernel_output, as the closure calls them); the dispatch runs with the GIL released
  (as the ctypes call released it); the outputs come back in a new list.
- while a profile records (`_profiler._ACTIVE` is not None), `fallback(arguments)`: it runs step by
  step with its events.

The run's program and size vectors (`keep`) live as long as the object. The layouts the dispatch
relies on (NumPy's data pointer, CPython's list items) were checked when the dispatcher was made.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include "structmember.h"

typedef void (*dispatch_function)(void *program, void *slots);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *blank;        /* list: the slots before a call (constants, else None) */
    PyObject *parameters;   /* tuple of int: each argument's slot */
    PyObject *allocations;  /* tuple of (slot, allocate, shape, dtype) */
    PyObject *outputs;      /* tuple of int: the output slots, in order */
    PyObject *keep;         /* what the program address points into */
    PyObject *fallback;     /* the Python closure: every other case */
    PyObject *profiler;     /* lazyarr._profiler: its `_ACTIVE` */
    PyObject *scratch;      /* the run's kept buffers: {key: {slot: array}}, or None (no temporaries) */
    PyObject *key;          /* this call's key in `scratch` */
    PyObject *lock;         /* the run's threading.Lock, held while its kept buffers are in use */
    void *program;
    dispatch_function dispatch;
} DirectCall;

static PyObject *active_name, *flags_name, *c_contiguous_name, *acquire_name, *release_name;
static PyTypeObject *ndarray_type;

/* 1: exactly an ndarray and C-contiguous; 0: not; -1: an error. */
static int
contiguous_array(PyObject *argument)
{
    if (Py_TYPE(argument) != ndarray_type) {
        return 0;
    }
    PyObject *flags = PyObject_GetAttr(argument, flags_name);
    PyObject *contiguous = flags == NULL ? NULL : PyObject_GetAttr(flags, c_contiguous_name);
    Py_XDECREF(flags);
    if (contiguous == NULL) {
        return -1;
    }
    int truth = PyObject_IsTrue(contiguous);
    Py_DECREF(contiguous);
    return truth;
}

static PyObject *
fall_back(DirectCall *self, PyObject *arguments)
{
    return PyObject_CallOneArg(self->fallback, arguments);
}

/* Release the run's lock (keeping any error already set); -1 if releasing failed. */
static int
release(DirectCall *self)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *released = PyObject_CallMethodNoArgs(self->lock, release_name);
    int failed = released == NULL;
    Py_XDECREF(released);
    if (type != NULL) {
        PyErr_Restore(type, value, traceback); /* (the first error wins) */
    }
    return failed ? -1 : 0;
}

static PyObject *
direct_call_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    DirectCall *self = (DirectCall *)callable;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "DirectCall takes one argument: the list of argument buffers");
        return NULL;
    }
    PyObject *arguments = args[0];
    PyObject *active = PyObject_GetAttr(self->profiler, active_name);
    if (active == NULL) {
        return NULL;
    }
    Py_DECREF(active);
    Py_ssize_t count = PyTuple_GET_SIZE(self->parameters);
    if (active != Py_None || !PyList_CheckExact(arguments) || PyList_GET_SIZE(arguments) != count) {
        return fall_back(self, arguments);
    }
    PyObject *slots = PyList_GetSlice(self->blank, 0, PyList_GET_SIZE(self->blank));
    if (slots == NULL) {
        return NULL;
    }
    /* Held: a collection run by an allocation below may run code that changes the caller's list. */
    PyObject *held = PyList_GetSlice(arguments, 0, count);
    if (held == NULL) {
        Py_DECREF(slots);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *argument = PyList_GET_ITEM(held, i);
        int contiguous = contiguous_array(argument);
        if (contiguous <= 0) {
            Py_DECREF(slots);
            Py_DECREF(held);
            return contiguous < 0 ? NULL : fall_back(self, arguments);
        }
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(self->parameters, i));
        if (slot < 0 || slot >= PyList_GET_SIZE(slots)) {
            Py_DECREF(slots);
            Py_DECREF(held);
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_SystemError, "DirectCall: a parameter slot out of range");
            }
            return NULL;
        }
        PyList_SetItem(slots, slot, Py_NewRef(argument)); /* (steals the new reference) */
    }
    Py_DECREF(held);
    PyObject *kept = NULL; /* the run's kept buffers for this key while its lock is held, else NULL */
    if (self->scratch != Py_None) {
        PyObject *acquired = PyObject_CallMethodOneArg(self->lock, acquire_name, Py_False);
        if (acquired == NULL) {
            Py_DECREF(slots);
            return NULL;
        }
        int locked = acquired == Py_True;
        Py_DECREF(acquired);
        if (locked) {
            kept = PyDict_GetItemWithError(self->scratch, self->key);
            if (kept == NULL) { /* (none yet for this key, or an error) */
                int failed = PyErr_Occurred() != NULL;
                if (release(self) < 0 || failed) {
                    Py_DECREF(slots);
                    return NULL;
                }
                Py_DECREF(slots);
                return fall_back(self, arguments); /* (it makes them: the next call takes them) */
            }
            Py_INCREF(kept);
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->allocations); i++) {
        PyObject *allocation = PyTuple_GET_ITEM(self->allocations, i);
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(allocation, 0));
        PyObject *output = NULL;
        if (slot >= 0 && slot < PyList_GET_SIZE(slots)) {
            output = kept == NULL ? NULL : PyDict_GetItemWithError(kept, PyTuple_GET_ITEM(allocation, 0));
            if (output != NULL) {
                Py_INCREF(output);
            }
            else if (!PyErr_Occurred()) {
                output = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(allocation, 1), PyTuple_GET_ITEM(allocation, 2),
                                                      PyTuple_GET_ITEM(allocation, 3), NULL);
            }
        }
        if (output == NULL || Py_TYPE(output) != ndarray_type) {
            if (output != NULL || !PyErr_Occurred()) {
                PyErr_SetString(PyExc_SystemError, "DirectCall: an output slot out of range, or not an array");
            }
            Py_XDECREF(output);
            Py_DECREF(slots);
            if (kept != NULL) {
                Py_DECREF(kept);
                release(self);
            }
            return NULL;
        }
        PyList_SetItem(slots, slot, output);
    }
    /* Every slot the run reads or writes holds an array now; nothing can change the list while
       the dispatch runs (no other reference to it exists). */
    Py_BEGIN_ALLOW_THREADS
    self->dispatch(self->program, (void *)slots);
    Py_END_ALLOW_THREADS
    if (kept != NULL) {
        Py_DECREF(kept);
        if (release(self) < 0) {
            Py_DECREF(slots);
            return NULL;
        }
    }
    Py_ssize_t results = PyTuple_GET_SIZE(self->outputs);
    PyObject *outputs = PyList_New(results);
    for (Py_ssize_t i = 0; outputs != NULL && i < results; i++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(self->outputs, i));
        if (slot < 0 || slot >= PyList_GET_SIZE(slots)) {
            Py_CLEAR(outputs);
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_SystemError, "DirectCall: an output slot out of range");
            }
            break;
        }
        PyList_SET_ITEM(outputs, i, Py_NewRef(PyList_GET_ITEM(slots, slot)));
    }
    Py_DECREF(slots);
    return outputs;
}

static PyObject *
direct_call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *blank, *parameters, *allocations, *outputs, *keep, *fallback, *profiler, *scratch, *key, *lock;
    unsigned long long program, dispatch;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "DirectCall takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!O!O!KKOOOOOO:DirectCall", &PyList_Type, &blank, &PyTuple_Type, &parameters,
                          &PyTuple_Type, &allocations, &PyTuple_Type, &outputs, &program, &dispatch, &keep,
                          &fallback, &profiler, &scratch, &key, &lock)) {
        return NULL;
    }
    if (scratch != Py_None && !PyDict_CheckExact(scratch)) {
        PyErr_SetString(PyExc_TypeError, "DirectCall: scratch must be a dict or None");
        return NULL;
    }
    if (ndarray_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "DirectCall: configure(numpy.ndarray) first");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(parameters); i++) {
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(parameters, i))) {
            PyErr_SetString(PyExc_TypeError, "DirectCall: parameter slots must be ints");
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outputs); i++) {
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(outputs, i))) {
            PyErr_SetString(PyExc_TypeError, "DirectCall: output slots must be ints");
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(allocations); i++) {
        PyObject *allocation = PyTuple_GET_ITEM(allocations, i);
        if (!PyTuple_CheckExact(allocation) || PyTuple_GET_SIZE(allocation) != 4
            || !PyLong_CheckExact(PyTuple_GET_ITEM(allocation, 0)) || !PyCallable_Check(PyTuple_GET_ITEM(allocation, 1))) {
            PyErr_SetString(PyExc_TypeError, "DirectCall: allocations must be (slot, allocate, shape, dtype) tuples");
            return NULL;
        }
    }
    if (!PyCallable_Check(fallback) || program == 0 || dispatch == 0) {
        PyErr_SetString(PyExc_TypeError, "DirectCall: a program and dispatch address and a callable fallback");
        return NULL;
    }
    DirectCall *self = (DirectCall *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->vectorcall = direct_call_vectorcall;
    self->blank = Py_NewRef(blank);
    self->parameters = Py_NewRef(parameters);
    self->allocations = Py_NewRef(allocations);
    self->outputs = Py_NewRef(outputs);
    self->keep = Py_NewRef(keep);
    self->fallback = Py_NewRef(fallback);
    self->profiler = Py_NewRef(profiler);
    self->scratch = Py_NewRef(scratch);
    self->key = Py_NewRef(key);
    self->lock = Py_NewRef(lock);
    self->program = (void *)(uintptr_t)program;
    self->dispatch = (dispatch_function)(uintptr_t)dispatch;
    return (PyObject *)self;
}

static int
direct_call_traverse(DirectCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->blank);
    Py_VISIT(self->parameters);
    Py_VISIT(self->allocations);
    Py_VISIT(self->outputs);
    Py_VISIT(self->keep);
    Py_VISIT(self->fallback);
    Py_VISIT(self->profiler);
    Py_VISIT(self->scratch);
    Py_VISIT(self->key);
    Py_VISIT(self->lock);
    return 0;
}

static int
direct_call_clear(DirectCall *self)
{
    Py_CLEAR(self->blank);
    Py_CLEAR(self->parameters);
    Py_CLEAR(self->allocations);
    Py_CLEAR(self->outputs);
    Py_CLEAR(self->keep);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->profiler);
    Py_CLEAR(self->scratch);
    Py_CLEAR(self->key);
    Py_CLEAR(self->lock);
    return 0;
}

static void
direct_call_dealloc(DirectCall *self)
{
    PyObject_GC_UnTrack(self);
    direct_call_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef direct_call_members[] = {
    {"keep", T_OBJECT, offsetof(DirectCall, keep), READONLY, "what the program address points into"},
    {"__wrapped__", T_OBJECT, offsetof(DirectCall, fallback), READONLY, "the Python closure it stands for"},
    {NULL},
};

static PyTypeObject DirectCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lazyarr.backends._direct_call.DirectCall",
    .tp_doc = PyDoc_STR("DirectCall(blank, parameters, allocations, outputs, program, dispatch, keep, fallback, "
                        "profiler, scratch, key, lock): CpuExecutable.direct_call's call in C (see the module)."),
    .tp_basicsize = sizeof(DirectCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = direct_call_new,
    .tp_dealloc = (destructor)direct_call_dealloc,
    .tp_traverse = (traverseproc)direct_call_traverse,
    .tp_clear = (inquiry)direct_call_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(DirectCall, vectorcall),
    .tp_members = direct_call_members,
};

static PyObject *
configure(PyObject *module, PyObject *ndarray)
{
    if (!PyType_Check(ndarray)) {
        PyErr_SetString(PyExc_TypeError, "configure(numpy.ndarray)");
        return NULL;
    }
    Py_XSETREF(ndarray_type, (PyTypeObject *)Py_NewRef(ndarray));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_O, PyDoc_STR("configure(numpy.ndarray)")},
    {NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    .m_name = "lazyarr.backends._direct_call",
    .m_doc = PyDoc_STR("A CPU executable's direct call in C (see CpuExecutable.direct_call)."),
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__direct_call(void)
{
    active_name = PyUnicode_InternFromString("_ACTIVE");
    flags_name = PyUnicode_InternFromString("flags");
    c_contiguous_name = PyUnicode_InternFromString("c_contiguous");
    acquire_name = PyUnicode_InternFromString("acquire");
    release_name = PyUnicode_InternFromString("release");
    if (active_name == NULL || flags_name == NULL || c_contiguous_name == NULL || acquire_name == NULL
        || release_name == NULL || PyType_Ready(&DirectCallType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_definition);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "DirectCall", (PyObject *)&DirectCallType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
