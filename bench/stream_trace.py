"""`magihook run --stream`, timed from the inside: where one event's time goes.

    python3 stream_trace.py MAGIHOOK_PY [run --stream options]

Runs the module's CLI with a few functions wrapped to note the time (the runner's os.posix_spawn,
os.pidfd_open and select.poll, and the stream's line reader and result writer), and at end of
input prints, on stderr, one JSON object: the median microseconds of each step of an event.
bench/run.py feeds it the same events as the --stream figure.  A measuring tool only: the
wrappers cost a little themselves.
"""

import importlib.util
import json
import os
import select
import statistics
import sys
import time

STEPS = (("line read", "spawn called"), ("spawn called", "spawn returned"),
         ("spawn returned", "hook exit seen"), ("hook exit seen", "result ready"),
         ("result ready", "result written"))


def main() -> int:
    spec = importlib.util.spec_from_file_location("magihook", sys.argv[1])
    magihook = importlib.util.module_from_spec(spec)
    sys.modules["magihook"] = magihook
    spec.loader.exec_module(magihook)
    now = time.perf_counter
    marks, events = {}, []

    lines = magihook.stream_lines

    def stream_lines(stream):
        for line in lines(stream):
            marks.clear()
            marks["line read"] = now()
            yield line

    spawn = os.posix_spawn

    def posix_spawn(*args, **options):
        marks["spawn called"] = now()
        try:
            return spawn(*args, **options)
        finally:
            marks["spawn returned"] = now()

    pidfd_open = os.pidfd_open

    def open_pidfd(pid):
        marks["pidfd"] = pidfd_open(pid)
        return marks["pidfd"]

    poll = select.poll

    class Poll:
        def __init__(self):
            self._poll = poll()
            self.register, self.unregister = self._poll.register, self._poll.unregister

        def poll(self, *args):
            ready = self._poll.poll(*args)
            if any(fd == marks.get("pidfd") for fd, _ in ready):
                marks["hook exit seen"] = now()
            return ready

    write = magihook.Output.json

    def write_json(self, value):
        marks["result ready"] = now()
        write(self, value)
        marks["result written"] = now()
        if all(step in marks for pair in STEPS for step in pair):
            events.append(dict(marks))

    magihook.stream_lines, os.posix_spawn, os.pidfd_open = stream_lines, posix_spawn, open_pidfd
    select.poll, magihook.Output.json = Poll, write_json
    # As the `magihook` command runs it (console_main): the process is its own.
    code = magihook._main(["run", "--stream", *sys.argv[2:]], owns_process=True)
    if not events:
        sys.stderr.write(json.dumps({"error": "no event was traced"}) + "\n")
        return 1
    sys.stderr.write(json.dumps({"%s to %s" % pair: statistics.median(
        (event[pair[1]] - event[pair[0]]) * 1e6 for event in events) for pair in STEPS}) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
