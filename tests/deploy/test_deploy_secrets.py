"""Secrets in the deployment: no command line carries a token (a command line is visible to every
process on the host; tokens go through the environment or files), the compose TLS recipe works
in a POSIX sh and each service mounts only the files it needs, secrets are git-ignored and kept
out of the image's build context, and the Kubernetes TLS secrets are mounted narrowly and
readable by the image's user."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kits.deploy import (
    CAT_FILE,
    DEPLOY,
    ROOT,
    assert_no_token,
    compose,
    compose_arena_services,
    compose_merged,
    compose_mounts,
    env_of,
    k8s_docs,
    k8s_tls_patches,
    needs_yaml,
    other_image,
    rel,
    shell_parts,
    under,
)


def compose_commands() -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(where, merged service, command) for every command compose runs, TLS or not."""
    for label, services in (("compose", compose()["services"]),
                            ("compose+tls", compose_merged())):
        for name, s in services.items():
            if name in compose_arena_services():
                yield f"{label} {name}", s, s["command"]
                if "test" in s.get("healthcheck", {}):
                    yield f"{label} {name} healthcheck", s, s["healthcheck"]["test"][1:]


def k8s_commands() -> Iterator[tuple[str, dict[str, Any], list[str]]]:
    """(where, container, command) for every container and exec probe, base and TLS overlay."""
    base = {d["metadata"]["name"]: d for _, d in k8s_docs() if d["kind"] == "Deployment"}
    patched = [("k8s", d) for d in base.values()] + [("k8s/overlays/tls", d)
                                                     for d in k8s_tls_patches()]
    for label, d in patched:
        name = d["metadata"]["name"]
        for c in d["spec"]["template"]["spec"]["containers"]:
            original = next(b for b in base[name]["spec"]["template"]["spec"]["containers"]
                            if b["name"] == c["name"])
            merged = {**original, **c, "env": original.get("env", []) + c.get("env", [])}
            where = f"{label} {name}/{c['name']}"
            if other_image(merged["image"]):
                continue
            yield where, merged, merged.get("command", []) + merged["args"]
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                if (merged.get(probe) or {}).get("exec"):
                    yield f"{where} {probe}", merged, merged[probe]["exec"]["command"]


@needs_yaml
def test_no_command_line_carries_a_token() -> None:
    seen_bots = 0
    for where, service, command in compose_commands():
        exports, argv = shell_parts(command)
        assert_no_token(where, command, set())
        if argv[:1] == ["sueca-bot"]:
            seen_bots += 1
            env = service.get("environment") or {}
            path = CAT_FILE.match(exports.get("SUECA_TOKEN", ""))
            assert path or "SUECA_TOKEN" in env, f"{where}: the bot gets no SUECA_TOKEN"
            if path:
                assert under(path.group(1), compose_mounts(service.get("volumes", []))), \
                    f"{where}: {path.group(1)} is not mounted"
    for where, container, command in k8s_commands():
        env = env_of(container)
        secret_vars = {k for k, v in env.items() if isinstance(v, dict) and "secretKeyRef" in v}
        argv = assert_no_token(where, command, secret_vars)
        if argv[:1] == ["sueca-bot"]:
            seen_bots += 1
            assert "SUECA_TOKEN" in secret_vars, f"{where}: SUECA_TOKEN not from a Secret"
    assert seen_bots >= 4, "no bot commands were checked"



def tls_recipe() -> str:
    """The recipe in compose.tls.yaml's header: the block of indented comment lines that
    signs the certificate (`openssl x509 -req`)."""
    blocks: list[list[str]] = [[]]
    for line in (DEPLOY / "compose.tls.yaml").read_text().splitlines():
        if line.startswith("#   "):
            blocks[-1].append(line[4:])
        elif blocks[-1]:
            blocks.append([])
    recipe = [b for b in blocks if any(ln.startswith("openssl x509 -req") for ln in b)]
    assert len(recipe) == 1, "compose.tls.yaml's header has no (or several) openssl recipes"
    return "\n".join(recipe[0]) + "\n"


@needs_yaml
def test_compose_tls_recipe_works_in_posix_sh(tmp_path: Path) -> None:
    import os
    import shutil
    import stat
    import subprocess

    if not shutil.which("openssl") or not shutil.which("sh"):
        pytest.skip("needs openssl and sh")
    script = tls_recipe()
    assert "<(" not in script, "process substitution is bash-only"
    run = subprocess.run(["sh", "-eu", "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, env={**os.environ, "TMPDIR": str(tmp_path)}, timeout=60)
    assert run.returncode == 0, f"the recipe fails in sh:\n{script}\n{run.stderr}"
    tls = tmp_path / "deploy" / "tls"
    assert {p.name for p in tls.iterdir()} == {"ca.crt", "tls.crt", "tls.key"}, \
        "deploy/tls must hold the certificate, its key and the CA certificate, nothing else"
    assert not [p for p in tmp_path.rglob("*") if p.name in ("ca.key", "ca.srl", "tls.csr")], \
        "the recipe leaves the CA's key (or its other working files) behind"
    mode = (tls / "tls.key").stat().st_mode
    assert mode & stat.S_IROTH or (tls / "tls.key").stat().st_uid == 10001, \
        "uid 10001 (the image's user) cannot read tls.key"
    verify = subprocess.run(["openssl", "verify", "-CAfile", str(tls / "ca.crt"),
                             str(tls / "tls.crt")], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stderr
    sans = subprocess.run(["openssl", "x509", "-in", str(tls / "tls.crt"), "-noout", "-ext",
                           "subjectAltName"], capture_output=True, text=True).stdout
    assert "DNS:referee" in sans


def bind_sources(service: dict[str, Any]) -> dict[str, str]:
    """target -> host source of a compose service's bind mounts."""
    out = {}
    for v in service.get("volumes", []):
        source, target = (v.split(":")[:2] if isinstance(v, str)
                          else (v.get("source", ""), v["target"]))
        if source.startswith((".", "/")):
            out[target] = source
    return out


@needs_yaml
def test_compose_tls_mounts_only_the_files_each_service_needs() -> None:
    services = compose_merged()
    for name, s in services.items():
        sources = bind_sources(s)
        tls_files = {Path(src).name for src in sources.values()
                     if Path(src).parent.name == "tls" or Path(src).name == "tls"}
        where = f"compose+tls {name}"
        for src in sources.values():
            assert Path(src).name != "tls", f"{where} mounts the whole {src} directory"
            assert Path(src).name != "ca.key", f"{where} mounts the CA's private key"
        wanted = {"tls.crt", "tls.key", "ca.crt"} if name == "referee" else {"ca.crt"}
        assert tls_files <= wanted, f"{where} mounts {sorted(tls_files - wanted)}"
    referee = {Path(s).name for s in bind_sources(services["referee"]).values()}
    assert {"tls.crt", "tls.key"} <= referee


def git_ignored(path: str) -> bool:
    import subprocess

    run = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", "--no-index", path],
                         capture_output=True)
    return run.returncode == 0


def test_deploy_secrets_are_git_ignored() -> None:
    import shutil

    if not shutil.which("git"):
        pytest.skip("needs git")
    for path in ("deploy/.env", "deploy/tls/tls.key", "deploy/tls/ca.crt"):
        assert git_ignored(path), f"{path} is not in .gitignore"
    assert not git_ignored("deploy/compose.yaml")


def dockerignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parents wins."""
    def regex(pattern: str) -> re.Pattern[str]:
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            elif pattern[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif pattern[i] == "?":
                out, i = out + "[^/]", i + 1
            elif pattern[i] == "[":
                j = pattern.index("]", i)
                out, i = out + pattern[i:j + 1], j + 1
            else:
                out, i = out + re.escape(pattern[i]), i + 1
        return re.compile(out + "$")

    parts = path.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    ignored = False
    for raw in patterns:
        negate = raw.startswith("!")
        pattern = raw.lstrip("!").strip("/")
        if any(regex(pattern).match(p) for p in prefixes):
            ignored = not negate
    return ignored


def test_dockerignore_keeps_secrets_and_caches_out_of_the_build_context() -> None:
    path = ROOT / ".dockerignore"
    assert path.is_file(), "no .dockerignore: deploy/.env, deploy/tls and .venv reach the builder"
    patterns = [ln.strip() for ln in path.read_text().splitlines()
                if ln.strip() and not ln.lstrip().startswith("#")]
    for secret in ("deploy/.env", "deploy/tls/tls.key", "deploy/tls/ca.crt", "ca.key",
                   "deploy/tls-ca/ca.key", ".env", ".venv/bin/python", ".git/config",
                   "arena/__pycache__/cli.cpython-311.pyc", ".pytest_cache/README.md",
                   ".hypothesis/examples/x", ".ruff_cache/x", "dump.rdb", "replays-1.jsonl",
                   "sueca_arena.egg-info/PKG-INFO", "build/lib/x.py"):
        assert dockerignored(secret, patterns), f"{secret} would be sent to the builder"
    # what the Dockerfile copies must stay in the context
    copied = re.findall(r"^COPY (.+) \S+$", (DEPLOY / "Dockerfile").read_text(), re.M)
    sources = [s for line in copied for s in line.split()]
    assert sources
    for source in sources:
        root = ROOT / source
        files = [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()
                                               and "__pycache__" not in p.parts
                                               and not any(q.endswith(".egg-info") for q in p.parts)]
        assert files, f"COPY {source}: nothing there"
        for f in files:
            assert not dockerignored(rel(f), patterns), f"{rel(f)} is copied but ignored"


@needs_yaml
def test_k8s_tls_secrets_are_mounted_narrowly_and_readable_by_the_image_user() -> None:
    base = {d["metadata"]["name"]: d for _, d in k8s_docs() if d["kind"] == "Deployment"}
    seen_key = False
    for patch in k8s_tls_patches():
        name = patch["metadata"]["name"]
        spec = patch["spec"]["template"]["spec"]
        pod_security = {**base[name]["spec"]["template"]["spec"].get("securityContext", {}),
                        **spec.get("securityContext", {})}
        uid = pod_security.get("runAsUser")
        assert uid == 10001, f"k8s/overlays/tls {name}: runs as {uid}, not the image's user"
        for volume in spec.get("volumes", []):
            source = volume.get("secret") or volume.get("configMap")
            where = f"k8s/overlays/tls {name} volume {volume['name']}"
            assert source and source.get("items"), f"{where}: mount only the listed items"
            keys = {item["key"] for item in source["items"]}
            if "secret" in volume:
                assert name == "referee", f"{where}: only the referee needs the TLS secret"
                assert keys == {"tls.crt", "tls.key"}, f"{where}: mounts {sorted(keys)}"
                for item in source["items"]:
                    mode = item.get("mode", source.get("defaultMode", 0o644))
                    readable = bool(mode & 0o004) or (
                        bool(mode & 0o040) and pod_security.get("fsGroup") is not None)
                    assert readable, f"{where}: {item['key']} mode {mode:o} unreadable by {uid}"
                    if item["key"] == "tls.key":
                        seen_key = True
                        assert not mode & 0o007, f"{where}: the key is world-readable"
            else:
                assert keys == {"ca.crt"}, f"{where}: clients need ca.crt only, not {keys}"
    assert seen_key, "the referee gets no tls.key from a Secret"
