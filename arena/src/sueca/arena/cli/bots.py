"""``sueca-arena bots add|list|remove|version|lift|challenge|submit|logs``: the bot registry
(tokens are shown once, stored hashed), its versions, fair play (lifting a suspension, an
owner's unrated challenges), and hosted bots' code and their owners' logs
(docs/hosted-bots.md)."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import math
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sueca.arena.cli.common import (
    Bounded,
    Column,
    UserError,
    add_redis_action,
    clean,
    console,
    fitted_table,
    open_store,
)
from sueca.arena.fairplay import (
    CHALLENGE,
    COMES_BACK,
    FairPlayError,
    Suspension,
    challenge_matches,
    reason,
)
from sueca.arena.format import iso_time, pm
from sueca.arena.hosted.archive import ArchiveError, read_source
from sueca.arena.hosted.logs import Refused, check_owner, owner_log
from sueca.arena.hosted.manifest import ManifestError
from sueca.arena.leaderboard import BoardRow, connected_bots, json_row, leaderboard
from sueca.arena.records import CompetitionState
from sueca.arena.schedule import round_robin, tournament_spec
from sueca.arena.settings import current
from sueca.arena.store import UnknownMatch
from sueca.arena.store.bots import BotRegistry, BotRegistryError
from sueca.arena.store.fairplay import DEFAULT, challenge_cap, operator, suspended, versions_of
from sueca.arena.store.versions import MAX_NOTE, VersionError
from sueca.arena.tournaments import missing_bots
from sueca.engine import Variant, VariantError
from sueca.sdk.logs import shown

if TYPE_CHECKING:
    from sueca.arena.store import Store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bots", help="register, list and remove bots")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add_redis_action(acts, "add", "register a bot and print its token (shown only once)",
                     cmd_add).add_argument("name")
    add_redis_action(acts, "list", "registered bots with the rating the leaderboard ranks by",
                     cmd_list)
    add_redis_action(acts, "remove", "unregister a bot (its results stay in the log)", cmd_remove,
                     with_json=False).add_argument("name")
    add_version_parser(acts)
    add_fair_play(acts)
    _add_hosted_actions(acts)


def _registry(args: argparse.Namespace) -> tuple[Store, BotRegistry]:
    store = open_store(args)
    return store, store.bots


def cmd_add(args: argparse.Namespace) -> int:
    _, registry = _registry(args)
    try:
        token = registry.add(args.name)
    except BotRegistryError as err:
        raise UserError(str(err)) from None
    if args.json:
        print(json.dumps({"bot": args.name, "token": token}))
    else:
        print(token)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """The registered bots, by name, with their current version, the leaderboard's rating of
    record (its rank too: the current version's), the live Elo beside it and whether a referee
    lists it as connected; a bot with no rated match is unrated (one whose current version has
    none yet is provisional at the initial rating)."""
    store, registry = _registry(args)
    board = {r["bot"]: r for r in leaderboard(store)}
    online = connected_bots(store)
    names = registry.names()
    versions = store.versions.currents(names)
    # the --json rows: a bot's leaderboard row, or no games (and whether it is connected)
    rows: list[dict[str, object]] = []
    held = suspended(store, names)
    for name in names:
        row = board.get(name)
        rows.append({**(json_row(row) if row is not None
                        else {"bot": name, "games": 0, "connected": name in online}),
                     "version": versions.get(name, 1),
                     "suspended": _shown_suspension(held.get(name))})
    if args.json:
        print(json.dumps(clean(rows), indent=2))
        return 0
    if not rows:
        print("no bots registered: `sueca-arena bots add NAME`")
        return 0
    out = console()
    cells = [[*_cells(board.get(name), name, versions.get(name, 1), name in online),
              "yes" if name in held else ""] for name in names]
    out.print(fitted_table("Bots", "v: current version · rating: the leaderboard's rating of "
                           "record (the current version's), 95% interval · ? provisional · "
                           "live Elo: incremental · online: connected to a referee now · "
                           "suspended: it faulted too often, the ladder and tournaments leave "
                           "it out (`bots list --json` says why)",
                           columns=_COLUMNS, rows=cells, out=out, name=0))
    return 0


def _cells(row: BoardRow | None, name: str, version: int, connected: bool) -> list[str]:
    if row is None:
        return [name, str(version), "unrated", "", "0", "", "yes" if connected else "no"]
    return [name + (" ?" if row["provisional"] else ""), str(version),
            pm(row["rating"], row["rating_pm"]), str(row["rank"]), str(row["matches"]),
            pm(row["elo"], row["elo_pm"]), "yes" if connected else "no"]


# (header, drop rank): the name, its version, the rating of record, whether it is online and
# whether it is suspended always; live Elo is dropped first
_COLUMNS: tuple[Column, ...] = (("bot", None), ("v", None), ("rating ±95%", None), ("rank", 2),
                                ("rated\nmatches", 1), ("live Elo", 0), ("on-\nline", None),
                                ("sus-\npended", None))


def cmd_remove(args: argparse.Namespace) -> int:
    store, registry = _registry(args)
    playing = [c for c, s in store.competitions.of_bot(args.name).items()
               if s is not CompetitionState.CLOSED]
    if playing:  # its versions are that competition's record until it closes
        raise UserError(f"bot {args.name!r} is entered in competition {playing[0]!r}, which is "
                        "not closed: it can be removed once the competition closes")
    submitted = [v["submission"] for v in store.versions.history(args.name) if v["submission"]]
    try:
        registry.remove(args.name)
    except BotRegistryError as err:
        raise UserError(str(err)) from None
    store.hosted.unhost(args.name)  # its bot host stops it at its next heartbeat
    store.hosted.drop_unused(submitted)  # its versions are gone: so are their archives
    print(f"removed {args.name}")
    return 0


# -- bots version ---------------------------------------------------------------------------
def add_version_parser(acts: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    v = add_redis_action(acts, "version", "start a new version of a bot: it keeps its name, "
                         "the new version is rated afresh", cmd_version)
    v.add_argument("name")
    v.add_argument("--note", default="", metavar="TEXT",
                   help="what changed (shown on the bot's page)")
    v.add_argument("--by", default=None, metavar="WHO",
                   help="who starts it (default: the OS user running the command)")


def cmd_version(args: argparse.Namespace) -> int:
    """Start the next version of a bot: what plays from now on is rated as that version (the
    bot's process is not touched: the owner says which code it runs by bumping)."""
    note = str(args.note)
    if len(note) > MAX_NOTE or not note.isprintable():
        raise UserError(f"bad --note {shown(note, 60)}: one line of at most {MAX_NOTE} "
                        f"printable characters ({len(note)} given)")
    store = open_store(args)
    by = args.by if args.by is not None else _os_user()
    try:
        version = store.versions.bump(args.name, by=by, note=args.note)
    except VersionError as err:
        raise UserError(str(err)) from None
    if args.json:
        print(json.dumps({"bot": args.name, "version": version, "by": by, "note": args.note}))
    else:
        print(f"{args.name} is at version {version}: its matches from now on are rated as "
              f"version {version}")
    return 0


def _os_user() -> str:
    """Who runs this command, as the OS says (``unknown`` where it cannot say)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (a bare container)
        return "unknown"


# -- fair play: lift, challenge ------------------------------------------------------------------
def add_fair_play(acts: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lift = add_redis_action(acts, "lift", "end a bot's suspension: it is scheduled again, and "
                            "its faults so far no longer count", cmd_lift)
    lift.add_argument("name")
    lift.add_argument("--by", default=None, metavar="WHO",
                      help="who lifts it, for the record (default: this system user)")
    ch = add_redis_action(acts, "challenge", "the owner of NAME asks for unrated matches "
                          "against OPPONENT (duplicate pairs; capped per hour)", cmd_challenge)
    ch.add_argument("name")
    ch.add_argument("opponent")
    ch.add_argument("-n", "--matches", type=int, default=2, metavar="N",
                    help="matches to play: an even number, played as duplicate pairs (default 2)")
    _token_flag(ch)
    ch.add_argument("--variant", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                    help="rule variants of the matches, e.g. tie=double target=8")


def _shown_suspension(s: Suspension | None) -> dict[str, object] | None:
    """A suspension for ``--json``: its record, ``at`` as ISO time, and the reason in words."""
    if s is None:
        return None
    return {**s, "at": iso_time(s["at"]), "reason": reason(s)}


def _known(store: Store, name: str) -> str:
    if not store.bots.exists(name):
        raise UserError(f"unknown bot {name!r}{store.bots.case_hint(name)}: `sueca-arena bots "
                        f"list` shows the registered ones")
    return name


def _suspensions(store: Store, bot: str) -> list[Suspension]:
    """``bot``'s suspensions: in the arena's ladder, and in each competition it plays in."""
    playing = [c for c, s in store.competitions.of_bot(bot).items()
               if s is not CompetitionState.CLOSED]
    return [s for c in dict.fromkeys([DEFAULT, *playing])
            if (s := suspended(store, [bot], competition=c, record=True).get(bot))]


def cmd_lift(args: argparse.Namespace) -> int:
    """Lift a bot's suspensions (the ladder's and its competitions'), recording who and when;
    a bot that is not suspended is an error (nothing is recorded)."""
    store = open_store(args)
    name = _known(store, args.name)
    found = _suspensions(store, name)
    if not found:
        raise UserError(f"bot {name!r} is not suspended: nothing to lift")
    held = found[0]
    lift = store.fairplay.lift(name, by=args.by or operator())
    if args.json:
        print(json.dumps({"bot": name, "lifted": {**lift, "at": iso_time(lift["at"])},
                          "suspensions": [_shown_suspension(s) for s in found]}, indent=2))
    else:
        print(f"lifted {name}'s suspension ({reason(held)}); lifted by {lift['by']} at "
              f"{iso_time(lift['at'])}: it is scheduled again, its faults so far no longer count")
    return 0


def cmd_challenge(args: argparse.Namespace) -> int:
    """Queue N unrated matches of NAME against OPPONENT, once NAME's token is checked and its
    hourly cap allows: duplicate pairs (the same deals, teams swapped) at the challenge
    priority, behind tournaments and ahead of the ladder. Refused with nothing queued: a bad
    token, an unknown or suspended bot, one no referee holds, the cap reached."""
    from sueca.arena.tasks import Priority, enqueue  # deferred: Celery's ~1 s start-up
    try:
        n = challenge_matches(args.matches)
        variant = Variant.parse(args.variant).to_dict()
    except (FairPlayError, VariantError) as err:
        raise UserError(str(err)) from None
    store = open_store(args)
    name, opponent = _known(store, args.name), _known(store, args.opponent)
    if name == opponent:
        raise UserError(f"bot {name!r} cannot challenge itself: name another bot")
    if not store.bots.verify(name, _token(args)):
        raise UserError(f"wrong token for bot {name!r}: only its owner may challenge with it")
    held = [s for b in (name, opponent) for s in _suspensions(store, b)[:1]]
    if held:
        raise UserError("; ".join(f"bot {s['bot']!r} is suspended: {reason(s)}"
                                  for s in held) + f". {COMES_BACK}")
    missing, referees = missing_bots(store, [name, opponent])
    if missing:
        raise UserError(f"bot(s) {', '.join(map(repr, missing))} not connected to any referee "
                        f"({', '.join(referees) or 'none known'}): a challenge plays only "
                        "connected bots")
    cid = f"{CHALLENGE}-{time.strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(3)}"
    per_hour = challenge_cap(store, name)
    later = store.fairplay.ask_challenge(name, cid, per_hour=per_hour)
    if later is not None:
        raise UserError(f"bot {name!r} may not challenge: challenges are off for it "
                        "(SUECA_CHALLENGES_PER_HOUR, or a competition it plays in, is 0)"
                        if math.isinf(later) else
                        f"bot {name!r} asked for {per_hour} challenge(s) in the last hour, the "
                        f"cap: the next is allowed at {iso_time(later)} "
                        f"(in {math.ceil((later - time.time()) / 60)} min)")
    spec = tournament_spec([name, opponent], n, True, variant)
    matches = round_robin(cid, spec)
    versions = versions_of(store, [name, opponent])
    try:
        for m in matches:
            store.create_match(m["id"], m["spec"], tournament=CHALLENGE, pair=m["pair"],
                               versions=versions if max(versions.values()) > 1 else None)
        mids = [m["id"] for m in matches if store.claim(m["id"])]
        enqueue(mids, priority=Priority.CHALLENGE)
    except BaseException:  # broker down, Ctrl-C: nothing stays queued nor counted
        store.fairplay.forget_challenge(name, cid)
        for m in matches:
            with contextlib.suppress(UnknownMatch):
                store.record_failure(m["id"], "the challenge could not be queued")
        raise
    if args.json:
        print(json.dumps({"challenge": cid, "bot": name, "opponent": opponent, "rated": False,
                          "versions": versions, "matches": mids}, indent=2))
    else:
        print(f"{cid}: {len(mids)} unrated matches of {name} against {opponent} queued "
              f"(duplicate pairs): {', '.join(mids)}\n"
              f"see them: sueca-arena matches --tournament {CHALLENGE}")
    return 0


# -- hosted bots: submit code, read its owner's log -------------------------------------------

#: submissions one bot may make in an hour: each archive (up to 16 MiB) is kept in Redis while
#: its version is, so an owner's pace bounds what they can make the arena store
SUBMISSIONS_AN_HOUR = 10


def _add_hosted_actions(acts: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_redis_action(acts, "submit", "submit a bot's code for the bot hosts to run (a new "
                         "version of the bot)", cmd_submit)
    p.add_argument("name")
    p.add_argument("source", metavar="DIR|FILE.tar.gz",
                   help="a folder, or a .tar.gz, with sueca-bot.toml at its top")
    _token_flag(p)
    p = add_redis_action(acts, "logs", "a hosted bot's log (its stderr), for its owner only",
                         cmd_logs)
    p.add_argument("name")
    _token_flag(p)
    p.add_argument("--version", action=Bounded, kind=int, low=1, default=None,
                   help="the version whose log to show (default: the one the bot hosts run)")
    p.add_argument("--last", action=Bounded, kind=int, low=1, default=200,
                   help="lines to show (default 200)")


def _token_flag(p: argparse.ArgumentParser) -> None:
    """``--token``, the one flag by which NAME's owner proves it (``challenge``, ``submit``,
    ``logs``): read by :func:`_token`."""
    p.add_argument("--token", default=None,
                   help="NAME's token, proving you own it (default: $SUECA_TOKEN)")


def _token(args: argparse.Namespace) -> str:
    """NAME's token from ``--token``, else ``$SUECA_TOKEN``; a blank or missing one is a
    UserError naming which is missing, so every owner's command refuses it in the same words."""
    if args.token is not None:
        token, missing = str(args.token), "--token is blank"
    else:
        token, missing = current().token or "", "no --token given and $SUECA_TOKEN is not set"
    if not token.strip():
        raise UserError(f"no token for bot {args.name[:64]!r}: {missing}; pass its token "
                        "(from `sueca-arena bots add`) with --token TOKEN or in $SUECA_TOKEN")
    return token


def cmd_submit(args: argparse.Namespace) -> int:
    """Check the submission (nothing is written when a check fails), store its canonical
    archive under its sha256, make it the bot's new version and hand it to the bot hosts."""
    try:
        submission = read_source(Path(args.source))
    except (ArchiveError, ManifestError) as err:
        raise UserError(f"submission {args.source[:120]!r} refused: {err}") from None
    store = open_store(args)
    try:
        check_owner(store, args.name, _token(args), "a bot's code is submitted")
    except Refused as err:
        raise UserError(str(err)) from None
    hour = time.time() - 3600
    recent = sum(1 for v in store.versions.history(args.name)
                 if v["submission"] and v["created"] >= hour)
    if recent >= SUBMISSIONS_AN_HOUR:  # each archive stays in Redis: their pace is bounded
        raise UserError(f"bot {args.name!r} had {recent} submissions in the last hour: at most "
                        f"{SUBMISSIONS_AN_HOUR} an hour")
    new = store.hosted.put_submission(submission.sha256, submission.archive)
    try:
        version = store.versions.bump(args.name, by="bots submit", submission=submission.sha256,
                                      note=f"hosted submission {submission.sha256[:12]}")
    except ValueError as err:
        if new:
            store.hosted.drop_submission(submission.sha256)
        raise UserError(str(err)) from None
    store.hosted.host(args.name, version=version, submission=submission.sha256)
    if args.json:
        print(json.dumps({"bot": args.name, "version": version,
                          "submission": submission.sha256, "files": submission.files}))
    else:
        print(f"bot {args.name} version {version}: submission {submission.sha256} "
              f"({submission.files} files); a bot host starts it within seconds "
              f"(`sueca-arena bots logs {args.name}`)")
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    """The last lines of a hosted bot's log, only for the holder of its token."""
    store = open_store(args)
    try:
        got = owner_log(store, args.name, _token(args), version=args.version, last=args.last)
    except Refused as err:
        raise UserError(str(err)) from None
    if args.json:
        print(json.dumps(got, indent=2))
        return 0
    if not got["lines"]:
        print(f"bot {args.name} version {got['version']}: no log lines yet")
    for entry in got["lines"]:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(entry["at"]))
        print(f"{stamp} {entry['line']}")
    return 0
