"""The bench's simulated bots (``sueca.arena.bench.simbots``) against a real referee: they speak
HTTP/2 and gRPC's framing themselves, so what matters is that a gRPC server takes them for any
gRPC client: welcomed, seated, answering legally, and a refusal reported as a broken session."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from kits.wait import wait_for

from sueca.referee import control
from sueca.referee.server import ServerThread, StaticAuth

NAMES = ["s0", "s1", "s2", "s3"]


def _sessions(address: str) -> int:
    return sum(b["sessions"] for b in control.list_bots(address))


def test_simulated_bots_play_and_report_refusals(tmp_path: Path) -> None:
    tokens = {n: f"{n}.secret" for n in NAMES}
    sent = [[n, tokens[n]] for n in NAMES] + [["s4", "wrong"]]  # s4 is no bot of the referee
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(sent))
    with ServerThread(StaticAuth(tokens)) as srv:
        sims = subprocess.Popen(
            [sys.executable, "-m", "sueca.arena.bench.simbots", "--server", srv.address,
             "--tokens", str(path), "--count", "5", "--capacity", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: _sessions(srv.address) >= 4, 30, "four simulated bots' sessions",
                     interval=0.1, detail=lambda: f"simbots exit {sims.poll()}")
            results = [control.run_match(srv.address, {"bots": NAMES, "seed": 7 + k,
                                                       "match_id": f"sim-{k}"}, 60)
                       for k in range(2)]
        finally:
            sims.send_signal(signal.SIGTERM)
            out, err = sims.communicate(timeout=30)
    assert sims.returncode == 0, err
    report = json.loads(out.strip().splitlines()[-1])["simbots"]
    assert [r["end"] for r in results] == ["normal", "normal"]
    moves = sum(len(t["cards"]) for r in results for d in r["replay"]["deals"]
                for t in d["tricks"])
    assert report["welcomed"] == 4 and report["errors"] == 0
    assert report["turns"] >= moves > 0  # redeal answers are turns too
    assert report["broken"] == 1 and "s4 (before the welcome)" in report["first_error"]
