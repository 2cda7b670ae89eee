"""GitHub Copilot CLI (`copilot -p`) headless against a loopback mock of the Anthropic Messages
API, with magihook wired in by `magihook adapt copilot --print-settings`.

`COPILOT_OFFLINE=true` turns off GitHub auth, telemetry, web tools and auto-update; the model
is a BYOK provider (`COPILOT_PROVIDER_TYPE=anthropic`) at the mock's loopback URL.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import List, Optional

from claude_mock import ClaudeModel
from loopback import traced
from wiring import agent_env

# Copilot masks the provider key's value wherever it appears in its output: not a common word.
API_KEY = "mock-provider-key-7f3a"



class CopilotRun:
    """One finished `copilot -p --output-format json` run and the model's requests."""

    def __init__(self, done: subprocess.CompletedProcess, model: ClaudeModel) -> None:
        self.returncode, self.stderr = done.returncode, done.stderr
        self.events = [json.loads(line) for line in done.stdout.splitlines()
                       if line.strip().startswith("{")]
        self.model = model

    def final_message(self) -> Optional[str]:
        texts = [event["data"].get("content") for event in self.events
                 if event.get("type") == "assistant.message" and event["data"].get("content")]
        return texts[-1] if texts else None

    def warnings(self) -> List[str]:
        return [event["data"].get("message") for event in self.events
                if event.get("type") == "session.warning"]


def run_copilot(copilot: Path, project: Path, home: Path, model: ClaudeModel, prompt: str = "go",
                trace: Optional[Path] = None, timeout: float = 240) -> CopilotRun:
    """`copilot -p` headless in `project` (trusted for this run), against `model`."""
    env = agent_env(("COPILOT", "GH_", "GITHUB"))
    env.update(HOME=str(home), COPILOT_OFFLINE="true", COPILOT_PROVIDER_TYPE="anthropic",
               COPILOT_PROVIDER_BASE_URL=model.url, COPILOT_PROVIDER_API_KEY=API_KEY,
               COPILOT_MODEL="claude-sonnet-4.5", COPILOT_AUTO_UPDATE="false")
    argv = [str(copilot), "-p", prompt, "--allow-all-tools", "--trust-folder", "--no-ask-user",
            "--no-auto-update", "--disable-client-telemetry", "--output-format", "json"]
    done = subprocess.run(traced(argv, trace) if trace is not None else argv, cwd=str(project),
                          env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return CopilotRun(done, model)
