"""Every network connection an agent's process tree opens, from `strace -f -e trace=connect`.

`traced(argv, log)` prefixes a command so that each connect() of it and its children is
written to `log`; `inet_peers(log)` reads back the (address, port) of every IPv4/IPv6 one
(Unix sockets are local by nature).  A DNS lookup shows as a connect to the resolver.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import List, Sequence, Tuple

import pytest

_INET = re.compile(r'connect\(\d+, \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\), '
                   r'(?:sin_addr=inet_addr\("([^"]+)"\)|.*?inet_pton\(AF_INET6, "([^"]+)")')
LOOPBACK = ("127.0.0.1", "::1", "::ffff:127.0.0.1")


def traced(argv: Sequence[str], log: Path) -> List[str]:
    if shutil.which("strace") is None:
        if os.environ.get("CI"):
            pytest.fail("e2e under CI cannot check the agent's traffic: strace is missing",
                        pytrace=False)
        pytest.skip("E2E SKIPPED: strace is missing (apt-get install strace)")
    return ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(log)] + list(argv)


def inet_peers(log: Path) -> List[Tuple[str, int]]:
    peers = []
    for line in log.read_text().splitlines():
        match = _INET.search(line)
        if match:
            peers.append((match.group(2) or match.group(3), int(match.group(1))))
    return peers
