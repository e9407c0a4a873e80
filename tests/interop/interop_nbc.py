"""Interop group nbc: nonblocking collectives completed by Wait, Waitall, Test and Waitany, as
request records in the log, as OTF2's NonBlockingCollectiveRequest/Complete, and through round trips
(records and wait states kept)."""
import collections
import json
import os
import subprocess

import mpitest
from interop_common import (SYSTEM_PYTHON, check_archive, expect_counts, liblog_counts, mpe, otf2_print_counts,
                            require_python_otf2, stat)


NBC_RANKS = 3
# bin/nbc_requests (tests/interop/nbc.c), per rank: each nonblocking collective in call order, the
# call that completes it, its OTF2 operation and root.
NBC_CALLS = [("MPI_Iallreduce", "MPI_Wait", "ALLREDUCE", None), ("MPI_Ibcast", "MPI_Waitall", "BCAST", 1),
             ("MPI_Ibarrier", "MPI_Waitall", "BARRIER", None), ("MPI_Ialltoall", "MPI_Test", "ALLTOALL", None),
             ("MPI_Ibarrier", "MPI_Waitany", "BARRIER", None)]


def log_records(path):
    """Every record of a .mpelog in stored order, per location, from bin/log_records: dicts with
    kind, t (ns), name, a, b, comm (world ranks of the communicator), c (a state's duration)."""
    p = subprocess.run([mpitest.program("log_records"), path], capture_output=True, text=True, timeout=120)
    mpitest.expect(p.returncode == 0, "log_records %s failed:\n%s" % (path, p.stderr))
    out = collections.defaultdict(list)
    for line in p.stdout.splitlines():
        f = line.split()  # rR.tT kind time name a= b= comm= c=
        out[f[0]].append({"kind": int(f[1]), "t": int(f[2]), "name": f[3], "a": int(f[4][2:]), "b": int(f[5][2:]),
                          "comm": f[6][5:], "c": int(f[7][2:])})
    return out


def request_records(records):
    """A location's records but the states, stably sorted by time, request serials renumbered in
    order of first use: what a round trip must keep (the reader numbers requests itself). A
    communicator creation's category means nothing (docs/FORMAT.md): left out."""
    serial = {}
    out = []
    for r in sorted((r for r in records if r["kind"] != 1), key=lambda r: r["t"]):
        r = dict(r)
        if r["kind"] in (9, 10):
            r["a"] = serial.setdefault(r["a"], len(serial) + 1)
        if r["kind"] == 7:
            r["name"] = ""
        out.append(r)
    return out


def check_nbc_records(records, what):
    """Per location of bin/nbc_requests' log: each nonblocking collective's record at its call's
    entry, its request post (kind 9, b=3) right after it with its serial, and the request's done
    (kind 10, b=3) at the exit of the call that completed it (within 1 ns: a state's end is its
    rounded start plus its rounded duration); the Isend/Irecv requests (b=0, b=1) too; none for
    the blocking MPI_Barrier."""
    mpitest.expect_eq(sorted(records), ["r%d.t0" % r for r in range(NBC_RANKS)], what + ": locations")
    for where, recs in records.items():
        states = [r for r in recs if r["kind"] == 1 and r["a"] == 0]
        posts, dones = {}, {}
        for i, r in enumerate(recs):
            if r["kind"] == 9 and r["b"] == 3:
                prev = recs[i - 1] if i else {}
                mpitest.expect(prev.get("kind") == 4 and prev["t"] == r["t"] and prev["name"] == r["name"],
                               "%s %s: a collective's request post not right after its record: %r after %r"
                               % (what, where, r, prev))
                posts[r["a"]] = prev
            if r["kind"] == 10 and r["b"] == 3:
                mpitest.expect(r["a"] not in dones, "%s %s: request %d done twice" % (what, where, r["a"]))
                dones[r["a"]] = r
        mpitest.expect_eq(sorted(posts), sorted(dones), what + " " + where + ": posted and completed collectives")
        got = []
        for serial, coll in sorted(posts.items(), key=lambda kv: kv[1]["t"]):
            call = [s for s in states if s["t"] == coll["t"] and s["name"] == coll["name"]]
            mpitest.expect(len(call) == 1, "%s %s: no %s call at %d" % (what, where, coll["name"], coll["t"]))
            done = dones[serial]
            closing = [s for s in states if abs(s["t"] + s["c"] - done["t"]) <= 1 and s["name"] == done["name"]]
            mpitest.expect(len(closing) == 1, "%s %s: request %d done at %d is at no %s's exit"
                           % (what, where, serial, done["t"], done["name"]))
            got.append((coll["name"], done["name"], coll["a"] if coll["a"] >= 0 else None))
        mpitest.expect_eq(got, [(c, w, root) for c, w, _, root in NBC_CALLS], what + " " + where + ": collectives")
        by_b = collections.Counter((r["kind"], r["b"]) for r in recs if r["kind"] in (9, 10))
        mpitest.expect_eq(dict(by_b), {(9, 0): 1, (10, 0): 1, (9, 1): 1, (10, 1): 1, (9, 3): 5, (10, 3): 5},
                          what + " " + where + ": request records by kind and b")
        mpitest.expect_eq(sum(1 for r in recs if r["kind"] == 4 and r["name"] == "MPI_Barrier"), 1,
                          what + " " + where + ": the blocking barrier")


NBC_READER = r"""
import collections, json, sys
import otf2
stack, out = collections.defaultdict(list), collections.defaultdict(list)
with otf2.reader.open(sys.argv[1]) as r:
    for loc, ev in r.events:
        kind = type(ev).__name__
        if kind in ("Enter", "CallingContextEnter"):
            stack[loc.name + str(loc.group.name)].append(
                str(ev.region.name if kind == "Enter" else ev.calling_context.region.name))
        elif kind in ("Leave", "CallingContextLeave"):
            stack[loc.name + str(loc.group.name)].pop()
        elif kind.startswith("NonBlockingCollective"):
            e = {"event": kind, "call": stack[loc.name + str(loc.group.name)][-1], "request": ev.request_id}
            if kind.endswith("Complete"):
                e.update(op=str(ev.collective_op).split(".")[-1], root=ev.root, sent=ev.size_sent,
                         received=ev.size_received, comm=str(ev.communicator.name))
            out[str(loc.group.name)].append(e)
print(json.dumps(out))
"""


def check_nbc_archive(archive, what):
    """otf2-print's counts, and with OTF2's Python reader each NonBlockingCollectiveRequest inside
    its call and each NonBlockingCollectiveComplete inside its completing call, paired by request
    id, with its operation and root."""
    counts = otf2_print_counts(archive)
    n = NBC_RANKS * len(NBC_CALLS)
    expect_counts(counts, {"NON_BLOCKING_COLLECTIVE_REQUEST": n, "NON_BLOCKING_COLLECTIVE_COMPLETE": n,
                           "MPI_COLLECTIVE_BEGIN": NBC_RANKS, "MPI_COLLECTIVE_END": NBC_RANKS,  # MPI_Barrier
                           "MPI_ISEND": NBC_RANKS, "MPI_ISEND_COMPLETE": NBC_RANKS,
                           "MPI_IRECV_REQUEST": NBC_RANKS, "MPI_IRECV": NBC_RANKS}, what + " (otf2-print)")
    require_python_otf2()
    p = subprocess.run([SYSTEM_PYTHON, "-c", NBC_READER, os.path.join(archive, "traces.otf2")],
                       capture_output=True, text=True, timeout=300)
    mpitest.expect(p.returncode == 0, "the OTF2 Python reader failed on %s:\n%s" % (archive, p.stderr[-2000:]))
    per_rank = json.loads(p.stdout)
    mpitest.expect_eq(sorted(per_rank), ["MPI Rank %d" % r for r in range(NBC_RANKS)], what + ": ranks")
    undefined = 2**32 - 1
    for rank, events in per_rank.items():
        requests = {e["request"]: e for e in events if e["event"] == "NonBlockingCollectiveRequest"}
        completes = [e for e in events if e["event"] == "NonBlockingCollectiveComplete"]
        mpitest.expect_eq(sorted(requests), sorted(e["request"] for e in completes), what + " " + rank + ": request ids")
        got = [(requests[e["request"]]["call"], e["call"], e["op"], None if e["root"] == undefined else e["root"])
               for e in sorted(completes, key=lambda e: list(requests).index(e["request"]))]
        mpitest.expect_eq(got, NBC_CALLS, what + " " + rank + ": nonblocking collectives (call, completing call, "
                          "operation, root)")
        allreduce = [e for e in completes if e["op"] == "ALLREDUCE"][0]
        mpitest.expect_eq((allreduce["sent"], allreduce["received"]), (4, 4), what + " " + rank + ": Iallreduce bytes")


def without_shares(x):
    """`mpe waits --json` without the shares of MPI time, which follow the MPI time."""
    if isinstance(x, dict):
        return {k: without_shares(v) for k, v in x.items() if k != "share"}
    return [without_shares(v) for v in x] if isinstance(x, list) else x


def nbc():
    r = mpitest.run(NBC_RANKS, [mpitest.program("nbc_requests")], tools=("log",),
                    env={"MPE_LOG_FORMAT": "both", "MPE_LOGFILE_PREFIX": "nbc"})
    log, archive = os.path.join(r.workdir, "nbc.mpelog"), os.path.join(r.workdir, "nbc.otf2")
    records = log_records(log)
    check_nbc_records(records, "liblog's log")
    # `mpe print` shows the collectives (not the request records, which only the OTF2 writer and
    # the wait analysis read): one line per call, at the call's entry.
    colls = collections.Counter(line.split()[3] for line in mpe("print", "--kind", "coll", log).stdout.splitlines())
    mpitest.expect_eq(dict(colls), {"MPI_Iallreduce": 3, "MPI_Ibcast": 3, "MPI_Ibarrier": 6, "MPI_Ialltoall": 3,
                                    "MPI_Barrier": 3}, "mpe print: collectives")
    st = stat(log)
    check_archive(archive, st, "nbc (liblog, parallel)", liblog_counts(st, log))
    check_nbc_archive(archive, "nbc (liblog, parallel)")
    converted = os.path.join(r.workdir, "converted")
    mpe("convert", log, "--to", "otf2", converted)
    check_nbc_archive(converted, "nbc (mpe convert)")
    # Round trips: the archive read back has the same records (collectives, requests, messages),
    # each request done in the same call, and the wait analysis gives the same answers.
    waits = json.loads(mpe("waits", "--json", "--instances", log).stdout)
    mpitest.expect(waits["instances"], "no wait states at all in nbc's log")
    for source in (archive, converted):
        back = os.path.join(r.workdir, "back-%s.mpelog" % os.path.basename(source))
        mpe("convert", source, "--to", "mpelog", back)
        what = "nbc via %s" % os.path.basename(source)
        got = log_records(back)
        check_nbc_records(got, what)
        for where in records:
            mpitest.expect_eq(request_records(got[where]), request_records(records[where]), what + " " + where +
                              ": records but states")
        waits2 = json.loads(mpe("waits", "--json", "--instances", back).stdout)
        for key in ("ranks", "patterns", "blame", "offenders", "instances"):
            mpitest.expect_eq(without_shares(waits2[key]), without_shares(waits[key]), what + ": mpe waits: " + key)
        # MPI time: a state's duration in the log is its raw ticks in ns, in the archive its end
        # minus its start in ns; they may differ by a rounding nanosecond per state.
        states = sum(1 for recs in records.values() for r in recs if r["kind"] == 1)
        mpitest.expect(abs(waits2["mpi_seconds"] - waits["mpi_seconds"]) <= states * 1e-9,
                       "%s: mpe waits: MPI time %r, the log's %r (%d states)"
                       % (what, waits2["mpi_seconds"], waits["mpi_seconds"], states))
    mpitest.cleanup(r)
    print("nbc: liblog records each nonblocking collective's request post and done, OTF2 has them as "
          "NonBlockingCollectiveRequest/Complete, and round trips keep them")
