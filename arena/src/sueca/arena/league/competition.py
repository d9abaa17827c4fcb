"""What a competition's page and ``competition show`` say: its record, its entrants with the
version that plays, its moves and its divisions' changes (one read, the same for both)."""

from __future__ import annotations

from typing import TypedDict

from sueca.arena.lifecycle import DEFAULT
from sueca.arena.records import CompetitionSpec, DivisionChange, Entry, Transition
from sueca.arena.store import Store

__all__ = ["EntryRow", "CompetitionReport", "competition_report"]


class EntryRow(Entry):
    """An entry with its bot's current version (the frozen ``version`` wins once set)."""

    current_version: int


class CompetitionReport(TypedDict):
    name: str
    state: str
    spec: CompetitionSpec
    created: float  # 0 for the default competition, which is never created
    seed_hash: str
    seed_key: str | None  # only once closed
    log: list[Transition]
    divisions_log: list[DivisionChange]
    entries: list[EntryRow]  # by bot name


def competition_report(store: Store, name: str) -> CompetitionReport:
    """Competition ``name`` as it is now; CompetitionError for an unknown one."""
    record = store.competitions.require(name)
    entries = store.competitions.entries(name)
    current = store.versions.currents(list(entries))
    rows: list[EntryRow] = [{**entry, "current_version": current.get(bot, 1)}
                            for bot, entry in sorted(entries.items())]
    return {"name": name, "state": str(record["state"]), "spec": record["spec"],
            "created": record["created"], "seed_hash": record["seed_hash"],
            "seed_key": record["seed_key"], "log": record["log"],
            "divisions_log": [] if name == DEFAULT else store.competitions.division_log(name),
            "entries": rows}
