"""Take Away's protobuf messages, for the gRPC engine (take_away.proto, beside this file).

A game in the tree has its .proto in protos/ and its code generated into gen/ by `make
proto`; a game from outside the tree brings its own. This one is compiled from its
.proto here, on first import, by grpcio-tools' protoc (installed with the dev tools), into
a folder of the temp directory named for the .proto's hash, so every process of a test
run imports the same generated module and nothing is written into the tree.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path
from types import ModuleType

from services.engines.core.messages import GameMessages

_PROTO = Path(__file__).with_name("take_away.proto")


def _generated() -> ModuleType:
    digest = hashlib.sha256(_PROTO.read_bytes()).hexdigest()[:16]
    out = Path(tempfile.gettempdir()) / f"cultists-take-away-{digest}"
    module = out / "take_away_pb2.py"
    if not module.exists():
        from grpc_tools import protoc

        out.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=out))
        code = protoc.main(["protoc", f"-I{_PROTO.parent}", f"--python_out={scratch}", _PROTO.name])
        if code != 0:
            raise RuntimeError(f"protoc failed on {_PROTO} ({code})")
        os.replace(scratch / "take_away_pb2.py", module)  # atomic: parallel processes agree
    spec = importlib.util.spec_from_file_location("cultists_testgames_take_away_pb2", module)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


pb = _generated()

MESSAGES = GameMessages(config=pb.TakeAwayConfig, view=pb.TakeAwayView, action=pb.TakeAwayActionDetail)
