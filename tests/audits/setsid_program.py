"""A program for ``userdp vectors check`` (the process protocol, docs/protocol.md) that leaves
processes behind, for tests/audits/test_vectors_cli.py.

    python setsid_program.py MODE FOLDER

At its hello it starts a grandchild that calls ``os.setsid()`` (a new session: out of reach of a
kill of the program's process group) and sleeps; the grandchild writes its pid to FOLDER/grandchild
and the program its own to FOLDER/program. MODE "leave": the program then answers every stages
request (a "sensitivity" of 1.0) and exits when its stdin closes, leaving the grandchild running.
MODE "hang": the program sleeps in the middle of its first stages request (FOLDER/hanging appears).
"""

import json
import os
import sys
import time

MODE, FOLDER = sys.argv[1], sys.argv[2]


def grandchild() -> None:
    if os.fork() == 0:
        os.setsid()
        with open(os.path.join(FOLDER, "grandchild.tmp"), "w") as fh:
            fh.write(str(os.getpid()))
        os.replace(os.path.join(FOLDER, "grandchild.tmp"), os.path.join(FOLDER, "grandchild"))
        time.sleep(3600)
        os._exit(0)


for line in sys.stdin:
    req = json.loads(line)
    if "hello" in req:
        grandchild()
        with open(os.path.join(FOLDER, "program"), "w") as fh:
            fh.write(str(os.getpid()))
        resp = {"id": req["id"], "hello": {"protocol": 1, "stages": ["sensitivity"], "releases": False}}
    elif MODE == "hang":
        open(os.path.join(FOLDER, "hanging"), "w").close()
        time.sleep(3600)
    else:
        resp = {"id": req["id"], "stages": {s: 1.0 for s in req["stages"]}}
    print(json.dumps(resp), flush=True)
