"""Match variants: the points where the four rule texts disagree (docs/rules.md § Variants).

Defaults are the majority reading, the game as played in Portugal. A variant is parsed from
``key=value`` words (command line, match specs) or from a replay's ``variant`` object, and an
unknown key or value is refused with the list of valid ones.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import VariantError

CHOICES: dict[str, tuple[Any, ...]] = {
    "trump_card": ("last", "first"),
    "tie": ("carry", "none", "double"),
    "bandeira": ("all_tricks", "all_points"),
    "target": (4, 8),
    "weak_hand_redeal": (False, True),
    "direction": ("counterclockwise", "clockwise"),
}
_BOOL_WORDS = {"on": True, "off": False, "true": True, "false": False, "yes": True, "no": False}


@dataclasses.dataclass(frozen=True, slots=True)
class Variant:
    """The rules of one match. ``direction`` is for display only; seat numbers never change."""

    trump_card: str = "last"
    tie: str = "carry"
    bandeira: str = "all_tricks"
    target: int = 4
    weak_hand_redeal: bool = False
    direction: str = "counterclockwise"

    def __post_init__(self) -> None:
        for key, valid in CHOICES.items():
            value = getattr(self, key)
            if value not in valid or type(value) is not type(valid[0]):
                raise VariantError(
                    f"bad value {value!r} for variant {key!r}: valid values are {_show(valid)}"
                )

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Variant:
        """From a mapping of names to values; text values are accepted ("8", "on")."""
        if not isinstance(values, Mapping):
            raise VariantError(f"bad variant {values!r}: expected an object of name: value")
        fields: dict[str, Any] = {}
        for key, value in values.items():
            if key not in CHOICES:
                raise VariantError(
                    f"unknown variant {key!r}: valid variants are {', '.join(CHOICES)}"
                )
            fields[key] = _coerce(key, value)
        return cls(**fields)

    @classmethod
    def parse(cls, words: Iterable[str]) -> Variant:
        """From ``key=value`` words, e.g. ``["tie=double", "target=8"]``."""
        values: dict[str, str] = {}
        for word in words:
            key, sep, value = word.partition("=")
            if not sep or not key.strip():
                raise VariantError(
                    f"bad variant {word!r}: expected name=value, e.g. tie=double; "
                    f"valid variants are {', '.join(CHOICES)}"
                )
            values[key.strip()] = value.strip()
        return cls.from_dict(values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def words(self) -> list[str]:
        """The ``key=value`` words that :meth:`parse` reads back, for non-default values."""
        out = []
        for key, default in dataclasses.asdict(Variant()).items():
            value = getattr(self, key)
            if value != default:
                out.append(f"{key}={_word(value)}")
        return out


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def _show(valid: tuple[Any, ...]) -> str:
    return ", ".join(_word(v) for v in valid)


def _coerce(key: str, value: Any) -> Any:
    valid = CHOICES[key]
    if isinstance(value, str):
        text = value.strip().lower()
        if isinstance(valid[0], bool):
            if text in _BOOL_WORDS:
                return _BOOL_WORDS[text]
        elif isinstance(valid[0], int):
            if text.isdigit():
                return int(text)
        else:
            return text
    elif isinstance(value, bool) == isinstance(valid[0], bool) and isinstance(value, type(valid[0])):
        return value
    raise VariantError(f"bad value {value!r} for variant {key!r}: valid values are {_show(valid)}")


DEFAULT = Variant()
