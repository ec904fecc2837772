"""Writing files safely in directories other users or processes may share (/tmp, a dump folder).

Two ways, for two kinds of path:

- `create_new(path, data)` for a name lazyarr picks (a `--dump_to` file): the file must not
  exist yet. O_EXCL refuses any existing name, a symlink included (the link is never followed),
  so another process's file is never overwritten: the caller picks another name.
- `replace(path, data)` for a path the user named (`la.aot`'s object and header, `la.profile`'s
  trace): the data goes to a new file beside it, which then takes the name with os.replace.
  A symlink planted at the path is replaced itself, never followed, and a reader sees the old
  file or the whole new one, never half of it.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
    >>> replace(path, "{}")
    >>> open(path).read()
    '{}'
"""

from __future__ import annotations

import os
import secrets

# O_EXCL alone already refuses a symlink at the name; O_NOFOLLOW says so where it exists.
_CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def create_new(path: str | os.PathLike, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to a file at `path` that must not exist yet.

    FileExistsError when anything (a file, a directory, a symlink) already has the name.
    Permissions follow the umask as for open(path, "w").
    """
    descriptor = os.open(path, _CREATE_NEW, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data.encode() if isinstance(data, str) else data)
    except BaseException:
        os.unlink(path)  # a partial file (a full disk) would look like a whole one
        raise


def replace(path: str | os.PathLike, data: str | bytes) -> None:
    """Write `data` to `path` through a new file in the same directory and os.replace.

    Whatever had the name before (a file, a symlink) is replaced, not written through; on
    failure the old file is left as it was and the temporary file removed.
    """
    path = os.fspath(path)
    directory, name = os.path.split(path)
    while True:  # a random name: a clash (another writer, a planted file) only costs a retry
        temporary = os.path.join(directory, f".{name}.{secrets.token_hex(8)}.tmp")
        try:
            create_new(temporary, data)
            break
        except FileExistsError:
            continue
    try:
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
