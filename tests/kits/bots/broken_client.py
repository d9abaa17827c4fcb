"""A deliberately broken bot for the conformance tests: a raw gRPC client (no SDK) whose
misbehaviour is chosen on its command line, so the kit's report can be checked to name
exactly what it breaks.

    SUECA_TOKEN=conformance.x python broken_client.py HOST:PORT MODE

MODE: ``ok`` (conforming), ``wrong-request-id``, ``duplicate`` (every answer sent twice),
``illegal-card`` (the first card of every game is not a legal one), ``no-reconnect`` (exits
when its stream drops), ``ignores-drain`` (on SIGTERM exits at once, its game running),
``ignores-stop`` (SIGTERM does nothing: it stays connected and never drains),
``old-answer-after-reconnect`` (a turn sent again on a new stream is answered twice: once with
the answer it had for the dropped stream, then afresh, as an SDK that kept the old answer).
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
import time

import grpc

from sueca.v1 import sueca_pb2 as pb

MODES = ("ok", "wrong-request-id", "duplicate", "illegal-card", "no-reconnect",
         "ignores-drain", "ignores-stop", "old-answer-after-reconnect")


class Broken:
    def __init__(self, address: str, token: str, mode: str) -> None:
        self.address, self.token, self.mode = address, token, mode
        self.running: set[str] = set()   # games started and not ended
        self.played: set[str] = set()    # games in which a card was played
        self.draining = False
        self.streams = 0                 # streams opened so far
        self.asked: dict[tuple[str, int], int] = {}  # (game, request) -> the stream it came on
        self.out: queue.Queue[bytes | None] = queue.Queue()
        self.lock = threading.Lock()

    def drain(self) -> None:
        if self.mode == "ignores-drain":
            os._exit(0)
        with self.lock:
            self.draining = True
            self.out.put(pb.BotMessage(drain=True).SerializeToString())
            if not self.running:
                self.out.put(None)

    def answer(self, turn: pb.TurnRequest) -> list[pb.Action]:
        rid = turn.request_id + (1000 if self.mode == "wrong-request-id" else 0)
        again = self.asked.setdefault((turn.game_id, turn.request_id), self.streams) \
            != self.streams and self.mode == "old-answer-after-reconnect"
        if turn.kind == pb.TurnRequest.REDEAL:
            action = pb.Action(game_id=turn.game_id, request_id=rid, redeal=False)
        else:
            obs = turn.observation
            card = obs.legal[0]
            if self.mode == "illegal-card" and turn.game_id not in self.played:
                card = next(c for c in range(40) if c not in obs.legal)
            self.played.add(turn.game_id)
            action = pb.Action(game_id=turn.game_id, request_id=rid, card=card)
        return [action, action] if self.mode == "duplicate" or again else [action]

    def session(self) -> bool:
        """One stream; True if it ended by our own close (drained)."""
        self.out = queue.Queue()
        self.streams += 1
        self.out.put(pb.BotMessage(hello=pb.Hello(
            bot=self.token.rpartition(".")[0], token=self.token, capacity=4,
            sdk_version="brokenbot")).SerializeToString())
        if self.draining:
            self.out.put(pb.BotMessage(drain=True).SerializeToString())
        with grpc.insecure_channel(self.address) as channel:
            connect = channel.stream_stream("/sueca.v1.BotService/Connect",
                                            request_serializer=lambda b: b,
                                            response_deserializer=pb.RefereeMessage.FromString)
            try:
                for msg in connect(iter(self.out.get, None)):
                    with self.lock:
                        self.handle(msg)
            except grpc.RpcError:
                return False
        return True

    def handle(self, msg: pb.RefereeMessage) -> None:
        for event in msg.events:
            if event.HasField("match_start"):
                self.running.add(event.game_id)
            elif event.HasField("match_end"):
                self.running.discard(event.game_id)
        actions = [a for t in msg.turns for a in self.answer(t)]
        if actions:
            self.out.put(pb.BotMessage(actions=actions).SerializeToString())
        if self.draining and not self.running:
            self.out.put(None)

    def run(self) -> int:
        while True:
            if self.session():
                return 0
            if self.mode == "no-reconnect":
                return 3
            time.sleep(0.3)


def main() -> int:
    address, mode = sys.argv[1], sys.argv[2]
    assert mode in MODES, mode
    bot = Broken(address, os.environ["SUECA_TOKEN"], mode)
    # drain in a thread of its own: a handler runs on the main thread between two bytecodes,
    # maybe while that thread holds the lock or the queue's, which drain needs too
    signal.signal(signal.SIGTERM, (lambda *_: None) if mode == "ignores-stop" else
                  lambda *_: threading.Thread(target=bot.drain, daemon=True).start())
    for _ in range(100):  # the kit may not listen yet
        try:
            return bot.run()
        except grpc.RpcError:
            time.sleep(0.1)
    return 4


if __name__ == "__main__":
    sys.exit(main())
