"""A fresh virtual environment with some of the repository's distributions installed, as a user
who installs one part alone gets it (``pip install ./sdk``, ``pip install ./sdk ./referee``).

The folders are copied first so that the build never writes into the checkout (setuptools builds
in place and keeps a ``build/`` folder, whose stale files would end up in a wheel). pip reaches
its index as configured on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "fresh_venv", "installed_names", "run"]


def run(cmd: list[str], cwd: Path, env: dict[str, str],
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def fresh_venv(base: Path, parts: list[str]) -> tuple[Path, dict[str, str]]:
    """A venv in ``base/venv`` with the folders ``parts`` (e.g. ``["sdk", "referee"]``) installed;
    returns it and an environment whose PATH starts with its ``bin``."""
    ignore = shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    for part in parts:
        shutil.copytree(ROOT / part, base / part, ignore=ignore)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    venv = base / "venv"
    python = getattr(sys, "_base_executable", sys.executable)
    made = run([python, "-m", "venv", str(venv)], base, env)
    assert made.returncode == 0, made.stderr
    installed = run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                     "--disable-pip-version-check", *(str(base / p) for p in parts)],
                    base, env, timeout=300)
    assert installed.returncode == 0, installed.stderr[-3000:]
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return venv, env


def installed_names(venv: Path, env: dict[str, str]) -> set[str]:
    """The distributions in ``venv``, lower case, ``_`` read as ``-``."""
    listed = run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json",
                  "--disable-pip-version-check"], venv, env)
    return {d["name"].lower().replace("_", "-") for d in json.loads(listed.stdout)}
