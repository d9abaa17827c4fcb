"""A finished match is freed by reference counting, not left for the cyclic garbage collector
(whose full passes over a busy referee's heap cost milliseconds each, in the event loop).
In-process: the hub and sessions are real, the bots answer from the encoded turn requests."""

from __future__ import annotations

import asyncio
import gc
import random
import weakref

from sueca import codec as conv
from sueca.engine.game import TIMEOUT
from sueca.referee.clocked_match import ClockedMatch
from sueca.referee.sessions import Session, SessionHub
from sueca.v1 import sueca_pb2 as pb


def _runner(hub: SessionHub, seed: int) -> ClockedMatch:
    plan = conv.check_spec(conv.spec_to_pb({"match_id": f"mem-{seed}", "bots": ["b"] * 4,
                                            "seed": seed, "quiet": True}))
    return ClockedMatch(plan, hub.reserve(plan.bots), hub, b"k" * 32)


def _answer_all(hub: SessionHub, session: Session, rng: random.Random) -> int:
    """Answer every turn queued on ``session`` with a random legal card; how many."""
    data = session.take()
    if data is None:
        return 0
    msg = pb.RefereeMessage.FromString(data)
    actions = []
    for turn in msg.turns:
        gid = conv.game_id_field(turn.game_id)
        if turn.kind == pb.TurnRequest.REDEAL:
            actions.append(conv.action_bytes(gid, turn.request_id, redeal=False))
        else:
            legal = turn.observation.legal
            actions.append(conv.action_bytes(gid, turn.request_id,
                                             legal[rng.randrange(len(legal))]))
    hub.dispatch(session, pb.BotMessage.FromString(b"".join(actions)).actions)
    return len(actions)


def test_finished_matches_free_without_the_cycle_collector() -> None:
    async def scenario() -> tuple[list[weakref.ref[ClockedMatch]], list[str]]:
        hub = SessionHub()
        session = Session("b", 16)
        hub.add(session)
        rng = random.Random(5)
        played = _runner(hub, 1)
        stopped = _runner(hub, 2)
        refs = [weakref.ref(played), weakref.ref(stopped)]
        played.start()
        stopped.start()
        stopped.stop(TIMEOUT, stopped.match.turn)  # ended from outside the game
        while not played.done.is_set():
            assert _answer_all(hub, session, rng), "the match stalled"
        ends = [played.result.end, stopped.result.end]  # type: ignore[union-attr]
        assert not hub.games and not session.games  # every seat unbound
        del played, stopped
        return refs, ends

    gc.collect()
    gc.disable()
    try:
        refs, ends = asyncio.run(scenario())
        assert ends == ["normal", "timeout"]
        assert [r() for r in refs] == [None, None], "a finished match is held by a cycle"
    finally:
        gc.enable()
