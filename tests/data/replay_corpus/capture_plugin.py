"""Capture every log the suite hands to replay_log (for the replay corpus)."""
import dataclasses
import hashlib
import json
import os
from pathlib import Path

import p2p.protocol.replay as rp

OUT = Path(os.environ.get("HOUSE_CAPTURE", "/tmp/house_capture"))
_orig = rp.replay_log


def replay_log(lines, timeouts=rp.DEFAULT_TIMEOUTS):
    lines = list(lines)
    try:
        if all(isinstance(x, (bytes, bytearray)) and b"\n" not in x for x in lines):
            data = b"\n".join(bytes(x) for x in lines)
            t = dataclasses.asdict(timeouts)
            key = hashlib.sha256(data + json.dumps(t, sort_keys=True).encode()).hexdigest()[:24]
            path = OUT / f"{key}.log"
            if not path.exists():
                OUT.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                (OUT / f"{key}.json").write_text(json.dumps({"timeouts": t, "test": os.environ.get("PYTEST_CURRENT_TEST", "")}))
    except Exception:  # noqa: BLE001
        pass
    return _orig(lines, timeouts)


rp.replay_log = replay_log
