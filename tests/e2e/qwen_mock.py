"""Qwen Code (`qwen`, one-shot) headless against a loopback mock of the OpenAI Chat Completions
API, with magihook wired in by `magihook adapt qwen --print-settings`.

Usage statistics (on by default, to a remote host), telemetry and the managed auto-memory are
turned off in the scratch HOME's `~/.qwen/settings.json`; `QWEN_CODE_NO_RELAUNCH` keeps Qwen from
starting a second Node process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from chat_mock import ChatModel
from loopback import traced

MAGIHOOK = Path(__file__).resolve().parents[2] / "magihook.py"
USER_SETTINGS = {"privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                 "memory": {"enableManagedAutoMemory": False}}


def print_settings(config: Path) -> Dict[str, Any]:
    """`magihook adapt qwen --print-settings`, exactly as a user would run it."""
    done = subprocess.run([sys.executable, str(MAGIHOOK), "adapt", "qwen", "--print-settings",
                           "--config", str(config)],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


class QwenRun:
    """One finished `qwen --output-format stream-json` run and the model's requests."""

    def __init__(self, done: subprocess.CompletedProcess, model: ChatModel) -> None:
        self.returncode, self.stderr = done.returncode, done.stderr
        self.events = [json.loads(line) for line in done.stdout.splitlines()
                       if line.strip().startswith("{")]
        self.model = model

    def final(self) -> Optional[Dict[str, Any]]:
        return next((event for event in reversed(self.events) if event.get("type") == "result"),
                    None)

    def tool_texts(self) -> List[str]:
        """The tool results the model received, from its last conversation request."""
        from chat_mock import message_text, tool_messages

        conversation = self.model.conversation()
        return [message_text(message) for message in tool_messages(conversation[-1].body)] if (
            conversation) else []


def run_qwen(qwen: Path, project: Path, home: Path, model: ChatModel, prompt: str = "go",
             trace: Optional[Path] = None, timeout: float = 240) -> QwenRun:
    """`qwen` one-shot in `project`, yolo approval, against `model`, with a scratch HOME."""
    (home / ".qwen").mkdir(parents=True, exist_ok=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps(USER_SETTINGS))
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("OPENAI", "QWEN", "DASHSCOPE", "GEMINI", "MAGIHOOK_", "OTEL_"))}
    # No magihook on the agent's PATH: the wiring must name it by its absolute path.
    env["PATH"] = os.pathsep.join(folder for folder in env.get("PATH", "").split(os.pathsep)
                                  if folder and not os.path.exists(os.path.join(folder, "magihook")))
    env.update(HOME=str(home), OPENAI_BASE_URL=model.url + "/v1", OPENAI_API_KEY="mock-key",
               OPENAI_MODEL="mock-model", QWEN_CODE_NO_RELAUNCH="true",
               QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
    argv = [str(qwen), "--auth-type", "openai", "--approval-mode", "yolo",
            "--output-format", "stream-json", prompt]
    done = subprocess.run(traced(argv, trace) if trace is not None else argv, cwd=str(project),
                          env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return QwenRun(done, model)
