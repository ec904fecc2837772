"""A compile helper process (compile_workers.py): LLVM IR text in on stdin, object code out on stdout.

Run as `python -m lazyarr.backends.llvm.compile_worker`. It writes one ready byte once LLVM is
set up, then answers each request (a 4-byte big-endian length and the IR text) with a status
byte (0: object code, 1: an error's text), a 4-byte length, the SHA-256 of the request's text (the
parent checks that an answer is for what it asked) and the payload, until stdin closes.
"""

from __future__ import annotations

import hashlib
import sys

from .compile_workers import _HEADER, _LENGTH, READY, _read_exactly
from .target import compile_object, host_target_machine


def serve(requests, answers) -> None:
    """Answer requests from the binary stream `requests` on `answers` until end of input."""
    host_target_machine()  # LLVM's targets and options, set up before saying ready
    answers.write(READY)
    answers.flush()
    while True:
        try:
            (length,) = _LENGTH.unpack(_read_exactly(requests, _LENGTH.size))
            data = _read_exactly(requests, length)
        except ValueError:  # end of input: the parent is done
            return
        try:
            status, payload = 0, compile_object(data.decode())
        except Exception as error:  # reported to the parent, which compiles the text itself
            status, payload = 1, f"{type(error).__name__}: {error}".encode()
        answers.write(_HEADER.pack(status, len(payload)) + hashlib.sha256(data).digest() + payload)
        answers.flush()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
