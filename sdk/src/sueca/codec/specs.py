"""Match specs: :class:`SpecDict` (how the league and the control client pass one),
:func:`spec_to_pb` and :func:`spec_from_pb` (the two directions of the wire) and
:func:`check_spec`, which turns a wire spec into engine values (a :class:`MatchPlan`) or raises
:class:`SpecError` quoting the bad field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, TypedDict

from sueca.codec.convert import variant_from_pb, variant_to_pb
from sueca.engine import CARDS, Card, DeckError, SuecaError, Variant, VariantError, card
from sueca.engine.cards import validate_deck
from sueca.v1 import sueca_pb2 as pb

__all__ = ["DEFAULT_MOVE_MS", "DEFAULT_BANK_MS", "DEFAULT_GRACE_MS", "MAX_CLOCK_MS", "MAX_DECKS",
           "SpecError", "SpecDict", "MatchPlan", "parse_seed", "spec_to_pb", "spec_from_pb",
           "check_spec"]

# Defaults for clocks a spec leaves at 0 (proto3 cannot tell 0 from absent).
DEFAULT_MOVE_MS = 2000
DEFAULT_BANK_MS = 20000
DEFAULT_GRACE_MS = 5000
MAX_CLOCK_MS = 3_600_000
MAX_DECKS = 1000


class SpecError(ValueError):
    """A match spec the referee cannot run; the message names the bad field and value."""


def parse_seed(text: str) -> int | str | None:
    """A wire seed back to the engine's: canonical decimal integers are ints, so ``"42"`` over
    the network deals the same cards as ``Match(seed=42)`` in-process; empty means none."""
    if text == "":
        return None
    try:
        n = int(text)
    except ValueError:
        return text
    return n if str(n) == text else text


def spec_to_pb(spec: Mapping[str, Any]) -> pb.MatchSpec:
    """A spec dict to the wire. Keys: ``bots`` (4 names), and optionally ``match_id``,
    ``variant`` (dict, ``key=value`` words or a Variant), ``seed``, ``decks`` (lists of 40 cards,
    numbers or text), ``first_dealer`` (None: drawn), ``move_ms``, ``bank_ms``, ``grace_ms``,
    ``lenient``, ``quiet``."""
    unknown = set(spec) - _SPEC_KEYS
    if unknown:
        raise SpecError(f"unknown match spec field(s) {', '.join(sorted(unknown))}: valid fields "
                        f"are {', '.join(sorted(_SPEC_KEYS))}")
    try:
        v = spec.get("variant") or {}
        if isinstance(v, Variant):
            variant = v
        elif isinstance(v, Mapping):
            variant = Variant.from_dict(v)
        elif isinstance(v, str):
            variant = Variant.parse(v.split())
        else:
            variant = Variant.parse(v)
        decks = [pb.Deck(cards=[int(card(c)) for c in d]) for d in spec.get("decks") or ()]
    except SuecaError as err:
        raise SpecError(str(err)) from None
    seed = spec.get("seed")
    m = pb.MatchSpec(
        match_id=str(spec.get("match_id") or ""), bots=list(spec.get("bots") or ()),
        variant=variant_to_pb(variant), seed="" if seed is None else str(seed), decks=decks,
        move_ms=int(spec.get("move_ms") or 0),
        grace_ms=int(spec.get("grace_ms") or 0), lenient=bool(spec.get("lenient")),
        quiet=bool(spec.get("quiet")))
    if spec.get("bank_ms") is not None:  # 0 is sent: no bank (absent: the default)
        m.bank_ms = int(spec["bank_ms"])
    fd = spec.get("first_dealer")
    if fd is not None:
        m.first_dealer = int(fd)
    return m




class SpecDict(TypedDict, total=False):
    """A match spec as the league and the control client pass it (:func:`spec_to_pb` also takes
    a variant as words or a :class:`Variant`, and cards as numbers)."""

    match_id: str
    bots: list[str]
    variant: dict[str, Any]
    seed: int | str | None
    decks: list[list[str | int]]
    first_dealer: int | None
    move_ms: int
    bank_ms: int
    grace_ms: int
    lenient: bool
    quiet: bool


_SPEC_KEYS = SpecDict.__optional_keys__ | SpecDict.__required_keys__  # the keys spec_to_pb takes


def spec_from_pb(m: pb.MatchSpec) -> SpecDict:
    """The wire spec as a dict of the same shape :func:`spec_to_pb` takes (cards as text)."""
    return {
        "match_id": m.match_id, "bots": list(m.bots),
        "variant": variant_from_pb(m.variant).to_dict(), "seed": parse_seed(m.seed),
        "decks": [[str(CARDS[c]) if c < 40 else c for c in d.cards] for d in m.decks],
        "first_dealer": m.first_dealer if m.HasField("first_dealer") and m.first_dealer >= 0
        else None,
        "move_ms": m.move_ms, "grace_ms": m.grace_ms,
        "lenient": m.lenient, "quiet": m.quiet,
        **({"bank_ms": m.bank_ms} if m.HasField("bank_ms") else {}),
    }


class MatchPlan(NamedTuple):
    """A checked spec, in engine values, with clock defaults filled in."""

    match_id: str
    bots: tuple[str, str, str, str]
    variant: Variant
    seed: int | str | None
    decks: tuple[tuple[Card, ...], ...]
    first_dealer: int | None
    move_ms: int
    bank_ms: int
    grace_ms: int
    lenient: bool
    quiet: bool


def check_spec(m: pb.MatchSpec) -> MatchPlan:
    """Validate a wire spec; :class:`SpecError` names the first problem (INVALID_ARGUMENT)."""
    if len(m.bots) != 4:
        some = [b[:40] for b in m.bots[:6]]  # a caller's text: a few names, cut
        raise SpecError(f"a match needs 4 bots, one per seat; the spec names {len(m.bots)}: "
                        f"{some!r}{' and more' if len(m.bots) > 6 else ''}")
    for s, name in enumerate(m.bots):
        if not name:
            raise SpecError(f"seat {s} has no bot name")
    try:
        variant = variant_from_pb(m.variant)
    except VariantError as err:
        raise SpecError(str(err)) from None
    if len(m.decks) > MAX_DECKS:
        raise SpecError(f"{len(m.decks)} decks in the spec; at most {MAX_DECKS}")
    decks = []
    for k, d in enumerate(m.decks):
        try:
            decks.append(validate_deck(d.cards))
        except DeckError as err:
            raise SpecError(f"deck {k}: {err}") from None
    first_dealer = m.first_dealer if m.HasField("first_dealer") else -1
    if first_dealer not in (-1, 0, 1, 2, 3):
        raise SpecError(f"bad first_dealer {first_dealer}: a seat 0..3, or -1 to draw it")
    clocks = {}
    for key, default in (("move_ms", DEFAULT_MOVE_MS), ("bank_ms", DEFAULT_BANK_MS),
                         ("grace_ms", DEFAULT_GRACE_MS)):
        if key == "bank_ms":  # 0 given is no bank; only an absent bank gets the default
            value = m.bank_ms if m.HasField("bank_ms") else default
        else:
            value = getattr(m, key) or default
        if value > MAX_CLOCK_MS:
            raise SpecError(f"bad {key} {value}: at most {MAX_CLOCK_MS} (one hour)")
        clocks[key] = value
    return MatchPlan(
        match_id=m.match_id, bots=tuple(m.bots), variant=variant,  # type: ignore[arg-type]
        seed=parse_seed(m.seed), decks=tuple(decks),
        first_dealer=None if first_dealer < 0 else first_dealer, lenient=m.lenient,
        quiet=m.quiet, **clocks)
