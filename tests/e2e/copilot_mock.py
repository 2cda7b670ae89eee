"""GitHub Copilot CLI (`copilot -p`) headless against a loopback mock of the Anthropic Messages
API, with magihook wired in by `magihook adapt copilot --print-settings`.

`COPILOT_OFFLINE=true` turns off GitHub auth, telemetry, web tools and auto-update; the model
is a BYOK provider (`COPILOT_PROVIDER_TYPE=anthropic`) at the mock's loopback URL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from claude_mock import ClaudeModel
from loopback import traced

MAGIHOOK = Path(__file__).resolve().parents[2] / "magihook.py"
# Copilot masks the provider key's value wherever it appears in its output: not a common word.
API_KEY = "mock-provider-key-7f3a"


def print_settings(config: Path) -> Dict[str, Any]:
    """`magihook adapt copilot --print-settings`, exactly as a user would run it."""
    done = subprocess.run([sys.executable, str(MAGIHOOK), "adapt", "copilot", "--print-settings",
                           "--config", str(config)],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


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
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("COPILOT", "GH_", "GITHUB", "MAGIHOOK_", "OTEL_"))}
    # No magihook on the agent's PATH: the wiring must name it by its absolute path.
    env["PATH"] = os.pathsep.join(folder for folder in env.get("PATH", "").split(os.pathsep)
                                  if folder and not os.path.exists(os.path.join(folder, "magihook")))
    env.update(HOME=str(home), COPILOT_OFFLINE="true", COPILOT_PROVIDER_TYPE="anthropic",
               COPILOT_PROVIDER_BASE_URL=model.url, COPILOT_PROVIDER_API_KEY=API_KEY,
               COPILOT_MODEL="claude-sonnet-4.5", COPILOT_AUTO_UPDATE="false")
    argv = [str(copilot), "-p", prompt, "--allow-all-tools", "--trust-folder", "--no-ask-user",
            "--no-auto-update", "--disable-client-telemetry", "--output-format", "json"]
    done = subprocess.run(traced(argv, trace) if trace is not None else argv, cwd=str(project),
                          env=env, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return CopilotRun(done, model)
