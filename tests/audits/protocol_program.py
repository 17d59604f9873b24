"""A program that speaks userdp's protocol (audits/validation/protocol.py), well or badly, for the tests.

    python protocol_program.py MODE

MODE "good": a capped sum (Amin et al. 2019 §3) with stages statistic, sensitivity and
noise_scale, releases from the request's seed, refusals of kind "refused" for epsilon <= 0 or
T <= 0, and "failed" for a request whose params hold "fail": true; "refuse_above": k refuses a release
request on a dataset of more than k records (a refusal that reads the data: a privacy bug); params "nulls": true make
every second release null ("no release"), "pairs": true make each release a pair of
differently shaped parts, "pack" the packed form (releases_hex): "compact" (no spaces, as
JSON.stringify writes it), "spaced" (json.dumps's default spaces), or broken: "short" (one value
missing), "nonhex", "inf" (a value that is not finite). Every other MODE answers the hello correctly, then
misbehaves on the
first request after it (release or stages): "crash" (exits with status 3 after a message on
stderr), "hang" (sleeps), "garbage" (prints a line that is not JSON), "exit-early" (exits 0),
"wrong-size" (one release too few), "wrong-id", "schema" (a release that is a string),
"spawn-hang" (starts a child that sleeps, then hangs itself), "no-newline" (writes forever
without ending its line), "silent-close" (closes stdout and keeps running), "stdout-noise"
(a debug print before the response).

MODEs that answer every request, wrongly in one respect: "fixed-seed" (releases from one fixed
seed, whatever the request's), "unseeded" (from a generator seeded once at start: one seed, other
releases), "fail-refusal" (epsilon <= 0 gets an error of kind "failed", not "refused"), "bigint"
(epsilon <= 0 gets releases that are 400-digit integers), "stage-inf" (the statistic is 1e400),
"ragged" (the statistic is [[1, 2], [3]]), "empty-releases" (every release is []), "string-stage"
(the noise scale is {"b": "one"}), "half-noise" (a privacy bug, not a breach of the protocol: the
noise scale, its stage and its releases, T / (2 epsilon), half the paper's).
"""

import json
import math
import os
import random
import struct
import subprocess
import sys
import time

MODE = sys.argv[1]
SPACED = False  # set per request: the "spaced" packed form is written with json.dumps's spaces


def statistic(dataset, T):
    totals = {}
    for u, x in zip(dataset["user_ids"], dataset["values"]):
        totals[u] = totals.get(u, 0.0) + x
    return sum(min(t, T) for t in totals.values())


def check(params):
    if not params.get("epsilon", 1.0) > 0 or not params.get("T", 1.0) > 0:
        raise ValueError("epsilon and T must be > 0")
    if params.get("fail"):
        raise RuntimeError("out of memory (a failure the program reports)")


def laplace(rng, b):
    u = rng.random() - 0.5
    return -b * math.copysign(1.0, u) * math.log1p(-2 * abs(u))


ANSWERING = ("good", "fixed-seed", "unseeded", "fail-refusal", "bigint", "stage-inf", "ragged", "empty-releases")
ANSWERING += ("string-stage", "half-noise")
SHRINK = 0.5 if MODE == "half-noise" else 1.0  # the noise scale's factor
UNSEEDED = random.Random()  # "unseeded": seeded once, from the operating system


def answer(req):
    rid = req["id"]
    try:
        p = {k: float(v["nonfinite"]) if isinstance(v, dict) else v for k, v in req["params"].items()}
        if MODE == "bigint" and "size" in req and not p.get("epsilon", 1.0) > 0:
            return {"id": rid, "releases": [10**400] * req["size"]}
        if MODE == "fail-refusal" and not p.get("epsilon", 1.0) > 0:
            return {"id": rid, "error": {"kind": "failed", "message": "epsilon = 0: division by zero"}}
        check(p)
        if "size" in req and len(req["dataset"]["values"]) > p.get("refuse_above", math.inf):
            raise ValueError(f"too many records: more than {p['refuse_above']}")
        if "size" in req:
            rng = {"fixed-seed": random.Random(12345), "unseeded": UNSEEDED}.get(MODE, random.Random(req["seed"]))
            g = statistic(req["dataset"], p["T"])
            out = [g + laplace(rng, SHRINK * p["T"] / p["epsilon"]) for _ in range(req["size"])]
            if p.get("nulls"):
                out = [None if k % 2 else x for k, x in enumerate(out)]
            if p.get("pairs"):
                out = [[[x, x], [[x]]] for x in out]
            if p.get("pack"):
                return {"id": rid, "releases_hex": packed(out, p["pack"])}
            if MODE == "empty-releases":
                out = [[] for _ in out]
            return {"id": rid, "releases": out}
        values = {
            "statistic": lambda: statistic(req["dataset"], p["T"]),
            "sensitivity": lambda: p["T"],
            "noise_scale": lambda: SHRINK * p["T"] / p["epsilon"],
        }
        got = {s: values[s]() for s in req["stages"]}
        bad = {"stage-inf": ("statistic", 1e400), "ragged": ("statistic", [[1, 2], [3]])}
        bad["string-stage"] = ("noise_scale", {"b": "one"})
        if MODE in bad and bad[MODE][0] in got:
            got[bad[MODE][0]] = bad[MODE][1]
        return {"id": rid, "stages": got}
    except ValueError as exc:
        return {"id": rid, "error": {"kind": "refused", "message": str(exc)}}
    except Exception as exc:  # RuntimeError, or a bug: the program says it failed
        return {"id": rid, "error": {"kind": "failed", "message": f"{type(exc).__name__}: {exc}"}}


def packed(out, how):
    if how == "inf":
        out[-1] = math.inf
    data = struct.pack(f"<{len(out)}d", *out).hex()
    if how == "short":
        data = data[:-16]
    if how == "nonhex":
        data = data[:-1] + "g"
    return {"shape": [len(out)], "data": data}


def send(obj):
    line = json.dumps(obj, separators=None if SPACED else (",", ":"))
    if MODE == "stage-inf":
        line = line.replace("Infinity", "1e400")  # a JSON number that overflows a binary64
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    req = json.loads(line)
    if "hello" in req:
        send(
            {
                "id": 0,
                "hello": {
                    "protocol": 1,
                    "name": f"protocol_program {MODE}",
                    "stages": ["statistic", "sensitivity", "noise_scale"],
                    "releases": True,
                },
            }
        )
        continue
    if MODE in ANSWERING:
        SPACED = req.get("params", {}).get("pack") == "spaced"
        send(answer(req))
    elif MODE == "crash":
        print("Traceback (most recent call last):\nZeroDivisionError: the program's own bug", file=sys.stderr)
        sys.exit(3)
    elif MODE == "hang":
        time.sleep(3600)
    elif MODE == "garbage":
        print("releases: 1.5 2.5 3.5", flush=True)
    elif MODE == "exit-early":
        sys.exit(0)
    elif MODE == "wrong-size":
        resp = answer(req)
        if "releases" in resp:
            resp["releases"] = resp["releases"][:-1]
        send(resp)
    elif MODE == "wrong-id":
        send({**answer(req), "id": req["id"] + 7})
    elif MODE == "schema":
        resp = answer(req)
        if "releases" in resp:
            resp["releases"][0] = "1.5"
        else:
            resp["stages"] = {s: "one" for s in resp["stages"]}
        send(resp)
    elif MODE == "spawn-hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        print(f"child {child.pid}", file=sys.stderr, flush=True)
        time.sleep(3600)
    elif MODE == "no-newline":
        while True:
            sys.stdout.write("x" * 65536)
            sys.stdout.flush()
    elif MODE == "silent-close":
        os.close(1)
        time.sleep(3600)
    elif MODE == "stdout-noise":
        print("debug: computing", flush=True)
        send(answer(req))
    else:
        raise SystemExit(f"unknown mode {MODE}")
