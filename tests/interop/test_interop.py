"""Interop tests: real runs of the samples under mpiexec, their logs written as OTF2 (by liblog
at finalize, in parallel, and by `mpe convert`), checked with otf2-print and OTF2's Python reader
against our own counts; round trips mpelog -> OTF2 -> mpelog; call sites as OTF2 calling
contexts, out and back; Chrome JSON structure and counts; bad input; archives from another
producer read in; nonblocking collectives with their completions (request records, OTF2's
NonBlockingCollectiveRequest/Complete, round trip, wait states). INTEROP_TEST selects a group:
otf2, roundtrip, callsites, chrome, errors, otf2_in, nbc, vite (ViTE opens our archives)."""
import collections
import json
import os
import shutil
import subprocess
import tempfile
import sys
import xml.etree.ElementTree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402

MPE = os.path.join(mpitest.BUILD, "bin", "mpe")
GROUP = os.environ.get("INTEROP_TEST", "otf2")
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


def python_reader(archive):
    """Counts with OTF2's own Python reader, or None when Debian's python3-otf2 is missing."""
    if not os.path.exists(SYSTEM_PYTHON) or subprocess.run(
            [SYSTEM_PYTHON, "-c", "import otf2"], capture_output=True).returncode != 0:
        return None
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
    if py is None:
        print("SKIP: %s has no otf2 module (Debian package python3-otf2); the otf2-print check ran" % SYSTEM_PYTHON)
        return
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


def otf2():
    for prog, np, args in RUNS:
        r, log, archive = run_logged(prog, np, args)
        mpitest.expect(os.path.isdir(archive), "%s: no archive %s; stderr:\n%s" % (prog, archive, r.stderr))
        mpitest.expect("in parallel" in r.stderr, "%s: liblog did not report the OTF2 archive:\n%s" % (prog, r.stderr))
        st = stat(log)
        expect_messages(prog, st)
        want = liblog_counts(st, log)
        if prog == "halo2d":  # all its messages go through Isend/Irecv and Waitall
            mpitest.expect(want["MPI_ISEND"] == want["MPI_IRECV"] == st["messages"]["matched"] > 0,
                           "halo2d: nonblocking messages %r" % want)
        if prog == "pingpong":  # its final MPI_Ibarrier, on each of the 2 ranks
            mpitest.expect_eq(want["NON_BLOCKING_COLLECTIVE_REQUEST"], 2, "pingpong: nonblocking collectives")
        check_archive(archive, st, prog + " (liblog, parallel)", want)
        # After the fact: the same log converted by one process gives the same events.
        converted = os.path.join(r.workdir, "converted")
        mpe("convert", log, "--to", "otf2", converted)
        check_archive(converted, st, prog + " (mpe convert)", want)
        # `mpe stat` reads the archive itself.
        st2 = stat(archive)
        mpitest.expect_eq(our_counts(st2), our_counts(st), prog + ": mpe stat of the OTF2 archive")
        mpitest.cleanup(r)
    # Logging paused throughout: no calls, only communicator creations; still a valid archive.
    r = mpitest.run(3, [mpitest.program("ring"), "2"], tools=("log",),
                    env={"MPE_LOG_FORMAT": "both", "MPE_LOGFILE_PREFIX": "ring", "MPE_LOG_PAUSED": "yes"})
    st = stat(os.path.join(r.workdir, "ring.mpelog"))
    check_archive(os.path.join(r.workdir, "ring.otf2"), st, "ring, logging paused")
    mpitest.expect_eq(our_counts(stat(os.path.join(r.workdir, "ring.otf2"))), our_counts(st), "paused: mpe stat of OTF2")
    mpitest.cleanup(r)
    # MPE_LOG_FORMAT=otf2: the archive only.
    r, log, archive = run_logged("ring", 3, ["2"], fmt="otf2")
    mpitest.expect(os.path.isdir(archive) and not os.path.exists(log),
                   "MPE_LOG_FORMAT=otf2: expected only the archive; files %r" % os.listdir(r.workdir))
    mpitest.expect_eq([f for f in os.listdir(r.workdir) if f.endswith(".part") or ".tmp" in f], [], "leftovers")
    mpitest.cleanup(r)
    print("otf2: liblog's parallel archive and mpe convert's agree with our counts (otf2-print, Python reader)")


def roundtrip():
    for prog, np, args in RUNS:
        r, log, archive = run_logged(prog, np, args)
        st = stat(log)
        expect_messages(prog, st)
        for source in ("liblog", "convert"):
            if source == "convert":
                archive = os.path.join(r.workdir, "converted")
                mpe("convert", log, "--to", "otf2", archive)
            back = os.path.join(r.workdir, "back-%s.mpelog" % source)
            mpe("convert", archive, "--to", "mpelog", back)
            st2 = stat(back)
            what = "%s via %s's OTF2" % (prog, source)
            mpitest.expect_eq({k: v["count"] for k, v in st2["states"].items()},
                              {k: v["count"] for k, v in st["states"].items()}, what + ": states by name")
            mpitest.expect_eq(st2["states_per_rank"], st["states_per_rank"], what + ": states per rank")
            mpitest.expect_eq(st2["messages"]["matched"], st["messages"]["matched"], what + ": matched messages")
            mpitest.expect_eq(st2["messages"]["bytes"], st["messages"]["bytes"], what + ": message bytes")
            mpitest.expect_eq(st2["collectives"], st["collectives"], what + ": collectives")
            mpitest.expect_eq(st2["comm_creates"], st["comm_creates"], what + ": communicator creations")
            mpitest.expect_eq(st2["user_events"], st["user_events"], what + ": user events (OTF2 markers)")
            mpitest.expect_eq(st2["markers"], st["markers"], what + ": MPI_Pcontrol markers")
            mpitest.expect_eq({k: v["color"] for k, v in st2["categories"].items() if v["kind"] == "state"},
                              {k: v["color"] for k, v in st["categories"].items() if v["kind"] == "state"},
                              what + ": user state colours")
            mpitest.expect(messages(back) == messages(log),
                           what + ": message pairings differ")
            # `mpe print` and `mpe stat` read the archive itself as well.
            before = set(f for f in os.listdir(tempfile.gettempdir()) if f.startswith("mpe-otf2-"))
            mpitest.expect(messages(archive) == messages(log),
                           what + ": mpe print on the archive: message pairings differ")
            mpitest.expect_eq(stat(archive)["states_per_rank"], st["states_per_rank"],
                              what + ": mpe stat on the archive: states per rank")
            after = set(f for f in os.listdir(tempfile.gettempdir()) if f.startswith("mpe-otf2-"))
            mpitest.expect_eq(sorted(after - before), [], what + ": scratch files left by reading the archive")
        mpitest.cleanup(r)
    # A log whose index interleaves the ranks' chunks (as `mpe synth` and `mpe merge --recover`
    # write them), with user states: each location must take its own chunks only.
    work = tempfile.mkdtemp(prefix="mpetest-")
    log = os.path.join(work, "synth.mpelog")
    mpe("synth", "--ranks", "4", "--events", "200000", log)
    st = stat(log)
    expect_messages("synth", st)
    mpe("convert", log, "--to", "otf2", os.path.join(work, "synth-otf2"))
    check_archive(os.path.join(work, "synth-otf2"), st, "synth")
    back = os.path.join(work, "back.mpelog")
    mpe("convert", os.path.join(work, "synth-otf2"), "--to", "mpelog", back)
    st2 = stat(back)
    mpitest.expect_eq(st2["states_per_rank"], st["states_per_rank"], "synth: states per rank")
    mpitest.expect_eq(st2["collectives"], st["collectives"], "synth: collectives")
    mpitest.expect(messages(back) == messages(log), "synth: message pairings differ")
    shutil.rmtree(work, ignore_errors=True)
    print("roundtrip: mpelog -> OTF2 -> mpelog keeps states, messages (every pairing), collectives")


# Each CallingContextEnter's state and call site as a third-party reader finds them in the archive:
# the context's region is the state; its unwound frames are its ancestors of paradigm SAMPLING,
# innermost first, each "file:line" from its source code location.
CS_READER = r"""
import collections, json, os, sys
import otf2
out = collections.Counter()
with otf2.reader.open(sys.argv[1]) as r:
    for loc, ev in r.events:
        if type(ev).__name__ != "CallingContextEnter":
            continue
        frames, p = [], ev.calling_context.parent
        while p is not None and str(p.region.paradigm).endswith("SAMPLING"):
            s = p.source_code_location
            frames.append("%s:%d" % (os.path.basename(str(s.file)), s.line_number) if s else "?")
            p = p.parent
        out[json.dumps([str(ev.calling_context.region.name)] + frames)] += 1
print(json.dumps(out))
"""


def state_lines(path):
    """`mpe print` of every state with its call site, without the duration (rounded apart by a
    nanosecond between the formats)."""
    out = mpe("print", "--kind", "state", path).stdout.splitlines()
    return sorted(" ".join(w for w in line.split(" ") if not w.startswith("dur=")) for line in out)


def site_table(st):
    """(site text, state) -> (count, frames) from `mpe stat --json`."""
    return {(c["site"], c["state"]): (c["count"], c["frames"]) for c in st["callsites"]}


def callsites():
    """bin/callsites on 4 ranks under liblog: every state of the log has its call site, with the
    sample's known counts per source line; the OTF2 archives (liblog's, in parallel, and mpe
    convert's) hold them as calling contexts that OTF2's own reader finds; and reading the
    archives back gives every state its call site again, with the same frames."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "callsites"))
    import callsites as cs  # noqa: E402  (tests/callsites/callsites.py: lines and true counts)
    for depth in (1, 3):
        r = mpitest.run(4, [mpitest.program("callsites")], tools=("log",),
                        env={"MPE_LOG_FORMAT": "both", "MPE_LOGFILE_PREFIX": "cs", "MPE_CALLSITE_DEPTH": str(depth)})
        log, archive = os.path.join(r.workdir, "cs.mpelog"), os.path.join(r.workdir, "cs.otf2")
        what = "callsites, MPE_CALLSITE_DEPTH=%d" % depth
        # The log: liblog gave every state a call site; each marked line has its true count.
        lines = state_lines(log)
        mpitest.expect(lines and all(" at " in line for line in lines),
                       "%s: states without a call site in the log:\n%s" % (what, "\n".join(
                           line for line in lines if " at " not in line)[:2000]))
        want = {}
        for site, (source, routine, calls, _) in cs.C_SITES.items():
            name, line = cs.line_of(site, source)
            want[(routine, "%s:%d" % (name, line))] = calls * len(cs.ranks_making(site, 4))
        got = collections.Counter()
        for line in lines:  # "... state NAME depth=D at FILE:LINE (FUNC) <- ..."
            f = line.split(" ")
            got[(f[3], line.split(" at ", 1)[1].split(" ")[0])] += 1
        for key, n in want.items():
            mpitest.expect_eq(got[key], n, "%s: %s calls at %s in the log" % (what, key[0], key[1]))
        st = stat(log)
        sites = site_table(st)
        mpitest.expect(all(len(frames) == depth for _, frames in sites.values()),
                       "%s: sites of other than %d frames: %r" % (what, depth, sites))
        converted = os.path.join(r.workdir, "converted")
        mpe("convert", log, "--to", "otf2", converted)
        for source, arch in (("liblog", archive), ("convert", converted)):
            w = "%s, %s's OTF2" % (what, source)
            check_archive(arch, st, w, liblog_counts(st, log))
            # Calling contexts as OTF2's own Python reader finds them.
            if os.path.exists(SYSTEM_PYTHON) and subprocess.run([SYSTEM_PYTHON, "-c", "import otf2"],
                                                                capture_output=True).returncode == 0:
                p = subprocess.run([SYSTEM_PYTHON, "-c", CS_READER, os.path.join(arch, "traces.otf2")],
                                   capture_output=True, text=True, timeout=300)
                mpitest.expect(p.returncode == 0, "%s: the OTF2 Python reader failed:\n%s" % (w, p.stderr[-2000:]))
                seen = collections.Counter()
                for key, n in json.loads(p.stdout).items():
                    k = json.loads(key)
                    mpitest.expect_eq(len(k) - 1, depth, "%s: frames of %s" % (w, k))
                    seen[(k[0], k[1])] += n
                for key, n in want.items():
                    mpitest.expect_eq(seen[key], n, "%s: %s calls at %s (OTF2 Python reader)" % (w, key[0], key[1]))
                if depth == 3:
                    deep = ["MPI_Allreduce"] + ["%s:%d" % cs.line_of(m, "callsites.c")
                                                for m in ("deep_allreduce", "deep_layer_one", "deep_main")]
                    mpitest.expect_eq(sum(n for key, n in json.loads(p.stdout).items() if json.loads(key) == deep),
                                      16, w + ": deep_allreduce's three frames")
            # Back to .mpelog: every state keeps its call site (file:line and function of every
            # frame), and the per-site counts are equal.
            back = os.path.join(r.workdir, "back-%s.mpelog" % source)
            mpe("convert", arch, "--to", "mpelog", back)
            mpitest.expect(state_lines(back) == lines, "%s: states or their call sites differ after the round trip"
                           % w)
            mpitest.expect_eq(site_table(stat(back)), sites, w + ": call sites (count, frames with module)")
        mpitest.cleanup(r)
    print("callsites: liblog's call sites go through OTF2 calling contexts and come back on every state")


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
    import tempfile
    work = tempfile.mkdtemp(prefix="mpetest-")
    log = os.path.join(work, "synth.mpelog")
    mpe("synth", "--ranks", "4", "--events", "200000", log)
    st = stat(log)
    expect_messages("synth", st)
    mpe("convert", log, "--to", "chrome", os.path.join(work, "synth.json"))
    with open(os.path.join(work, "synth.json")) as f:
        events = json.load(f)["traceEvents"]
    mpitest.expect_eq(sum(1 for e in events if e["ph"] == "X"), sum(s["count"] for s in st["states"].values()),
                      "synth: slices == states")
    ids = collections.Counter(e["id"] for e in events if e["ph"] in "sf")
    mpitest.expect_eq(sum(1 for n in ids.values() if n == 2), st["messages"]["matched"], "synth: arrows")
    shutil.rmtree(work, ignore_errors=True)
    print("chrome: JSON structure, slices == states, arrows == matched messages")


def errors():
    r, log, archive = run_logged("pingpong", 2, ["8", "10"])
    work = r.workdir
    # A wrong option: one line, non-zero, nothing written.
    p = mpe("convert", log, "--to", "vampir", os.path.join(work, "x"), check=False)
    mpitest.expect(p.returncode != 0 and not os.path.exists(os.path.join(work, "x")), "--to vampir accepted")
    # OTF2 -> OTF2 and mpelog -> mpelog are refused.
    p = mpe("convert", archive, "--to", "otf2", os.path.join(work, "y"), check=False)
    mpitest.expect(p.returncode != 0 and "already OTF2" in p.stderr, "otf2 -> otf2: %s" % p.stderr)
    # A corrupt archive: an event file cut short and one overwritten with garbage.
    bad = os.path.join(work, "bad")
    shutil.copytree(archive, bad)
    evt = sorted(f for f in os.listdir(os.path.join(bad, "traces")) if f.endswith(".evt"))
    with open(os.path.join(bad, "traces", evt[0]), "r+b") as f:
        f.truncate(100)
    with open(os.path.join(bad, "traces", evt[1]), "r+b") as f:
        f.seek(64)
        f.write(b"\xff" * 256)
    for cmd in (["convert", bad, "--to", "mpelog", os.path.join(work, "bad.mpelog")],
                ["convert", bad, "--to", "chrome", os.path.join(work, "bad.json")], ["stat", bad]):
        p = mpe(*cmd, check=False)
        mpitest.expect(p.returncode != 0, "mpe %s accepted a corrupt archive" % " ".join(cmd))
        mpitest.expect(len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("mpe: "),
                       "mpe %s: not one clear line:\n%s" % (" ".join(cmd), p.stderr))
        mpitest.expect("Segmentation" not in p.stderr and p.returncode > 0, "crashed")
    leftovers = [f for f in os.listdir(work) if f.startswith("bad.") or ".tmp" in f or "scratch" in f]
    mpitest.expect_eq(leftovers, [], "partial output left after failures")
    # A garbage anchor.
    junk = os.path.join(work, "junk")
    os.mkdir(junk)
    with open(os.path.join(junk, "traces.otf2"), "w") as f:
        f.write("not an anchor\n")
    p = mpe("convert", junk, "--to", "mpelog", os.path.join(work, "junk.mpelog"), check=False)
    mpitest.expect(p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1, "garbage anchor: %s" % p.stderr)
    # A corrupt .mpelog to OTF2 and Chrome: the reader's one-line error, no output.
    cut = os.path.join(work, "cut.mpelog")
    with open(log, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[: len(data) // 2])
    for to, out in (("otf2", "cut-otf2"), ("chrome", "cut.json")):
        p = mpe("convert", cut, "--to", to, os.path.join(work, out), check=False)
        mpitest.expect(p.returncode != 0 and "truncated" in p.stderr and not os.path.exists(os.path.join(work, out)),
                       "truncated log -> %s: %s" % (to, p.stderr))
    # A bad MPE_LOG_FORMAT: reported, and the run still writes its .mpelog.
    r2 = mpitest.run(2, [mpitest.program("pingpong"), "8", "10"], tools=("log",),
                     env={"MPE_LOG_FORMAT": "otf3", "MPE_LOGFILE_PREFIX": "pp"})
    mpitest.expect("MPE_LOG_FORMAT='otf3'" in r2.stderr and os.path.exists(os.path.join(r2.workdir, "pp.mpelog")),
                   "bad MPE_LOG_FORMAT: %s" % r2.stderr)
    # An archive that cannot be written (its directory is a file): the program still ends well.
    r3 = mpitest.run(2, [mpitest.program("pingpong"), "8", "10"], tools=("log",), check=False,
                     env={"MPE_LOG_FORMAT": "both", "MPE_LOGFILE_PREFIX": "pp"},
                     workdir=_with_blocker())
    mpitest.expect(r3.rc == 0, "an unwritable OTF2 archive made the program fail:\n%s" % r3.stderr)
    mpitest.expect("no OTF2 archive" in r3.stderr and os.path.exists(os.path.join(r3.workdir, "pp.mpelog")),
                   "unwritable archive: %s" % r3.stderr)
    mpitest.expect_eq(sorted(os.listdir(os.path.join(r3.workdir, "pp.otf2"))), ["keep"], "the user's directory")
    mpitest.expect_eq([f for f in os.listdir(r3.workdir) if ".tmp" in f], [], "temporary archive left")
    for x in (r, r2, r3):
        mpitest.cleanup(x)
    print("errors: wrong options, corrupt OTF2 and logs give one line and no output; OTF2 failures spare the run")


# An OTF2 archive from another producer (OTF2's own Python writer), Score-P style: its own
# location and comm numbering, a sub-communicator whose ranks are not in world order, Isend/
# Irecv with request ids, a 1 MHz clock with a global offset, a user region around it all.
FOREIGN_WRITER = r'''
import sys
import otf2
from otf2.enums import Paradigm, RegionRole, GroupType, CollectiveOp, LocationType

out = sys.argv[1]
with otf2.writer.open(out, timer_resolution=1000000) as trace:
    d = trace.definitions
    root = d.system_tree_node("cluster")
    node = d.system_tree_node("nodeA", parent=root)
    groups = [d.location_group("Rank %d" % r, system_tree_parent=node) for r in range(3)]
    locs = [d.location("Master thread", type=LocationType.CPU_THREAD, group=g) for g in groups]
    writers = [trace.event_writer_from_location(l) for l in locs]
    d.group("locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
    world = d.comm("MPI_COMM_WORLD", d.group("world", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                              members=[0, 1, 2]))
    sub = d.comm("sub", d.group("sub", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                members=[2, 0]))
    reg = lambda n, p=Paradigm.MPI, role=RegionRole.FUNCTION: d.region(n, paradigm=p, region_role=role)
    main, isend, irecv, wait, send, recv, allred = (reg("main", Paradigm.USER), reg("MPI_Isend"), reg("MPI_Irecv"),
        reg("MPI_Wait"), reg("MPI_Send"), reg("MPI_Recv"), reg("MPI_Allreduce", role=RegionRole.COLL_ALL2ALL))
    base = 1000  # ticks of 1 us
    for r, w in enumerate(writers):
        t = base + 10 * r
        w.enter(t, main)
        if r == 0:
            w.enter(t + 1, isend); w.mpi_isend(t + 1, 1, world, 5, 64, 77); w.leave(t + 2, isend)
            w.enter(t + 3, recv); w.mpi_recv(t + 30, 0, sub, 9, 16); w.leave(t + 30, recv)
            w.enter(t + 31, wait); w.mpi_isend_complete(t + 32, 77); w.leave(t + 32, wait)
        if r == 1:
            w.enter(t + 1, irecv); w.mpi_irecv_request(t + 1, 42); w.leave(t + 2, irecv)
            w.enter(t + 3, wait); w.mpi_irecv(t + 20, 0, world, 5, 64, 42); w.leave(t + 20, wait)
        if r == 2:
            w.enter(t + 1, send); w.mpi_send(t + 1, 1, sub, 9, 16); w.leave(t + 2, send)
        w.enter(t + 40, allred); w.mpi_collective_begin(t + 40)
        w.mpi_collective_end(t + 50, CollectiveOp.ALLREDUCE, world, 2**32 - 1, 8, 24); w.leave(t + 50, allred)
        w.leave(t + 60, main)
'''


# Score-P with unwinding (SCOREP_ENABLE_UNWINDING), as it writes calling contexts: the functions of
# unwound frames are regions of paradigm SAMPLING, a frame node's source code location is its line,
# module and offset are CallingContextProperty "EXECUTABLE/SHARED OBJECT" and "INSTRUCTION
# OFFSET"; a wrapped call (MPI_Send) carries its call site's line too, an instrumented one
# (MPI_Recv here) none.
SCOREP_UNWOUND_WRITER = r'''
import sys
import otf2
from otf2.enums import Paradigm, RegionRole, GroupType, LocationType, Type

with otf2.writer.open(sys.argv[1], timer_resolution=1000000) as trace:
    d = trace.definitions
    node = d.system_tree_node("node")
    groups = [d.location_group("Rank %d" % r, system_tree_parent=node) for r in range(2)]
    locs = [d.location("Master thread", type=LocationType.CPU_THREAD, group=g) for g in groups]
    w0, w1 = [trace.event_writer_from_location(l) for l in locs]
    d.group("locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
    world = d.comm("MPI_COMM_WORLD", d.group("world", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                              members=[0, 1]))
    fn = lambda n: d.region(n, paradigm=Paradigm.SAMPLING, region_role=RegionRole.FUNCTION)
    send = d.region("MPI_Send", paradigm=Paradigm.MPI, region_role=RegionRole.POINT2POINT)
    recv = d.region("MPI_Recv", paradigm=Paradigm.MPI, region_role=RegionRole.POINT2POINT)
    main, solver = fn("main"), fn("solver")
    main12 = d.calling_context(main, d.source_code_location("/src/app.c", 12), None)
    d.calling_context_property(main12, "EXECUTABLE/SHARED OBJECT", value="/opt/app/bin/app")
    d.calling_context_property(main12, "INSTRUCTION OFFSET", value=0x1234, type_id=Type.UINT64)
    c_send = d.calling_context(send, d.source_code_location("/src/app.c", 12), main12)
    main20 = d.calling_context(main, d.source_code_location("/src/app.c", 20), None)
    c_solver = d.calling_context(solver, d.source_code_location("/src/solver.c", 88), main20)
    c_recv = d.calling_context(recv, None, c_solver)
    for t in (1000, 1040):
        w0.calling_context_enter(t, c_send, 3 if t == 1000 else 2)
        w0.mpi_send(t, 1, world, 4, 8)
        w0.calling_context_leave(t + 10, c_send)
        w1.calling_context_enter(t, c_recv, 4 if t == 1000 else 2)
        w1.mpi_recv(t + 30, 0, world, 4, 8)
        w1.calling_context_leave(t + 30, c_recv)
'''


def otf2_in():
    import tempfile
    work = tempfile.mkdtemp(prefix="mpetest-")
    archive = os.path.join(work, "foreign")
    p = subprocess.run([SYSTEM_PYTHON, "-c", FOREIGN_WRITER, archive], capture_output=True, text=True) \
        if os.path.exists(SYSTEM_PYTHON) else None
    if p is None or (p.returncode != 0 and "No module named 'otf2'" in p.stderr):
        print("SKIP: %s has no otf2 module (Debian package python3-otf2) to write a foreign archive" % SYSTEM_PYTHON)
        return
    mpitest.expect(p.returncode == 0, "the foreign OTF2 writer failed:\n" + p.stderr)
    st = stat(archive)
    mpitest.expect_eq(st["ranks"], 3, "ranks (process location groups)")
    mpitest.expect_eq(st["states_per_rank"], {
        "0": {"MPI_Allreduce": 1, "MPI_Isend": 1, "MPI_Recv": 1, "MPI_Wait": 1, "main": 1},
        "1": {"MPI_Allreduce": 1, "MPI_Irecv": 1, "MPI_Wait": 1, "main": 1},
        "2": {"MPI_Allreduce": 1, "MPI_Send": 1, "main": 1}}, "states per rank")
    # Isend/Irecv on world, and Send/Recv on the reordered sub-communicator, both matched.
    mpitest.expect_eq(st["messages"], {"matched": 2, "unmatched_sends": 0, "unmatched_recvs": 0, "backward": 0,
                                       "bytes": 80}, "messages")
    mpitest.expect_eq(st["collectives"], 3, "collectives")
    mpitest.expect_eq(st["t_end_ns"], 80000, "end time: 80 ticks of 1 us after the global offset")
    mpitest.expect_eq(st["categories"]["main"]["kind"], "state", "a user region is a user state")
    msgs = messages_of_archive(archive, work)
    mpitest.expect_eq(msgs, ["1000 r0.t0 msg -> r1.t0 recv=30000 tag=5 bytes=64",
                             "21000 r2.t0 msg -> r0.t0 recv=30000 tag=9 bytes=16"], "message ends")
    out = os.path.join(work, "foreign.json")
    mpe("convert", archive, "--to", "chrome", out)
    with open(out) as f:
        doc = json.load(f)
    mpitest.expect_eq(sum(1 for e in doc["traceEvents"] if e["ph"] == "X"), 12, "OTF2 -> Chrome slices")
    mpitest.expect_eq([f for f in os.listdir(work) if "scratch" in f or ".tmp" in f], [], "scratch files left")
    # Progress on a terminal (util-linux `script` gives the command a pseudo-terminal).
    if shutil.which("script"):
        p = subprocess.run(["script", "-qec", "%s convert %s --to mpelog %s" % (MPE, archive, os.path.join(work, "t.mpelog")),
                            "/dev/null"], capture_output=True, text=True, timeout=60)
        mpitest.expect(p.returncode == 0 and "reading OTF2 100%" in p.stdout, "no progress on a terminal: %r" % p.stdout)
        p = mpe("convert", archive, "--to", "mpelog", os.path.join(work, "u.mpelog"))
        mpitest.expect("%" not in p.stderr, "progress shown when stderr is not a terminal: %r" % p.stderr)
    # Score-P-style calling contexts: each state gets its unwound frames as its call site.
    unwound = os.path.join(work, "unwound")
    p = subprocess.run([SYSTEM_PYTHON, "-c", SCOREP_UNWOUND_WRITER, unwound], capture_output=True, text=True)
    mpitest.expect(p.returncode == 0, "the Score-P-style OTF2 writer failed:\n" + p.stderr)
    mpitest.expect_eq(state_lines(unwound), [
        "0 r0.t0 state MPI_Send depth=0 at app.c:12 (main)",
        "0 r1.t0 state MPI_Recv depth=0 at solver.c:88 (solver) <- app.c:20 (main)",
        "40000 r0.t0 state MPI_Send depth=0 at app.c:12 (main)",
        "40000 r1.t0 state MPI_Recv depth=0 at solver.c:88 (solver) <- app.c:20 (main)"], "unwound: states and sites")
    st = stat(unwound)
    mpitest.expect_eq(site_table(st), {
        ("app.c:12 (main)", "MPI_Send"): (2, [{"function": "main", "file": "/src/app.c", "line": 12,
                                                "module": "/opt/app/bin/app"}]),
        ("solver.c:88 (solver) <- app.c:20 (main)", "MPI_Recv"): (2, [
            {"function": "solver", "file": "/src/solver.c", "line": 88, "module": ""},
            {"function": "main", "file": "/src/app.c", "line": 20, "module": ""}])}, "unwound: call sites")
    mpitest.expect_eq(sorted(st["categories"]), [], "unwound: user categories (a frame's function is no state)")
    mpitest.expect_eq(st["messages"]["matched"], 2, "unwound: messages")
    shutil.rmtree(work, ignore_errors=True)
    print("otf2_in: foreign archives (OTF2's Python writer) read with their ranks, regions, messages, collectives,"
          " and Score-P-style calling contexts as call sites")


def messages_of_archive(archive, work):
    back = os.path.join(work, "foreign.mpelog")
    mpe("convert", archive, "--to", "mpelog", back)
    return messages(back)


def _with_blocker():
    """A working directory where the archive's name is taken by a directory of the user's (not an
    OTF2 archive, so liblog must neither replace it nor fail the run). Root ignores permissions,
    so this is the failure a test can provoke here."""
    import tempfile
    d = tempfile.mkdtemp(prefix="mpetest-")
    os.mkdir(os.path.join(d, "pp.otf2"))
    with open(os.path.join(d, "pp.otf2", "keep"), "w") as f:
        f.write("x")
    return d


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
    if python_reader(archive) is None:
        print("SKIP: %s has no otf2 module; the otf2-print check of %s ran" % (SYSTEM_PYTHON, what))
        return
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


# ViTE (Debian's `vite`) reads OTF2 as Score-P writes it: it cannot resolve a communicator's group
# and takes a message's rank for its location id, which with Score-P's numbering (rank r's master
# thread is location r) is a real location. (program, ranks, arguments): a Cartesian
# communicator in world order, a sub-communicator in reverse order with MPI_COMM_SELF messages,
# several threads per rank.
VITE_RUNS = [("halo2d", 4, ["10"]), ("subcomm", 4, ["5"]), ("threads", 2, ["20"])]


def vite_export(archive, svg):
    """ViTE's SVG export of the archive (run headless under xvfb-run; it must exit 0): the tag of
    every element and the text of every text element."""
    for tool, package in (("vite", "vite"), ("xvfb-run", "xvfb")):
        mpitest.expect(shutil.which(tool), "%s is not installed (Debian package %s; scripts/test installs it)"
                       % (tool, package))
    p = subprocess.run(["xvfb-run", "-a", "vite", os.path.join(archive, "traces.otf2"), "-e", svg],
                       capture_output=True, text=True, timeout=300)
    mpitest.expect(p.returncode == 0 and os.path.exists(svg),
                   "vite on %s exited %d:\n%s" % (archive, p.returncode, (p.stdout + p.stderr)[-2000:]))
    elements = list(xml.etree.ElementTree.parse(svg).iter())
    tags = [e.tag.split("}")[-1] for e in elements]
    return tags, [e.text or "" for e, tag in zip(elements, tags) if tag == "text"]


def vite():
    for prog, np, args in VITE_RUNS:
        r, log, archive = run_logged(prog, np, args)
        st = stat(log)
        expect_messages(prog, st)
        converted = os.path.join(r.workdir, "converted")
        mpe("convert", log, "--to", "otf2", converted)
        for path, how in ((archive, "liblog"), (converted, "mpe convert")):
            what = "%s (%s)" % (prog, how)
            check_archive(path, st, what, liblog_counts(st, log))  # otf2-print: no error, our counts
            tags, texts = vite_export(path, os.path.join(r.workdir, how.replace(" ", "_") + ".svg"))
            # ViTE labels each location "<name>_<id>": Score-P's ids, thread t of rank r (t << 32) | r.
            threads = {rank: max(1, int(st["threads"].get(str(rank), 0))) for rank in range(np)}
            want = sorted((t << 32) | rank for rank in range(np) for t in range(threads[rank]))
            got = sorted(int(x.rsplit("_", 1)[1]) for x in texts if x.startswith(("Master thread_", "Thread ")))
            mpitest.expect_eq(got, want, what + ": the locations ViTE shows, by id")
            if prog == "halo2d":  # its communicator is in world order: ViTE draws every message
                mpitest.expect_eq(tags.count("line"), st["messages"]["matched"], what + ": arrows ViTE draws")
        mpitest.cleanup(r)
    print("vite: ViTE opens and exports liblog's and mpe convert's archives of %s"
          % ", ".join(p for p, _, _ in VITE_RUNS))


if __name__ == "__main__":
    {"otf2": otf2, "roundtrip": roundtrip, "callsites": callsites, "chrome": chrome, "errors": errors,
     "otf2_in": otf2_in, "nbc": nbc, "vite": vite}[GROUP]()
