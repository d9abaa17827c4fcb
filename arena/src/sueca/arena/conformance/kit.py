"""Run the bot checks: start the scripted referee, start the bot (``sueca-bot run SPEC`` in a
process of its own, in its own session) or wait for one at ``--listen ADDR``, follow the
script, then stop whatever the kit started.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from sueca.arena.conformance.bot_script import BotScript, Timing
from sueca.arena.conformance.report import Checks, shown
from sueca.arena.conformance.wire import Listener

__all__ = ["check_bot", "LOG_TAIL_LINES"]

LOG_TAIL_LINES = 5   # lines of the bot's own log shown when it exits early
EXIT_SECONDS = 10.0  # a drained bot process has this long to exit before it is killed


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_bytes()[-4000:].decode("utf-8", "replace")
    except OSError:
        return ""
    last = [line for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(shown(line, 160) for line in last)


async def check_bot(spec: str | None, listen: tuple[str, int] | None, *, name: str,
                    capacity: int, timing: Timing, token: str | None = None,
                    progress: Callable[[str], None] = lambda line: None,
                    ) -> tuple[Checks, dict[str, object]]:
    """Run every bot check; the checks and facts for the report (address, bot exit code).

    With ``spec`` the kit starts the bot itself; with ``listen`` (host, port) it waits there
    for whatever bot its author starts."""
    token = token or f"{name}.{secrets.token_hex(12)}"
    listener = Listener()
    host, port = listen or ("127.0.0.1", 0)
    port = await listener.start(host, port)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    extra: dict[str, object] = {"address": address, "bot": spec or "(listen)"}
    proc: asyncio.subprocess.Process | None = None
    workdir = Path(tempfile.mkdtemp(prefix="sueca-conformance-"))
    log = workdir / "bot.log"
    try:
        if spec is not None:
            with open(log, "wb") as out:
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "sueca.sdk.cli", "run", spec, "--server", address,
                    "--capacity", str(capacity), "--max-backoff", "1",
                    "--drain-timeout", str(timing.drain),
                    stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out,
                    env={**os.environ, "SUECA_TOKEN": token}, start_new_session=True)
        else:
            progress(f"listening on {address}: start your bot there with the token {token} "
                     f"(SUECA_TOKEN) within {timing.connect:g}s")

        async def stop_bot() -> None:
            if proc is not None:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
            else:
                progress(f"stop your bot now (Ctrl-C, SIGTERM): its drain is checked for "
                         f"{timing.drain:g}s")

        async def exited() -> str:
            assert proc is not None
            code = await proc.wait()
            return f"the bot process exited with code {code} before connecting: {_tail(log)}"

        script = BotScript(listener, token, timing=timing, stop_bot=stop_bot, progress=progress,
                           signalled=proc is not None,
                           exited=exited if proc is not None else None)
        checks = await script.run()
        if proc is not None:
            try:
                extra["bot_exit_code"] = await asyncio.wait_for(proc.wait(), EXIT_SECONDS)
            except TimeoutError:
                extra["bot_exit_code"] = None
            if any(c.status == "fail" for c in checks.all()):
                extra["bot_log_tail"] = _tail(log)
        return checks, extra
    finally:
        if proc is not None and proc.returncode is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await proc.wait()
        await listener.stop()
        for f in workdir.iterdir():
            f.unlink()
        workdir.rmdir()
