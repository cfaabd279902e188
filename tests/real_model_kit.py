"""The real-model tier's servers: one per variant for the test session (``footprint_lab.examples.local_model``)."""

from __future__ import annotations

from pathlib import Path

from footprint_lab.examples.local_model import MODEL, N_CTX, ModelServer, free_port, start_server, stop_server

__all__ = ["MODEL", "N_CTX", "ModelServer", "ModelServers", "free_port", "start_server", "stop_server"]


class ModelServers:
    """The session's servers, one per variant, started when first asked for."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.running: dict[str, ModelServer] = {}

    def __call__(self, variant: str = "stock") -> ModelServer:
        server = self.running.get(variant)
        if server is None or server.process.poll() is not None:
            server = self.running[variant] = start_server(variant, self.log_dir)
        return server

    def stop_all(self) -> None:
        for server in self.running.values():
            stop_server(server)
