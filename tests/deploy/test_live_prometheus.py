"""The alert rules on a running arena, scraped by a real Prometheus.

A private Redis, a referee, a worker, the ratings exporter and the ladder scheduler (the same
commands the deploys run), with a random and a reckless bot playing ladder matches; Debian's
``prometheus`` scrapes them every second with deploy/prometheus/alerts.yml loaded. While
everything runs, no availability alert may even be pending, every rule must evaluate without
error, and the reckless bot's renúncias must not count as protocol faults; when the worker is
stopped, SuecaNoWorker must go pending. This is what promtool's synthetic series cannot show:
that the jobs, names and labels the code really serves are the ones the rules select.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from kits.deploy import DEPLOY, needs_yaml
from kits.wait import wait_for

from sueca.arena.processes import Supervisor

pytestmark = pytest.mark.slow

ALERTS = DEPLOY / "prometheus" / "alerts.yml"
# alerts about something this arena runs: none may be pending or firing while it runs
AVAILABILITY = ("SuecaRefereeDown", "SuecaNoReferee", "SuecaNoWorker", "SuecaExporterDown",
                "SuecaSchedulerDown", "SuecaProtocolFaultRateHigh", "SuecaMatchesLostOnTime",
                "SuecaMatchesFailing", "SuecaNoMatchesRecorded")


def api(port: int, path: str, **params: str) -> Any:
    url = f"http://127.0.0.1:{port}/api/v1/{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    body = json.loads(urllib.request.urlopen(url, timeout=5).read())
    assert body["status"] == "success", body
    return body["data"]


def query(port: int, expr: str) -> list[dict[str, Any]]:
    return api(port, "query", query=expr)["result"]


def wait(what: str, cond: Any, timeout: float, watch: Sequence[Supervisor] = ()) -> None:
    """Poll ``cond`` until it holds; a timeout quotes the log's end of every child of
    ``watch`` that has exited (the likely reason)."""
    def exited() -> str:
        return "\n".join(f"{c.name} exited with code {c.returncode}:\n{c.tail(10)}"
                         for group in watch for c in group if not c.alive())
    wait_for(cond, timeout, what, interval=0.5, detail=exited)


def active_alerts(port: int) -> dict[str, str]:
    return {a["labels"]["alertname"]: a["state"] for a in api(port, "alerts")["alerts"]}


@needs_yaml
def test_alerts_on_a_running_arena_scraped_by_prometheus(tmp_path: Path, prometheus: str) -> None:
    from sueca.arena.local_arena import LocalArena
    from sueca.arena.redisproc import free_port

    arena = LocalArena(bots={"random": "random", "reckless": "reckless"}, capacity=4,
                       metrics=True, log_dir=tmp_path)
    extra = Supervisor(tmp_path)  # the exporter, the scheduler and Prometheus
    try:
        arena.start(timeout=90)
        bin_dir = Path(sys.executable).parent
        ports = {"referee": arena.ports["referee_metrics"], "worker": arena.ports["worker0_metrics"],
                 "exporter": free_port(), "scheduler": free_port()}
        extra.start("exporter", [str(bin_dir / "sueca-arena"), "ratings", "exporter",
                                 "--metrics-port", str(ports["exporter"]), "--addr", "127.0.0.1"],
                    env=arena.env())
        extra.start("scheduler", [str(bin_dir / "sueca-arena"), "scheduler", "--target", "2",
                                  "--interval", "0.5", "--referee", arena.referee,
                                  "--metrics-port", str(ports["scheduler"])], env=arena.env())

        web = free_port()
        config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                  "rule_files": [str(ALERTS)],
                  "scrape_configs": [{"job_name": job, "static_configs": [
                      {"targets": [f"127.0.0.1:{port}"]}]} for job, port in ports.items()]}
        (tmp_path / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        extra.start("prometheus", [prometheus, f"--config.file={tmp_path / 'prometheus.yml'}",
                                   f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                   f"--web.listen-address=127.0.0.1:{web}"])
        everything = (extra, arena.procs)

        wait("every job scraped and up", lambda: {r["metric"]["job"] for r in query(web, "up == 1")}
             == set(ports), 60, everything)
        # the ladder plays: results recorded, and the reckless bot commits renúncias
        wait("a recorded result", lambda: query(web, "sum(sueca_worker_matches_recorded_total) > 0"),
             60, everything)
        wait("a renúncia", lambda: query(
            web, 'sum(sueca_referee_faults_total{kind="renuncia", class="game"}) > 0'), 90, everything)
        time.sleep(5)  # a few evaluations with everything up

        rules = [r for g in api(web, "rules")["groups"] for r in g["rules"]]
        assert {r["name"] for r in rules} >= set(AVAILABILITY)
        broken = {r["name"]: r.get("lastError") for r in rules if r["health"] != "ok"}
        assert not broken, f"rules that do not evaluate: {broken}"
        assert query(web, 'sum(sueca_referee_faults_total{class="protocol"})')[0]["value"][1] == "0"
        active = active_alerts(web)
        assert not {a: s for a, s in active.items() if a in AVAILABILITY}, \
            f"alerts pending or firing on a healthy arena: {active}"
        # every job reports its build
        assert {r["metric"]["job"] for r in query(web, "sueca_build_info == 1")} == set(ports)

        # the worker goes away: SuecaNoWorker goes pending (it fires after its 5 minutes)
        next(p for p in arena.procs if p.name.startswith("worker")).stop()
        wait("SuecaNoWorker pending", lambda: active_alerts(web).get("SuecaNoWorker"), 30, [extra])
        # and the queue depth is still known, from the exporter and the scheduler
        assert {r["metric"]["job"] for r in query(web, "sueca_worker_queue_depth")} \
            >= {"exporter", "scheduler"}
    finally:
        extra.stop()
        arena.stop()
