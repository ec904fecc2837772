/* The compile driver's graph walk in C: compile.linearize's loop without a Python frame per node.

Every evaluation walks the pending part of its graph once (compile.py: `linearize`) to find its
leaves and the structural signature that keys the executable cache. In Python that walk costs
~0.4-0.7 us a node, the largest single cost of evaluating a small graph (a solver's convergence
test each iteration, a loop's cut). `walk` is the same loop: the same post order (leftmost
operand first), the same leaves, the same signature bytes. What is not plain graph structure
stays in Python: `decide(node, buffer)` says whether a bound node with operands is a leaf (a
strided view is recomputed instead) and which constants become runtime parameters, and a
`bound` other than the nodes' own `_bound` field is called as given. Two decisions are taken
here without that call, as decide takes them: a constant's that decide remembered on the node
(its `_lifted` field: interned constants recur in every iteration of a loop), and, under the
nodes' own `_bound`, a bound NumPy view's (a C-contiguous one is a leaf; a strided one of
bound operands is recomputed; `_recomputed_view`).

The walk also lists the interior nodes other than the outputs that something outside the
walked graph references (`shared`, with the number of such references: their reference count
beyond what the graph's own users and the walk hold): an array holding the node, or, in a
loop, a pending node the program will evaluate later (`w` before `w = w - lr * g`, when the
program evaluates a loss read from that `w`). They are the only candidates
compile._kept_positions looks at.

`run_cached(output, decide, plans, keep)` is compile.evaluate_keeping_one's cached case in one
call (`float(change)` each iteration of a solver, `np.asarray(x)`): the walk, the kept positions
(_kept_positions: `keep` is the frontend's callback, asked about each candidate), the plan's
lookup in compile's table and its run; where no plan is cached it answers None and the Python
path runs (and makes the plan). `plan_key` gives the key it looks up, for tests.

`configure(...)` hands over the Instruction class, its slot descriptors and the constant and
parameter ops, `configure_evaluation(...)` what run_cached reads; compile.py chooses this walk or
its Python twin (when the extension is not built).
*/
#include "_slot_offsets.h"

static PyTypeObject *instruction_type;
static Py_ssize_t operands_offset, identity_offset, bound_offset, op_offset, shape_offset, dtype_offset;
static Py_ssize_t lifted_offset;
static PyObject *constant_op, *parameter_op;
static PyObject *leaf_codes, *identity_codes, *new_code; /* graph_signature.py's code tables and their filler */
static PyTypeObject *ndarray_type;
static PyObject *configured; /* configure's arguments: keeps what the pointers above borrow alive */


typedef struct {
    PyObject *node; /* a strong reference */
    int expanded;   /* its operands are placed: its signature entry comes next */
} Entry;

typedef struct {
    Entry *entries;
    Py_ssize_t count, capacity;
} Stack;

static int
push(Stack *stack, PyObject *node, int expanded)
{
    if (stack->count == stack->capacity) {
        Py_ssize_t capacity = stack->capacity ? 2 * stack->capacity : 64;
        Entry *entries = PyMem_Realloc(stack->entries, capacity * sizeof(Entry));
        if (entries == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        stack->entries = entries;
        stack->capacity = capacity;
    }
    stack->entries[stack->count].node = Py_NewRef(node);
    stack->entries[stack->count].expanded = expanded;
    stack->count++;
    return 0;
}

static void
clear_stack(Stack *stack)
{
    while (stack->count) {
        Py_DECREF(stack->entries[--stack->count].node);
    }
    PyMem_Free(stack->entries);
}

/* A field of an Instruction (a slot always set on made instructions); NULL with an error if unset. */
static PyObject *
field(PyObject *node, Py_ssize_t offset, const char *name)
{
    PyObject *value = SLOT(node, offset);
    if (value == NULL) {
        PyErr_Format(PyExc_AttributeError, "walk: an instruction without its %s field", name);
    }
    return value;
}

/* Where each placed node is: an open-addressing table from a node's address to its position
   (a dict keyed by the nodes cost ~40 % of the walk: hashing, a PyLong per insert, a reference
   per node), and each position's PyLong, made once and shared by the leaf list and the roots that
   name it. The table borrows the nodes: `nodes` holds them. */
typedef struct {
    PyObject **keys;      /* NULL where empty */
    Py_ssize_t *values;
    Py_ssize_t capacity;  /* a power of two, at least twice the count */
    PyObject **numbers;   /* per position: its PyLong (owned) */
    Py_ssize_t count, numbers_capacity;
} Places;

static size_t
slot_of(const Places *places, PyObject *node)
{
    size_t hash = ((size_t)(uintptr_t)node >> 4) * (size_t)0x9E3779B97F4A7C15ull;
    return (hash ^ (hash >> 29)) & (size_t)(places->capacity - 1);
}

/* The position of `node`, or -1 when it is not placed. */
static Py_ssize_t
find_place(const Places *places, PyObject *node)
{
    if (places->capacity == 0) {
        return -1;
    }
    for (size_t slot = slot_of(places, node);; slot = (slot + 1) & (size_t)(places->capacity - 1)) {
        PyObject *key = places->keys[slot];
        if (key == node) {
            return places->values[slot];
        }
        if (key == NULL) {
            return -1;
        }
    }
}

static int
grow_places(Places *places)
{
    Py_ssize_t capacity = places->capacity ? 2 * places->capacity : 256;
    PyObject **old_keys = places->keys;
    Py_ssize_t *old_values = places->values, old_capacity = places->capacity;
    places->keys = PyMem_Calloc(capacity, sizeof(PyObject *));
    places->values = PyMem_Malloc(capacity * sizeof(Py_ssize_t));
    if (places->keys == NULL || places->values == NULL) {
        PyMem_Free(places->keys);
        PyMem_Free(places->values);
        places->keys = old_keys;
        places->values = old_values;
        PyErr_NoMemory();
        return -1;
    }
    places->capacity = capacity;
    for (Py_ssize_t i = 0; i < old_capacity; i++) {
        if (old_keys[i] != NULL) {
            size_t slot = slot_of(places, old_keys[i]);
            while (places->keys[slot] != NULL) {
                slot = (slot + 1) & (size_t)(capacity - 1);
            }
            places->keys[slot] = old_keys[i];
            places->values[slot] = old_values[i];
        }
    }
    PyMem_Free(old_keys);
    PyMem_Free(old_values);
    return 0;
}

static void
clear_places(Places *places)
{
    for (Py_ssize_t i = 0; i < places->count; i++) {
        Py_DECREF(places->numbers[i]);
    }
    PyMem_Free(places->keys);
    PyMem_Free(places->values);
    PyMem_Free(places->numbers);
}

/* Place `node` next: its position in `places`, appended to `nodes`. */
static int
place(PyObject *node, Places *places, PyObject *nodes)
{
    Py_ssize_t position = PyList_GET_SIZE(nodes);
    if (position != places->count) {
        PyErr_SetString(PyExc_SystemError, "walk: positions out of step with the node list");
        return -1;
    }
    if (2 * (places->count + 1) > places->capacity && grow_places(places) < 0) {
        return -1;
    }
    if (places->count == places->numbers_capacity) {
        Py_ssize_t capacity = places->numbers_capacity ? 2 * places->numbers_capacity : 128;
        PyObject **numbers = PyMem_Realloc(places->numbers, capacity * sizeof(PyObject *));
        if (numbers == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        places->numbers = numbers;
        places->numbers_capacity = capacity;
    }
    PyObject *number = PyLong_FromSsize_t(position);
    if (number == NULL || PyList_Append(nodes, node) < 0) {
        Py_XDECREF(number);
        return -1;
    }
    places->numbers[places->count++] = number;
    size_t slot = slot_of(places, node);
    while (places->keys[slot] != NULL) {
        slot = (slot + 1) & (size_t)(places->capacity - 1);
    }
    places->keys[slot] = node;
    places->values[slot] = position;
    return 0;
}

/* The signature: int64 words, per node in post order, a leaf's 2 * code + 1 (the code of its
   (shape, dtype, buffer type)), an interior node's 2 * code (its `_identity`, an int, or the
   negative code of another identity), its operand count and their positions. Equal words mean
   equal graphs (the codes are unique per key: graph_signature.new_code); as bytes, the executable
   cache hashes it once and compares it with memcmp, where a tuple of tuples was hashed and
   compared entry by entry (~28 us for a 447-node graph). */
typedef struct {
    int64_t *words;
    Py_ssize_t count, capacity;
} Words;

static int
emit(Words *words, int64_t value)
{
    if (words->count == words->capacity) {
        Py_ssize_t capacity = words->capacity ? 2 * words->capacity : 256;
        int64_t *grown = PyMem_Realloc(words->words, capacity * sizeof(int64_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        words->words = grown;
        words->capacity = capacity;
    }
    words->words[words->count++] = value;
    return 0;
}

/* The code `table` (graph_signature.py's) has for `key`, made by graph_signature.new_code on a miss. */
static int
code_of(PyObject *table, PyObject *key, int64_t *code)
{
    PyObject *found = PyDict_GetItemWithError(table, key);
    PyObject *made = NULL;
    if (found == NULL) {
        if (PyErr_Occurred()) {
            return -1;
        }
        made = found = PyObject_CallFunctionObjArgs(new_code, table, key, NULL);
        if (made == NULL) {
            return -1;
        }
    }
    long long value = PyLong_AsLongLong(found);
    Py_XDECREF(made);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    *code = (int64_t)value;
    return 0;
}

/* The last leaf codes found, by the very objects of their key (held: an address is never
   reused while its entry holds it): a leaf's shape tuple is its signature's own (fresh_parameter
   shares it) and dtypes are NumPy's canonical objects, so a loop's leaves hit here, where the
   table's lookup hashes and compares the shape and the dtype (~0.4 us a leaf). */
#define LEAF_CACHE_SIZE 64
static struct {
    PyObject *shape, *dtype, *type; /* strong references, or NULL */
    int64_t code;
} leaf_cache[LEAF_CACHE_SIZE];

static int
emit_leaf(Words *words, PyObject *node, PyObject *buffer)
{
    PyObject *shape = field(node, shape_offset, "shape"), *dtype = field(node, dtype_offset, "dtype");
    if (shape == NULL || dtype == NULL) {
        return -1;
    }
    PyObject *type = (PyObject *)Py_TYPE(buffer);
    size_t hash = ((size_t)(uintptr_t)shape >> 4) ^ ((size_t)(uintptr_t)dtype >> 2) ^ ((size_t)(uintptr_t)type >> 6);
    size_t slot = (hash ^ (hash >> 7)) & (LEAF_CACHE_SIZE - 1);
    if (leaf_cache[slot].shape == shape && leaf_cache[slot].dtype == dtype && leaf_cache[slot].type == type) {
        return emit(words, 2 * leaf_cache[slot].code + 1);
    }
    PyObject *key = PyTuple_Pack(3, shape, dtype, type);
    int64_t code = 0;
    int failed = key == NULL || code_of(leaf_codes, key, &code) < 0;
    Py_XDECREF(key);
    if (failed) {
        return -1;
    }
    PyObject *old[3] = {leaf_cache[slot].shape, leaf_cache[slot].dtype, leaf_cache[slot].type};
    leaf_cache[slot].shape = Py_NewRef(shape);
    leaf_cache[slot].dtype = Py_NewRef(dtype);
    leaf_cache[slot].type = Py_NewRef(type);
    leaf_cache[slot].code = code;
    for (int i = 0; i < 3; i++) {
        Py_XDECREF(old[i]); /* (after the entry is whole: a finalizer run here may walk) */
    }
    return emit(words, 2 * code + 1);
}

static int
emit_interior(Words *words, PyObject *node, const Places *places)
{
    PyObject *operands = field(node, operands_offset, "operands");
    PyObject *identity = field(node, identity_offset, "_identity");
    if (operands == NULL || identity == NULL) {
        return -1;
    }
    int64_t code = 0;
    if (PyLong_CheckExact(identity)) {
        long long value = PyLong_AsLongLong(identity);
        if (value == -1 && PyErr_Occurred()) {
            return -1;
        }
        code = (int64_t)value;
    }
    else if (code_of(identity_codes, identity, &code) < 0) {
        return -1;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(operands);
    if (emit(words, 2 * code) < 0 || emit(words, count) < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t position = find_place(places, PyTuple_GET_ITEM(operands, i));
        if (position < 0) {
            PyErr_SetString(PyExc_RuntimeError, "walk: an operand was not placed before its user");
            return -1;
        }
        if (emit(words, position) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Whether a NumPy array is C-contiguous (its `flags.c_contiguous`: dimensions of one element
   and empty arrays do not count), through the buffer protocol; -1 where it exports none. */
static int
c_contiguous(PyObject *array)
{
    Py_buffer view;
    if (PyObject_GetBuffer(array, &view, PyBUF_STRIDES) < 0) {
        PyErr_Clear(); /* (a dtype NumPy exports no buffer for: decide's answer instead) */
        return -1;
    }
    int contiguous = PyBuffer_IsContiguous(&view, 'C');
    PyBuffer_Release(&view);
    return contiguous;
}

/* compile._recomputed_view under the nodes' own `_bound`: 1 (recompute), 0 (read), -1 (ask decide). */
static int
recomputed_view(PyObject *buffer, PyObject *operands)
{
    if (Py_TYPE(buffer) != ndarray_type) {
        return 0;
    }
    int contiguous = c_contiguous(buffer);
    if (contiguous != 0) {
        return contiguous < 0 ? -1 : 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(operands); i++) {
        PyObject *operand = PyTuple_GET_ITEM(operands, i), *bound;
        if (Py_TYPE(operand) != instruction_type || (bound = SLOT(operand, bound_offset)) == NULL || bound == Py_None) {
            return Py_TYPE(operand) == instruction_type ? 0 : -1;
        }
    }
    return 1;
}

/* The buffer that makes `node` a leaf (a new reference; None: walk its operands), or NULL. */
static PyObject *
leaf_buffer(PyObject *node, PyObject *bound, PyObject *decide, int lift_scalars, PyObject *operands)
{
    PyObject *buffer;
    if (bound == Py_None) {
        buffer = SLOT(node, bound_offset);
        buffer = Py_NewRef(buffer == NULL ? Py_None : buffer);
    }
    else {
        buffer = PyObject_CallOneArg(bound, node);
        if (buffer == NULL) {
            return NULL;
        }
    }
    if (buffer != Py_None) {
        if (PyTuple_GET_SIZE(operands) == 0) {
            return buffer;
        }
        if (bound == Py_None) {
            int recompute = recomputed_view(buffer, operands);
            if (recompute >= 0) {
                if (recompute) {
                    Py_SETREF(buffer, Py_NewRef(Py_None));
                }
                return buffer;
            }
        }
    }
    else if (!lift_scalars || SLOT(node, op_offset) != constant_op) {
        return buffer;
    }
    else {
        PyObject *lifted = SLOT(node, lifted_offset); /* decide's answer, remembered (compile._leaf_decision) */
        if (lifted != NULL) {
            Py_DECREF(buffer);
            return Py_NewRef(lifted == Py_False ? Py_None : lifted);
        }
    }
    PyObject *decided = PyObject_CallFunctionObjArgs(decide, node, buffer, NULL);
    Py_DECREF(buffer);
    return decided;
}

/* (position, references) of the interior nodes other than the outputs referenced from outside
   the walked graph: their references beyond those the graph's users' operand tuples hold and
   the walk's own one (`nodes`). NULL with an error set on failure. */
static PyObject *
shared_positions(PyObject *nodes, PyObject *leaves, PyObject *root_positions, const Places *places)
{
    Py_ssize_t count = PyList_GET_SIZE(nodes);
    Py_ssize_t *users = PyMem_Calloc(count ? count : 1, sizeof(Py_ssize_t));
    char *leaf = PyMem_Calloc(count ? count : 1, 1);
    char *root = PyMem_Calloc(count ? count : 1, 1);
    PyObject *shared = users == NULL || leaf == NULL || root == NULL ? NULL : PyList_New(0);
    if (shared == NULL) {
        int no_memory = users == NULL || leaf == NULL || root == NULL;
        PyMem_Free(users);
        PyMem_Free(leaf);
        PyMem_Free(root);
        return no_memory ? PyErr_NoMemory() : NULL;
    }
    PyObject *marked[2] = {leaves, root_positions};
    char *marks[2] = {leaf, root};
    for (int m = 0; m < 2; m++) {
        PyObject *sequence = marked[m];
        Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
        for (Py_ssize_t i = 0; i < size; i++) {
            Py_ssize_t position = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(sequence, i));
            if (position < 0 || position >= count) {
                goto failed;
            }
            marks[m][position] = 1;
        }
    }
    for (Py_ssize_t position = 0; position < count; position++) {
        if (leaf[position]) {
            continue; /* (a bound view's operands are not in the graph) */
        }
        PyObject *operands = SLOT(PyList_GET_ITEM(nodes, position), operands_offset);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(operands); i++) {
            Py_ssize_t operand = find_place(places, PyTuple_GET_ITEM(operands, i));
            if (operand < 0) {
                goto failed;
            }
            users[operand]++;
        }
    }
    for (Py_ssize_t position = 0; position < count; position++) {
        Py_ssize_t outside = Py_REFCNT(PyList_GET_ITEM(nodes, position)) - users[position] - 1;
        if (!leaf[position] && !root[position] && outside > 0) {
            PyObject *references = PyLong_FromSsize_t(outside);
            PyObject *pair = references == NULL ? NULL : PyTuple_Pack(2, places->numbers[position], references);
            Py_XDECREF(references);
            int appended = pair == NULL ? -1 : PyList_Append(shared, pair);
            Py_XDECREF(pair);
            if (appended < 0) {
                goto failed;
            }
        }
    }
    PyMem_Free(users);
    PyMem_Free(leaf);
    PyMem_Free(root);
    return shared;
failed:
    if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_SystemError, "walk: a position out of range");
    }
    PyMem_Free(users);
    PyMem_Free(leaf);
    PyMem_Free(root);
    Py_DECREF(shared);
    return NULL;
}

static PyObject *
walk(PyObject *module, PyObject *args)
{
    PyObject *outputs, *bound, *decide;
    int lift_scalars;
    if (!PyArg_ParseTuple(args, "OOOp:walk", &outputs, &bound, &decide, &lift_scalars)) {
        return NULL;
    }
    if (configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "walk: configure() was not called");
        return NULL;
    }
    PyObject *roots = PySequence_Fast(outputs, "walk: outputs must be a sequence");
    if (roots == NULL) {
        return NULL;
    }
    PyObject *nodes = PyList_New(0), *leaves = PyList_New(0);
    PyObject *buffers = PyList_New(0), *result = NULL;
    Stack stack = {NULL, 0, 0};
    Places places = {NULL, NULL, 0, NULL, 0, 0};
    Words words = {NULL, 0, 0};
    if (nodes == NULL || leaves == NULL || buffers == NULL) {
        goto done;
    }
    Py_ssize_t root_count = PySequence_Fast_GET_SIZE(roots);
    for (Py_ssize_t r = 0; r < root_count; r++) {
        PyObject *root = PySequence_Fast_GET_ITEM(roots, r);
        if (Py_TYPE(root) != instruction_type) {
            PyErr_Format(PyExc_TypeError, "walk: outputs must be Instructions, not %.100s", Py_TYPE(root)->tp_name);
            goto done;
        }
        if (push(&stack, root, 0) < 0) {
            goto done;
        }
        while (stack.count) {
            Entry top = stack.entries[--stack.count];
            PyObject *node = top.node; /* owned from here */
            if (top.expanded) {
                int failed = emit_interior(&words, node, &places) < 0 || place(node, &places, nodes) < 0;
                Py_DECREF(node);
                if (failed) {
                    goto done;
                }
                continue;
            }
            if (find_place(&places, node) >= 0) {
                Py_DECREF(node);
                continue;
            }
            PyObject *operands = field(node, operands_offset, "operands");
            if (operands == NULL || !PyTuple_Check(operands)) {
                if (operands != NULL) {
                    PyErr_SetString(PyExc_TypeError, "walk: an instruction's operands must be a tuple");
                }
                Py_DECREF(node);
                goto done;
            }
            Py_ssize_t operand_count = PyTuple_GET_SIZE(operands);
            PyObject *buffer = leaf_buffer(node, bound, decide, lift_scalars, operands);
            if (buffer == NULL) {
                Py_DECREF(node);
                goto done;
            }
            if (buffer == Py_None) {
                Py_DECREF(buffer);
                if (operand_count == 0 && SLOT(node, op_offset) == parameter_op) {
                    PyErr_Format(PyExc_ValueError, "no buffer is bound to %R; it cannot be evaluated", node);
                    Py_DECREF(node);
                    goto done;
                }
                int failed = push(&stack, node, 1) < 0;
                Py_DECREF(node); /* (the stack holds it) */
                for (Py_ssize_t i = operand_count - 1; i >= 0 && !failed; i--) {
                    PyObject *operand = PyTuple_GET_ITEM(operands, i);
                    if (Py_TYPE(operand) != instruction_type) {
                        PyErr_Format(PyExc_TypeError, "walk: operands must be Instructions, not %.100s",
                                     Py_TYPE(operand)->tp_name);
                        failed = 1;
                        break;
                    }
                    failed = find_place(&places, operand) < 0 && push(&stack, operand, 0) < 0;
                }
                if (failed) {
                    goto done;
                }
                continue;
            }
            int failed = emit_leaf(&words, node, buffer) < 0 || PyList_Append(buffers, buffer) < 0
                         || place(node, &places, nodes) < 0
                         || PyList_Append(leaves, places.numbers[places.count - 1]) < 0;
            Py_DECREF(buffer);
            Py_DECREF(node);
            if (failed) {
                goto done;
            }
        }
    }
    PyObject *root_positions = PyTuple_New(root_count);
    if (root_positions == NULL) {
        goto done;
    }
    for (Py_ssize_t r = 0; r < root_count; r++) {
        Py_ssize_t position = find_place(&places, PySequence_Fast_GET_ITEM(roots, r));
        if (position < 0) {
            PyErr_SetString(PyExc_RuntimeError, "walk: an output was not placed");
            Py_DECREF(root_positions);
            goto done;
        }
        PyTuple_SET_ITEM(root_positions, r, Py_NewRef(places.numbers[position]));
    }
    PyObject *shared = shared_positions(nodes, leaves, root_positions, &places);
    PyObject *signature_tuple = shared == NULL ? NULL
                                : PyBytes_FromStringAndSize((const char *)words.words, words.count * sizeof(int64_t));
    if (signature_tuple == NULL) {
        Py_XDECREF(shared);
        Py_DECREF(root_positions);
        goto done;
    }
    result = PyTuple_Pack(6, nodes, leaves, buffers, signature_tuple, root_positions, shared);
    Py_DECREF(signature_tuple);
    Py_DECREF(root_positions);
    Py_DECREF(shared);
done:
    clear_stack(&stack);
    clear_places(&places);
    PyMem_Free(words.words);
    Py_DECREF(roots);
    Py_XDECREF(nodes);
    Py_XDECREF(leaves);
    Py_XDECREF(buffers);
    return result;
}


/* -- run_cached: a cached evaluation of one output without a Python frame per step ------------ */

static Py_ssize_t constant_only_offset;
static PyObject *view_ops, *broadcast_op; /* compile._VIEW_OPS (a frozenset) and the broadcast op */
static Py_ssize_t most_kept;
static PyObject *evaluation_configured; /* configure_evaluation's arguments */

/* A node's boolean slot (`constant_only`): 1, 0, or -1 with an error. */
static int
truth_of(PyObject *node, Py_ssize_t offset, const char *name)
{
    PyObject *value = field(node, offset, name);
    return value == NULL ? -1 : PyObject_IsTrue(value);
}

static int
is_bound(PyObject *node)
{
    PyObject *buffer = SLOT(node, bound_offset);
    return buffer != NULL && buffer != Py_None;
}

/* Instruction.size (the product of the shape), saturated at PY_SSIZE_T_MAX: -1 with an error. */
static Py_ssize_t
node_size(PyObject *node)
{
    PyObject *shape = field(node, shape_offset, "shape");
    if (shape == NULL || !PyTuple_Check(shape)) {
        if (shape != NULL) {
            PyErr_SetString(PyExc_TypeError, "run_cached: an instruction's shape must be a tuple");
        }
        return -1;
    }
    Py_ssize_t size = 1;
    int saturated = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++) {
        int overflow = 0;
        long long extent = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(shape, i), &overflow);
        if (extent == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (extent == 0 && !overflow) {
            return 0;
        }
        if (overflow || extent < 0 || __builtin_mul_overflow(size, (Py_ssize_t)extent, &size)) {
            saturated = 1;
        }
    }
    return saturated ? PY_SSIZE_T_MAX : size;
}

/* compile._views_a_value: whether a view node reads, through view ops only, a value that needs
   no computing (a bound buffer, a leaf, constants). 1, 0, or -1 with an error. */
static int
views_a_value(PyObject *node)
{
    for (;;) {
        if (SLOT(node, op_offset) == broadcast_op || is_bound(node)) {
            return 1;
        }
        int constant = truth_of(node, constant_only_offset, "constant_only");
        if (constant != 0) {
            return constant;
        }
        PyObject *operands = field(node, operands_offset, "operands");
        if (operands == NULL || !PyTuple_Check(operands) || PyTuple_GET_SIZE(operands) == 0) {
            return operands == NULL ? -1 : 1;
        }
        node = PyTuple_GET_ITEM(operands, 0);
        int view = PySet_Contains(view_ops, SLOT(node, op_offset));
        if (view < 0) {
            return -1;
        }
        if (!view) {
            PyObject *inner = field(node, operands_offset, "operands");
            if (inner == NULL) {
                return -1;
            }
            if (is_bound(node) || !PyTuple_Check(inner) || PyTuple_GET_SIZE(inner) == 0) {
                return 1;
            }
            return truth_of(node, constant_only_offset, "constant_only");
        }
    }
}

/* compile._touches_as_large: whether a leaf or a root of the walked graph holds `size` elements
   or more. 1, 0, or -1 with an error. */
static int
touches_as_large(PyObject *nodes, PyObject *leaves, PyObject *roots, Py_ssize_t size)
{
    PyObject *lists[2] = {leaves, roots};
    for (int l = 0; l < 2; l++) {
        PyObject *positions = lists[l];
        Py_ssize_t count = PySequence_Fast_GET_SIZE(positions);
        for (Py_ssize_t i = 0; i < count; i++) {
            Py_ssize_t position = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(positions, i));
            if (position == -1 && PyErr_Occurred()) {
                return -1;
            }
            Py_ssize_t touched = node_size(PyList_GET_ITEM(nodes, position));
            if (touched < 0) {
                return -1;
            }
            if (touched >= size) {
                return 1;
            }
        }
    }
    return 0;
}

/* compile._kept_positions over the walk's `shared` list: a new list of positions, or NULL. */
static PyObject *
kept_positions(PyObject *nodes, PyObject *leaves, PyObject *roots, PyObject *shared, PyObject *keep)
{
    PyObject *kept = PyList_New(0);
    if (kept == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(shared); i++) {
        PyObject *pair = PyList_GET_ITEM(shared, i);
        PyObject *position = PyTuple_GET_ITEM(pair, 0), *references = PyTuple_GET_ITEM(pair, 1);
        PyObject *node = PyList_GET_ITEM(nodes, PyLong_AsSsize_t(position)); /* (the walk's own positions) */
        if (is_bound(node)) {
            continue;
        }
        int skip = truth_of(node, constant_only_offset, "constant_only");
        if (skip == 0) {
            skip = PySet_Contains(view_ops, SLOT(node, op_offset));
            if (skip == 1) {
                skip = views_a_value(node);
            }
        }
        if (skip == 0) {
            Py_INCREF(node); /* (keep may run any Python code) */
            PyObject *answer = PyObject_CallFunctionObjArgs(keep, node, references, NULL);
            Py_DECREF(node);
            skip = answer == NULL ? -1 : !PyObject_IsTrue(answer);
            Py_XDECREF(answer);
        }
        if (skip == 0) {
            Py_ssize_t size = node_size(node);
            skip = size < 0 ? -1 : !touches_as_large(nodes, leaves, roots, size);
            if (skip == 0 && (PyList_Append(kept, position) < 0)) {
                skip = -1;
            }
        }
        if (skip < 0) {
            Py_DECREF(kept);
            return NULL;
        }
        if (PyList_GET_SIZE(kept) == most_kept) {
            break;
        }
    }
    return kept;
}

/* The walk of `output` (*walked: walk's tuple) and the positions of the values it keeps (*kept,
   a list): the key of its plan, (signature, roots and kept positions), as compile's Python path
   makes it (linearize, _kept_positions, _run_graph). NULL with an error on failure. */
static PyObject *
walk_and_key(PyObject *module, PyObject *output, PyObject *decide, PyObject *keep, PyObject **walked,
             PyObject **kept)
{
    *walked = *kept = NULL;
    if (evaluation_configured == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "run_cached: configure_evaluation() was not called");
        return NULL;
    }
    PyObject *outputs = PyTuple_Pack(1, output);
    PyObject *walk_args = outputs == NULL ? NULL : PyTuple_Pack(4, outputs, Py_None, decide, Py_True);
    Py_XDECREF(outputs);
    *walked = walk_args == NULL ? NULL : walk(module, walk_args);
    Py_XDECREF(walk_args);
    if (*walked == NULL) {
        return NULL;
    }
    PyObject *nodes = PyTuple_GET_ITEM(*walked, 0), *leaves = PyTuple_GET_ITEM(*walked, 1);
    PyObject *signature = PyTuple_GET_ITEM(*walked, 3), *roots = PyTuple_GET_ITEM(*walked, 4);
    PyObject *shared = PyTuple_GET_ITEM(*walked, 5);
    *kept = PyList_GET_SIZE(shared) ? kept_positions(nodes, leaves, roots, shared, keep) : PyList_New(0);
    PyObject *kept_tuple = *kept == NULL ? NULL : PyList_AsTuple(*kept);
    PyObject *all_roots = kept_tuple == NULL ? NULL : PySequence_Concat(roots, kept_tuple);
    Py_XDECREF(kept_tuple);
    PyObject *key = all_roots == NULL ? NULL : PyTuple_Pack(2, signature, all_roots);
    Py_XDECREF(all_roots);
    return key;
}

/* compile.evaluate_keeping_one's cached case in one call: walk, kept positions, the plan's
   lookup and its run. (result, [(kept node, its buffer), ...]), or None where no plan is cached
   for the graph (compile.py then takes its Python path, which makes one). */
static PyObject *
run_cached(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "run_cached(output, decide, plans: dict, keep)");
        return NULL;
    }
    PyObject *walked, *kept;
    PyObject *key = walk_and_key(module, args[0], args[1], args[3], &walked, &kept);
    PyObject *result = NULL, *plan = NULL, *results = NULL, *sequence = NULL, *held = NULL;
    if (key == NULL) {
        goto done;
    }
    plan = PyDict_GetItemWithError(args[2], key);
    if (plan == NULL) {
        result = PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
        goto done;
    }
    if (!PyTuple_Check(plan) || PyTuple_GET_SIZE(plan) < 3) {
        PyErr_SetString(PyExc_SystemError, "run_cached: a plan must be (executable, backend, run)");
        plan = NULL;
        goto done;
    }
    Py_INCREF(plan); /* (the run may drop it from the dict) */
    results = PyObject_CallOneArg(PyTuple_GET_ITEM(plan, 2), PyTuple_GET_ITEM(walked, 2));
    sequence = results == NULL ? NULL : PySequence_Fast(results, "run_cached: a run must return a sequence");
    if (sequence == NULL) {
        goto done;
    }
    Py_ssize_t count = PyList_GET_SIZE(kept);
    if (PySequence_Fast_GET_SIZE(sequence) != count + 1) {
        PyErr_SetString(PyExc_SystemError, "run_cached: a run returned another number of results");
        goto done;
    }
    PyObject *nodes = PyTuple_GET_ITEM(walked, 0);
    held = count ? PyList_New(count) : PyTuple_New(0);
    for (Py_ssize_t i = 0; held != NULL && i < count; i++) {
        PyObject *node = PyList_GET_ITEM(nodes, PyLong_AsSsize_t(PyList_GET_ITEM(kept, i)));
        PyObject *pair = PyTuple_Pack(2, node, PySequence_Fast_GET_ITEM(sequence, i + 1));
        if (pair == NULL) {
            Py_CLEAR(held);
            break;
        }
        PyList_SET_ITEM(held, i, pair);
    }
    if (held != NULL) {
        result = PyTuple_Pack(2, PySequence_Fast_GET_ITEM(sequence, 0), held);
    }
done:
    Py_XDECREF(held);
    Py_XDECREF(sequence);
    Py_XDECREF(results);
    Py_XDECREF(plan);
    Py_XDECREF(key);
    Py_XDECREF(kept);
    Py_XDECREF(walked);
    return result;
}

/* The key run_cached looks its plan up by (tests compare it with the Python path's). */
static PyObject *
plan_key(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "plan_key(output, decide, keep)");
        return NULL;
    }
    PyObject *walked, *kept;
    PyObject *key = walk_and_key(module, args[0], args[1], args[2], &walked, &kept);
    Py_XDECREF(walked);
    Py_XDECREF(kept);
    return key;
}

static PyObject *
configure_evaluation(PyObject *module, PyObject *args)
{
    PyObject *constant_only, *views, *broadcast;
    Py_ssize_t most;
    if (!PyArg_ParseTuple(args, "OO!On:configure_evaluation", &constant_only, &PyFrozenSet_Type, &views,
                          &broadcast, &most)) {
        return NULL;
    }
    Py_ssize_t offset;
    if (slot_offset(constant_only, "the constant_only slot", &offset) < 0) {
        return NULL;
    }
    Py_XSETREF(evaluation_configured, Py_NewRef(args));
    constant_only_offset = offset;
    view_ops = views;
    broadcast_op = broadcast;
    most_kept = most;
    Py_RETURN_NONE;
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *instruction, *operands, *identity, *bound, *op, *shape, *dtype, *lifted, *constant, *parameter;
    PyObject *ndarray, *leaf_table, *identity_table, *code_maker;
    if (!PyArg_ParseTuple(args, "O!OOOOOOOOOO!O!O!O:configure", &PyType_Type, &instruction, &operands, &identity,
                          &bound, &op, &shape, &dtype, &lifted, &constant, &parameter, &PyType_Type, &ndarray,
                          &PyDict_Type, &leaf_table, &PyDict_Type, &identity_table, &code_maker)) {
        return NULL;
    }
    Py_ssize_t offsets[7];
    if (slot_offset(operands, "the operands slot", &offsets[0]) < 0
        || slot_offset(identity, "the _identity slot", &offsets[1]) < 0
        || slot_offset(bound, "the _bound slot", &offsets[2]) < 0
        || slot_offset(op, "the op slot", &offsets[3]) < 0
        || slot_offset(shape, "the shape slot", &offsets[4]) < 0
        || slot_offset(dtype, "the dtype slot", &offsets[5]) < 0
        || slot_offset(lifted, "the _lifted slot", &offsets[6]) < 0) {
        return NULL;
    }
    Py_XSETREF(configured, Py_NewRef(args));
    instruction_type = (PyTypeObject *)instruction;
    operands_offset = offsets[0];
    identity_offset = offsets[1];
    bound_offset = offsets[2];
    op_offset = offsets[3];
    shape_offset = offsets[4];
    dtype_offset = offsets[5];
    lifted_offset = offsets[6];
    constant_op = constant;
    parameter_op = parameter;
    ndarray_type = (PyTypeObject *)ndarray;
    leaf_codes = leaf_table;
    identity_codes = identity_table;
    new_code = code_maker;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     PyDoc_STR("configure(instruction_class, operands_slot, identity_slot, bound_slot, op_slot, shape_slot, "
               "dtype_slot, lifted_slot, constant_op, parameter_op, ndarray, leaf_codes, identity_codes, new_code)")},
    {"walk", walk, METH_VARARGS,
     PyDoc_STR("walk(outputs, bound, decide, lift_scalars) -> (nodes, leaf_positions, buffers, signature, roots, "
               "shared): "
               "compile.linearize's walk (bound None: the nodes' own _bound field)")},
    {"configure_evaluation", configure_evaluation, METH_VARARGS,
     PyDoc_STR("configure_evaluation(constant_only_slot, view_ops, broadcast_op, most_kept)")},
    {"run_cached", (PyCFunction)(void (*)(void))run_cached, METH_FASTCALL,
     PyDoc_STR("run_cached(output, decide, plans, keep) -> (result, held) or None: "
               "compile.evaluate_keeping_one where a plan is cached")},
    {"plan_key", (PyCFunction)(void (*)(void))plan_key, METH_FASTCALL,
     PyDoc_STR("plan_key(output, decide, keep) -> (signature, roots and kept positions): run_cached's key")},
    {NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT,
    .m_name = "lazyarr._graph_walk",
    .m_doc = PyDoc_STR("The compile driver's graph walk in C (see compile.linearize)."),
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__graph_walk(void)
{
    return PyModule_Create(&module_definition);
}
