"""Match variants: where the four texts disagree (docs/rules.md § Variants)."""

import pytest
from kits.deals import state

from sueca.engine import DEFAULT, Match, Variant, VariantError

VALID = {
    "trump_card": ["last", "first"],
    "tie": ["carry", "none", "double"],
    "bandeira": ["all_tricks", "all_points"],
    "target": [4, 8],
    "weak_hand_redeal": [False, True],
    "direction": ["counterclockwise", "clockwise"],
}


def test_defaults_are_the_majority_reading():
    """docs/rules.md § Variants: defaults are the game as played in Portugal — trump_card=last (000-003),
    tie=carry (000, 001, 002), bandeira=all_tricks (000, 001, 002), target 4 (000-003),
    weak_hand_redeal off (only 002), counter-clockwise (001, 003)."""
    assert DEFAULT == Variant() == Variant.parse([]) == Variant.from_dict({})
    assert DEFAULT.to_dict() == {
        "trump_card": "last", "tie": "carry", "bandeira": "all_tricks", "target": 4,
        "weak_hand_redeal": False, "direction": "counterclockwise"}
    assert DEFAULT.words() == []


@pytest.mark.parametrize("key", list(VALID))
def test_every_valid_value_is_accepted_and_round_trips(key):
    """docs/rules.md § Variants: each variant takes exactly the listed values (000/001/002/003 disagreements)."""
    for value in VALID[key]:
        v = Variant(**{key: value})
        assert getattr(v, key) == value
        assert Variant.parse(v.words()) == v
        assert Variant.from_dict(v.to_dict()) == v


@pytest.mark.parametrize("words,expected", [
    (["tie=double", "target=8"], Variant(tie="double", target=8)),
    (["weak_hand_redeal=on"], Variant(weak_hand_redeal=True)),
    (["weak_hand_redeal=yes", "bandeira=all_points"],
     Variant(weak_hand_redeal=True, bandeira="all_points")),
    ([" trump_card = FIRST "], Variant(trump_card="first")),
    (["direction=clockwise", "tie=none"], Variant(direction="clockwise", tie="none")),
])
def test_parse_key_value_words(words, expected):
    """docs/rules.md § Variants: trump_card (000/001/003), tie (003), bandeira (003), target 8 (003), weak_hand_redeal
    (002), direction (000/002 clockwise) are chosen per match."""
    assert Variant.parse(words) == expected


@pytest.mark.parametrize("key,value", [
    ("tie", "triple"), ("trump_card", "middle"), ("bandeira", "all"), ("target", 5),
    ("target", "5"), ("target", 8.0), ("target", True), ("weak_hand_redeal", "maybe"),
    ("weak_hand_redeal", 1), ("direction", "up"), ("tie", None)])
def test_bad_value_is_refused_listing_valid_values(key, value):
    """docs/rules.md § Variants: a variant takes only its listed values; the error lists them."""
    shown = ", ".join({True: "on", False: "off"}.get(v, str(v)) if isinstance(v, bool) else str(v)
                      for v in VALID[key])
    with pytest.raises(VariantError) as err:
        Variant.from_dict({key: value})
    msg = str(err.value)
    assert repr(key) in msg and shown in msg
    assert repr(value) in msg or str(value) in msg
    if not isinstance(value, str):
        with pytest.raises(VariantError, match=shown):
            Variant(**{key: value})


@pytest.mark.parametrize("maker", [
    lambda: Variant.from_dict({"colour": "red"}),
    lambda: Variant.parse(["colour=red"]),
])
def test_unknown_variant_name_lists_valid_names(maker):
    """docs/rules.md § Variants: the variants are trump_card, tie, bandeira, target, weak_hand_redeal,
    direction."""
    with pytest.raises(VariantError) as err:
        maker()
    assert "'colour'" in str(err.value)
    assert ", ".join(VALID) in str(err.value)


@pytest.mark.parametrize("word", ["tie", "=double", "", "target:8"])
def test_malformed_variant_word_is_refused(word):
    """docs/rules.md § Variants: a variant is written name=value."""
    with pytest.raises(VariantError) as err:
        Variant.parse([word])
    assert repr(word) in str(err.value) and "name=value" in str(err.value)


@pytest.mark.parametrize("value", ["tie=double", ["tie", "double"], None, 3])
def test_variant_object_must_be_a_mapping(value):
    """replay format: "variant" is an object of name: value."""
    with pytest.raises(VariantError) as err:
        Variant.from_dict(value)
    assert repr(value) in str(err.value)


def test_variant_is_frozen():
    """A match's rules cannot change while it runs."""
    v = Variant(tie="double")
    m = Match(v, seed=3)
    before = state(m)
    with pytest.raises(Exception):
        v.tie = "carry"  # type: ignore[misc]
    assert m.variant.tie == "double" and state(m) == before


def test_direction_is_display_only():
    """docs/rules.md § Players, teams and seats: clockwise (000, 002) or counter-clockwise (001,
    003) only decides which neighbour is "next"; in seat numbers the game is the same."""
    a = Match(Variant(direction="clockwise"), seed=8)
    b = Match(Variant(direction="counterclockwise"), seed=8)
    while not a.over:
        c = a.deal.legal_cards()[-1]
        pa, pb = a.play(c), b.play(c)
        assert pa._replace(deal=None) == pb._replace(deal=None)
    assert b.over and a.game_points == b.game_points and a.winner == b.winner
