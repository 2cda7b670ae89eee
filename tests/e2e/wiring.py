"""What every agent's e2e module does the same way: wire magihook in as `--print-settings`
prints it, give the agent an environment without magihook on its PATH, write hook scripts, and
check that nothing of magihook's side reached the model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Sequence

ROOT = Path(__file__).resolve().parents[2]
MAGIHOOK = ROOT / "magihook.py"
EXAMPLES = ROOT / "examples" / "hooks"
# Always kept out of the model's view: a failing hook's stderr, a settings error's details.
LEAK_MARKERS = ("hook-stderr-secret", "unknown key")


def print_settings(agent: str, config: Path) -> Dict[str, Any]:
    """`magihook adapt AGENT --print-settings`, exactly as a user would run it."""
    done = subprocess.run([sys.executable, str(MAGIHOOK), "adapt", agent, "--print-settings",
                           "--config", str(config)],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def write_magihook_settings(project: Path, hooks: Dict[str, Any], raw: Optional[str] = None) -> Path:
    """magihook's settings (or `raw` text) outside the project: the model must never learn it."""
    settings = project.parent / "magihook-settings" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(raw if raw is not None else json.dumps({"hooks": dict({"enabled": True},
                                                                                **hooks)}))
    return settings


def agent_env(dropped: Sequence[str]) -> Dict[str, str]:
    """This environment without the variables starting with `dropped` (nor magihook's), and no
    magihook on PATH: the wiring must name it by its absolute path."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(tuple(dropped) + ("MAGIHOOK_", "OTEL_"))}
    env["PATH"] = os.pathsep.join(folder for folder in env.get("PATH", "").split(os.pathsep)
                                  if folder and not os.path.exists(os.path.join(folder, "magihook")))
    return env


def script(project: Path, name: str, body: Optional[str] = None) -> str:
    """A hook script under the project's hooks/ (a shipped example when `body` is None)."""
    path = project / "hooks" / name
    if body is None:
        shutil.copy2(EXAMPLES / name, path)
    else:
        path.write_text(body)
    path.chmod(0o755)
    return "./hooks/" + name


def assert_nothing_leaked(bodies: Iterable[Any], project: Path, *markers: str) -> None:
    """No request body holds a marker, the fixed ones, or the settings folder's path."""
    markers += LEAK_MARKERS + (str(project.parent / "magihook-settings"),)
    for body in bodies:
        text = json.dumps(body)
        for marker in markers:
            assert marker not in text, marker
