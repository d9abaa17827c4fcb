"""The referee's metrics as alerts read them, from a fresh referee process.

Every labelled counter exists at 0 from the start (``increase()`` over a series born at 4 is 0:
the first burst of a new replica would be invisible), and each fault is counted in its class:
a renúncia (the reckless bot's in-game penalty) as ``game``, a message for an unknown game as
``protocol``, a wrong token as ``security``.
"""

from __future__ import annotations

import pytest
from kits.net import BotProc, RawBot, RefereeProc, sessions_of, wait_for

from sueca.arena import promscrape
from sueca.arena.promscrape import Samples
from sueca.referee import control
from sueca.referee import metrics as referee_metrics
from sueca.v1 import sueca_pb2 as pb

pytestmark = pytest.mark.slow


def scrape(ref: RefereeProc) -> Samples:
    return promscrape.scrape(promscrape.metrics_url(ref.metrics_port))


def faults(samples: dict) -> dict[tuple[str, str], float]:
    return {(dict(labels)["kind"], dict(labels)["class"]): v
            for (name, labels), v in samples.items() if name == "sueca_referee_faults_total"}


def test_fresh_referee_counts_every_fault_in_its_class(redis_url, tokens, tmp_path):
    ref = RefereeProc(redis_url, log_path=tmp_path / "referee.log")
    bots = []
    try:
        before = scrape(ref)
        # every known kind, in its class, at 0 before anything happened
        expected = {(k, "game") for k in referee_metrics.GAME_FAULTS} \
            | {(k, "protocol") for k in referee_metrics.PROTOCOL_FAULTS} \
            | {(k, "late") for k in referee_metrics.LATE_FAULTS} \
            | {(k, "security") for k in referee_metrics.SECURITY_FAULTS}
        assert faults(before) == dict.fromkeys(expected, 0.0)
        ends = {dict(labels)["end"]: v for (name, labels), v in before.items()
                if name == "sueca_referee_matches_total"}
        assert ends == dict.fromkeys(referee_metrics.MATCH_ENDS, 0.0)
        build = [dict(labels) for (name, labels), v in before.items()
                 if name == "sueca_build_info" and v == 1]
        assert len(build) == 1 and build[0]["component"] == "referee"
        assert ("process_cpu_seconds_total", ()) in before

        # a renúncia: the reckless example bot against a random one
        bots = [BotProc("reckless", ref.address, tokens["renegade"], log_path=tmp_path / "r.log"),
                BotProc("random", ref.address, tokens["carol"], log_path=tmp_path / "c.log")]
        for b in bots:
            wait_for(lambda b=b: sessions_of(ref.address, b.name) >= 1, 30, f"bot {b.name}")
        for seed in range(1, 6):
            result = control.run_match(ref.address, {"bots": ["renegade", "carol"] * 2,
                                                     "seed": seed}, 60)
            if result["end"] == "renuncia":
                break
        assert result["end"] == "renuncia", "five reckless matches without a renúncia"

        # a protocol fault: an answer for a game that does not exist
        raw = RawBot(ref.address, "mallory", tokens["mallory"])
        assert raw.next_message().HasField("welcome")
        raw.send(pb.BotMessage(actions=[pb.Action(game_id="nope/0", request_id=1, card=0)]))
        assert raw.expect(lambda m: m.errors, 10, "an ActionError").errors[0].code == "unknown_game"
        raw.cancel()

        # a security fault: a wrong token is refused
        refused = RawBot(ref.address, "dave", "dave.wrong-token")
        assert refused.next_message() is None and refused.status is not None

        after = faults(scrape(ref))
        delta = {k: after[k] - faults(before)[k] for k in after if after[k] != faults(before)[k]}
        assert delta.pop(("renuncia", "game")) >= 1
        assert delta == {("unknown_game", "protocol"): 1, ("unauthenticated", "security"): 1}
    finally:
        for b in bots:
            b.stop()
        ref.stop()
