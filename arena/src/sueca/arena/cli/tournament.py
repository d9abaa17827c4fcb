"""``sueca-arena tournament run|show|list``: round-robin, gauntlet, Swiss, knockout and
double-elimination tournaments through the workers (the formats: :mod:`sueca.arena.pairing`,
:mod:`sueca.arena.brackets`, docs/strength.md)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from sueca.arena.cli.common import (
    Bounded,
    Column,
    UserError,
    add_redis,
    add_redis_action,
    console,
    emit,
    fitted_table,
    fmt,
    open_store,
    redis_url,
)
from sueca.engine import Variant, VariantError

#: tournament formats (sueca.arena.tournaments.FORMATS, which the CLI does not import at start)
BRACKETS = ("knockout", "double-elimination")
FORMATS = ("round-robin", "gauntlet", "swiss", *BRACKETS)

if TYPE_CHECKING:
    from rich.console import Console

    from sueca.arena.brackets import Tie
    from sueca.arena.records import TournamentSpec
    from sueca.arena.tournaments import TournamentReport


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tournament", help="run a tournament (round robin, gauntlet, Swiss, "
                                          "knockout...) through the workers",
                       description="Tournaments among registered bots, played by the workers: "
                                   "run one, show its table, list the recent ones.")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = acts.add_parser(
        "run", help="schedule what is missing, show progress, print the table",
        description="Create a tournament of registered bots (--bots NAME,NAME,...), or resume "
                    "a stored one (--id ID alone), and play it through the workers: schedules "
                    "the matches not yet played, shows progress while the workers play them and "
                    "prints the standings. The command can be stopped and run again with --id: "
                    "it picks up where it was. Exit 1 when a match failed; 2 on a usage error or "
                    "when --timeout passes first (the rest stay queued).")
    add_redis(run)
    run.add_argument("--bots", metavar="NAME,NAME,...",
                     help="comma-separated registered bot names (required to create a "
                          "tournament; not with `--id ID` alone, which resumes one)")
    run.add_argument("--matches-per-pair", "-k", action=Bounded, kind=int, low=1, default=None,
                     metavar="K",
                     help="matches each pair of bots plays (even with --duplicate; default 2)")
    run.add_argument("--duplicate", action="store_true",
                     help="play matches in pairs with the same decks and the teams swapped")
    run.add_argument("--format", choices=FORMATS, default=None,
                     help="round-robin (every pair; the default), gauntlet (--challenger "
                          "against each other bot), swiss (--rounds N, paired by score), "
                          "knockout or double-elimination (a bracket seeded in the order of "
                          "--bots, each tie --best-of N duplicate pairs)")
    run.add_argument("--best-of", action=Bounded, kind=int, low=1, default=None, metavar="N",
                     help="a knockout's or double elimination's duplicate pairs per tie "
                          "(default 1)")
    run.add_argument("--challenger", metavar="NAME",
                     help="a gauntlet's bot, one of --bots, that meets every other")
    run.add_argument("--rounds", action=Bounded, kind=int, low=1, default=None, metavar="N",
                     help="a Swiss tournament's rounds (at most half the number of bots)")
    run.add_argument("--variant", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                     help="rule variants, e.g. tie=double target=8")
    run.add_argument("--id", dest="tid", metavar="ID",
                     help="tournament id; `--id ID` alone resumes (finishes) the stored "
                          "tournament ID with the options it was created with")
    run.add_argument("--move-ms", action=Bounded, kind=int, low=1,
                     help="per-move time limit on the referee")
    run.add_argument("--bank-ms", action=Bounded, kind=int, low=0,
                     help="per-seat time bank on the referee (0: none)")
    run.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=None,
                     help="give up waiting after this many seconds (the matches stay queued)")
    run.add_argument("--requeue-after", action=Bounded, kind=float, low=0, above=True,
                     default=900.0, metavar="S",
                     help="at start, also re-queue a queued/running match untouched for S seconds "
                          "that no live worker holds (default 900; while it waits, the command "
                          "re-queues lost matches within seconds anyway)")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.set_defaults(func=cmd_tournament_run)
    add_redis_action(acts, "show", "the table of a tournament, as far as it has got",
                     cmd_tournament_show).add_argument("tid", metavar="ID")
    add_redis_action(acts, "list", "recent tournaments and their progress", cmd_tournament_list)




def print_table(report: TournamentReport, out: Console | None = None) -> None:
    """The standings, fitted to the console like the leaderboard (a number never cut; the
    least needed columns left out when too narrow, live Elo first)."""
    out = out or console()
    dup = report["spec"].get("duplicate")
    columns: tuple[Column, ...] = (
        ("#", None), ("bot", None), ("pairs" if dup else "matches", None), ("W-D-L", None),
        ("points", None), ("win %", 2), ("game\npts", 1), ("rating\n±95%", None),
        ("live\nElo", 0), ("forfeits", 3))
    rows = [[str(n), r["bot"], str(r["units"]), f"{r['won']}-{r['drawn']}-{r['lost']}",
             f"{r['points']:g}", fmt(r["win_pct"], 1), f"{r['gp_for']}–{r['gp_against']}",
             f"{r['rating']:.0f} ± {fmt(r['rating_pm'])}", f"{r['elo']:.0f}", str(r["faults"])]
            for n, r in enumerate(report["standings"], 1)]
    table = fitted_table(
        f"Tournament {report['tournament']} — {format_words(report)} — "
        f"{report['recorded']}/{report['matches']} matches",
        "forfeits: matches lost by a timeout, disconnect or bot error of the bot (renúncias are counted "
        "on the leaderboard)", columns=columns, rows=rows, out=out)
    out.print(table)
    if report.get("archived"):
        out.print(f"[yellow]note[/]: {report['archived']} more results of this tournament were "
                  f"archived by retention (trimmed from the results log): this table counts "
                  f"the {report['recorded']} still in Redis; the league's ratings include all")
    print_cross(report, out)
    if "rounds" in report:
        print_rounds(report, out)
    if "bracket" in report:
        print_bracket(report, out)
    for f in report["failed"]:
        out.print(f"[red]failed[/] {f['match_id']}: {f['error']}")


def format_words(report: TournamentReport) -> str:
    """The tournament's format in words: "gauntlet of X, duplicate", "swiss, 3 rounds"."""
    spec = report["spec"]
    words = report["format"]
    if spec.get("challenger"):
        words += f" of {spec['challenger']}"
    if spec.get("rounds"):
        words += f", {spec['rounds']} round{'s' if spec['rounds'] != 1 else ''}"
    if report["format"] in BRACKETS:
        n = spec.get("best_of", 1)
        return words + f", ties of {n} duplicate pair{'s' if n != 1 else ''}"
    words += f", {spec.get('matches_per_pair')} per pair"
    return words + (", duplicate" if spec.get("duplicate") else "")


def print_cross(report: TournamentReport, out: Console) -> None:
    """Who beat whom: won-drawn-lost of each row's bot against each column's, by number, when
    it fits the console; else one line per pair met (nothing is ever cut)."""
    rows = report["cross"]
    if not any(r["cells"] for r in rows):
        return
    unit = "pairs" if report["spec"].get("duplicate") else "matches"
    number = {r["bot"]: n for n, r in enumerate(rows, 1)}
    cells = {(r["bot"], c["opponent"]): f"{c['won']}-{c['drawn']}-{c['lost']}"
             for r in rows for c in r["cells"]}
    width = max(len(v) for v in cells.values())
    name = max(len(r["bot"]) for r in rows)
    need = len(str(len(rows))) + name + (width + 3) * len(rows) + 8
    caption = f"{unit} won-drawn-lost by the row's bot against the column's"
    if need <= out.width:
        table = Table(title="Cross table", title_justify="left")
        table.add_column("#", justify="right")
        table.add_column("bot", no_wrap=True)
        for r in rows:
            table.add_column(str(number[r["bot"]]), justify="center", no_wrap=True)
        for r in rows:
            table.add_row(str(number[r["bot"]]), escape(r["bot"]),
                          *[("·" if o["bot"] == r["bot"] else cells.get((r["bot"], o["bot"]), ""))
                            for o in rows])
        out.print(table)
        out.print(f"[dim]{caption}[/]")  # under the table, at the console's width
        return
    out.print(f"Cross table ({caption}):")
    for r in rows:
        for c in r["cells"]:
            if number[r["bot"]] < number[c["opponent"]]:
                out.print(f"  {escape(r['bot'])} {cells[(r['bot'], c['opponent'])]} "
                          f"{escape(c['opponent'])}", soft_wrap=True)


def print_rounds(report: TournamentReport, out: Console) -> None:
    """A Swiss tournament's scores (byes counted) and its rounds, pair by pair."""
    k = report["spec"].get("matches_per_pair")
    scores = Table(title="Swiss scores", title_justify="left")
    for col in ("bot", "score", "byes", "opponents"):
        scores.add_column(col, justify="right" if col in ("score", "byes") else "left",
                          overflow="fold")
    for s in report.get("swiss", []):
        scores.add_row(escape(s["bot"]), f"{s['score']:g}", str(s["byes"]),
                       escape(", ".join(s["opponents"])))
    out.print(scores)
    # under the table, at the console's width: a title as wide as this cut into the table's
    bye = (f"{k / 2:g} (half a round's {k} matches)" if isinstance(k, int)
           else "half a round's matches")
    out.print(f"[dim]score: matches won; a bye counts {bye}[/]")
    rounds = Table(title="Swiss rounds", title_justify="left")
    for col in ("round", "pairs (matches won)", "bye"):
        rounds.add_column(col, overflow="fold")
    for r in report.get("rounds", []):
        pairs = "\n".join(f"{escape(a)} {wa}–{wb} {escape(b)}" for a, b, wa, wb in r["pairs"])
        rounds.add_row(f"{r['round']}" + ("" if r["recorded"] else " (playing)"), pairs,
                       escape(r["bye"] or "–"))
    out.print(rounds)


def print_bracket(report: TournamentReport, out: Console) -> None:
    """A bracket's champion, its places by the round that eliminated each bot, and every tie
    round by round (a line each: bots with their seeds, matches won, who went through and by
    which rule)."""
    b = report["bracket"]
    out.print(f"[bold]Champion: {escape(b['champion'])}[/]" if b["champion"]
              else "Champion: not decided yet")
    places = Table(title="Bracket standings", title_justify="left")
    for col in ("place", "bot", "seed", "lost", "out in"):
        places.add_column(col, justify="right" if col in ("seed", "lost") else "left",
                          overflow="fold")
    for p in b["standings"]:
        where = ("" if p["place"] is None else str(p["place"]) if p["place"] == p["last"]
                 else f"{p['place']}-{p['last']}")
        places.add_row(where or "in", escape(p["bot"]), str(p["seed"]), str(p["losses"]),
                       escape(p["out"] or "still in"))
    out.print(places)
    for r in b["rounds"]:
        if not r["ties"]:
            continue
        out.print(f"[bold]{escape(r['name'])}[/]" + ("" if r["decided"] else " (playing)"))
        for t in r["ties"]:
            out.print(f"  {t['id']}  {escape(tie_words(t, b['best_of']))}")
    out.print(f"[dim]a tie: {b['best_of']} duplicate pair(s) scored by matches won; level: "
              "game points, then up to 3 extra pairs, then the higher seed[/]")


def tie_words(t: Tie, best_of: int) -> str:
    """One tie in words: ``random (1) 2–0 reckless (4): random, matches won``."""
    def side(i: int) -> str:
        bot = t["bots"][i]
        return "?" if bot is None else f"{bot} ({t['seeds'][i]})"
    if t["bye"]:
        return f"{side(0) if t['bots'][0] else side(1)}: bye"
    score = f"{side(0)} {t['wins'][0]}–{t['wins'][1]} {side(1)}"
    extra = t["pairs"] - best_of
    if extra > 0:
        score += f" (+{extra} extra pair{'s' if extra != 1 else ''})"
    if t["winner"] is None:
        if None in t["bots"]:
            return f"{side(0)} – {side(1)}: waiting for its bots"
        return f"{score}: playing, {t['played']} of {len(t['matches'])} matches in"
    rule = {"matches": "matches won",
            "game points": f"game points {t['points'][0]}–{t['points'][1]}",
            "seed": "the higher seed, level after every extra pair"}.get(t["by"] or "", "")
    return f"{score}: {t['winner']}, {rule}"


def cmd_tournament_run(args: argparse.Namespace) -> int:
    # Celery, the store's Redis client and the ratings' fit cost ~1 s of start-up, which the
    # CLI's other commands (every module is imported for --help) skip
    from sueca.arena.celery_app import configure  # deferred: Celery's start-up, above
    from sueca.arena.tournaments import TournamentError, run_tournament  # deferred: as above
    try:
        spec = _spec_to_create(args)  # a bad option is said before Redis is asked
    except TournamentError as err:
        raise UserError(str(err)) from None
    store = open_store(args)
    configure(redis_url(args))
    try:
        report = run_tournament(store, spec, tid=args.tid, timeout=args.timeout,
                                requeue_after=args.requeue_after)
    except TournamentError as err:
        raise UserError(str(err)) from None
    emit(args, report, print_table)
    return 1 if report["failed"] else 0


def _spec_to_create(args: argparse.Namespace) -> TournamentSpec | None:
    """The spec of a tournament to create, or None for ``--id ID`` alone: resume the stored
    one. TournamentError (or UserError) quoting a bad option."""
    from sueca.arena.tournaments import new_spec  # deferred: start-up, see cmd_tournament_run
    bots = _bots_to_create(args)
    if bots is None:
        return None
    try:
        variant = Variant.parse(args.variant)
    except VariantError as err:
        raise UserError(str(err)) from None
    if args.format in BRACKETS and args.matches_per_pair is not None:
        raise UserError(f"--matches-per-pair {args.matches_per_pair} is not for a {args.format}:"
                        f" its ties are --best-of N duplicate pairs")
    return new_spec(bots, args.matches_per_pair or 2, duplicate=args.duplicate,
                    variant=variant, limits={"move_ms": args.move_ms, "bank_ms": args.bank_ms},
                    fmt=args.format or "round-robin", challenger=args.challenger,
                    rounds=args.rounds, best_of=args.best_of)


def _bots_to_create(args: argparse.Namespace) -> list[str] | None:
    """The bots of a tournament to create, or None for ``--id ID`` with no option that shapes a
    tournament: resume the stored one. Options without ``--bots`` are a mistake either way."""
    shaping = [flag for flag, given in (
        ("--matches-per-pair", args.matches_per_pair is not None),
        ("--duplicate", args.duplicate), ("--variant", bool(args.variant)),
        ("--move-ms", args.move_ms is not None), ("--bank-ms", args.bank_ms is not None),
        ("--format", args.format is not None), ("--challenger", args.challenger is not None),
        ("--rounds", args.rounds is not None), ("--best-of", args.best_of is not None))
        if given]
    if args.bots is not None:
        return [b.strip() for b in args.bots.split(",") if b.strip()]
    if shaping:
        raise UserError(f"{', '.join(shaping)} without --bots: give --bots NAME,NAME,... to "
                        f"create a tournament, or `--id ID` alone to resume a stored one")
    if not args.tid:
        raise UserError("give --bots NAME,NAME,... to create a tournament, or `--id ID` alone "
                        "to resume a stored one")
    return None


def cmd_tournament_show(args: argparse.Namespace) -> int:
    from sueca.arena.tournaments import (  # deferred: start-up, see cmd_tournament_run
        TournamentError,
        tournament_report,
    )
    try:
        report = tournament_report(open_store(args), args.tid)
    except TournamentError as err:
        raise UserError(str(err)) from None
    emit(args, report, print_table)
    return 0


def cmd_tournament_list(args: argparse.Namespace) -> int:
    store = open_store(args)
    rows: list[dict[str, Any]] = []
    for tid in store.tournament_ids(50):
        t = store.tournament(tid)
        p = store.progress(tid)
        rows.append({"id": tid, "bots": t.get("spec", {}).get("bots") if t else None,
                     "status": t.get("status") if t else None, **p})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    out = console()  # ids whole, bots' names folded, counts dropped first when narrow
    cells = [[r["id"], ", ".join(r["bots"] or ()), str(r["status"]), str(r["done"]),
              str(r["failed"]), str(r["total"])] for r in rows]
    columns: tuple[Column, ...] = (("id", None), ("bots", None), ("status", 3), ("done", 2),
                                   ("failed", 1), ("total", 0))
    out.print(fitted_table("Tournaments", f"{len(rows)} most recent", columns=columns,
                           rows=cells, out=out, name=1, whole=(0,)))
    return 0


