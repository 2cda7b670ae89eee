"""The floor under `magihook run --stream`: the least any Python stream of hooks must do per event.

Read one line, parse it, start `/bin/bash -lc true` with os.posix_spawn on three pipes (the
fastest way Python has), write a payload to its stdin, wait for it, read its output, write one
JSON line back.  No settings, matching, validation, preflight, redaction, records or timeouts:
bench/run.py measures it next to magihook to show how much of the 5% budget is left once the
irreducible work is done.
"""

import json
import os
import sys

ARGV = ["/bin/bash", "-lc", "true"]
# The environment as is: os.environ itself would be decoded and re-encoded for every spawn.
ENV = None if sys.version_info >= (3, 13) else os.environ._data  # type: ignore[attr-defined]


def main() -> None:
    answer = sys.stdout.buffer
    for line in sys.stdin.buffer:
        event = json.loads(line)
        payload = json.dumps({"schema": "magi-code.tool_hook", "event": event}).encode()
        ours, child = [], []
        for index in range(3):
            read_end, write_end = os.pipe()
            ours.append(write_end if index == 0 else read_end)
            child.append(read_end if index == 0 else write_end)
        pid = os.posix_spawn(ARGV[0], ARGV, ENV, setsid=True, file_actions=[
            (os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(child)])
        for fd in child:
            os.close(fd)
        try:
            os.write(ours[0], payload)
        except BrokenPipeError:
            pass  # the hook exited before reading: normal hook behaviour (spec), as in magihook
        os.close(ours[0])
        os.waitpid(pid, 0)
        output = [os.read(fd, 65536) for fd in ours[1:]]
        for fd in ours[1:]:
            os.close(fd)
        answer.write(json.dumps({"verdict": "continue", "output_bytes": sum(map(len, output))}
                                ).encode() + b"\n")
        answer.flush()


if __name__ == "__main__":
    main()
