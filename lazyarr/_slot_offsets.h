/* Shared by lazyarr's C extensions (_graph_walk.c, frontend/_fast_paths.c): reading the
   `__slots__` fields of lazyarr's Python classes (Instruction, Array, Element) at the offsets
   their member descriptors give, handed over once by each extension's configure(). */
#ifndef LAZYARR_SLOT_OFFSETS_H
#define LAZYARR_SLOT_OFFSETS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "structmember.h"

/* The field at `offset` of `object` (a borrowed reference; NULL when unset). */
#define SLOT(object, offset) (*(PyObject **)((char *)(object) + (offset)))

/* The offset of an object slot (a `__slots__` entry) from its member descriptor. */
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

#endif
