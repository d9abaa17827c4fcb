"""Hostile programs against the sandbox's walls: the network, what is not its own to read (the
host's /etc/shadow, another bot's folder, a token's file, the environment of whoever started
it), writes outside its /data and /tmp, and the kernel's ways out (ptrace, mount, unshare).
Each is refused, the owner's log has each refusal, and nothing is left behind (kits.sandbox).
``SUECA_TEST_SANDBOX_OFF=GUARD`` (the guard each test names) turns each one red."""

from __future__ import annotations

import os
import re
import socket

from kits.sandbox import owner_log, run, sandbox


def _host_address() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
        return str(s.getsockname()[0])


def test_no_network_not_even_the_hosts_loopback(tmp_path):  # off: net
    with socket.create_server(("0.0.0.0", 0)) as listener:
        port = str(listener.getsockname()[1])
        listener.setblocking(False)
        with sandbox(tmp_path, "net", "net_connect.c") as box:
            done = run(box, ["./net_connect", "127.0.0.1", port, _host_address(), port])
            log = owner_log(box)
        try:
            listener.accept()
            reached = True
        except BlockingIOError:
            reached = False
    assert not reached, log
    assert done.returncode == 0, log
    assert re.search(r"connect 127\.0\.0\.1:\d+: Connection refused", log), log  # its own lo
    assert re.search(r"connect [\d.]+:\d+: Network is unreachable", log), log
    assert "udp 1.1.1.1:53: Network is unreachable" in log, log


def test_what_is_not_its_own_is_not_there(tmp_path):  # off: env, or root,mounts
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "secret.txt").write_text("another bot's code\n")
    token = tmp_path / "token"
    token.write_text("snoop.s3cr3t\n")
    env = {**os.environ, "SUECA_TOKEN": "snoop.s3cr3t"}  # as sueca-bot run holds it
    with sandbox(tmp_path, "snoop", "snoop.c") as box:
        done = run(box, ["./snoop", "/etc/shadow", str(other), str(token), str(box.code_dir),
                         "-w", "t3rc3s.poons"], env=env)
        log = owner_log(box)
    assert "FOUND" not in log, log
    for path in ("/etc/shadow", str(other), str(token), str(box.code_dir)):
        assert f"{path}: No such file or directory" in log, log
    assert re.search(r"searched [1-9]\d* processes for snoop.s3cr3t", log), log
    assert done.returncode == 0, log


def test_it_writes_nowhere_but_its_data_and_tmp(tmp_path):  # off: readonly
    outside = tmp_path / "outside"
    outside.mkdir()
    os.chmod(outside, 0o777)
    with sandbox(tmp_path, "write", "write_out.c") as box:
        os.chmod(box.code_dir, 0o777)  # the read-only mount holds, not the folder's mode
        done = run(box, ["./write_out", str(outside)])
        log = owner_log(box)
    assert "WROTE /data/" in log and "WROTE /tmp/" in log, log
    assert len(re.findall("WROTE", log)) == 2, log
    for path in ("/bot", "/usr", "/", "/etc", "/dev"):
        assert f"{path}: Read-only file system" in log, log
    assert f"{outside}: No such file or directory" in log, log
    assert not list(outside.iterdir()) and not (box.code_dir / "hostile-was-here").exists()
    assert done.returncode == 0, log


def test_ptrace_mount_and_unshare_are_refused(tmp_path):  # off: seccomp, then seccomp+userns
    with sandbox(tmp_path, "syscalls", "syscalls.c") as box:
        done = run(box, ["./syscalls"])
        log = owner_log(box)
    assert "ALLOWED" not in log, log
    for what in ("ptrace", "mount", "unshare user"):
        assert f"{what}: Operation not permitted" in log, log
    assert done.returncode == 0, log
