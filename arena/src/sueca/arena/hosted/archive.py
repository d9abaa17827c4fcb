"""A submission's files: checked on arrival, stored as one canonical archive named by its hash.

A submission is a folder or a ``.tar.gz`` holding ``sueca-bot.toml`` at its top (or in its one
top folder, as ``tar czf bot.tar.gz mybot/`` makes it). Everything is checked before anything
is written: the archive's size, the number of files, the bytes they unpack to, their names (no
absolute path, no ``..``, no NUL), their kinds (files, folders, and symbolic or hard links
that stay inside the folder; no device, fifo or socket) and the manifest itself.

The canonical form (:func:`canonical`) lists the entries sorted by path, with no owner, mode
0644 or 0755, mtime 0 and a gzip header with no name or time: the same files always give the
same bytes, hence the same sha256 (:attr:`Submission.sha256`), whatever machine packed them.
Hard links are stored as copies of the file they name. :func:`unpack` writes such an archive
into a folder, checking it again (a bot host trusts nothing it reads from Redis).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import posixpath
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path

from sueca.arena.hosted.manifest import MANIFEST, Manifest, ManifestError, parse_manifest
from sueca.sdk.logs import shown

__all__ = ["ArchiveError", "Entry", "Submission", "read_dir", "read_tarball", "read_source",
           "canonical", "unpack", "MAX_ARCHIVE", "MAX_FILES", "MAX_UNPACKED", "MAX_MANIFEST"]

MAX_ARCHIVE = 16 * 1024 * 1024    # bytes of a given .tar.gz, and of the canonical archive
MAX_UNPACKED = 64 * 1024 * 1024   # bytes of all files together
MAX_FILES = 2000                  # entries (files, folders, links)
MAX_PATH = 240                    # characters of one path
MAX_MANIFEST = 16 * 1024          # bytes of sueca-bot.toml


class ArchiveError(ValueError):
    """A submission refused on arrival; the message quotes the path or the figure at fault."""


@dataclass(frozen=True)
class Entry:
    """One entry: ``kind`` "file" (``data``, ``executable``), "dir" or "symlink" (``target``,
    relative, inside the submission)."""

    path: str
    kind: str
    data: bytes = b""
    executable: bool = False
    target: str = ""


@dataclass(frozen=True)
class Submission:
    """A checked submission: its manifest, its canonical archive and that archive's sha256."""

    manifest: Manifest
    archive: bytes
    sha256: str
    files: int


def _check_path(name: str) -> str:
    """``name`` as a clean relative path, or :class:`ArchiveError` quoting it."""
    path = name.removeprefix("./").rstrip("/")
    if not path or path == ".":
        return ""
    if (path.startswith("/") or "\0" in path or "\\" in path or len(path) > MAX_PATH
            or any(part in ("", ".", "..") for part in path.split("/"))):
        raise ArchiveError(f"bad path {shown(name, 80)}: paths must be relative, inside the "
                           f"folder (no '/' start, no '..'), at most {MAX_PATH} characters")
    return path


def _inside(path: str, target: str) -> str:
    """The link ``path`` -> ``target`` if it stays inside the submission, else ArchiveError."""
    if not target or target.startswith("/") or "\0" in target:
        raise ArchiveError(f"link {shown(path, 80)} points to {shown(target, 80)}: a link must "
                           "point inside the folder, by a relative path")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        raise ArchiveError(f"link {shown(path, 80)} points to {shown(target, 80)}, outside the "
                           "folder")
    return target


class _Budget:
    """The caps, counted as entries arrive, so a huge input is refused before it is read."""

    def __init__(self) -> None:
        self.files = 0
        self.size = 0

    def add(self, path: str, size: int) -> None:
        self.files += 1
        self.size += size
        if self.files > MAX_FILES:
            raise ArchiveError(f"more than {MAX_FILES} files (at {shown(path, 80)})")
        if self.size > MAX_UNPACKED:
            raise ArchiveError(f"the files add up to more than {MAX_UNPACKED // 2**20} MiB (at "
                               f"{shown(path, 80)})")


def read_dir(folder: Path) -> list[Entry]:
    """The entries of ``folder`` (links are not followed: a link out of it is refused)."""
    if not folder.is_dir():
        raise ArchiveError(f"{shown(str(folder), 120)} is not a folder")
    budget = _Budget()
    entries: list[Entry] = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(dirs + files):
            full = Path(top) / name
            path = _check_path(full.relative_to(folder).as_posix())
            st = full.lstat()
            budget.add(path, st.st_size if stat.S_ISREG(st.st_mode) else 0)
            if stat.S_ISLNK(st.st_mode):
                entries.append(Entry(path, "symlink", target=_inside(path, os.readlink(full))))
                if name in dirs:
                    dirs.remove(name)  # never walked into: it is stored as a link
            elif stat.S_ISDIR(st.st_mode):
                entries.append(Entry(path, "dir"))
            elif stat.S_ISREG(st.st_mode):
                entries.append(Entry(path, "file", data=full.read_bytes(),
                                     executable=bool(st.st_mode & 0o111)))
            else:
                raise ArchiveError(f"{shown(path, 80)} is a {_kind(st.st_mode)}: only files, "
                                   "folders and links inside the folder are allowed")
    return entries


def _kind(mode: int) -> str:
    return ("fifo" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
            else "device file" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file")


def read_tarball(data: bytes) -> list[Entry]:
    """The entries of the gzipped tar ``data``, checked one by one as they are read."""
    if len(data) > MAX_ARCHIVE:
        raise ArchiveError(f"the archive is {len(data)} bytes: at most {MAX_ARCHIVE // 2**20} "
                           "MiB")
    budget = _Budget()
    entries: list[Entry] = []
    files: dict[str, Entry] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            while (member := tar.next()) is not None:
                path = _check_path(member.name)
                budget.add(member.name, member.size if member.isfile() else 0)
                if not path:
                    continue  # the archive's own top "."
                if member.isdir():
                    entries.append(Entry(path, "dir"))
                elif member.isfile():
                    f = tar.extractfile(member)
                    assert f is not None
                    entry = Entry(path, "file", data=f.read(), executable=bool(member.mode & 0o111))
                    entries.append(entry)
                    files[path] = entry
                elif member.issym():
                    entries.append(Entry(path, "symlink", target=_inside(path, member.linkname)))
                elif member.islnk():
                    target = _check_path(member.linkname)
                    if target not in files:
                        raise ArchiveError(f"hard link {shown(member.name, 80)} names "
                                           f"{shown(member.linkname, 80)}, not a file before it "
                                           "in the archive")
                    entries.append(Entry(path, "file", data=files[target].data,
                                         executable=files[target].executable))
                else:
                    raise ArchiveError(f"{shown(member.name, 80)} is a "
                                       f"{'fifo' if member.isfifo() else 'device file'}: only "
                                       "files, folders and links inside the folder are allowed")
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as err:
        raise ArchiveError(f"not a readable .tar.gz: {err}") from None
    return entries


def _root(entries: list[Entry]) -> list[Entry]:
    """The entries with the manifest at the top: one top folder holding it is stripped."""
    paths = {e.path for e in entries}
    if MANIFEST in paths:
        return entries
    tops = {e.path.split("/", 1)[0] for e in entries}
    if len(tops) == 1:
        top = tops.pop()
        if f"{top}/{MANIFEST}" in paths:
            return [Entry(e.path[len(top) + 1:], e.kind, e.data, e.executable, e.target)
                    for e in entries if e.path != top]
    raise ArchiveError(f"no {MANIFEST} at the top of the submission (see docs/hosted-bots.md)")


def _manifest(entries: list[Entry]) -> Manifest:
    found = next(e for e in entries if e.path == MANIFEST)
    if found.kind != "file":
        raise ArchiveError(f"{MANIFEST} must be a file, not a {found.kind}")
    if len(found.data) > MAX_MANIFEST:
        raise ArchiveError(f"{MANIFEST} is {len(found.data)} bytes: at most {MAX_MANIFEST}")
    try:
        return parse_manifest(found.data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ManifestError(f"{MANIFEST} is not UTF-8 text") from None


def canonical(entries: list[Entry]) -> bytes:
    """The canonical ``.tar.gz`` of ``entries`` (see the module's docstring)."""
    paths = [e.path for e in entries]
    if len(set(paths)) != len(paths):
        twice = next(p for p in paths if paths.count(p) > 1)
        raise ArchiveError(f"{shown(twice, 80)} is in the archive twice")
    raw = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for e in sorted(entries, key=lambda e: e.path):
            info = tarfile.TarInfo(e.path)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if e.kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif e.kind == "symlink":
                info.type, info.mode, info.linkname = tarfile.SYMTYPE, 0o777, e.target
                tar.addfile(info)
            else:
                info.size, info.mode = len(e.data), 0o755 if e.executable else 0o644
                tar.addfile(info, io.BytesIO(e.data))
    data = raw.getvalue()
    if len(data) > MAX_ARCHIVE:
        raise ArchiveError(f"the submission packs to {len(data)} bytes: at most "
                           f"{MAX_ARCHIVE // 2**20} MiB")
    return data


def _checked(entries: list[Entry]) -> Submission:
    entries = _root(entries)
    manifest = _manifest(entries)
    archive = canonical(entries)
    return Submission(manifest=manifest, archive=archive,
                      sha256=hashlib.sha256(archive).hexdigest(), files=len(entries))


def read_source(source: Path) -> Submission:
    """The submission in ``source``: a folder, or a ``.tar.gz`` file (read with a cap)."""
    if source.is_dir():
        return _checked(read_dir(source))
    try:
        with open(source, "rb") as f:
            data = f.read(MAX_ARCHIVE + 1)
    except OSError as err:
        raise ArchiveError(f"cannot read {shown(str(source), 120)}: {err.strerror}") from None
    return _checked(read_tarball(data))


def unpack(archive: bytes, folder: Path) -> Manifest:
    """Write the canonical ``archive`` into the empty ``folder``, checking it as on arrival."""
    entries = _root(read_tarball(archive))
    manifest = _manifest(entries)
    folder.mkdir(parents=True, exist_ok=True)
    for e in sorted(entries, key=lambda e: e.path):
        target = folder / e.path
        if not target.parent.resolve().is_relative_to(folder.resolve()):
            raise ArchiveError(f"{shown(e.path, 80)} would land outside the folder")
        if e.kind == "dir":
            target.mkdir(exist_ok=True)
        elif e.kind == "symlink":
            target.symlink_to(e.target)
        else:
            target.write_bytes(e.data)
            target.chmod(0o755 if e.executable else 0o644)
    return manifest
