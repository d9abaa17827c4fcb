"""The committed generated code in sdk/src/sueca/v1 must be exactly what the .proto produces.

Bots in other languages generate from the .proto; the referee and SDK import the committed
Python. If the two drift apart, this fails: regenerate with the command in docs/architecture.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTO = ROOT / "proto"
GENERATED = ("sueca_pb2.py", "sueca_pb2.pyi", "sueca_pb2_grpc.py")


def test_generated_code_matches_proto(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools", reason="grpcio-tools is in the test extra")
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I.", f"--python_out={tmp_path}",
         f"--pyi_out={tmp_path}", f"--grpc_python_out={tmp_path}", "sueca/v1/sueca.proto"],
        cwd=PROTO, check=True)
    for name in GENERATED:
        fresh = (tmp_path / "sueca" / "v1" / name).read_text()
        committed = (ROOT / "sdk" / "src" / "sueca" / "v1" / name).read_text()
        assert fresh == committed, f"sdk/src/sueca/v1/{name} is stale: regenerate it (docs/architecture.md § Changing the wire contract)"


def test_proto_package_is_versioned() -> None:
    text = (PROTO / "sueca" / "v1" / "sueca.proto").read_text()
    assert "package sueca.v1;" in text
