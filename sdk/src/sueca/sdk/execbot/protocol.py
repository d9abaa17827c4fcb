"""The line protocol ``sueca-exec/1``: what an ``exec:`` program reads and writes.

One JSON object per line in each direction, UTF-8, ``\\n``-terminated. The program's standard
input carries (each with ``"type"``): ``hello`` (the protocol), ``start`` (a game begins: seat,
seats, variant, the bot's seed), ``turn`` (a decision is wanted: the seat's observation, the
legal cards, the milliseconds it may take), ``trick``, ``deal`` and ``end`` (what happened). Its
standard output carries its own ``hello`` first (which may say it takes many games at once),
then exactly one ``answer`` per turn, echoing the turn's ``game`` and ``id``. Cards are written
as in the README (``AS``, ``7H``). ``docs/any-language.md`` is the author's page and
``proto/exec/sueca-exec-1.schema.json`` the schema every line is checked against in the tests.

This module only builds and reads lines; :mod:`.program` moves them and :mod:`sueca.sdk.execbot`
decides what a bad one costs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from sueca.engine import CARDS, Card, CardError, DealResult, End, Trick, Variant, parse_card
from sueca.engine.observation import Observation

from ..bot import MatchInfo
from ..logs import shown

__all__ = ["PROTOCOL", "LINE_LIMIT", "MAX_GAMES", "ProtocolError", "hello", "start", "turn",
           "trick", "deal", "end", "read_hello", "read_answer", "GameLines"]

PROTOCOL = "sueca-exec/1"
LINE_LIMIT = 64 * 1024  # bytes of one line from the program, newline excluded
MAX_GAMES = 1024  # the most games one process may say it takes at once
# A bad line is quoted up to this many characters: with the reason's words before it, the whole
# fits the 200 characters a match record keeps of a resigning bot's reason
BAD_LINE_CHARS = 120

_dumps = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


class ProtocolError(ValueError):
    """A line from the program that breaks the protocol; the message quotes it (escaped, cut)."""


def _quoted(text: str | bytes) -> str:
    """What the program printed, escaped and cut to :data:`BAD_LINE_CHARS`."""
    return shown(text, BAD_LINE_CHARS)


def _line(obj: dict[str, Any]) -> bytes:
    return _dumps(obj).encode() + b"\n"


def _cards(cards: Sequence[Card]) -> list[str]:
    return [str(c) for c in cards]


def _trick(t: Trick) -> dict[str, Any]:
    return {"leader": t.leader, "cards": _cards(t.cards), "winner": t.winner, "points": t.points}


def hello() -> bytes:
    """The first line the program reads."""
    return _line({"type": "hello", "protocol": PROTOCOL})


def start(game: str, info: MatchInfo) -> bytes:
    """A game begins for this program: its seat (team = seat % 2), every seat's bot name, the
    rule variant and the seed of its own randomness (same seed, same game)."""
    return _line({"type": "start", "game": game, "seat": info.seat, "seats": list(info.seats),
                  "variant": variant(info.variant), "seed": info.bot_seed})


def variant(v: Variant) -> dict[str, Any]:
    return v.to_dict()


def turn(game: str, turn_id: int, *, kind: str, obs: Observation, ms: int) -> bytes:
    """A decision for ``game``: ``kind`` "play" (answer a card of ``legal``) or "redeal"
    (answer true to throw the hand in), within ``ms`` milliseconds."""
    return _line({"type": "turn", "game": game, "id": turn_id, "kind": kind, "ms": ms,
                  "legal": _cards(obs.legal), "obs": observation(obs)})


class GameLines:
    """The turn and trick lines of one game, written straight to bytes: the same text as
    :func:`turn` and :func:`trick` (the tests compare them on whole matches) at a fraction of
    their cost. The game's id is encoded once, and each finished trick once per deal (its line
    and every later turn's ``tricks`` share the text)."""

    __slots__ = ("game", "head", "done", "joined")

    def __init__(self, game: str) -> None:
        self.game = _dumps(game)
        self.head = '{"type":"turn","game":' + self.game + ',"id":'
        self.done: list[tuple[Trick, str]] = []  # this deal's tricks so far, and their text
        # the last turn's finished tricks (the last one and how many) and their joined text,
        # which the next turn of the deal extends
        self.joined: tuple[Trick | None, int, str] = (None, 0, "")

    def turn(self, turn_id: int, kind: str, obs: Observation, ms: int) -> bytes:
        tricks = obs.tricks
        last, count, joined = self.joined
        n = len(tricks)
        if n != count or (count and tricks[-1] is not last):
            if count and n > count and tricks[count - 1] is last:  # the deal went on
                joined += "," + ",".join([self._text(tricks[i], i) for i in range(count, n)])
            else:
                done = self.done
                if n < len(done) or (done and tricks and tricks[0] is not done[0][0]):
                    done.clear()  # a new deal
                joined = ",".join([self._text(t, i) for i, t in enumerate(tricks)])
            self.joined = (tricks[-1] if tricks else None, n, joined)
        points, game_points = obs.points, obs.game_points
        return (f'{self.head}{turn_id},"kind":"{kind}","ms":{ms},"legal":{_list(obs.legal)},'
                f'"obs":{{"seat":{obs.seat},"hand":{_list(obs.hand)},'
                f'"trump":{_QUOTED[obs.trump]},'
                f'"trump_held":{"true" if obs.trump_held else "false"},'
                f'"dealer":{obs.dealer},"leader":{obs.leader},'
                f'"trick":[{",".join([_QUOTED[c] for _, c in obs.trick])}],'
                f'"tricks":[{joined}],'
                f'"points":[{points[0]},{points[1]}],'
                f'"game_points":[{game_points[0]},{game_points[1]}],'
                f'"held_over":{obs.held_over},"deal":{obs.deal_number}}}}}\n').encode()

    def trick(self, t: Trick) -> bytes:
        text = self._text(t, len(self.done) - 1 if self.done and self.done[-1][0] is t
                          else len(self.done))
        return f'{{"type":"trick","game":{self.game},{text[1:]}\n'.encode()

    def _text(self, t: Trick, i: int) -> str:
        """Trick ``t``, the ``i``-th of its deal, as JSON (kept while the deal lasts)."""
        done = self.done
        if i < len(done):
            if done[i][0] is t:
                return done[i][1]
            del done[i:]
        text = (f'{{"leader":{t.leader},"cards":{_list(t.cards)},'
                f'"winner":{"null" if t.winner is None else t.winner},"points":{t.points}}}')
        if i == len(done):
            done.append((t, text))
        return text


_QUOTED = tuple(f'"{c}"' for c in CARDS)  # each card's JSON text, by card number


def _list(cards: Sequence[Card]) -> str:
    return "[" + ",".join([_QUOTED[c] for c in cards]) + "]"


def observation(obs: Observation) -> dict[str, Any]:
    """What the seat knows, as JSON: ``trick`` is the cards on the table in playing order from
    ``leader`` (seat ``(leader + i) % 4`` played the i-th)."""
    return {
        "seat": obs.seat, "hand": _cards(obs.hand), "trump": str(obs.trump),
        "trump_held": obs.trump_held, "dealer": obs.dealer, "leader": obs.leader,
        "trick": [str(c) for _, c in obs.trick], "tricks": [_trick(t) for t in obs.tricks],
        "points": list(obs.points), "game_points": list(obs.game_points),
        "held_over": obs.held_over, "deal": obs.deal_number,
    }


def trick(game: str, t: Trick) -> bytes:
    return _line({"type": "trick", "game": game, **_trick(t)})


def deal(game: str, r: DealResult) -> bytes:
    return _line({"type": "deal", "game": game, "number": r.number, "dealer": r.dealer,
                  "end": str(r.end), "points": list(r.points),
                  "game_points": list(r.game_points), "fault_seat": r.fault_seat})


def end(game: str, game_points: tuple[int, int], winner: int | None, how: End) -> bytes:
    return _line({"type": "end", "game": game, "game_points": list(game_points),
                  "winner": winner, "end": str(how)})


def _object(line: bytes) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        raise ProtocolError(f"printed a line that is not JSON: {_quoted(line)}") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"printed a line that is not a JSON object: {_quoted(line)}")
    return obj


def read_hello(line: bytes) -> int:
    """The program's first line: ``{"type": "hello", "protocol": "sueca-exec/1"}``, with
    ``"games": N`` when it takes up to N games at once (default 1). Returns N."""
    obj = _object(line)
    if obj.get("type") != "hello":
        raise ProtocolError(f"its first line must be its hello ({{\"type\": \"hello\", "
                            f"\"protocol\": \"{PROTOCOL}\"}}), not {_quoted(line)}")
    if obj.get("protocol") != PROTOCOL:
        raise ProtocolError(f"speaks protocol {shown(obj.get('protocol'))}, not {PROTOCOL!r}")
    games = obj.get("games", 1)
    if not isinstance(games, int) or isinstance(games, bool) or not 1 <= games <= MAX_GAMES:
        raise ProtocolError(f"bad \"games\" {shown(games)} in its hello: a whole number from 1 "
                            f"to {MAX_GAMES}")
    return games


# an answer written as the examples write it: read without the JSON decoder, to the same
# object (a game id and a card of printable ASCII without quotes or backslashes, an id with no
# leading zero); any other line is decoded as JSON
_PLAIN_ANSWER = re.compile(rb'\{"game":"([ !#-\[\]-~]*)","id":(0|[1-9][0-9]{0,17}),'
                           rb'"(card|redeal)":(?:"([ !#-\[\]-~]*)"|(true|false))\}')


def read_answer(line: bytes) -> tuple[str, int, dict[str, Any]]:
    """An answer line's ``(game, id, object)``; the card or decision is checked by
    :func:`card_of` / :func:`redeal_of` against the turn it answers."""
    plain = _PLAIN_ANSWER.fullmatch(line)
    if plain is not None:
        game_b, id_b, key, text, flag = plain.groups()
        name, number = game_b.decode(), int(id_b)
        value: object = text.decode() if text is not None else flag == b"true"
        return name, number, {"game": name, "id": number, key.decode(): value}
    obj = _object(line)
    game, turn_id = obj.get("game"), obj.get("id")
    if not isinstance(game, str) or not isinstance(turn_id, int) or isinstance(turn_id, bool):
        raise ProtocolError(f"printed a line without a \"game\" text and a whole-number \"id\": "
                            f"{_quoted(line)}")
    return game, turn_id, obj


def card_of(obj: dict[str, Any], legal: Sequence[Card]) -> Card:
    """The card of a play answer, which must be one of ``legal``."""
    text = obj.get("card")
    if not isinstance(text, str):
        raise ProtocolError(f"answered turn {obj.get('id')} with no \"card\" text: "
                            f"{_quoted(_dumps(obj))}")
    try:
        c = parse_card(text)
    except CardError:
        raise ProtocolError(f"answered turn {obj.get('id')} with {_quoted(text)}, which is not a "
                            "card (rank then suit, e.g. \"AS\")") from None
    if c not in legal:
        raise ProtocolError(f"played {c}, which is not legal here (legal: "
                            f"{' '.join(map(str, legal))})")
    return c


def redeal_of(obj: dict[str, Any]) -> bool:
    """The decision of a redeal answer: ``"redeal": true`` throws the hand in."""
    value = obj.get("redeal")
    if not isinstance(value, bool):
        raise ProtocolError(f"answered redeal turn {obj.get('id')} without \"redeal\": true or "
                            f"false: {_quoted(_dumps(obj))}")
    return value
