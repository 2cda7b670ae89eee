"""Qwen Code (`qwen`, one-shot) headless against a loopback mock of the OpenAI Chat Completions
API, with magihook wired in by `magihook adapt qwen --print-settings`.

Usage statistics (on by default, to a remote host), telemetry and the managed auto-memory are
turned off in the scratch HOME's `~/.qwen/settings.json`; `QWEN_CODE_NO_RELAUNCH` keeps Qwen from
starting a second Node process.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

from chat_mock import ChatModel, message_text, tool_messages
from loopback import traced
from wiring import agent_env

USER_SETTINGS = {"privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                 "memory": {"enableManagedAutoMemory": False}}



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
        conversation = self.model.conversation()
        return [message_text(message) for message in tool_messages(conversation[-1].body)] if (
            conversation) else []


def run_qwen(qwen: Path, project: Path, home: Path, model: ChatModel, prompt: str = "go",
             trace: Optional[Path] = None, timeout: float = 240) -> QwenRun:
    """`qwen` one-shot in `project`, yolo approval, against `model`, with a scratch HOME."""
    (home / ".qwen").mkdir(parents=True, exist_ok=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps(USER_SETTINGS))
    env = agent_env(("OPENAI", "QWEN", "DASHSCOPE", "GEMINI"))
    env.update(HOME=str(home), OPENAI_BASE_URL=model.url + "/v1", OPENAI_API_KEY="mock-key",
               OPENAI_MODEL="mock-model", QWEN_CODE_NO_RELAUNCH="true",
               QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
    argv = [str(qwen), "--auth-type", "openai", "--approval-mode", "yolo",
            "--output-format", "stream-json", prompt]
    done = subprocess.run(traced(argv, trace) if trace is not None else argv, cwd=str(project),
                          env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return QwenRun(done, model)
