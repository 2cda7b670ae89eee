"""Codex CLI against a scripted OpenAI Responses API (streaming SSE) on 127.0.0.1.

``CodexModel`` answers ``POST /v1/responses``: the n-th request gets the n-th scripted turn (a
list of output items: a tool call, then on the next request the final message), and every
request is recorded.  ``run_codex`` runs ``codex exec`` headless in a scratch project with a
scratch ``HOME`` and ``CODEX_HOME``: the custom provider points at the mock, and magihook is
wired into ``$CODEX_HOME/hooks.json`` exactly as ``magihook adapt codex --print-settings``
prints it.  Stdlib only.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from mockmodel import MockModel, Request, send_json, send_sse

ROOT = Path(__file__).resolve().parents[2]
MODEL = "gpt-5.5"  # a model Codex knows: an unknown one gets no apply_patch tool
API_KEY_VARIABLE = "MAGIHOOK_E2E_MOCK_KEY"
CODEX_CONFIG = """\
model = "%(model)s"
model_provider = "magihook-mock"

[model_providers.magihook-mock]
name = "magihook mock"
base_url = "%(url)s/v1"
wire_api = "responses"
env_key = "%(key)s"

[features]
plugins = false

[analytics]
enabled = false
"""
# The TUI asks nothing before the turn: the project is trusted, and the model notices that a
# fresh CODEX_HOME would show (a newer model, a model migration) count as seen.
TUI_CONFIG = """
[projects."%(project)s"]
trust_level = "trusted"

[tui.model_availability_nux]
"gpt-6.1-sol" = 1

[notice.model_migrations]
"gpt-5.5" = "gpt-6-sol"
"""
FINAL_TEXT = "All done."


# --- output items the mock model sends -----------------------------------------------------------

def shell_call(command: str, call_id: str = "call_shell_1", **arguments: Any) -> Dict[str, Any]:
    """Codex's unified exec tool, as gpt-5.5 calls it (Codex hooks see it as `Bash`)."""
    return {"type": "function_call", "name": "exec_command", "call_id": call_id,
            "arguments": json.dumps(dict({"cmd": command}, **arguments))}


def patch_call(patch: str, call_id: str = "call_patch_1") -> Dict[str, Any]:
    """Codex's freeform apply_patch tool: the patch text is the whole input."""
    return {"type": "custom_tool_call", "name": "apply_patch", "call_id": call_id, "input": patch}


def message(text: str = FINAL_TEXT) -> Dict[str, Any]:
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}


# --- the mock ----------------------------------------------------------------------------------

class CodexModel(MockModel):
    """Plays the Responses API: turn n of ``turns`` answers the n-th ``/responses`` request;
    past the script, the final message again (so a retry never hangs the agent).  A turn is a
    list of output items, or a function of the request body that returns one."""

    def __init__(self, turns: Sequence[Any]) -> None:
        super().__init__()
        self.turns = [turn if callable(turn) else list(turn) for turn in turns] + [[message()]]
        self.count = 0

    def respond(self, handler: Any, request: Request) -> None:
        if request.method != "POST" or not request.path.split("?")[0].endswith("/responses"):
            send_json(handler, 404, {"error": {"message": "not scripted"}})
            return
        with self.lock:
            number = self.count
            self.count += 1
        items = self.turns[min(number, len(self.turns) - 1)]
        if callable(items):
            items = items(request.body)
        response_id = "resp_%d" % number
        usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
                 "output_tokens_details": None, "total_tokens": 2}
        events = [("response.created", {"type": "response.created",
                                         "response": {"id": response_id}})]
        events += [("response.output_item.done", {"type": "response.output_item.done", "item": item})
                   for item in items]
        events.append(("response.completed", {"type": "response.completed",
                                               "response": {"id": response_id, "usage": usage}}))
        send_sse(handler, events, named=True)

    # --- what the model was sent --------------------------------------------------------------
    def model_requests(self) -> List[Dict[str, Any]]:
        return [r.body for r in self.requests
                if r.method == "POST" and r.path.split("?")[0].endswith("/responses")]

    def inputs_after(self, number: int) -> List[Dict[str, Any]]:
        """The input items of request `number` that request `number - 1` did not have."""
        bodies = self.model_requests()
        before = len(bodies[number - 1]["input"]) if number > 0 else 0
        return bodies[number]["input"][before:]

    def tool_output(self, call_id: str) -> Optional[str]:
        """The output text Codex sent the model for one tool call (the last request's copy)."""
        for body in reversed(self.model_requests()):
            for item in body.get("input", []):
                if item.get("type") in ("function_call_output", "custom_tool_call_output") and (
                        item.get("call_id") == call_id):
                    return _output_text(item.get("output"))
        return None

    def all_text(self) -> str:
        """Every byte the model was sent, as text: for "never shown to the model" checks."""
        return "\n".join(r.raw.decode("utf-8", "replace") for r in self.requests)


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):  # content items
        return "".join(part.get("text", "") for part in output if isinstance(part, dict))
    return json.dumps(output)


def message_texts(item: Dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in item.get("content", [])
                   if isinstance(part, dict))


# --- running codex exec ------------------------------------------------------------------------

class CodexRun:
    """One finished ``codex exec --json`` run: exit code, its JSONL events, stderr."""

    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.returncode, self.stdout, self.stderr = done.returncode, done.stdout, done.stderr
        self.events = [json.loads(line) for line in done.stdout.splitlines()
                       if line.startswith("{")]

    def items(self, kind: str) -> List[Dict[str, Any]]:
        return [e["item"] for e in self.events
                if e.get("type") == "item.completed" and e["item"].get("type") == kind]

    def user_messages(self) -> List[str]:
        """What Codex shows its user besides the agent's messages (hook warnings among them)."""
        return [item.get("message", "") for item in self.items("error")]

    def __repr__(self) -> str:
        return "CodexRun(rc=%d, events=%r, stderr=%r)" % (
            self.returncode, self.events, self.stderr[-2000:])


def print_settings(config: Path) -> Dict[str, Any]:
    """What `magihook adapt codex --print-settings --config CONFIG` prints, parsed."""
    done = subprocess.run(
        [sys.executable, "-m", "magihook", "adapt", "codex", "--print-settings", "--config",
         str(config)], capture_output=True, text=True, cwd=str(ROOT), timeout=60, check=True)
    return json.loads(done.stdout)


def agent_path() -> str:
    """The PATH Codex is started with: the system's, without this venv (Codex must find
    magihook from what --print-settings wrote, not from the test's PATH)."""
    return "/usr/local/bin:/usr/bin:/bin"


def write_stdin_call(body: Dict[str, Any], chars: str, call_id: str = "call_stdin_1") -> Dict[str, Any]:
    """Type `chars` into the exec session the last tool output names (an interactive shell).
    Codex collects the session's output for yield_time_ms: generous, for a busy machine."""
    outputs = [item["output"] for item in body["input"] if item.get("type") == "function_call_output"]
    session = int(re.search(r"session ID ([0-9]+)", _output_text(outputs[-1])).group(1))
    return {"type": "function_call", "name": "write_stdin", "call_id": call_id,
            "arguments": json.dumps({"session_id": session, "chars": chars, "yield_time_ms": 3000})}


def _scratch(model: MockModel, project: Path, scratch: Path, settings: Path,
             extra_config: str = "") -> Dict[str, str]:
    """CODEX_HOME (config.toml, hooks.json from --print-settings) and HOME in `scratch`: the
    environment Codex runs in."""
    home, codex_home = scratch / "home", scratch / "codex-home"
    for folder in (home, codex_home, project):
        folder.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(CODEX_CONFIG % {
        "model": MODEL, "url": model.url, "key": API_KEY_VARIABLE} + extra_config)
    (codex_home / "hooks.json").write_text(json.dumps(print_settings(settings), indent=2))
    return {"PATH": agent_path(), "HOME": str(home), "CODEX_HOME": str(codex_home),
            API_KEY_VARIABLE: "dummy-key-not-a-secret", "LANG": "C.UTF-8",
            "TMPDIR": os.environ.get("TMPDIR", "/tmp")}


def run_codex_tui(codex: Path, model: CodexModel, project: Path, scratch: Path, settings: Path,
                  prompt: str = "Do the task.", deadline: float = 120) -> str:
    """The interactive Codex in a detached tmux (its own server socket), until the model's final
    answer is on screen: the screen's text.  What the user of the TUI sees."""
    env = _scratch(model, project, scratch, settings, TUI_CONFIG % {"project": project})
    env["TERM"] = "xterm-256color"
    command = "env -i %s %s --dangerously-bypass-approvals-and-sandbox " \
              "--dangerously-bypass-hook-trust -m %s %s" % (
                  " ".join(shlex.quote("%s=%s" % item) for item in sorted(env.items())),
                  shlex.quote(str(codex)), MODEL, shlex.quote(prompt))
    tmux = ["tmux", "-L", "magihook-e2e-%d" % os.getpid()]
    subprocess.run(tmux + ["new-session", "-d", "-s", "codex", "-x", "250", "-y", "60", "-c",
                           str(project), command], check=True, timeout=30)
    try:
        end = time.monotonic() + deadline
        while True:  # the screen is the event: poll it until the answer is drawn
            screen = subprocess.run(tmux + ["capture-pane", "-p", "-J", "-t", "codex", "-S", "-500"],
                                    capture_output=True, text=True, timeout=30).stdout
            if "• " + FINAL_TEXT in screen or time.monotonic() > end:
                return screen
            time.sleep(0.2)
    finally:
        socket = subprocess.run(tmux + ["display-message", "-p", "#{socket_path}"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
        subprocess.run(tmux + ["kill-server"], capture_output=True, timeout=30)
        if socket and os.path.exists(socket):  # kill-server leaves its socket file behind
            os.unlink(socket)


def run_codex(codex: Path, model: CodexModel, project: Path, scratch: Path, settings: Path,
              prompt: str = "Do the task.", timeout: int = 180, json_output: bool = True,
              bypass_hook_trust: bool = True) -> CodexRun:
    """``codex exec`` in `project`, hooks wired from magihook's --print-settings.

    `bypass_hook_trust=False` leaves out --dangerously-bypass-hook-trust: Codex then runs only
    hooks the user trusted (in its TUI, /hooks), and a scratch CODEX_HOME trusts none."""
    env = _scratch(model, project, scratch, settings)
    command = [str(codex), "exec"] + (["--json"] if json_output else []) + [
        "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"] + (
        ["--dangerously-bypass-hook-trust"] if bypass_hook_trust else []) + ["-m", MODEL, prompt]
    done = subprocess.run(
        command, cwd=str(project), env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=timeout)
    return CodexRun(done)
