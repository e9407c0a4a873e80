"""What the interop tests share: running a sample under liblog, `mpe` and its JSON, the counts an
OTF2 archive must hold (from our own reader's view of the log), and checking an archive with
otf2-print and OTF2's own Python reader."""
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402

MPE = os.path.join(mpitest.BUILD, "bin", "mpe")
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's python3-otf2 installs for it, not for a pyenv python

# (program, ranks, arguments): point-to-point, a ring, a 2-D stencil with a Cartesian
# communicator, several threads per rank, the MPE user API (user states, events as markers) and
# MPI_Pcontrol (markers, logging paused).
RUNS = [("pingpong", 2, ["8", "200"]), ("ring", 4, ["5"]), ("halo2d", 4, ["10"]),
        ("threads", 2, ["20"]), ("mpe_api_prog", 2, []), ("pcontrol", 2, [])]
LOG_NAME = {"mpe_api_prog": "apitest"}  # it names its logfile with MPE_Finish_log
NO_MESSAGES = {"mpe_api_prog"}  # the RUNS that send no point-to-point message


def mpe(*args, check=True):
    p = subprocess.run([MPE] + list(args), capture_output=True, text=True, timeout=180)
    if check and p.returncode != 0:
        mpitest.fail("mpe %s exited %d:\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


def stat(path):
    return json.loads(mpe("stat", "--json", path).stdout)


def run_logged(prog, np, args, fmt="both"):
    r = mpitest.run(np, [mpitest.program(prog)] + args, tools=("log",), env={"MPE_LOG_FORMAT": fmt,
                                                                            "MPE_LOGFILE_PREFIX": prog})
    name = LOG_NAME.get(prog, prog)
    return r, os.path.join(r.workdir, name + ".mpelog"), os.path.join(r.workdir, name + ".otf2")


def expect_messages(prog, st):
    """A program that sends messages must have them matched in its log: a check that compares
    message pairings would otherwise pass on a log that lost every message."""
    if prog not in NO_MESSAGES:
        mpitest.expect(st["messages"]["matched"] > 0,
                       "%s: no matched messages in the log: %r" % (prog, st["messages"]))


def synthetic_log():
    """A 4-rank `mpe synth` log (its index interleaves the ranks' chunks, with user states), checked
    by expect_messages: (scratch folder, log path, its mpe stat)."""
    import tempfile
    work = tempfile.mkdtemp(prefix="mpetest-")
    log = os.path.join(work, "synth.mpelog")
    mpe("synth", "--ranks", "4", "--events", "200000", log)
    st = stat(log)
    expect_messages("synth", st)
    return work, log, st


def our_counts(st):
    """What the OTF2 archive must hold, from our own reader's view of the log. A log with call
    sites is written with calling contexts (CallingContextEnter/Leave, as Score-P writes an
    unwound trace), one without with Enter/Leave: a trace has one kind or the other."""
    m = st["messages"]
    states = sum(s["count"] for s in st["states"].values())
    kinds = ["CALLING_CONTEXT_", ""] if st.get("callsites") else ["", "CALLING_CONTEXT_"]
    return {
        kinds[0] + "ENTER": states,
        kinds[0] + "LEAVE": states,
        kinds[1] + "ENTER": 0,
        kinds[1] + "LEAVE": 0,
        "MPI_SEND": m["matched"] + m["unmatched_sends"],
        "MPI_RECV": m["matched"] + m["unmatched_recvs"],
        "MPI_COLLECTIVE_BEGIN": st["collectives"],
        "MPI_COLLECTIVE_END": st["collectives"],
        "COMM_CREATE": st["comm_creates"],
    }


NONBLOCKING_SENDS = ("MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend")


def nonblocking_messages(log):
    """(sends, receives) of the log's matched messages that went through requests, found from the
    calls around them: a send logged at the entry of an MPI_I*send, a receive at the exit of a
    Wait/Test call. Independent of the request records the OTF2 writer uses."""
    starts, ends = set(), []
    for line in mpe("print", "--kind", "state", log).stdout.splitlines():
        f = line.split()  # time rR.tT state NAME dur=D depth=K
        t, where, name, dur = int(f[0]), f[1], f[3], int(f[4].split("=")[1])
        if name in NONBLOCKING_SENDS:
            starts.add((where, t))
        if name.startswith("MPI_Wait") or name.startswith("MPI_Test"):
            ends.append((where, t + dur))
    ends_by_where = collections.defaultdict(set)
    for where, t in ends:
        ends_by_where[where].update((t - 1, t, t + 1))  # start and duration are rounded apart
    sends = recvs = 0
    for line in mpe("print", "--kind", "msg", log).stdout.splitlines():
        f = line.split()  # send_time rR.tT msg -> rR.tT recv=T ...
        if (f[1], int(f[0])) in starts:
            sends += 1
        if int(f[5].split("=")[1]) in ends_by_where[f[4]]:
            recvs += 1
    return sends, recvs


def nonblocking_collectives(log):
    """The log's collectives of nonblocking calls (MPI_Ibarrier, MPI_Iallreduce, MPI_Ineighbor_*...:
    the collective routines whose name starts with MPI_I), from `mpe print`, independent of the
    request records the OTF2 writer uses."""
    lines = mpe("print", "--kind", "coll", log).stdout.splitlines()
    return sum(1 for line in lines if line.split()[3].startswith("MPI_I"))


def liblog_counts(st, log):
    """our_counts for a log liblog wrote: its nonblocking sends and receives are MpiIsend and
    MpiIrecv, each with its request's MpiIsendComplete or MpiIrecvRequest; its nonblocking
    collectives (each completed in these programs) NonBlockingCollectiveRequest and
    NonBlockingCollectiveComplete instead of MpiCollectiveBegin/End."""
    want = our_counts(st)
    isends, irecvs = nonblocking_messages(log)
    nbc = nonblocking_collectives(log)
    want.update({"MPI_SEND": want["MPI_SEND"] - isends, "MPI_ISEND": isends, "MPI_ISEND_COMPLETE": isends,
                 "MPI_RECV": want["MPI_RECV"] - irecvs, "MPI_IRECV": irecvs, "MPI_IRECV_REQUEST": irecvs,
                 "MPI_COLLECTIVE_BEGIN": st["collectives"] - nbc, "MPI_COLLECTIVE_END": st["collectives"] - nbc,
                 "NON_BLOCKING_COLLECTIVE_REQUEST": nbc, "NON_BLOCKING_COLLECTIVE_COMPLETE": nbc})
    return want


def otf2_print_counts(archive):
    anchor = os.path.join(archive, "traces.otf2")
    mpitest.expect(os.path.isfile(anchor), "no OTF2 anchor %s" % anchor)
    p = subprocess.run(["otf2-print", anchor], capture_output=True, text=True, timeout=180)
    mpitest.expect(p.returncode == 0, "otf2-print %s exited %d:\n%s" % (anchor, p.returncode, p.stderr[-2000:]))
    mpitest.expect(p.stderr.strip() == "", "otf2-print %s complained:\n%s" % (anchor, p.stderr[-2000:]))
    counts = collections.Counter()
    started = False
    for line in p.stdout.splitlines():
        if line.startswith("-----"):
            started = True
            continue
        if started and line.strip():
            counts[line.split()[0]] += 1
    return counts


PY_READER = r"""
import collections, json, sys
import otf2
names = {"Enter": "ENTER", "Leave": "LEAVE", "MpiSend": "MPI_SEND", "MpiRecv": "MPI_RECV",
         "CallingContextEnter": "CALLING_CONTEXT_ENTER", "CallingContextLeave": "CALLING_CONTEXT_LEAVE",
         "MpiIsend": "MPI_ISEND", "MpiIsendComplete": "MPI_ISEND_COMPLETE", "MpiIrecv": "MPI_IRECV",
         "MpiIrecvRequest": "MPI_IRECV_REQUEST",
         "MpiCollectiveBegin": "MPI_COLLECTIVE_BEGIN", "MpiCollectiveEnd": "MPI_COLLECTIVE_END",
         "NonBlockingCollectiveRequest": "NON_BLOCKING_COLLECTIVE_REQUEST",
         "NonBlockingCollectiveComplete": "NON_BLOCKING_COLLECTIVE_COMPLETE", "CommCreate": "COMM_CREATE"}
c = collections.Counter()
with otf2.reader.open(sys.argv[1]) as r:
    d = r.definitions
    locs = len(d.locations)
    groups = len([g for g in d.location_groups])
    regions = {str(x.name): str(x.paradigm) for x in d.regions}
    for loc, ev in r.events:
        c[names.get(type(ev).__name__, type(ev).__name__)] += 1
print(json.dumps({"counts": c, "locations": locs, "location_groups": groups, "regions": regions}))
"""


def require_python_otf2():
    """Fails unless SYSTEM_PYTHON has OTF2's Python module: scripts/test installs python3-otf2, so
    its absence is a broken setup, and a skip would let the reader's checks pass unchecked."""
    if not os.path.exists(SYSTEM_PYTHON) or subprocess.run(
            [SYSTEM_PYTHON, "-c", "import otf2"], capture_output=True).returncode != 0:
        mpitest.fail("%s cannot import otf2: install the Debian package python3-otf2 (scripts/test installs it)"
                     % SYSTEM_PYTHON)


def python_reader(archive):
    """Counts with OTF2's own Python reader."""
    require_python_otf2()
    p = subprocess.run([SYSTEM_PYTHON, "-c", PY_READER, os.path.join(archive, "traces.otf2")],
                       capture_output=True, text=True, timeout=300)
    mpitest.expect(p.returncode == 0, "the OTF2 Python reader failed on %s:\n%s" % (archive, p.stderr[-2000:]))
    return json.loads(p.stdout)


def expect_counts(got, want, what):
    for k, v in want.items():
        mpitest.expect_eq(got.get(k, 0), v, "%s: %s events" % (what, k))


def check_archive(archive, st, what, want=None):
    want = want or our_counts(st)
    expect_counts(otf2_print_counts(archive), want, what + " (otf2-print)")
    py = python_reader(archive)
    expect_counts(py["counts"], want, what + " (OTF2 Python reader)")
    mpitest.expect_eq(py["location_groups"], st["ranks"], what + ": location groups (one per rank)")
    # One location per thread, and at least one per rank (it stands for the rank in communicators).
    mpitest.expect_eq(py["locations"], sum(max(1, int(st["threads"].get(str(r), 0))) for r in range(st["ranks"])),
                      what + ": locations (one per thread)")
    for name, paradigm in py["regions"].items():
        if name.startswith("MPI_") and not paradigm.endswith("SAMPLING"):  # not a frame's function
            mpitest.expect(paradigm.endswith("MPI"), "%s: region %s has paradigm %s" % (what, name, paradigm))


def messages(path):
    """Every matched message with its ends, without the communicator's id (renumbered)."""
    out = mpe("print", "--kind", "msg", path).stdout.splitlines()
    return sorted(line.split(" comm=")[0] for line in out)


def state_lines(path):
    """`mpe print` of every state with its call site, without the duration (rounded apart by a
    nanosecond between the formats)."""
    out = mpe("print", "--kind", "state", path).stdout.splitlines()
    return sorted(" ".join(w for w in line.split(" ") if not w.startswith("dur=")) for line in out)


def site_table(st):
    """(site text, state) -> (count, frames) from `mpe stat --json`."""
    return {(c["site"], c["state"]): (c["count"], c["frames"]) for c in st["callsites"]}
