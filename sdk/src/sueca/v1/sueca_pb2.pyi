from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Hello(_message.Message):
    __slots__ = ("bot", "token", "sdk_version", "capacity")
    BOT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    SDK_VERSION_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    bot: str
    token: str
    sdk_version: str
    capacity: int
    def __init__(self, bot: _Optional[str] = ..., token: _Optional[str] = ..., sdk_version: _Optional[str] = ..., capacity: _Optional[int] = ...) -> None: ...

class BotMessage(_message.Message):
    __slots__ = ("hello", "actions", "drain")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    actions: _containers.RepeatedCompositeFieldContainer[Action]
    drain: bool
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., drain: _Optional[bool] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("game_id", "request_id", "card", "redeal", "resign")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    REDEAL_FIELD_NUMBER: _ClassVar[int]
    RESIGN_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    request_id: int
    card: int
    redeal: bool
    resign: Resign
    def __init__(self, game_id: _Optional[str] = ..., request_id: _Optional[int] = ..., card: _Optional[int] = ..., redeal: _Optional[bool] = ..., resign: _Optional[_Union[Resign, _Mapping]] = ...) -> None: ...

class Resign(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "turns", "events", "errors")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    turns: _containers.RepeatedCompositeFieldContainer[TurnRequest]
    events: _containers.RepeatedCompositeFieldContainer[GameEvent]
    errors: _containers.RepeatedCompositeFieldContainer[ActionError]
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., turns: _Optional[_Iterable[_Union[TurnRequest, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[GameEvent, _Mapping]]] = ..., errors: _Optional[_Iterable[_Union[ActionError, _Mapping]]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("referee_id", "capacity")
    REFEREE_ID_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    referee_id: str
    capacity: int
    def __init__(self, referee_id: _Optional[str] = ..., capacity: _Optional[int] = ...) -> None: ...

class Variant(_message.Message):
    __slots__ = ("trump_card", "tie", "bandeira", "target", "weak_hand_redeal", "direction")
    TRUMP_CARD_FIELD_NUMBER: _ClassVar[int]
    TIE_FIELD_NUMBER: _ClassVar[int]
    BANDEIRA_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    WEAK_HAND_REDEAL_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    trump_card: str
    tie: str
    bandeira: str
    target: int
    weak_hand_redeal: bool
    direction: str
    def __init__(self, trump_card: _Optional[str] = ..., tie: _Optional[str] = ..., bandeira: _Optional[str] = ..., target: _Optional[int] = ..., weak_hand_redeal: _Optional[bool] = ..., direction: _Optional[str] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("leader", "cards", "winner", "points")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    leader: int
    cards: _containers.RepeatedScalarFieldContainer[int]
    winner: int
    points: int
    def __init__(self, leader: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ..., winner: _Optional[int] = ..., points: _Optional[int] = ...) -> None: ...

class PlayedCard(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "hand", "legal", "trump", "trump_suit", "trump_held", "dealer", "leader", "trick", "tricks", "points", "game_points", "held_over", "deal_number")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    LEGAL_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    TRUMP_SUIT_FIELD_NUMBER: _ClassVar[int]
    TRUMP_HELD_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    GAME_POINTS_FIELD_NUMBER: _ClassVar[int]
    HELD_OVER_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: _containers.RepeatedScalarFieldContainer[int]
    legal: _containers.RepeatedScalarFieldContainer[int]
    trump: int
    trump_suit: int
    trump_held: bool
    dealer: int
    leader: int
    trick: _containers.RepeatedCompositeFieldContainer[PlayedCard]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    points: _containers.RepeatedScalarFieldContainer[int]
    game_points: _containers.RepeatedScalarFieldContainer[int]
    held_over: int
    deal_number: int
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[_Iterable[int]] = ..., legal: _Optional[_Iterable[int]] = ..., trump: _Optional[int] = ..., trump_suit: _Optional[int] = ..., trump_held: _Optional[bool] = ..., dealer: _Optional[int] = ..., leader: _Optional[int] = ..., trick: _Optional[_Iterable[_Union[PlayedCard, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., points: _Optional[_Iterable[int]] = ..., game_points: _Optional[_Iterable[int]] = ..., held_over: _Optional[int] = ..., deal_number: _Optional[int] = ...) -> None: ...

class TurnRequest(_message.Message):
    __slots__ = ("game_id", "request_id", "kind", "observation", "deadline_ms", "move_ms", "bank_ms")
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        PLAY: _ClassVar[TurnRequest.Kind]
        REDEAL: _ClassVar[TurnRequest.Kind]
    PLAY: TurnRequest.Kind
    REDEAL: TurnRequest.Kind
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    request_id: int
    kind: TurnRequest.Kind
    observation: Observation
    deadline_ms: int
    move_ms: int
    bank_ms: int
    def __init__(self, game_id: _Optional[str] = ..., request_id: _Optional[int] = ..., kind: _Optional[_Union[TurnRequest.Kind, str]] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., deadline_ms: _Optional[int] = ..., move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("seat", "seats", "variant", "bot_seed")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    seats: _containers.RepeatedScalarFieldContainer[str]
    variant: Variant
    bot_seed: int
    def __init__(self, seat: _Optional[int] = ..., seats: _Optional[_Iterable[str]] = ..., variant: _Optional[_Union[Variant, _Mapping]] = ..., bot_seed: _Optional[int] = ...) -> None: ...

class DealEnd(_message.Message):
    __slots__ = ("number", "dealer", "end", "points", "game_points", "fault_seat")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    GAME_POINTS_FIELD_NUMBER: _ClassVar[int]
    FAULT_SEAT_FIELD_NUMBER: _ClassVar[int]
    number: int
    dealer: int
    end: str
    points: _containers.RepeatedScalarFieldContainer[int]
    game_points: _containers.RepeatedScalarFieldContainer[int]
    fault_seat: int
    def __init__(self, number: _Optional[int] = ..., dealer: _Optional[int] = ..., end: _Optional[str] = ..., points: _Optional[_Iterable[int]] = ..., game_points: _Optional[_Iterable[int]] = ..., fault_seat: _Optional[int] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("game_points", "winner", "end", "fault_seat", "fault_bot")
    GAME_POINTS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    FAULT_SEAT_FIELD_NUMBER: _ClassVar[int]
    FAULT_BOT_FIELD_NUMBER: _ClassVar[int]
    game_points: _containers.RepeatedScalarFieldContainer[int]
    winner: int
    end: str
    fault_seat: int
    fault_bot: str
    def __init__(self, game_points: _Optional[_Iterable[int]] = ..., winner: _Optional[int] = ..., end: _Optional[str] = ..., fault_seat: _Optional[int] = ..., fault_bot: _Optional[str] = ...) -> None: ...

class GameEvent(_message.Message):
    __slots__ = ("game_id", "match_start", "trick_end", "deal_end", "match_end")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    TRICK_END_FIELD_NUMBER: _ClassVar[int]
    DEAL_END_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    match_start: MatchStart
    trick_end: Trick
    deal_end: DealEnd
    match_end: MatchEnd
    def __init__(self, game_id: _Optional[str] = ..., match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., trick_end: _Optional[_Union[Trick, _Mapping]] = ..., deal_end: _Optional[_Union[DealEnd, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ...) -> None: ...

class ActionError(_message.Message):
    __slots__ = ("game_id", "request_id", "code", "message")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    request_id: int
    code: str
    message: str
    def __init__(self, game_id: _Optional[str] = ..., request_id: _Optional[int] = ..., code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Deck(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, cards: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchSpec(_message.Message):
    __slots__ = ("match_id", "bots", "variant", "seed", "decks", "first_dealer", "move_ms", "bank_ms", "grace_ms", "lenient", "quiet")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DECKS_FIELD_NUMBER: _ClassVar[int]
    FIRST_DEALER_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    LENIENT_FIELD_NUMBER: _ClassVar[int]
    QUIET_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    variant: Variant
    seed: str
    decks: _containers.RepeatedCompositeFieldContainer[Deck]
    first_dealer: int
    move_ms: int
    bank_ms: int
    grace_ms: int
    lenient: bool
    quiet: bool
    def __init__(self, match_id: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., variant: _Optional[_Union[Variant, _Mapping]] = ..., seed: _Optional[str] = ..., decks: _Optional[_Iterable[_Union[Deck, _Mapping]]] = ..., first_dealer: _Optional[int] = ..., move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., grace_ms: _Optional[int] = ..., lenient: _Optional[bool] = ..., quiet: _Optional[bool] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("match_id", "end", "winner", "game_points", "fault_seat", "fault_bot", "replay_json", "fault_detail")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    GAME_POINTS_FIELD_NUMBER: _ClassVar[int]
    FAULT_SEAT_FIELD_NUMBER: _ClassVar[int]
    FAULT_BOT_FIELD_NUMBER: _ClassVar[int]
    REPLAY_JSON_FIELD_NUMBER: _ClassVar[int]
    FAULT_DETAIL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    end: str
    winner: int
    game_points: _containers.RepeatedScalarFieldContainer[int]
    fault_seat: int
    fault_bot: str
    replay_json: str
    fault_detail: str
    def __init__(self, match_id: _Optional[str] = ..., end: _Optional[str] = ..., winner: _Optional[int] = ..., game_points: _Optional[_Iterable[int]] = ..., fault_seat: _Optional[int] = ..., fault_bot: _Optional[str] = ..., replay_json: _Optional[str] = ..., fault_detail: _Optional[str] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("match_id", "started", "card", "trick_end", "deal_end", "result", "deal_start")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    TRICK_END_FIELD_NUMBER: _ClassVar[int]
    DEAL_END_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    DEAL_START_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    started: MatchStart
    card: PlayedCard
    trick_end: Trick
    deal_end: DealEnd
    result: MatchResult
    deal_start: DealStart
    def __init__(self, match_id: _Optional[str] = ..., started: _Optional[_Union[MatchStart, _Mapping]] = ..., card: _Optional[_Union[PlayedCard, _Mapping]] = ..., trick_end: _Optional[_Union[Trick, _Mapping]] = ..., deal_end: _Optional[_Union[DealEnd, _Mapping]] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ..., deal_start: _Optional[_Union[DealStart, _Mapping]] = ...) -> None: ...

class DealStart(_message.Message):
    __slots__ = ("number", "dealer", "trump")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    number: int
    dealer: int
    trump: int
    def __init__(self, number: _Optional[int] = ..., dealer: _Optional[int] = ..., trump: _Optional[int] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BotStatus(_message.Message):
    __slots__ = ("bot", "sessions", "capacity", "free")
    BOT_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    FREE_FIELD_NUMBER: _ClassVar[int]
    bot: str
    sessions: int
    capacity: int
    free: int
    def __init__(self, bot: _Optional[str] = ..., sessions: _Optional[int] = ..., capacity: _Optional[int] = ..., free: _Optional[int] = ...) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("referee_id", "bots", "unix_ms")
    REFEREE_ID_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    referee_id: str
    bots: _containers.RepeatedCompositeFieldContainer[BotStatus]
    unix_ms: int
    def __init__(self, referee_id: _Optional[str] = ..., bots: _Optional[_Iterable[_Union[BotStatus, _Mapping]]] = ..., unix_ms: _Optional[int] = ...) -> None: ...
