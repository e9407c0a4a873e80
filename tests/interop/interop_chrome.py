"""Interop group chrome: the Chrome JSON's structure, slices == states, arrows == matched messages."""
import collections
import json
import os
import shutil

import mpitest
from interop_common import RUNS, expect_messages, mpe, run_logged, stat, synthetic_log


def chrome():
    for prog, np, args in RUNS:
        r, log, _ = run_logged(prog, np, args, fmt="mpelog")
        st = stat(log)
        expect_messages(prog, st)
        out = os.path.join(r.workdir, prog + ".json")
        mpe("convert", log, "--to", "chrome", out)
        with open(out) as f:
            doc = json.load(f)
        events = doc["traceEvents"]
        mpitest.expect(isinstance(events, list) and events, prog + ": traceEvents is not a non-empty list")
        by_ph = collections.Counter(e["ph"] for e in events)
        for e in events:
            mpitest.expect(isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int),
                           "%s: event without integer pid/tid: %r" % (prog, e))
            if e["ph"] == "X":
                mpitest.expect(e["dur"] >= 0 and "ts" in e and e["name"], "%s: bad slice %r" % (prog, e))
            if e["ph"] == "f":
                mpitest.expect_eq(e.get("bp"), "e", prog + ": flow end binding point")
            if e["ph"] == "M":
                mpitest.expect(e["name"] in ("process_name", "thread_name", "process_sort_index"),
                               "%s: unknown metadata %r" % (prog, e))
        pids = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
        mpitest.expect_eq(len(pids), st["ranks"], prog + ": one named process per rank")
        threads = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
        mpitest.expect_eq(len(threads), sum(int(n) for n in st["threads"].values()), prog + ": named threads")
        mpitest.expect_eq(by_ph["X"], sum(s["count"] for s in st["states"].values()), prog + ": slices == states")
        starts = collections.Counter(e["id"] for e in events if e["ph"] == "s")
        ends = collections.Counter(e["id"] for e in events if e["ph"] == "f")
        mpitest.expect(all(n == 1 for n in starts.values()) and all(n == 1 for n in ends.values()),
                       prog + ": a flow id used twice")
        mpitest.expect_eq(len(set(starts) & set(ends)), st["messages"]["matched"], prog + ": arrows == matched messages")
        mpitest.cleanup(r)
    # Interleaved chunks and user states (mpe synth): slices still equal states.
    work, log, st = synthetic_log()
    mpe("convert", log, "--to", "chrome", os.path.join(work, "synth.json"))
    with open(os.path.join(work, "synth.json")) as f:
        events = json.load(f)["traceEvents"]
    mpitest.expect_eq(sum(1 for e in events if e["ph"] == "X"), sum(s["count"] for s in st["states"].values()),
                      "synth: slices == states")
    ids = collections.Counter(e["id"] for e in events if e["ph"] in "sf")
    mpitest.expect_eq(sum(1 for n in ids.values() if n == 2), st["messages"]["matched"], "synth: arrows")
    shutil.rmtree(work, ignore_errors=True)
    print("chrome: JSON structure, slices == states, arrows == matched messages")
