"""``phoned run --metrics ADDR``: the daemon's ``/metrics``, on a listener of its own.

The client's threaded HTTP server over the daemon's registry (``phoned.daemon.runtime.metrics``):
``GET /metrics`` (any path answers the same) in the Prometheus text format, no token, so
the address is loopback unless the config names another (``metrics.listen``). A port
already taken fails the start (exit 2, naming the address), before any phone is served.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import start_http_server

from phoned.daemon.runtime.metrics import PhonedMetrics

log = logging.getLogger("phoned.metrics")


@contextmanager
def serving(metrics: PhonedMetrics, host: str, port: int) -> Iterator[None]:
    """Serve ``metrics`` on ``host:port`` while the block runs."""
    try:
        server, thread = start_http_server(port, addr=host, registry=metrics.registry)
    except OSError as exc:
        raise OSError(f"cannot serve metrics on {host}:{port}: {exc.strerror or exc}") from exc
    log.info("metrics: http://%s:%d/metrics", host if ":" not in host else f"[{host}]", port)
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
