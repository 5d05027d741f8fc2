"""A chat completions endpoint on loopback for tests of `cua eval` with an `openai:` policy:
a real stdlib HTTP server in a thread, whose answers each test scripts."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "tiny-vl-7b"


def tool_call(arguments: dict[str, Any]) -> str:
    """An answer in the qwen2.5-vl family's format."""
    return f'<tool_call>\n{json.dumps({"name": "computer_use", "arguments": arguments})}\n</tool_call>'


CLICK = tool_call({"action": "left_click", "coordinate": [40, 40]})
DONE = tool_call({"action": "terminate", "status": "success"})


class ModelServer:
    """Answers `POST /v1/chat/completions` (plain or streamed) from `plan`: an int is that HTTP status (with
    `Retry-After: 0`, so a retry costs no wait), a str is the assistant's answer, bytes are
    sent as they are as a 200's body (a garbled reply); when the plan runs out, `then` is
    answered. `GET /v1/models` answers 200. `port` 0: a free one."""

    def __init__(self, port: int = 0) -> None:
        self.plan: list[int | str | bytes] = []
        self.then: int | str | bytes = DONE
        #: Where set, answers every request from its body instead of `plan` (for clients that
        #: run several conversations at once in no fixed order).
        self.respond: Callable[[dict[str, Any]], int | str | bytes] | None = None
        self.calls: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, model: str, answer: str) -> None:
                """A streamed answer (`stream: true`), as server-sent events: the content in one
                chunk, then the finish reason with the usage, then `[DONE]`."""
                base = {"id": "c", "object": "chat.completion.chunk", "model": model}
                events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": answer},
                                                "finish_reason": None}]},
                          {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}]
                data = "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.calls.append(body)
                answer = server.respond(body) if server.respond else server.plan.pop(0) if server.plan else server.then
                if isinstance(answer, int):
                    self._send(answer, {"error": {"message": "upstream overloaded"}}, {"Retry-After": "0"})
                    return
                if isinstance(answer, bytes):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                    return
                if body.get("stream"):
                    self._stream(body["model"], answer)
                    return
                self._send(200, {"id": "c", "object": "chat.completion", "model": body["model"],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": 5},
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": answer}}]})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
