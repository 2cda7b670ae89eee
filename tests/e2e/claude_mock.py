"""A mock of the Anthropic Messages API (streaming SSE) for Claude Code, and a driver for `claude -p`.

The model's script is a list of tool calls: a request of the agent's conversation (one that
offers tools) that holds n tool results gets the n-th call, then a final text answer.  Any
other request (a title, a quota probe, `HEAD /`) gets the final text or an empty 200.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from mockmodel import MockModel, Request, send_json, send_sse

FINAL_TEXT = "All done."
ALLOWED_TOOLS = "Bash Read Write Edit MultiEdit Glob Grep"
MAGIHOOK = Path(__file__).resolve().parents[2] / "magihook.py"


def _message_events(blocks: Sequence[Dict[str, Any]], stop_reason: str) -> List[Tuple[str, Any]]:
    events: List[Tuple[str, Any]] = [("message_start", {"type": "message_start", "message": {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": "claude-mock",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}})]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason,
                                                              "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def tool_results(body: Any) -> List[Dict[str, Any]]:
    """Every tool_result block of a Messages request, in order."""
    found = []
    for message in (body or {}).get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            found += [block for block in content if isinstance(block, dict)
                      and block.get("type") == "tool_result"]
    return found


def result_text(block: Dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def text_after_tool_result(body: Any) -> str:
    """The text the request places after its last tool_result block (in that message or in a
    later one): where a hook's context item travels, whatever block the agent wraps it in."""
    blocks: List[Any] = []
    for message in (body or {}).get("messages", []):
        content = message.get("content")
        blocks += content if isinstance(content, list) else [{"type": "text", "text": content}]
    last = max((index for index, block in enumerate(blocks) if isinstance(block, dict)
                and block.get("type") == "tool_result"), default=None)
    if last is None:
        return ""
    return "\n".join(block.get("text", "") for block in blocks[last + 1:]
                     if isinstance(block, dict) and isinstance(block.get("text"), str))


def request_text(body: Any) -> str:
    """All the text a request hands the model (messages and system), for 'does it carry X?'."""
    return json.dumps(body or {})


class ClaudeModel(MockModel):
    """Plays Claude for one scripted conversation: each call in `calls` is (tool name, input)."""

    def __init__(self, calls: Sequence[Tuple[str, Dict[str, Any]]]) -> None:
        super().__init__()
        self.calls = list(calls)

    def conversation(self) -> List[Request]:
        """The agent's own requests (those that offer tools), in order."""
        return [request for request in self.requests
                if request.method == "POST" and isinstance(request.body, dict)
                and request.body.get("tools")]

    def respond(self, handler: Any, request: Request) -> None:
        if request.method != "POST" or not request.path.startswith("/v1/messages"):
            send_json(handler, 200, {})
            return
        body = request.body if isinstance(request.body, dict) else {}
        if "count_tokens" in request.path:
            send_json(handler, 200, {"input_tokens": 10})
            return
        done = len(tool_results(body)) if body.get("tools") else len(self.calls)
        if done < len(self.calls):
            name, tool_input = self.calls[done]
            blocks = [{"type": "tool_use", "id": "toolu_mock_%d" % done, "name": name,
                       "input": tool_input}]
            stop = "tool_use"
        else:
            blocks, stop = [{"type": "text", "text": FINAL_TEXT}], "end_turn"
        if body.get("stream"):
            send_sse(handler, _message_events(blocks, stop), named=True)
        else:
            send_json(handler, 200, {"id": "msg_mock", "type": "message", "role": "assistant",
                                     "model": "claude-mock", "content": blocks,
                                     "stop_reason": stop, "stop_sequence": None,
                                     "usage": {"input_tokens": 10, "output_tokens": 5}})


def print_settings(config: Path) -> Dict[str, Any]:
    """`magihook adapt claude-code --print-settings`, exactly as a user would run it."""
    done = subprocess.run([sys.executable, str(MAGIHOOK), "adapt", "claude-code",
                           "--print-settings", "--config", str(config)],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


class Run:
    """One finished `claude -p` run: its stream-json events and the model's requests."""

    def __init__(self, done: subprocess.CompletedProcess, model: ClaudeModel, home: Path) -> None:
        self.returncode, self.stderr = done.returncode, done.stderr
        self.events = [json.loads(line) for line in done.stdout.splitlines()
                       if line.strip().startswith("{")]
        self.model, self.home = model, home

    def hook_answers(self, event_name: str) -> List[Any]:
        """What magihook printed for each call of `event_name` (None: it printed nothing)."""
        answers = []
        for event in self.events:
            if event.get("subtype") == "hook_response" and event.get("hook_event") == event_name:
                stdout = event.get("stdout") or ""
                answers.append(json.loads(stdout) if stdout.strip() else None)
        return answers

    def user_messages(self) -> List[str]:
        """The hook system messages Claude Code showed the user (from its session transcript)."""
        shown = []
        for transcript in sorted((self.home / ".claude" / "projects").glob("*/*.jsonl")):
            for line in transcript.read_text().splitlines():
                attachment = json.loads(line).get("attachment") if line.strip() else None
                if isinstance(attachment, dict) and attachment.get("type") == "hook_system_message":
                    shown.append(attachment.get("content"))
        return shown

    def final(self) -> Optional[Dict[str, Any]]:
        return next((event for event in reversed(self.events) if event.get("type") == "result"),
                    None)

    def tool_results_seen(self) -> List[Dict[str, Any]]:
        """The tool results the model received, from its last conversation request."""
        conversation = self.model.conversation()
        return tool_results(conversation[-1].body) if conversation else []


def run_claude(claude: Path, project: Path, home: Path, model: ClaudeModel, prompt: str = "go",
               timeout: float = 240, resume: bool = False) -> Run:
    """`claude -p` headless in `project`, against `model`, with a scratch HOME; `resume`: a next
    turn of the project's last session (`--continue`)."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("ANTHROPIC_", "CLAUDE", "MAGIHOOK_"))}
    # No magihook on the agent's PATH: the wiring must name it by its absolute path.
    env["PATH"] = os.pathsep.join(folder for folder in env.get("PATH", "").split(os.pathsep)
                                  if folder and not os.path.exists(os.path.join(folder, "magihook")))
    env.update(HOME=str(home), ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-ant-dummy",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
               DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1")
    done = subprocess.run(
        [str(claude), "-p", prompt, "--output-format", "stream-json", "--verbose",
         "--allowedTools", ALLOWED_TOOLS, "--include-hook-events"] + (["--continue"] if resume else []),
        cwd=str(project), env=env, capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL)
    return Run(done, model, home)
