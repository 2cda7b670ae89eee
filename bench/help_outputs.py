"""Redactions in the `--help` of the commands installed here: output an agent reads often, where
a flag's metavariable (`--password PASSWORD`) or description sits where a value would.

    python3 bench/help_outputs.py [--base OTHER/magihook.py] [--show]

Runs `PROGRAM --help` (stdin closed, 2 s, output of at most 64 KiB kept) for each executable in
/usr/bin, /usr/local/bin and this interpreter's bin folder, leaving out programs that act
without arguments (shells, pagers, editors, power and login commands), and prints the help's size
and the redactions of this checkout's magihook (and of --base), with each redacted line with
--show.  Nothing is written; the programs are the machine's, so figures are this machine's.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FOLDERS = ("/usr/bin", "/usr/local/bin", os.path.dirname(sys.executable))
SKIP = frozenset((
    "reboot", "shutdown", "halt", "poweroff", "init", "telinit", "yes", "sh", "bash", "dash", "rbash",
    "top", "htop", "less", "more", "vi", "vim", "view", "nano", "ed", "ex", "login", "su", "sudo",
    "passwd", "chsh", "chfn", "newgrp", "sg", "script", "watch", "cat", "tee", "head", "tail", "sleep",
    "timeout", "nohup", "screen", "tmux", "expect", "python3", "python", "pip", "pip3", "ipython"))
KEEP_MAX = 64 * 1024


def helps():
    # Each program runs in a folder of its own making, removed after: some write a file where
    # they are asked for help (an empty `gzNNNNN`).
    with tempfile.TemporaryDirectory(prefix="help-outputs-") as scratch:
        yield from _helps(scratch)


def _helps(scratch):
    seen = set()
    for folder in FOLDERS:
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
            path = os.path.join(folder, name)
            if name in seen or name in SKIP or name.startswith(("python", "pip", "kill")) \
                    or not os.access(path, os.X_OK) or os.path.isdir(path):
                continue
            seen.add(name)
            try:
                done = subprocess.run([path, "--help"], stdin=subprocess.DEVNULL, capture_output=True,
                                      timeout=2, cwd=scratch)
            except (OSError, subprocess.TimeoutExpired):
                continue
            text = (done.stdout + done.stderr).decode("utf-8", "replace")
            if text.strip() and len(text) <= KEEP_MAX:
                yield name, text


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    args = sys.argv[1:]
    modules = [("this checkout", load(os.path.join(HERE, "..", "magihook.py"), "magihook_new"))]
    if "--base" in args:
        modules.insert(0, ("base", load(args[args.index("--base") + 1], "magihook_base")))
    texts = list(helps())
    mib = sum(len(text.encode()) for _, text in texts) / 2 ** 20
    print("%d programs' --help, %.2f MiB" % (len(texts), mib))
    for label, module in modules:
        count, shown = 0, []
        for name, text in texts:
            out = module.redact_credentials(text)
            count += out.count("<redacted:") - text.count("<redacted:")
            shown += ["  %s: %s" % (name, line.strip()[:110]) for line in out.splitlines() if "<redacted:" in line]
        print("%s: %d redactions, %.2f a MiB" % (label, count, count / mib))
        if "--show" in args:
            print("\n".join(shown))


if __name__ == "__main__":
    main()
