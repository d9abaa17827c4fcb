"""A submission's checks on arrival (sueca.arena.hosted.manifest, .archive), fast and each
bad input quoted: the manifest's fields, the archive's caps, names, kinds and links; and the
canonical archive, the same bytes for the same files however they were packed."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from sueca.arena.hosted import archive
from sueca.arena.hosted.archive import ArchiveError, read_source, unpack
from sueca.arena.hosted.manifest import ManifestError, parse_manifest


@pytest.mark.parametrize(("text", "quoted"), [
    ('python = "bot:Bot"\nstart = "x"', "unknown key 'start'"),
    ('python = "bot:Bot"\nexec = "./bot"', "both python and exec"),
    ('build = "make"', "no python or exec"),
    ('python = 3', "python = 3"),
    ('python = "bot.py"', "python = 'bot.py'"),
    ('exec = 42', "exec must be a string or a list of strings, not 42"),
    ('exec = ["./bot", 1]', "exec must be a string or a list of strings, not ['./bot', 1]"),
    ('exec = ""', "exec = '' names no program"),
    ('exec = "./bot \'open"', "exec = \"./bot 'open\": No closing quotation"),
    ('build = {a = 1}\nexec = "./bot"', "build must be a string or a list of strings, not {'a': 1}"),
    ('python = "bot:Bot', "not valid TOML"),
])
def test_a_bad_manifest_is_one_line_quoting_the_field(text: str, quoted: str) -> None:
    with pytest.raises(ManifestError) as err:
        parse_manifest(text)
    message = str(err.value)
    assert quoted in message and "\n" not in message, message
    assert message.startswith("sueca-bot.toml")


def test_a_good_manifest() -> None:
    m = parse_manifest('exec = "./bot --fast"\nbuild = ["cc", "-O2", "-o", "bot", "bot.c"]')
    assert m.exec == ("./bot", "--fast") and m.build == ("cc", "-O2", "-o", "bot", "bot.c")
    assert m.program("/usr/bin/python3") == ["./bot", "--fast"]
    p = parse_manifest('python = "mybot.core:Greedy"')
    assert p.program("py") == ["py", "-m", "sueca.sdk.execserve", "mybot.core:Greedy"]


def bot(folder: Path) -> Path:
    folder.mkdir()
    (folder / "sueca-bot.toml").write_text('python = "mybot:Greedy"\n')
    (folder / "mybot.py").write_text("print('hi')\n")
    (folder / "lib").mkdir()
    (folder / "lib" / "run.sh").write_text("#!/bin/sh\n")
    (folder / "lib" / "run.sh").chmod(0o755)
    (folder / "link.py").symlink_to("mybot.py")
    return folder


def tarball(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


MANIFEST = (member("sueca-bot.toml"), b'exec = "./bot"\n')


def test_the_same_files_give_the_same_hash(tmp_path: Path) -> None:
    one = read_source(bot(tmp_path / "one"))
    two_dir = bot(tmp_path / "two")
    os.utime(two_dir / "mybot.py", (1, 1))  # another mtime, another packing order
    with tarfile.open(tmp_path / "two.tar.gz", "w:gz") as tar:
        tar.add(two_dir, arcname="mybot")  # one top folder holding the manifest: stripped
    two = read_source(tmp_path / "two.tar.gz")
    assert one.sha256 == two.sha256 and one.archive == two.archive
    assert one.manifest.python == "mybot:Greedy"
    (two_dir / "mybot.py").write_text("print('other')\n")
    assert read_source(two_dir).sha256 != one.sha256
    out = tmp_path / "out"
    unpack(one.archive, out)
    assert (out / "mybot.py").read_text() == "print('hi')\n"
    assert os.readlink(out / "link.py") == "mybot.py"
    assert os.access(out / "lib" / "run.sh", os.X_OK)


@pytest.mark.parametrize(("members", "quoted"), [
    ([MANIFEST, (member("/etc/x"), b"")], "bad path '/etc/x'"),
    ([MANIFEST, (member("a/../../x"), b"")], "bad path 'a/../../x'"),
    ([MANIFEST, (member("out", tarfile.SYMTYPE, "../../etc/passwd"), b"")],
     "link 'out' points to '../../etc/passwd', outside the folder"),
    ([MANIFEST, (member("abs", tarfile.SYMTYPE, "/etc/passwd"), b"")],
     "link 'abs' points to '/etc/passwd'"),
    ([MANIFEST, (member("hard", tarfile.LNKTYPE, "/etc/shadow"), b"")], "bad path '/etc/shadow'"),
    ([MANIFEST, (member("hard", tarfile.LNKTYPE, "nothing"), b"")],
     "hard link 'hard' names 'nothing', not a file before it"),
    ([MANIFEST, (member("dev", tarfile.CHRTYPE), b"")], "'dev' is a device file"),
    ([MANIFEST, (member("pipe", tarfile.FIFOTYPE), b"")], "'pipe' is a fifo"),
    ([(member("bot.c"), b"int main;")], "no sueca-bot.toml at the top"),
    ([(member("sueca-bot.toml"), b'exec = 1')], "exec must be a string"),
    ([MANIFEST, MANIFEST], "'sueca-bot.toml' is in the archive twice"),
])
def test_a_bad_archive_is_refused_quoting_the_entry(tmp_path: Path, members: list, quoted: str
                                                    ) -> None:
    with pytest.raises((ArchiveError, ManifestError)) as err:
        read_source(tarball(tmp_path / "bad.tar.gz", members))
    assert quoted in str(err.value), str(err.value)


def test_the_caps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive, "MAX_FILES", 3)
    many = [MANIFEST] + [(member(f"f{i}"), b"") for i in range(4)]
    with pytest.raises(ArchiveError, match="more than 3 files"):
        read_source(tarball(tmp_path / "many.tar.gz", many))
    monkeypatch.setattr(archive, "MAX_UNPACKED", 1000)
    with pytest.raises(ArchiveError, match=r"more than 0 MiB \(at 'big'\)"):
        read_source(tarball(tmp_path / "big.tar.gz", [MANIFEST, (member("big"), b"x" * 2000)]))
    monkeypatch.setattr(archive, "MAX_ARCHIVE", 10)
    with pytest.raises(ArchiveError, match=r"the archive is \d+ bytes"):
        read_source(tmp_path / "big.tar.gz")
    (tmp_path / "junk.tar.gz").write_bytes(b"junk")
    with pytest.raises(ArchiveError, match="not a readable .tar.gz"):
        read_source(tmp_path / "junk.tar.gz")


def test_a_folder_with_a_link_out_or_a_fifo_is_refused(tmp_path: Path) -> None:
    folder = bot(tmp_path / "b")
    (folder / "secret").symlink_to("/etc/shadow")
    with pytest.raises(ArchiveError, match="link 'secret' points to '/etc/shadow'"):
        read_source(folder)
    (folder / "secret").unlink()
    (folder / "lib" / "up").symlink_to("../../x")
    with pytest.raises(ArchiveError, match="link 'lib/up' points to '../../x', outside"):
        read_source(folder)
    (folder / "lib" / "up").unlink()
    os.mkfifo(folder / "pipe")
    with pytest.raises(ArchiveError, match="'pipe' is a fifo"):
        read_source(folder)
