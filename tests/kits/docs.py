"""The docs kit: the shell blocks of every page, run as a reader would paste them, so that no
page can drift from the commands it documents (tests/test_readme.py and tests/test_docs_league.py
run them, split between the two files so that ``--dist loadfile`` runs them side by side;
this module is a plugin of the suite, for its ``docs_copy`` fixture).

The pages: the root ``README.md``, the three distributions' ``README.md`` (``sdk/``,
``referee/``, ``arena/``) and every ``docs/*.md``. Convention (stated in the README): every
```sh block runs unless the line before it is ``<!-- not run: REASON -->`` (a reason is
required); a ```python block whose first line is ``# NAME.py`` is written to NAME.py first (the
bot the blocks use; two pages that name the same file give it the same text). Each test file's
blocks run in one copy of the repository (:func:`docs_copy`), page after page and in order
within a page, each as one ``bash -e`` script from the copy's root, in its own process group
(killed at the end, background servers included), with:

* the default ports (Redis 6379, referee 50051, metrics 9464-9467, web 8080) replaced by free
  ones, so a block never meets another test's or another user's server;
* nothing inserted: a block that starts a server in the background waits for it itself, with
  ``sueca-arena wait``, as a reader pasting it would;
* PATH holding the virtual environment's ``bin`` and the system's, nothing else: no
  redis-server on PATH, as on a newcomer's machine; no SUECA_* settings.

The virtual environment is this repository's ``.venv`` (the one ``make`` builds and these tests
run in: the same code, installed the same way), linked into the copy. SUECA_DOCS_FRESH_VENV=1
builds a fresh one in the copy instead, with the Makefile's own step for the product and the dev
tools (``make .venv/.dev``, as ``make test`` does: the wire-code block needs grpcio-tools; a
minute or two more, and it needs the package index).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from kits.wait import WaitTimedOut, wait_for
from sueca.arena.redisproc import free_port

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "sdk" / "README.md", ROOT / "referee" / "README.md",
         ROOT / "arena" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: the pages for whoever runs a league (tests/test_docs_league.py runs their blocks); the
#: READMEs and the bot authors' pages are tests/test_readme.py's
LEAGUE_PAGES = frozenset(f"docs/{name}.md" for name in (
    "architecture", "benchmarks", "competitions", "deploying", "fair-play", "hosted-bots",
    "monitoring", "operating", "settings", "web"))
DEFAULT_PORTS = ("6379", "50051", "9464", "9465", "9466", "9467", "8080")
NOT_RUN = re.compile(r"<!--\s*not run:\s*(\S.*?)\s*-->")
BLOCK_SECONDS = 150
SHELL = ("sh", "bash", "shell", "console")


@dataclass
class Block:
    page: str          # the page's path in the repository
    line: int          # where the block starts in it
    lang: str
    text: str
    skip: str | None   # the reason it is not run

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(text: str, page: str = "README.md") -> list[Block]:
    """Every fenced block of a page, with the ``not run`` reason on the line before it, if any."""
    found: list[Block] = []
    lines = text.splitlines()
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
        found.append(Block(page, start + 1, lang, "\n".join(body) + "\n",
                           mark.group(1) if mark else None))
        i += 1
    return found


def page_blocks(path: Path) -> list[Block]:
    return blocks(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))


ALL = [b for page in PAGES for b in page_blocks(page)]
RUN = [b for b in ALL if b.lang in SHELL and b.skip is None]


def named_files(found: list[Block]) -> dict[str, str]:
    """NAME.py -> text, for each ```python block whose first line is ``# NAME.py``."""
    files: dict[str, str] = {}
    for b in found:
        first = b.text.splitlines()[0] if b.text.strip() else ""
        named = re.fullmatch(r"#\s*([\w.-]+\.py)\s*", first)
        if b.lang == "python" and named:
            name = named.group(1)
            assert files.get(name, b.text) == b.text, \
                f"{b.where}: {name} differs from the {name} of another block"
            files[name] = b.text
    return files


def script(block: Block, ports: dict[str, str]) -> str:
    """The block as a bash script, as a user would paste it: only the ports replaced (the
    block waits for its own background servers, with ``sueca-arena wait``)."""
    out = ["set -e -o pipefail"]
    for line in block.text.splitlines():
        out.append(re.sub(r"\b(" + "|".join(DEFAULT_PORTS) + r")\b",
                          lambda m: ports[m.group(1)], line))
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def docs_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's files (as they are on disk) in a fresh folder, with a virtual
    environment and the files the pages' python blocks name: one per test file (a plugin of
    the suite, tests/conftest.py), whose blocks run in it in order."""
    dest = tmp_path_factory.mktemp("docs") / "repo"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.splitlines()
    for name in files:
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    if os.environ.get("SUECA_DOCS_FRESH_VENV") == "1":
        base = getattr(sys, "_base_executable", sys.executable)  # the venv's own interpreter
        subprocess.run(["make", f"PY={base}", ".venv/.dev"], cwd=dest, check=True,
                       capture_output=True)
    else:
        (dest / ".venv").symlink_to(Path(sys.executable).parent.parent)
    for name, text in named_files(ALL).items():
        (dest / name).write_text(text)
    return dest


def _stop_group(pgid: int, grace: float = 15.0) -> None:
    """Whatever the block left in the background: SIGTERM, and SIGKILL after ``grace``."""
    def gone() -> bool:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        return False

    try:
        os.killpg(pgid, signal.SIGTERM)
        wait_for(gone, grace, f"process group {pgid} to end", interval=0.1)
    except ProcessLookupError:  # all gone already
        pass
    except WaitTimedOut:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)


def run_block(block: Block, copy: Path) -> None:
    """Run ``block`` in ``copy`` as a reader would; fail with its output unless it exits 0
    without a traceback within BLOCK_SECONDS."""
    ports = {p: str(free_port()) for p in DEFAULT_PORTS}
    home = copy.parent / f"home-{block.page.replace('/', '-')}-{block.line}"
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
        pytest.fail(f"{block.where} did not finish in {BLOCK_SECONDS}s:\n"
                    f"{block.text}\n--- stdout\n{out[-3000:]}\n--- stderr\n{err[-3000:]}")
    finally:
        _stop_group(proc.pid)
    assert proc.returncode == 0, (f"{block.where} failed ({proc.returncode}):\n"
                                  f"{block.text}\n--- stdout\n{out[-3000:]}\n"
                                  f"--- stderr\n{err[-3000:]}")
    assert "Traceback" not in err, f"{block.where}:\n{err[-3000:]}"
