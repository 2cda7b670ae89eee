"""A loopback HTTP server that plays a model API from a script and records every request.

Each agent's test module subclasses ``MockModel`` and implements ``respond(request)``; the base
class owns the socket (127.0.0.1, a free port), the thread, and the record of requests.
Stdlib only.  Never bound to anything but loopback.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterable, List, Optional


class Request:
    def __init__(self, method: str, path: str, headers: Dict[str, str], raw: bytes) -> None:
        self.method, self.path, self.headers, self.raw = method, path, headers, raw
        try:
            self.body: Any = json.loads(raw) if raw else None
        except ValueError:
            self.body = None

    def __repr__(self) -> str:
        return "Request(%s %s)" % (self.method, self.path)


class MockModel:
    """``with MockModel() as model: ... model.url ... model.requests``."""

    def __init__(self) -> None:
        self.requests: List[Request] = []
        self.lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                request = Request(self.command, self.path, dict(self.headers), raw)
                with mock.lock:
                    mock.requests.append(request)
                mock.respond(self, request)

            do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> MockModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- to override ------------------------------------------------------------------------
    def respond(self, handler: BaseHTTPRequestHandler, request: Request) -> None:
        send_json(handler, 404, {"error": "not scripted"})


def send_json(handler: BaseHTTPRequestHandler, status: int, body: Any,
              headers: Optional[Dict[str, str]] = None) -> None:
    data = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


def send_sse(handler: BaseHTTPRequestHandler, events: Iterable[Any], named: bool = False) -> None:
    """Server-sent events: each item is a JSON-able payload, or (event name, payload) if named."""
    chunks = []
    for item in events:
        if named:
            name, payload = item
            chunks.append("event: %s\ndata: %s\n\n" % (name, json.dumps(payload)))
        else:
            chunks.append("data: %s\n\n" % json.dumps(item))
    data = "".join(chunks).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
