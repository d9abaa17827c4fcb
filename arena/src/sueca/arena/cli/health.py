"""``sueca-arena health [ADDRESS]``: ask a referee's gRPC health service; exit 0 if SERVING.

A container probe that also speaks TLS, which the kubelet's own gRPC probe cannot.
"""

from __future__ import annotations

import argparse

import grpc
from grpc_health.v1 import health_pb2

from sueca.sdk.channels import open_channel
from sueca.sdk.cli import Bounded, add_tls_flags, tls_from_args


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    h = sub.add_parser("health", help="ask a referee's gRPC health service (exit 0 if serving)",
                       description="Exit 0 when the referee at ADDRESS reports SERVING, 1 "
                                   "otherwise: a container probe that also speaks TLS, which "
                                   "the kubelet's own gRPC probe cannot.")
    h.add_argument("address", nargs="?", default="127.0.0.1:50051", metavar="ADDRESS",
                   help="host:port (default 127.0.0.1:50051)")
    h.add_argument("--timeout", action=Bounded, kind=float, low=0, above=True, default=2.0,
                   help="seconds to wait for the answer (default 2)")
    add_tls_flags(h)
    h.set_defaults(func=health)


def health(args: argparse.Namespace) -> int:
    """Print the referee's health status; 0 when SERVING."""
    tls = tls_from_args(args)
    try:
        with open_channel(args.address, tls) as channel:
            # what health_pb2_grpc.HealthStub(channel).Check is, typed (its stubs declare
            # no methods on HealthStub)
            check = channel.unary_unary(
                "/grpc.health.v1.Health/Check",
                request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
                response_deserializer=health_pb2.HealthCheckResponse.FromString)
            status = check(health_pb2.HealthCheckRequest(), timeout=args.timeout).status
    except grpc.RpcError as err:
        print(f"referee {args.address} unreachable: {err.code().name}: {err.details()}")
        return 1
    name = health_pb2.HealthCheckResponse.ServingStatus.Name(status)
    print(f"referee {args.address}: {name}")
    return 0 if status == health_pb2.HealthCheckResponse.SERVING else 1
