"""HLO text: print a Module or Computation in an XLA-like form and parse it back exactly.

Dumps, error messages and pass tests (text -> pass -> text) use it, so the round trip is
exact: `print_module(parse(print_module(m))) == print_module(m)`, and because instructions
are interned, parsing the text of a live graph returns the very same instructions.

    HloModule main

    ENTRY main {
      p0 = f32[3,4] parameter(0)
      constant.1 = f32[] constant(2.5)
      broadcast.2 = f32[3,4] broadcast(constant.1), dimensions={}, shape={3,4}
      multiply.3 = f32[3,4] multiply(p0, broadcast.2)
      reduce.4 = f32[4] reduce(multiply.3), dimensions={0}, kind=sum
      ROOT outputs = (f32[3,4], f32[4]) tuple(multiply.3, reduce.4)
    }

A computation with one output marks it `ROOT`; several outputs end with the `tuple`
pseudo-instruction (there is no tuple op). Instructions are named `p<number>` for
parameters and `<opcode>.<position in post order>` otherwise. Attribute values are ints,
floats, `true`/`false`, dtypes (`f32`), bare words or JSON-quoted strings, and `{...}`
tuples. Constant literals are nested braces of shortest round-trip numbers (`nan`, `inf`,
`-inf`, complex as `(re,im)`, a NaN other than the default as `nan(0x7fc00001)`), so every
bit survives. Every walk is iterative: a 10^5-op chain prints and parses in about a second.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np

from .. import dtypes
from .instruction import Instruction, Literal, make
from .module import Computation, Module
from .op import HloError, get

SUMMARY_LIMIT = 1000  # constants with more elements print as {...} when summarizing

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\w.+\-]+|\S')
_BARE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*", re.ASCII)
_NAME = re.compile(r"[\w.\-]+")
_SIMPLE_LINE = re.compile(  # `[ROOT] name = f32[3,4] opcode(a, b)`, no attributes: the fast path
    r"\s*(ROOT\s+)?([\w.\-]+)\s*=\s*(\w+)\[([0-9,]*)\]\s*([\w.\-]+)\(([\w.\-,\s]*)\)\s*"
)
_INTEGER = re.compile(r"[-+]?[0-9]+", re.ASCII)
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|nan|-?inf", re.ASCII)
_DTYPE_NAMES = {dtypes.short_name(dtype): dtype for dtype in dtypes.ALL}
_RESERVED_WORDS = {"true", "false", "nan", "inf"} | set(_DTYPE_NAMES)
_UNSIGNED_OF_SIZE = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_POSITIONAL_ATTRS = {"parameter": ("number", "shape", "dtype"), "constant": ("literal",)}


# ----------------------------------------------------------------------------- printing


def print_module(module: Module, *, summarize: bool = False) -> str:
    """The text of `module`: its other computations first (in `module.computations` order, so
    a fused computation precedes the `fusion` instructions calling it), then the entry.

    `summarize=True` prints constants of more than 1000 elements as `{...}` (readable
    dumps; such text does not parse back).
    """
    parts = [f"HloModule {_format_name(module.name)}"]
    for computation in module.computations.values():
        parts.append(print_computation(computation, summarize=summarize))
    parts.append(print_computation(module.entry, summarize=summarize, entry=True))
    return "\n\n".join(parts) + "\n"


def print_computation(computation: Computation, *, summarize: bool = False, entry: bool = False) -> str:
    """The text of one computation block, `[ENTRY] name { ... }`, in post order.

    >>> x = make("parameter", number=0, shape=(2,), dtype=np.dtype("float32"))
    >>> print(print_computation(Computation("f", (x,), (make("exp", [x]),))))
    f {
      p0 = f32[2] parameter(0)
      ROOT exp.1 = f32[2] exp(p0)
    }
    """
    order = computation.post_order()
    names = instruction_names(order)
    outputs = computation.outputs
    root = outputs[0] if len(outputs) == 1 else None
    lines = [f"{'ENTRY ' if entry else ''}{_format_name(computation.name)} {{"]
    for instruction in order:
        prefix = "ROOT " if instruction is root else ""
        line = format_instruction(instruction, names, summarize=summarize)
        lines.append(f"  {prefix}{names[id(instruction)]} = {line}")
    if root is None:
        types = ", ".join(format_type(output.shape, output.dtype) for output in outputs)
        operands = ", ".join(names[id(output)] for output in outputs)
        lines.append(f"  ROOT outputs = ({types}) tuple({operands})")
    lines.append("}")
    return "\n".join(lines)


def instruction_names(order) -> dict[int, str]:
    """Map id(instruction) -> its text name: `p<number>` or `<opcode>.<position>`."""
    names = {}
    for position, instruction in enumerate(order):
        if instruction.opcode == "parameter":
            names[id(instruction)] = f"p{instruction.attr('number')}"
        else:
            names[id(instruction)] = f"{instruction.opcode}.{position}"
    return names


def format_instruction(instruction: Instruction, names: dict[int, str], *, summarize: bool = False) -> str:
    """`type opcode(operands), attr=value, ...`: one line without its name."""
    opcode = instruction.opcode
    if opcode == "parameter":
        inside = str(instruction.attr("number"))
    elif opcode == "constant":
        inside = format_literal(instruction.attr("literal"), summarize=summarize)
    else:
        inside = ", ".join(names[id(operand)] for operand in instruction.operands)
    text = f"{format_type(instruction.shape, instruction.dtype)} {opcode}({inside})"
    skipped = _POSITIONAL_ATTRS.get(opcode, ())
    for name, value in instruction.attrs:
        if name not in skipped:
            text += f", {name}={format_attribute_value(value, where=f'{opcode} attribute {name}')}"
    return text


def format_type(shape, dtype) -> str:
    """`f32[3,4]`; a scalar is `f32[]`."""
    return f"{dtypes.short_name(np.dtype(dtype))}[{','.join(str(extent) for extent in shape)}]"


def format_attribute_value(value, where: str = "attribute") -> str:
    """Print an attribute value; tuples nest as `{...}` (walked with an explicit stack)."""
    pieces: list[str] = []
    stack = [(value, False)]
    while stack:
        item, closing = stack.pop()
        if closing:
            pieces.append(item)
        elif isinstance(item, tuple):
            stack.append(("}", True))
            for index in range(len(item) - 1, -1, -1):
                stack.append((item[index], False))
                if index:
                    stack.append((",", True))
            pieces.append("{")
        else:
            pieces.append(_format_scalar_attribute(item, where))
    return "".join(pieces)


def _format_scalar_attribute(value, where: str) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, str):
        return _format_name(value)
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return dtypes.short_name(np.dtype(value))
    if isinstance(value, Computation):  # a called computation (fusion) prints as its name
        return _format_name(value.name)
    raise HloError(f"{where}: cannot print value {value!r} of type {type(value).__name__}")


def _format_name(text: str) -> str:
    """A bare word when it cannot be mistaken for another token, else a JSON string."""
    if _BARE_WORD.fullmatch(text) and text not in _RESERVED_WORDS:
        return text
    return json.dumps(text)


def format_literal(literal: Literal, *, summarize: bool = False) -> str:
    """Nested braces of shortest round-trip elements; a 0-d literal is its element alone."""
    array = literal.array
    if summarize and array.size > SUMMARY_LIMIT:
        return "{...}"
    items = _element_strings(array.reshape(-1))
    shape = array.shape
    for axis in range(len(shape) - 1, -1, -1):
        size = shape[axis]
        groups = range(math.prod(shape[:axis]))
        items = ["{" + ",".join(items[group * size:(group + 1) * size]) + "}" for group in groups]
    return items[0]


def _element_strings(flat: np.ndarray) -> list[str]:
    dtype = flat.dtype
    if dtype == dtypes.bool_:
        return ["true" if item else "false" for item in flat.tolist()]
    if dtypes.is_integer(dtype):
        return [str(item) for item in flat.tolist()]
    if dtypes.is_complex(dtype):
        reals, imaginaries = _float_strings(flat.real.copy()), _float_strings(flat.imag.copy())
        return [f"({real},{imaginary})" for real, imaginary in zip(reals, imaginaries)]
    return _float_strings(flat)


def _float_strings(flat: np.ndarray) -> list[str]:
    """Shortest strings that round-trip in the array's own float type (NumPy's Dragon4)."""
    if flat.dtype == dtypes.float64:
        strings = [repr(item) for item in flat.tolist()]
    else:
        strings = [str(item) for item in flat]
    unsigned = _UNSIGNED_OF_SIZE[flat.dtype.itemsize]
    bits = flat.view(unsigned)
    default_nan = np.array(np.nan, flat.dtype).view(unsigned)
    for index in np.flatnonzero(np.isnan(flat) & (bits != default_nan)).tolist():
        strings[index] = f"nan(0x{int(bits[index]):x})"
    return strings


# ------------------------------------------------------------------------------ parsing


def parse(text: str) -> Module:
    """Parse `HloModule name` followed by computation blocks, exactly one marked ENTRY.

    >>> module = parse('HloModule m\\nENTRY main {\\n  p0 = f32[2] parameter(0)\\n'
    ...                '  ROOT n = f32[2] negate(p0)\\n}')
    >>> module.entry.outputs[0].opcode
    'negate'
    """
    lines = _numbered_lines(text)
    if not lines:
        raise HloError("line 1: expected 'HloModule <name>', the text is empty")
    header = _Cursor(*lines[0])
    header.expect("HloModule")
    module_name = header.name()
    header.end()
    entry, computations = None, {}
    position = 1
    while position < len(lines):
        number = lines[position][0]
        computation, is_entry, position = _parse_block(lines, position, computations)
        if computation.name in computations or (entry is not None and entry.name == computation.name):
            raise HloError(f"line {number}: computation {computation.name!r} is defined twice")
        if is_entry and entry is not None:
            raise HloError(f"line {number}: a second ENTRY computation")
        if is_entry:
            entry = computation
        else:
            computations[computation.name] = computation
    if entry is None:
        raise HloError("HLO text has no ENTRY computation")
    return Module(module_name, entry, computations)


def parse_computation(text: str) -> Computation:
    """Parse one computation block (`[ENTRY] name { ... }`) without a module header."""
    lines = _numbered_lines(text)
    if not lines:
        raise HloError("line 1: expected a computation")
    computation, _, position = _parse_block(lines, 0)
    if position < len(lines):
        raise _Cursor(*lines[position]).error("unexpected text after the computation")
    return computation


def _numbered_lines(text: str) -> list[tuple[int, str]]:
    """Non-blank, non-comment (`//`) lines with their 1-based numbers."""
    return [
        (number, line) for number, line in enumerate(text.split("\n"), start=1)
        if line.strip() and not line.lstrip().startswith("//")
    ]


class _Cursor:
    """The tokens of one line, read left to right; errors carry the line number and text."""

    __slots__ = ("tokens", "position", "number", "line")

    def __init__(self, number: int, line: str):
        self.tokens, self.position, self.number, self.line = _TOKEN.findall(line), 0, number, line

    def error(self, message: str) -> HloError:
        return HloError(f"line {self.number}: {message}: {self.line.strip()}")

    def peek(self):
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> str:
        if self.position >= len(self.tokens):
            raise self.error("unexpected end of line")
        self.position += 1
        return self.tokens[self.position - 1]

    def expect(self, token: str) -> None:
        found = self.take()
        if found != token:
            raise self.error(f"expected {token!r}, found {found!r}")

    def end(self) -> None:
        if self.position < len(self.tokens):
            raise self.error(f"unexpected {self.tokens[self.position]!r}")

    def name(self) -> str:
        token = self.take()
        if token.startswith('"'):
            return self.string(token)
        if not _NAME.fullmatch(token):
            raise self.error(f"expected a name, found {token!r}")
        return token

    def string(self, token: str) -> str:
        try:
            return json.loads(token)
        except ValueError:
            raise self.error(f"bad string {token}") from None

    def integer(self) -> int:
        token = self.take()
        if not _INTEGER.fullmatch(token):
            raise self.error(f"expected an integer, found {token!r}")
        return int(token)

    def array_type(self) -> tuple[tuple[int, ...], np.dtype]:
        token = self.take()
        if token not in _DTYPE_NAMES:
            raise self.error(f"unknown element type {token!r}; known: {', '.join(_DTYPE_NAMES)}")
        self.expect("[")
        shape = self.items("]", self.integer)
        return tuple(shape), _DTYPE_NAMES[token]

    def items(self, closing: str, read) -> list:
        """`read()` repeatedly, comma-separated, through the `closing` token."""
        result = []
        while self.peek() != closing:
            if result:
                self.expect(",")
            result.append(read())
        self.take()
        return result


def _parse_block(lines, position, computations=None):
    """Parse `[ENTRY] name {`, instruction lines and `}`; return (computation, is_entry, next).

    `computations` holds the computations parsed before this block, by name: an attribute
    `computation=<name>` (fusion) refers to one of them."""
    header = _Cursor(*lines[position])
    is_entry = header.peek() == "ENTRY"
    if is_entry:
        header.take()
    name = header.name()
    header.expect("{")
    header.end()
    defined: dict[str, Instruction] = {}
    parameters: dict[int, Instruction] = {}
    outputs = None
    while True:
        position += 1
        if position >= len(lines):
            raise header.error(f"computation {name!r} is not closed with '}}'")
        if lines[position][1].strip() == "}":
            break
        line = lines[position]
        simple = _SIMPLE_LINE.fullmatch(line[1])
        parsed = _parse_simple(simple, defined) if simple else None
        parsed = parsed or _parse_instruction(_Cursor(*line), defined, parameters, computations or {})
        is_root, instruction_name, instruction = parsed
        if instruction_name in defined:
            raise _Cursor(*line).error(f"name {instruction_name!r} is defined twice")
        if is_root and outputs is not None:
            raise _Cursor(*line).error("a second ROOT")
        if isinstance(instruction, tuple) and not is_root:
            raise _Cursor(*line).error("the tuple of outputs must be the ROOT")
        if is_root:
            outputs = instruction if isinstance(instruction, tuple) else (instruction,)
        if not isinstance(instruction, tuple):
            defined[instruction_name] = instruction
    closing = _Cursor(*lines[position])
    if outputs is None:
        raise closing.error(f"computation {name!r} has no ROOT")
    if sorted(parameters) != list(range(len(parameters))):
        raise closing.error(
            f"computation {name!r} has parameters {sorted(parameters)}, expected 0..{len(parameters) - 1}"
        )
    ordered = tuple(parameters[number] for number in range(len(parameters)))
    return Computation(name, ordered, outputs), is_entry, position + 1


def _parse_simple(match, defined):
    """The fast path for the commonest line, `name = f32[3] op(a, b)` with no attributes;
    None sends the line to the full parser (which also words any error)."""
    root, name, type_name, extents, opcode, operand_text = match.groups()
    if type_name not in _DTYPE_NAMES or opcode in _POSITIONAL_ATTRS:
        return None
    try:
        names = operand_text.split(",") if operand_text.strip() else []
        operands = [defined[operand.strip()] for operand in names]
        shape = tuple(int(extent) for extent in extents.split(",")) if extents else ()
        instruction = make(opcode, operands)
    except Exception:  # unknown names or ops, broken rules: the full parser reports them
        return None
    if instruction.shape != shape or instruction.dtype != _DTYPE_NAMES[type_name]:
        return None
    return root is not None, name, instruction


def _parse_instruction(cursor: _Cursor, defined, parameters, computations):
    """One line: `[ROOT] name = type opcode(...), attr=value, ...`; returns the instruction,
    or for the `tuple` outputs line the tuple of its operands."""
    is_root = cursor.peek() == "ROOT"
    if is_root:
        cursor.take()
    name = cursor.name()
    cursor.expect("=")
    if cursor.peek() == "(":
        return is_root, name, _parse_outputs_line(cursor, defined)
    shape, dtype = cursor.array_type()
    opcode = cursor.name()
    try:
        opdef = get(opcode)
    except HloError as error:
        raise cursor.error(str(error)) from None
    cursor.expect("(")
    attrs = {}
    operands = []
    if opcode == "parameter":
        number = cursor.integer()
        if number < 0 or number in parameters:
            raise cursor.error(f"parameter number {number} is negative or repeated")
        attrs.update(number=number, shape=shape, dtype=dtype)
        cursor.expect(")")
    elif opcode == "constant":
        attrs["literal"] = _parse_literal(cursor, shape, dtype)
        cursor.expect(")")
    else:
        operands = cursor.items(")", lambda: _operand(cursor, defined))
    while cursor.peek() is not None:
        cursor.expect(",")
        attribute = cursor.name()
        cursor.expect("=")
        if attribute in attrs:
            raise cursor.error(f"attribute {attribute!r} given twice")
        attrs[attribute] = _parse_value(cursor)
        if attribute == "computation" and isinstance(attrs[attribute], str):
            if attrs[attribute] not in computations:
                raise cursor.error(f"computation {attrs[attribute]!r} is not defined before this line")
            attrs[attribute] = computations[attrs[attribute]]
    try:
        instruction = make(opdef, operands, **attrs)
    except Exception as error:  # rule errors (HloError) and bad attribute types alike
        raise cursor.error(str(error)) from error
    if instruction.shape != shape or instruction.dtype != dtype:
        raise cursor.error(
            f"declared type {format_type(shape, dtype)} but {opcode} gives "
            f"{format_type(instruction.shape, instruction.dtype)}"
        )
    if opcode == "parameter":
        parameters[instruction.attr("number")] = instruction
    return is_root, name, instruction


def _parse_outputs_line(cursor: _Cursor, defined) -> tuple[Instruction, ...]:
    """`(type, ...) tuple(a, b)`: the outputs of a computation with several of them."""
    cursor.take()
    types = cursor.items(")", cursor.array_type)
    cursor.expect("tuple")
    cursor.expect("(")
    outputs = tuple(cursor.items(")", lambda: _operand(cursor, defined)))
    cursor.end()
    if [(output.shape, output.dtype) for output in outputs] != types:
        raise cursor.error(f"declared types do not match the {len(outputs)} outputs")
    return outputs


def _operand(cursor: _Cursor, defined) -> Instruction:
    """The instruction a name refers to; it must be defined on an earlier line."""
    name = cursor.name()
    try:
        return defined[name]
    except KeyError:
        raise cursor.error(f"operand {name!r} is not defined on an earlier line") from None


def _parse_value(cursor: _Cursor):
    """An attribute value: a word, a string, or a `{...}` tuple (nested with a stack)."""
    stack: list[list] = []
    while True:
        token = cursor.take()
        if token == "{":
            if cursor.peek() != "}":
                stack.append([])
                continue
            cursor.take()
            value = ()
        else:
            value = _word_value(cursor, token)
        while True:
            if not stack:
                return value
            stack[-1].append(value)
            token = cursor.take()
            if token == ",":
                break
            if token != "}":
                raise cursor.error(f"expected ',' or '}}' in a tuple, found {token!r}")
            value = tuple(stack.pop())


def _word_value(cursor: _Cursor, token: str):
    if token.startswith('"'):
        return cursor.string(token)
    if token in ("true", "false"):
        return token == "true"
    if token in _DTYPE_NAMES:
        return _DTYPE_NAMES[token]
    if _INTEGER.fullmatch(token):
        return int(token)
    if _FLOAT.fullmatch(token):
        return float(token)
    if _BARE_WORD.fullmatch(token):
        return token
    raise cursor.error(f"unexpected {token!r} in an attribute value")


def _parse_literal(cursor: _Cursor, shape, dtype) -> Literal:
    """Nested braces whose group sizes must match `shape`, then convert to `dtype` exactly."""
    if cursor.peek() == "{" and cursor.tokens[cursor.position + 1:cursor.position + 3] == ["...", "}"]:
        raise cursor.error("a summarized constant ({...}) cannot be parsed")
    elements: list = []
    if not shape:
        elements.append(_parse_element(cursor))
    else:
        cursor.expect("{")
        counts = [0]
        expecting = True  # after '{' or ','
        while counts:
            token = cursor.peek()
            if token == "}" and (counts[-1] == 0 or not expecting):
                cursor.take()
                count = counts.pop()
                axis = len(counts)
                if count != shape[axis]:
                    raise cursor.error(f"literal has {count} entries on dimension {axis}, not {shape[axis]}")
                if counts:
                    counts[-1] += 1
                expecting = False
            elif not expecting:
                cursor.expect(",")
                expecting = True
            elif len(counts) < len(shape):
                cursor.expect("{")
                counts.append(0)
            else:
                elements.append(_parse_element(cursor))
                counts[-1] += 1
                expecting = False
    flat = _literal_array(cursor, elements, dtype)
    try:
        return Literal(flat.reshape(shape))
    except (ValueError, OverflowError) as error:  # NumPy refuses the shape (too big)
        raise cursor.error(f"bad literal: {error}") from None


def _parse_element(cursor: _Cursor):
    """A number or word, `nan(0x...)` (returned as an int of bits), or `(re,im)` (a pair)."""
    token = cursor.take()
    if token == "(":
        real = _parse_real(cursor, cursor.take())
        cursor.expect(",")
        imaginary = _parse_real(cursor, cursor.take())
        cursor.expect(")")
        return (real, imaginary)
    return _parse_real(cursor, token)


def _parse_real(cursor: _Cursor, token: str):
    if token == "nan" and cursor.peek() == "(":
        cursor.take()
        bits = cursor.take()
        cursor.expect(")")
        if not re.fullmatch(r"0x[0-9a-f]+", bits):
            raise cursor.error(f"bad NaN bits {bits!r}")
        return int(bits, 16)
    return token


def _literal_array(cursor: _Cursor, elements: list, dtype: np.dtype) -> np.ndarray:
    """Convert element tokens to a flat array of `dtype`, refusing anything inexact."""
    if dtypes.is_complex(dtype):
        if not all(isinstance(element, tuple) for element in elements):
            raise cursor.error(f"{dtypes.short_name(dtype)} elements are written (real,imaginary)")
        part = dtypes.real_dtype(dtype)
        result = np.empty(len(elements), dtype)
        result.real = _real_array(cursor, [element[0] for element in elements], part)
        result.imag = _real_array(cursor, [element[1] for element in elements], part)
        return result
    if any(isinstance(element, tuple) for element in elements):
        raise cursor.error(f"a complex element in a {dtypes.short_name(dtype)} literal")
    return _real_array(cursor, elements, dtype)


def _real_array(cursor: _Cursor, elements: list, dtype: np.dtype) -> np.ndarray:
    if dtype == dtypes.bool_:
        words = {"true": True, "false": False}
        if not all(element in words for element in elements):
            raise cursor.error("pred elements are true or false")
        return np.array([words[element] for element in elements], dtype)
    if dtypes.is_integer(dtype):
        if not all(isinstance(element, str) and _INTEGER.fullmatch(element) for element in elements):
            raise cursor.error(f"{dtypes.short_name(dtype)} elements must be integers")
        try:
            return np.array([int(element) for element in elements], dtype)
        except OverflowError:
            raise cursor.error(f"a literal element is out of range for {dtypes.short_name(dtype)}") from None
    payloads = [(index, element) for index, element in enumerate(elements) if isinstance(element, int)]
    for index, _ in payloads:
        elements[index] = "nan"
    if not all(_FLOAT.fullmatch(element) for element in elements):
        raise cursor.error(f"{dtypes.short_name(dtype)} elements must be numbers, nan, inf or -inf")
    wide = np.array([float(element) for element in elements], np.float64)
    with np.errstate(over="ignore"):
        result = wide.astype(dtype)
    if np.any(np.isfinite(wide) & ~np.isfinite(result)):
        raise cursor.error(f"a literal element overflows {dtypes.short_name(dtype)}")
    bits = result.view(_UNSIGNED_OF_SIZE[dtype.itemsize])
    for index, payload in payloads:
        if payload >= 1 << (8 * dtype.itemsize) or not np.isnan(np.array(payload, bits.dtype).view(dtype)):
            raise cursor.error(f"nan(0x{payload:x}) is not a NaN of {dtypes.short_name(dtype)}")
        bits[index] = payload
    return result
