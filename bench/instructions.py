"""Instructions, not seconds: what redact_credentials costs a MiB of each corpus kind, and what
one `magihook run` call costs magihook itself, counted by valgrind (cachegrind, no cache model).

CPU time on a shared VM swings ~2x from minute to minute, so a 5 % change is lost in it.  The
instruction count of the same code on the same input is the same on every run (PYTHONHASHSEED
is fixed), so an A/B of a change to Python-level work (a judging step, a gate, a fast path, a
first-call cost) reads to a tenth of a percent.  It is not a clock: a pass of the regex engine
retires ~5 instructions a character at a high rate, str.find fewer at a lower one, so compare
scans by CPU time (bench_redact.py, interleaved) and everything else here.

    python3 bench/instructions.py [--module PATH] [--base PATH] [--kinds json,env] [--size BYTES] [--calls]

--base PATH: the same figures for another magihook.py, and the ratio.  --calls: one fresh
`magihook run --phase before_tool` per tool event (a write, an ffgrep, a bash call; one hook that
reads its stdin; the hook's own process is not counted).  Needs valgrind.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus  # noqa: E402

# Loads the module from its path and the corpus from here, makes the text, redacts it WARM times
# (the first call compiles its patterns, the second settles each lead's mode), then COUNT times.
KIND_SCRIPT = """
import importlib.util, sys
sys.path.insert(0, %(here)r)
import corpus
spec = importlib.util.spec_from_file_location("magihook", %(module)r)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
text = corpus.text(%(kind)r, %(size)d)
for _ in range(2 + %(count)d):
    module.redact_credentials(text)
"""

# What a console script runs: magihook imported (from its .pyc) and console_main.
CALL_SCRIPT = "import sys; sys.path.insert(0, %r); import magihook; sys.argv[0] = 'magihook'; magihook.console_main()"

EVENTS = {
    "write": {"path": "/home/dev/my_project/src/some-file.name_v2.py", "content": "print(1)\n"},
    "ffgrep": {"pattern": "def get_token(", "path": "src"},
    "bash": {"command": "git log --format=%H -n 5 | grep -v foo"},
}


def instructions(argv: Sequence[str], stdin: bytes = b"", env: Optional[Dict[str, str]] = None) -> int:
    """The instructions ARGV's process retired (its children are not followed)."""
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           *argv], input=stdin, capture_output=True, env=env, check=True)
    found = re.search(rb"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit("valgrind printed no instruction count: %s" % done.stderr[-300:].decode(errors="replace"))
    return int(found.group(1).replace(b",", b""))


def kind_instructions(module: str, kind: str, size: int) -> float:
    """Instructions of one warm redact_credentials call on SIZE characters of KIND, a MiB."""
    def run(count: int) -> int:
        script = KIND_SCRIPT % {"here": HERE, "module": module, "kind": kind, "size": size, "count": count}
        return instructions([sys.executable, "-c", script], env=dict(os.environ, PYTHONHASHSEED="0"))
    return (run(1) - run(0)) * (1 << 20) / size


def call_instructions(module: str) -> Dict[str, int]:
    """Instructions of one fresh `magihook run` call per event of EVENTS."""
    root = tempfile.mkdtemp(prefix="magihook-instructions-")
    try:
        lib, home = os.path.join(root, "lib"), os.path.join(root, "home")
        os.mkdir(lib)
        os.mkdir(home)
        shutil.copyfile(module, os.path.join(lib, "magihook.py"))
        config = os.path.join(root, "settings.json")
        with open(config, "w") as handle:
            json.dump({"hooks": {"enabled": True, "before_tool": [{"command": "cat > /dev/null"}]}}, handle)
        env = {key: value for key, value in os.environ.items()
               if key not in ("MAGIHOOK_CONFIG", "PYTHONDONTWRITEBYTECODE")}
        env.update(HOME=home, PYTHONHASHSEED="0")
        argv = [sys.executable, "-c", CALL_SCRIPT % lib, "run", "--phase", "before_tool", "--config", config]
        counts = {}
        for tool, request in EVENTS.items():
            event = json.dumps({"tool": {"name": tool, "call_id": "call_1"}, "request": request}).encode()
            subprocess.run(argv, input=event, capture_output=True, env=env, check=True)   # writes the .pyc
            counts[tool] = instructions(argv, event, env)
        return counts
    finally:
        shutil.rmtree(root, ignore_errors=True)


def table(rows: List[List[str]], header: List[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", default=os.path.join(os.path.dirname(HERE), "magihook.py"))
    parser.add_argument("--base")
    parser.add_argument("--kinds", default=",".join(list(corpus.KINDS) + ["mixed"]))
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--calls", action="store_true")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("bench/instructions.py needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    modules = [args.module] + ([args.base] if args.base else [])
    header = ["kind", "M instructions a MiB"] + (["base", "ratio"] if args.base else [])
    rows = []
    for kind in args.kinds.split(","):
        counts = [kind_instructions(module, kind, args.size) for module in modules]
        rows.append([kind] + ["%.1f" % (count / 1e6) for count in counts]
                    + (["%.3f" % (counts[0] / counts[1])] if args.base else []))
    print(table(rows, header))
    if args.calls:
        calls = [call_instructions(module) for module in modules]
        print()
        print(table([[tool] + ["%.2f" % (each[tool] / 1e6) for each in calls]
                     + (["%.3f" % (calls[0][tool] / calls[1][tool])] if args.base else []) for tool in EVENTS],
                    ["call", "M instructions"] + (["base", "ratio"] if args.base else [])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
