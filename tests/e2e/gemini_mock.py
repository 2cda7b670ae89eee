"""Gemini CLI against a loopback mock of the Gemini API, with magihook wired in.

``GeminiModel`` plays ``streamGenerateContent`` (SSE, ``alt=sse``): the first request of the
turn gets one scripted function call, every request after a tool's ``functionResponse`` gets the
final answer.  ``GeminiRun`` lays out a scratch HOME and project, wires magihook exactly as
``magihook adapt gemini --print-settings`` prints it, runs ``gemini -p`` headless and keeps what
the agent printed.  Stdlib only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from mockmodel import MockModel, Request, send_json, send_sse

ROOT = Path(__file__).resolve().parents[2]
MAGIHOOK = ROOT / "magihook.py"
MODEL = "gemini-2.5-flash"
FINAL_ANSWER = "All done."
RUN_TIMEOUT_SECONDS = 300  # a generous bound for a busy machine; a hang fails, it does not wait


def _chunk(parts: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": MODEL}


class GeminiModel(MockModel):
    """One function call (none when `tool` is None, more when `more` names them: one turn, the
    calls in order), then the final answer; every request recorded."""

    def __init__(self, tool: Optional[str], args: Dict[str, Any],
                 *more: Tuple[str, Dict[str, Any]]) -> None:
        super().__init__()
        self.calls = ([(tool, args)] if tool is not None else []) + list(more)
        self.served: Set[int] = set()  # each call is sent once, even if a request is retried

    def respond(self, handler: Any, request: Request) -> None:
        if request.method != "POST" or ":streamGenerateContent" not in request.path:
            send_json(handler, 404, {"error": {"code": 404, "message": "not scripted"}})
            return
        done = len(function_responses(request))  # the request carries every earlier call's
        with self.lock:
            call = done < len(self.calls) and done not in self.served
            self.served.add(done)
        if call:
            name, args = self.calls[done]
            send_sse(handler, [_chunk([{"functionCall": {"name": name, "args": args}}])])
        else:
            send_sse(handler, [_chunk([{"text": FINAL_ANSWER}])])

    def turn_requests(self) -> List[Request]:
        """The model requests of the agent's turn (those that offer tools)."""
        with self.lock:
            return [each for each in self.requests if isinstance(each.body, dict)
                    and ":streamGenerateContent" in each.path]

    def after_tool(self) -> Optional[Request]:
        """The request that carried the tool's outcome back to the model, if there was one."""
        return next((each for each in self.turn_requests() if function_responses(each)), None)


def function_responses(request: Request) -> List[Dict[str, Any]]:
    """The functionResponse parts of a request's contents."""
    contents = request.body.get("contents") if isinstance(request.body, dict) else None
    return [part["functionResponse"] for content in contents or []
            for part in content.get("parts") or [] if "functionResponse" in part]


def texts_after_tool(request: Request) -> List[str]:
    """Every text part of the request's contents that comes after its first functionResponse."""
    seen, texts = False, []
    for content in request.body.get("contents") or []:
        for part in content.get("parts") or []:
            if "functionResponse" in part:
                seen = True
            elif seen and isinstance(part.get("text"), str):
                texts.append(part["text"])
    return texts


class GeminiRun:
    """A scratch HOME and project folder for one gemini run."""

    def __init__(self, cli: Path, tmp_path: Path) -> None:
        self.cli = cli
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.settings_file = self.project / ".magi-code" / "settings.json"
        for folder in (self.home / ".gemini", self.project / ".gemini", self.project / "hooks",
                       self.settings_file.parent):
            folder.mkdir(parents=True, exist_ok=True)
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(
            {"security": {"auth": {"selectedType": "gemini-api-key"}}}))

    def magihook_settings(self, document: Any) -> None:
        """magihook's settings file: a dict as JSON, or a string written as is (a broken file)."""
        text = document if isinstance(document, str) else json.dumps(document)
        self.settings_file.write_text(text)

    def hook_script(self, name: str, body: str) -> str:
        path = self.project / "hooks" / name
        path.write_text(body)
        path.chmod(0o755)
        return "./hooks/" + name

    def wire(self) -> Dict[str, Any]:
        """The project's Gemini settings: exactly what `adapt gemini --print-settings` prints."""
        printed = subprocess.run(
            [sys.executable, str(MAGIHOOK), "adapt", "gemini", "--print-settings", "--config",
             str(self.settings_file)],
            capture_output=True, text=True, check=True, cwd=str(self.project))
        snippet = json.loads(printed.stdout)
        (self.project / ".gemini" / "settings.json").write_text(json.dumps(snippet, indent=2))
        return snippet

    def environment(self, model: GeminiModel, trusted: bool = True) -> Dict[str, str]:
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("GEMINI_", "GOOGLE_", "MAGIHOOK_"))}
        env.update(HOME=str(self.home), GOOGLE_GEMINI_BASE_URL=model.url,
                   GEMINI_API_KEY="test-key-not-real", NO_COLOR="1", CI="1", TERM="dumb")
        if trusted:  # else headless Gemini refuses the folder (exit 55) and loads no hook
            env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        # no venv on PATH: the printed command must name magihook by its absolute path
        env["PATH"] = os.pathsep.join(
            part for part in env.get("PATH", "").split(os.pathsep)
            if part and Path(part).resolve() != Path(sys.executable).parent.resolve())
        return env

    def run(self, model: GeminiModel, prompt: str = "Do the task.", trusted: bool = True) -> Outcome:
        done = subprocess.run(
            [str(self.cli), "--approval-mode", "yolo", "-m", MODEL, "-p", prompt,
             "--output-format", "json"],
            cwd=str(self.project), env=self.environment(model, trusted), stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS)
        return Outcome(done.returncode, done.stdout, done.stderr)


class Outcome:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr
        try:
            self.json: Any = json.loads(stdout)
        except ValueError:
            self.json = None

    def __repr__(self) -> str:
        return "Outcome(rc=%d, stdout=%r, stderr=%r)" % (
            self.returncode, self.stdout[-3000:], self.stderr[-3000:])
