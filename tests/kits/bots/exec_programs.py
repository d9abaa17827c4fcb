"""Programs for the exec: bot tests, run as ``python exec_programs.py KIND``: a plain player
(first legal card) and hostile ones, each misbehaving in one way. ``record`` runs another
command between the bot and the test, writing every line both ways to a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

HELLO = '{"type":"hello","protocol":"sueca-exec/1"}'


def out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def answer(msg: dict, card: str | None = None) -> str:
    if msg["kind"] == "redeal":
        return json.dumps({"game": msg["game"], "id": msg["id"], "redeal": False})
    return json.dumps({"game": msg["game"], "id": msg["id"], "card": card or msg["legal"][0]})


def play(kind: str, marker: str = "") -> None:
    if kind == "crash-once":  # crashes in the first game it plays, then plays fair
        kind = "plain" if os.path.exists(marker) else "crash"
        open(marker, "a").close()
    if kind in ("silent", "oldproto"):  # no hello, or one of another protocol
        sys.stderr.write(f"{kind}: misbehaving now\n\x1b[31mred\n")
        sys.stderr.flush()
        if kind == "oldproto":
            out('{"type":"hello","protocol":"sueca-exec/0"}')
        time.sleep(3600)
    if kind == "stderrflood":  # 8 MB of noise on stderr, then fair play
        for _ in range(8 * 1024):
            sys.stderr.write("x" * 1023 + "\n")
        sys.stderr.flush()
        kind = "plain"
    out(HELLO if kind != "multi" else HELLO[:-1] + ',"games":64}')
    turns = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] != "turn":
            continue
        turns += 1
        if turns < 3 or kind in ("plain", "multi"):  # every hostile one plays two turns first
            out(answer(msg))
            continue
        sys.stderr.write(f"{kind}: misbehaving now\n\x1b[31mred\n")
        sys.stderr.flush()
        if kind == "crash":
            raise SystemExit(3)
        if kind == "exit":
            sys.exit(0)
        if kind == "hang":
            time.sleep(3600)
        if kind == "garbage":
            out("this is not json")
        if kind == "badline":  # a longer line, its end marked: the record must quote it whole
            out("not json: " + "x" * 74 + " END-OF-BAD-LINE")
        if kind == "big":
            out(json.dumps({"game": msg["game"], "id": msg["id"], "card": "x" * 100_000}))
        if kind == "endless":  # a line that never ends: cut at the cap, never read whole
            sys.stdout.write("x" * 200_000)
            sys.stdout.flush()
        if kind == "flood":
            for _ in range(100_000):
                out(answer(msg))
        if kind == "unknown":
            out(json.dumps({"game": msg["game"], "id": msg["id"] + 1000, "card": "AS"}))
        if kind == "illegal":
            legal = set(msg["legal"])
            bad = next(c for c in (r + s for r in "A7KJQ65432" for s in "CDHS") if c not in legal)
            out(answer(msg, bad))
        time.sleep(3600)


def record(path: str, argv: list[str]) -> None:
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             bufsize=1)
    log = open(path, "a", buffering=1)
    lock = threading.Lock()

    def keep(direction: str, line: str) -> None:
        with lock:
            log.write(json.dumps([direction, line.rstrip("\n")]) + "\n")

    def pump_out() -> None:
        for line in child.stdout:  # type: ignore[union-attr]
            keep("out", line)
            sys.stdout.write(line)
            sys.stdout.flush()

    threading.Thread(target=pump_out, daemon=True).start()
    for line in sys.stdin:
        keep("in", line)
        child.stdin.write(line)  # type: ignore[union-attr]
        child.stdin.flush()  # type: ignore[union-attr]
    child.stdin.close()  # type: ignore[union-attr]
    child.wait()


if __name__ == "__main__":
    if sys.argv[1] == "record":
        record(sys.argv[2], sys.argv[3:])
    else:
        play(*sys.argv[1:3])
