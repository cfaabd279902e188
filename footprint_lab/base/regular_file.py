"""Reading a file a user handed over: only a regular file, never waiting on it, never past a size.

Rule kept: a path from outside (a notebook, a saved recording, a run set's recording) may name a
FIFO that blocks a reader forever, a device that never ends (``/dev/zero``), a folder, or a link
to somewhere else. :func:`read_regular` looks before it opens (a device is never opened), opens
without waiting (``O_NONBLOCK``: a FIFO with no writer does not block) and, when asked, without
following a link, in a folder that is not a link either; it checks what it opened is still a
regular file and reads at most ``limit`` bytes. What it refuses it raises as
:class:`UnreadableFile` with a ``reason``; each door turns that into its own refusal.

Role: base layer; used by the doors that read users' files (``notebook``, ``batch``).
"""

from __future__ import annotations

import errno
import os
import stat

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class UnreadableFile(Exception):
    """A file :func:`read_regular` will not read. ``reason``: ``missing``, ``link``, ``special`` (a FIFO, a
    device, a socket), ``folder``, ``too-large`` or ``unreadable``; ``kind`` names what was found."""

    def __init__(self, reason: str, kind: str = "") -> None:
        super().__init__(reason, kind)
        self.reason = reason
        self.kind = kind


def kind_of(mode: int) -> str:
    """What a file is, by its mode, in words (never its name)."""
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "a special file"


def _judge(mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise UnreadableFile("folder", "a folder")
    if not stat.S_ISREG(mode):
        raise UnreadableFile("special", kind_of(mode))


def read_regular(path: str | os.PathLike[str], *, limit: int, follow: bool = True,
                 folder: str | os.PathLike[str] | None = None) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    ``follow=False``: ``path`` must not be a symbolic link. ``folder``: ``path`` is a name read inside
    that folder, which must not be a link itself (nothing is read from outside it).
    """
    folder_fd: int | None = None
    try:
        if folder is not None:
            folder_fd = _open_folder(folder)
        return _read(path, limit, follow, folder_fd)
    except UnreadableFile:
        raise
    except (FileNotFoundError, NotADirectoryError):
        raise UnreadableFile("missing") from None
    except OSError as error:
        raise UnreadableFile("link" if error.errno == errno.ELOOP else "unreadable",
                             "a symbolic link" if error.errno == errno.ELOOP else "") from None
    except ValueError:  # a name the system cannot take (an embedded NUL)
        raise UnreadableFile("unreadable") from None
    finally:
        if folder_fd is not None:
            os.close(folder_fd)


def _open_folder(folder: str | os.PathLike[str]) -> int:
    """A descriptor of ``folder``, refused when it is a link (a link to a folder reads outside it)."""
    try:
        return os.open(folder, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError:
        if stat.S_ISLNK(os.lstat(folder).st_mode):
            raise UnreadableFile("link", "a folder that is a symbolic link") from None
        raise


def _read(path: str | os.PathLike[str], limit: int, follow: bool, folder_fd: int | None) -> bytes:
    seen = os.stat(path, dir_fd=folder_fd, follow_symlinks=follow)
    if stat.S_ISLNK(seen.st_mode):
        raise UnreadableFile("link", "a symbolic link")
    _judge(seen.st_mode)  # a device or a FIFO is refused before it is opened
    if seen.st_size > limit:
        raise UnreadableFile("too-large", f"a file of {seen.st_size} bytes")
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | _BINARY | (0 if follow else _NOFOLLOW)
    descriptor = os.open(path, flags, dir_fd=folder_fd)
    try:
        opened = os.fstat(descriptor)
        _judge(opened.st_mode)  # swapped for something else between the look and the open
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnreadableFile("too-large", f"a file of more than {limit} bytes")
    finally:
        os.close(descriptor)
