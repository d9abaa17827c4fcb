"""The referee's Prometheus metrics — the only module that defines them.

They live in prometheus_client's default registry (so the process and Python collectors come
along) and are created once per process, at import. Only the referee service imports this
module; the engine and the SDK never do.
"""

from __future__ import annotations

from prometheus_client import REGISTRY, Counter, Gauge, Histogram, start_http_server

SESSIONS = Gauge("sueca_referee_sessions", "Bot streams connected to this referee")
ACTIVE_MATCHES = Gauge("sueca_referee_active_matches", "Matches running on this referee")
MOVES = Counter("sueca_referee_moves_total", "Cards played and redeal answers applied")
MOVE_RTT = Histogram(
    "sueca_referee_move_rtt_seconds",
    "From a turn request being queued for a bot to its valid answer arriving",
    buckets=(0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0,
             5.0, 10.0, 30.0))
FAULTS = Counter("sueca_referee_faults_total",
                 "Faults by kind: protocol faults (unknown_game, not_your_seat, not_in_hand, "
                 "out_of_turn, stale_request, malformed, renuncia_refused), renuncia, timeout, "
                 "disconnect, and refused connections (unauthenticated)", ["kind"])
MATCHES = Counter("sueca_referee_matches_total", "Finished matches by how they ended", ["end"])


def serve(port: int, host: str = "0.0.0.0") -> None:
    """Expose /metrics on ``host:port`` from a daemon thread."""
    start_http_server(port, addr=host, registry=REGISTRY)
