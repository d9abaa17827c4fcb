"""The one place where engine objects become protobuf messages, and messages become engine objects.

The referee builds every message a bot sees here, straight from engine state (hands as masks,
tricks as tuples), so what a seat is told is decided in one short module that a reviewer can
read whole: a seat's :func:`observation` carries its own hand and public play, nothing else.

Match specs travel as plain dicts between the league (Celery, the CLI) and the referee's control
client (typed as :class:`SpecDict`); :func:`spec_to_pb` and :func:`spec_from_pb` are the two
directions, and :func:`check_spec` turns a wire spec into engine values (a :class:`MatchPlan`)
or raises :class:`SpecError` quoting the bad field. Imports only protobuf and the engine, so the
SDK may use it.

One module a concern, their public names re-exported here:

* :mod:`.convert`: engine objects to messages and back (variants, tricks, deals, a seat's view);
* :mod:`.results`: match results (:class:`ResultDict`), events as dicts, :func:`fault_detail`;
* :mod:`.specs`: match specs (:class:`SpecDict`, :class:`MatchPlan`, :func:`check_spec`);
* :mod:`.wire`: the hand-rolled encoders of the hot path (turn requests, actions).
"""

from __future__ import annotations

from sueca.codec.convert import (
    deal_end_to_pb,
    deal_result_from_pb,
    end_from_pb,
    match_end,
    match_start,
    observation,
    trick_from_pb,
    trick_to_pb,
    turn_request,
    variant_from_pb,
    variant_to_pb,
)
from sueca.codec.results import (
    FAULT_DETAIL_CHARS,
    ResultDict,
    event_to_dict,
    fault_detail,
    result_to_dict,
    result_to_pb,
)
from sueca.codec.specs import (
    DEFAULT_BANK_MS,
    DEFAULT_GRACE_MS,
    DEFAULT_MOVE_MS,
    MAX_CLOCK_MS,
    MAX_DECKS,
    MatchPlan,
    SpecDict,
    SpecError,
    check_spec,
    parse_seed,
    spec_from_pb,
    spec_to_pb,
)
from sueca.codec.wire import (
    RESIGN_REASON_CHARS,
    action_bytes,
    error_bytes,
    event_bytes,
    field_bytes,
    game_id_field,
    observation_bytes,
    resign_bytes,
    trick_bytes,
    trick_event_bytes,
    turn_request_bytes,
    varint,
    welcome_bytes,
)

__all__ = [
    "SpecError", "MatchPlan", "SpecDict", "ResultDict", "end_from_pb", "variant_to_pb",
    "variant_from_pb", "trick_to_pb", "trick_from_pb",
    "deal_end_to_pb", "deal_result_from_pb", "observation", "turn_request", "match_start",
    "match_end", "result_to_pb", "result_to_dict", "spec_to_pb", "spec_from_pb", "check_spec",
    "parse_seed", "event_to_dict", "varint", "field_bytes", "game_id_field", "trick_bytes",
    "observation_bytes", "turn_request_bytes", "trick_event_bytes", "event_bytes",
    "error_bytes", "welcome_bytes", "action_bytes", "resign_bytes", "fault_detail",
    "FAULT_DETAIL_CHARS", "RESIGN_REASON_CHARS", "DEFAULT_MOVE_MS", "DEFAULT_BANK_MS",
    "DEFAULT_GRACE_MS", "MAX_CLOCK_MS", "MAX_DECKS",
]
