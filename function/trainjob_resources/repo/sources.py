"""Reading a tenant's files for ``render`` and ``explain``: confined to a root, read once, bounded.

The folder ``render`` is given is written by someone else (an Argo CD tenant, a pull request), so
every path is resolved and must stay inside its root; a symbolic link that leads out of it is
refused. Each real file and folder is read once, whatever links lead to it, so that cycles and
fan-out cannot multiply work. The whole load shares one budget, checked before anything is read:
bytes (``MAX_INPUT_BYTES``, the KRM function's own input limit), folder entries and objects
(``MAX_ITEMS``). Entries that are skipped are reported (``notes``), never dropped without a word.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field

from ..values.text import printable

MAX_INPUT_BYTES = 64 * 1024 * 1024  # yamlnodes.MAX_INPUT_BYTES, the KRM function's input limit
MAX_ITEMS = 100_000  # krm.MAX_ITEMS (both checked equal by the tests; this module imports no YAML)
MAX_ENTRIES = 100_000  # folder entries looked at, over the whole load
MAX_FOLDER_DEPTH = 64
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_SHOWN_LIMIT = 8  # names listed in one note


class RenderError(Exception):
    """Input that cannot be rendered; the message says which file and why."""


def shown(text: object) -> str:
    """``text`` fit for one line of a message: control, bidi and zero-width characters are written as
    escapes, so that a file name cannot forge lines of output, terminal sequences or reordered text."""
    return printable(text)


@dataclass
class Budget:
    """What is left of the load's bounds; each take fails with a RenderError before the read."""

    bytes_left: int = MAX_INPUT_BYTES
    entries_left: int = MAX_ENTRIES
    items_left: int = MAX_ITEMS

    def take_bytes(self, size: int, label: str) -> None:
        if size > self.bytes_left:
            raise RenderError(
                f"{shown(label)}: {size} bytes would take the input over {MAX_INPUT_BYTES} bytes, the limit "
                f"for one render (files read and kustomize output together)"
            )
        self.bytes_left -= size

    def take_entries(self, count: int, label: str) -> None:
        if count > self.entries_left:
            raise RenderError(f"{shown(label)}: more than {MAX_ENTRIES} files and folders in one render, the limit")
        self.entries_left -= count

    def take_items(self, count: int, label: str) -> None:
        if count > self.items_left:
            raise RenderError(f"{shown(label)}: more than {MAX_ITEMS} objects in one render, the limit")
        self.items_left -= count


@dataclass(frozen=True)
class Root:
    """The folder a command-line path may not leave (resolved), and how messages name it."""

    real: str
    label: str
    # Whether --root may widen it: not under Argo CD, whose checkout is all the repository there is.
    widened_by_flag: bool = True

    def contains(self, real: str) -> bool:
        return real == self.real or real.startswith(self.real.rstrip(os.sep) + os.sep)


@dataclass
class Reader:
    """Reads files and walks folders for one load; ``notes`` and ``errors`` collect what it met."""

    budget: Budget = field(default_factory=Budget)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seen: dict[str, str] = field(default_factory=dict)  # real path -> the label it was first read as
    kept: dict[str, bytes] = field(default_factory=dict)  # files read to plan a build, copied from here
    # The render's one deadline (time.monotonic()) for every kustomize build, and the limit it came from.
    deadline: float | None = None
    time_limit: float = 60.0

    def resolve(self, path: str, label: str, root: Root) -> str:
        """The real path of ``path``; a RenderError if it is not inside ``root``."""
        real = os.path.realpath(path)
        if not root.contains(real):
            if root.contains(os.path.abspath(path)):  # a link leads out: no --root makes that the tenant's
                raise RenderError(
                    f"{shown(label)}: leads outside {shown(root.label)} (through a symbolic link or ..): "
                    "refused; render reads nothing outside the folder it was given"
                )
            raise RenderError(f"{shown(label)}: leads outside {shown(root.label)} (through ..): {_widen(real, root)}")
        return real

    def first_time(self, real: str, label: str) -> bool:
        """Whether ``real`` is new to this load; if not, says so (a link or a second path to it)."""
        earlier = self.seen.get(real)
        if earlier is not None:
            if earlier != label:
                self.notes.append(f"note: {shown(label)}: skipped: the same file or folder as {shown(earlier)}")
            return False
        self.seen[real] = label
        return True

    def read_bytes(self, real: str, label: str, reserved: int = 0) -> bytes | None:
        """The content of the regular file ``real`` (already resolved), within the budget (of which
        ``reserved`` bytes were taken for it already); None, with a note, for anything that is not a
        regular file (a FIFO, a device, a socket)."""
        self.budget.bytes_left += reserved
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(real, flags)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self.notes.append(f"note: {shown(label)}: skipped: {_kind(info.st_mode)}, not a regular file")
                return None
            self.budget.take_bytes(info.st_size, label)
            with os.fdopen(os.dup(fd), "rb") as stream:
                # The whole file as stat saw it, plus what is left of the budget: a file that grows
                # after the stat is still read within the budget, one that fits is never cut.
                data = stream.read(info.st_size + self.budget.bytes_left + 1)
            self.budget.take_bytes(max(0, len(data) - info.st_size), label)
            return data
        finally:
            os.close(fd)

    def entries(self, directory: str, label: str) -> list[os.DirEntry[str]]:
        """The folder's entries in name order, counted against the budget as they are listed, so
        that a folder of millions of entries is refused before it is held in memory."""
        found: list[os.DirEntry[str]] = []
        with os.scandir(directory) as scan:
            for entry in scan:
                found.append(entry)
                if len(found) > self.budget.entries_left:
                    self.budget.take_entries(len(found), label)
        self.budget.take_entries(len(found), label)
        return sorted(found, key=lambda e: e.name)

    def walk(self, directory: str, label: str, root: Root) -> list[tuple[str, str, int | None]]:
        """The folder's entries worth reading, in name order, each (real path, label, size; None for
        a folder); hidden entries, other files, broken links and special files are reported, not returned."""
        entries = self.entries(directory, label)
        hidden: list[str] = []
        others: list[str] = []
        out: list[tuple[str, str, int | None]] = []
        for entry in entries:
            name = entry.name
            entry_label = os.path.join(label, name)
            if name.startswith("."):
                hidden.append(name)
                continue
            path = os.path.join(directory, name)
            link = entry.is_symlink()
            real = self.resolve(path, entry_label, root) if link else path
            try:
                info = os.stat(real)
            except OSError as err:
                if link and err.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                    self.notes.append(f"note: {shown(entry_label)}: skipped: a broken symbolic link")
                    continue
                raise unreadable(entry_label, err) from None
            if stat.S_ISDIR(info.st_mode):
                out.append((real, entry_label, None))
            elif not stat.S_ISREG(info.st_mode):
                self.notes.append(f"note: {shown(entry_label)}: skipped: {_kind(info.st_mode)}, not a regular file")
            elif name.lower().endswith(MANIFEST_SUFFIXES):
                out.append((real, entry_label, info.st_size))
            else:
                others.append(name)
        if hidden:
            self.notes.append(f"note: {shown(label)}: skipped hidden entries: {_names(hidden)}")
        if others:
            self.notes.append(
                f"note: {shown(label)}: skipped files that are not *.yaml, *.yml or *.json: {_names(others)}"
            )
        return out


def unreadable(label: str, err: OSError) -> RenderError:
    """A file or folder that cannot be looked at (a path too long, no permission): an error, never
    an entry dropped without a word."""
    return RenderError(f"{shown(label)}: cannot read: {err.strerror or err}")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"


def _names(names: list[str]) -> str:
    listed = ", ".join(shown(n) for n in names[:_SHOWN_LIMIT])
    return listed + (f" and {len(names) - _SHOWN_LIMIT} more" if len(names) > _SHOWN_LIMIT else "")


def _widen(real: str, root: Root) -> str:
    """What to do about a relative path that climbs out of ``root``: the ``--root`` that holds both
    (relative to the current folder), unless only ``/`` would, or the root is Argo CD's checkout."""
    if not root.widened_by_flag:
        return "refused; it is outside the repository Argo CD checked out (vendor it into the repository)"
    common = os.path.commonpath([root.real, real])
    if common == os.sep:
        return "refused; render reads nothing outside the folder it was given"
    return (
        "refused; render reads nothing outside its root: pass --root "
        f"{shown(os.path.relpath(common))} (the repository's root, or any folder that holds both)"
    )


def root_for(path: str, default_root: Root | None) -> Root:
    """The root a command-line path is confined to: ``default_root`` when the path lies inside it,
    else the path itself (the caller chose it; what it contains is not trusted)."""
    absolute = os.path.abspath(path)
    if default_root is not None and default_root.contains(os.path.realpath(os.path.dirname(absolute))):
        return default_root
    return Root(os.path.realpath(absolute), path)


def decode_text(data: bytes, label: str) -> str:
    from ..yamltext.yamlnodes import YamlInputError, decode

    try:
        return decode(data)
    except YamlInputError as err:
        raise RenderError(f"{shown(label)}: {err}") from None
