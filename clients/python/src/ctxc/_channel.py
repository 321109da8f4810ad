"""The channel settings every ctxc client starts from."""
from __future__ import annotations

import json
from typing import List, Sequence, Tuple

from ctxc._version import __version__

DEFAULT_TARGET = "127.0.0.1:50051"
DEFAULT_TIMEOUT = 30.0
# The server's default max_message_bytes.
MAX_MESSAGE_BYTES = 32 << 20

# Every ctxc RPC is stateless, so a call that failed with UNAVAILABLE (the
# server restarting, a connection dropped) is safe to retry.
SERVICE_CONFIG = json.dumps({
    "methodConfig": [{
        "name": [{"service": "ctxc.v1.ContextCompilerService"}],
        "retryPolicy": {
            "maxAttempts": 4,
            "initialBackoff": "0.1s",
            "maxBackoff": "2s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"],
        },
    }],
})


def channel_options(extra: Sequence[Tuple[str, object]] = ()) -> List[Tuple[str, object]]:
    """The defaults (retries, keepalive within the server's 10 s ping policy,
    32 MiB messages, a user agent) with extra options taking precedence."""
    options = {
        "grpc.service_config": SERVICE_CONFIG,
        "grpc.enable_retries": 1,
        "grpc.keepalive_time_ms": 30_000,
        "grpc.keepalive_timeout_ms": 10_000,
        "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
        "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
        "grpc.primary_user_agent": f"ctxc-python/{__version__}",
    }
    options.update(dict(extra))
    return list(options.items())
