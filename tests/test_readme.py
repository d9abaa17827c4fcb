"""The docs test: the README's shell blocks are run, so that the README cannot drift from the
commands it documents.

Convention (stated in the README): every ```sh block runs unless the line before it is
``<!-- not run: REASON -->`` (a reason is required); a ```python block whose first line is
``# NAME.py`` is written to NAME.py first (the bot the blocks use). The blocks run in a copy of
the repository, in order, each as one ``bash -e`` script in its own process group (killed at
the end, background servers included), with:

* the default ports (Redis 6379, referee 50051, metrics 9464-9466) replaced by free ones, so
  a block never meets another test's or another user's server;
* a pause after each line that starts a server in the background, as a person typing the next
  command would make: until its ``--port`` answers, or two seconds (a bot connecting);
* PATH holding the virtual environment's ``bin`` and the system's, nothing else: no
  redis-server on PATH, as on a newcomer's machine; no SUECA_* settings.

The virtual environment is this repository's ``.venv`` (the one ``make`` builds and these tests
run in: the same code, installed the same way), linked into the copy. SUECA_DOCS_FRESH_VENV=1
builds a fresh one in the copy instead, with the Makefile's own steps (``make .venv/.installed``:
a minute or two more, and it needs the package index).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DEFAULT_PORTS = ("6379", "50051", "9464", "9465", "9466")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(\S.*?)\s*-->")
BLOCK_SECONDS = 150

pytestmark = pytest.mark.slow


@dataclass
class Block:
    line: int          # where it starts in README.md
    lang: str
    text: str
    skip: str | None   # the reason it is not run


def blocks(readme: str) -> list[Block]:
    """Every fenced block, with the ``not run`` reason on the line before it, if any."""
    found: list[Block] = []
    lines = readme.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\S*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        start, lang = i, fence.group(1)
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        before = next((ln for ln in reversed(lines[:start]) if ln.strip()), "")
        mark = NOT_RUN.search(before)
        found.append(Block(start + 1, lang, "\n".join(body) + "\n",
                           mark.group(1) if mark else None))
        i += 1
    return found


SHELL = ("sh", "bash", "shell", "console")
ALL = blocks(README.read_text())
RUN = [b for b in ALL if b.lang in SHELL and b.skip is None]


def test_the_convention_is_followed() -> None:
    """Shell blocks are `sh`; a skipped one says why; the commands a newcomer needs run."""
    for b in ALL:
        if b.lang in SHELL and b.lang != "sh":
            pytest.fail(f"README.md:{b.line}: write shell blocks as ```sh, not ```{b.lang}")
    assert len(RUN) >= 3, [b.line for b in RUN]
    text = "".join(b.text for b in RUN)
    for command in ("sueca-bot selfplay", "sueca-arena redis", "sueca-bot run",
                    "sueca-arena tournament run"):
        assert command in text, f"no README block that runs {command!r}"


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def script(block: Block, ports: dict[str, str]) -> str:
    """The block as a bash script, as a user would paste it: only the ports replaced (the
    block waits for its own background servers, with ``sueca-arena wait``)."""
    out = ["set -e -o pipefail"]
    for line in block.text.splitlines():
        out.append(re.sub(r"\b(" + "|".join(DEFAULT_PORTS) + r")\b",
                          lambda m: ports[m.group(1)], line))
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The repository's files (as they are on disk) in a fresh folder, with a virtual
    environment and the files the README's python blocks name."""
    dest = tmp_path_factory.mktemp("readme") / "repo"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.splitlines()
    for name in files:
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    if os.environ.get("SUECA_DOCS_FRESH_VENV") == "1":
        base = getattr(sys, "_base_executable", sys.executable)  # the venv's own interpreter
        subprocess.run(["make", f"PY={base}", ".venv/.installed"], cwd=dest, check=True,
                       capture_output=True)
    else:
        (dest / ".venv").symlink_to(Path(sys.executable).parent.parent)
    for b in ALL:
        first = b.text.splitlines()[0] if b.text.strip() else ""
        named = re.fullmatch(r"#\s*([\w.-]+\.py)\s*", first)
        if b.lang == "python" and named:
            (dest / named.group(1)).write_text(b.text)
    yield dest


def _stop_group(pgid: int, grace: float = 15.0) -> None:
    """Whatever the block left in the background: SIGTERM, and SIGKILL after ``grace``."""
    import time
    try:
        os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            os.killpg(pgid, 0)
            time.sleep(0.1)
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:  # all gone
        pass


@pytest.mark.parametrize("block", RUN, ids=[f"README.md:{b.line}" for b in RUN])
def test_readme_block_runs(block: Block, copy: Path) -> None:
    ports = {p: str(_free_port()) for p in DEFAULT_PORTS}
    home = copy.parent / f"home-{block.line}"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SUECA_", "PYTHON", "VIRTUAL_ENV", "PROMETHEUS"))}
    env.update(PATH=f"{copy / '.venv' / 'bin'}:/usr/bin:/bin", HOME=str(home),
               TMPDIR=str(home / "tmp"), COLUMNS="120")
    proc = subprocess.Popen(["bash", "-c", script(block, ports)], cwd=copy, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=BLOCK_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"README.md:{block.line} did not finish in {BLOCK_SECONDS}s:\n"
                    f"{block.text}\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-3000:]}")
    finally:
        _stop_group(proc.pid)
    assert proc.returncode == 0, (f"README.md:{block.line} failed ({proc.returncode}):\n"
                                  f"{block.text}\n--- stdout\n{out[-3000:]}\n"
                                  f"--- stderr\n{err[-3000:]}")
    assert "Traceback" not in err, f"README.md:{block.line}:\n{err[-3000:]}"
