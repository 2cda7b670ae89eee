"""A mock of the OpenAI Chat Completions API (`POST /v1/chat/completions`, streamed or not).

The model's script is a list of tool calls: a conversation request (one that offers tools)
that holds n `tool` messages gets the n-th call, then a final text answer.  Any other request
(a title, a classifier, `GET /v1/models`) gets the final text or an empty list.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Sequence, Tuple

from mockmodel import MockModel, Request, send_json

FINAL_TEXT = "All done."


def tool_messages(body: Any) -> List[Dict[str, Any]]:
    """Every `tool` message of a chat request, in order."""
    return [message for message in (body or {}).get("messages", [])
            if isinstance(message, dict) and message.get("role") == "tool"]


def message_text(message: Dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _chunks(model: str, delta: Dict[str, Any], finish: str) -> List[Dict[str, Any]]:
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": model}
    return [dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
            dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]),
            dict(base, choices=[], usage={"prompt_tokens": 10, "completion_tokens": 5,
                                          "total_tokens": 15})]


def _send_stream(handler: Any, chunks: Sequence[Dict[str, Any]]) -> None:
    """Server-sent chunks ending with OpenAI's `data: [DONE]` line."""
    data = "".join("data: %s\n\n" % json.dumps(chunk) for chunk in chunks) + "data: [DONE]\n\n"
    raw = data.encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


class ChatModel(MockModel):
    """Plays an OpenAI-compatible model: each call in `calls` is (tool name, arguments)."""

    def __init__(self, calls: Sequence[Tuple[str, Dict[str, Any]]]) -> None:
        super().__init__()
        self.calls = list(calls)

    def conversation(self) -> List[Request]:
        """The agent's own requests (those that offer tools), in order."""
        return [request for request in self.requests
                if request.method == "POST" and isinstance(request.body, dict)
                and request.body.get("tools")]

    def respond(self, handler: Any, request: Request) -> None:
        if request.method != "POST" or not request.path.endswith("/chat/completions"):
            send_json(handler, 200, {"object": "list", "data": []})
            return
        body = request.body if isinstance(request.body, dict) else {}
        model = str(body.get("model") or "mock-model")
        done = len(tool_messages(body)) if body.get("tools") else len(self.calls)
        if done < len(self.calls):
            name, arguments = self.calls[done]
            call = {"id": "call_mock_%d" % done, "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)}}
            message: Dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": FINAL_TEXT}, "stop"
        if body.get("stream"):
            delta = dict(message)
            if "tool_calls" in delta:
                delta["tool_calls"] = [dict(delta["tool_calls"][0], index=0)]
            _send_stream(handler, _chunks(model, delta, finish))
            return
        send_json(handler, 200, {"id": "chatcmpl-mock", "object": "chat.completion", "created": 0,
                                 "model": model, "choices": [{"index": 0, "message": message,
                                                              "finish_reason": finish}],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": 5,
                                           "total_tokens": 15}})
