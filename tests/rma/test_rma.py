"""One-sided communication, checked exactly against rma_epochs.c, whose every rank issues 9 RMA
operations with known targets, bytes and completing synchronisations (and a Put to MPI_PROC_NULL,
which moves nothing). Groups (RMA_TEST):
  log   liblog on 3 and 4 ranks: `mpe stat --json` totals per kind, and `mpe print --kind rma`
        lists each transfer (origin, target as a world rank, window, bytes, completing call);
        the second window's communicator has its ranks reversed, so a target is right only if
        it was converted through the window's group.
  time  libmpetime on 4 ranks: calls and bytes per RMA routine on every rank, and per call site.
  otf2  liblog's OTF2 archive and `mpe convert`'s: RMA events counted by otf2-print, and the
        transfers read back from each archive equal those of the .mpelog."""
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402

MPE = os.path.join(mpitest.BUILD, "bin", "mpe")
GROUP = os.environ.get("RMA_TEST", "log")
SOURCE = os.environ["RMA_SOURCE"]
# Open MPI 4.1.4's default one-sided component here (osc rdma over btl vader) crashes in
# MPI_Compare_and_swap with or without a tool; its ucx component runs the program correctly.
OSC = {"OMPI_MCA_osc": "ucx"} if mpitest.MPI == "openmpi" else {}

# (kind, function, sent, received, completing function, window, target offset from the origin)
PER_RANK = [("put", "MPI_Put", 64, 0, "MPI_Win_fence", 0, +1),
            ("get", "MPI_Get", 0, 32, "MPI_Win_fence", 0, -1),
            ("accumulate", "MPI_Accumulate", 16, 0, "MPI_Win_fence", 0, +1),
            ("get_accumulate", "MPI_Get_accumulate", 8, 8, "MPI_Win_flush", 1, -1),
            ("fetch_and_op", "MPI_Fetch_and_op", 8, 8, "MPI_Win_flush", 1, -1),
            ("compare_and_swap", "MPI_Compare_and_swap", 8, 8, "MPI_Win_unlock", 1, -1),
            ("put", "MPI_Rput", 12, 0, "MPI_Win_unlock", 1, -1),
            ("get", "MPI_Rget", 0, 20, "MPI_Win_flush_all", 1, -1),
            ("accumulate", "MPI_Raccumulate", 8, 0, "MPI_Win_unlock_all", 1, -1)]
LINE = re.compile(r"^(-?\d+) r(\d+)\.t(\d+) rma (\w+) -> r(\d+) window=(\d+) sent=(\d+) received=(\d+) "
                  r"completed=(-?\d+) by (\w+) \((\w+)\)$")


def mpe(*args):
    p = subprocess.run([MPE] + list(args), capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        mpitest.fail("mpe %s exited %d:\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def expected_transfers(n):
    return sorted((r, (r + off) % n, kind, fn, sent, recv, done, win)
                  for r in range(n) for kind, fn, sent, recv, done, win, off in PER_RANK)


def transfers(path):
    """`mpe print --kind rma` as (origin, target, kind, function, sent, received, completed by,
    window) tuples, and the (start, completion) times."""
    out, times = [], []
    for line in mpe("print", "--kind", "rma", path).splitlines():
        m = LINE.match(line)
        mpitest.expect(m is not None, "%s: unexpected mpe print line %r" % (path, line))
        start, origin, _, kind, target, win, sent, recv, done_t, done_fn, fn = m.groups()
        out.append((int(origin), int(target), kind, fn, int(sent), int(recv), done_fn, int(win)))
        times.append((int(start), int(done_t)))
    return out, times


def run_logged(n, fmt="mpelog"):
    r = mpitest.run(n, [mpitest.program("rma_epochs")], tools=("log",),
                    env=dict(OSC, MPE_LOGFILE_PREFIX="rma", MPE_LOG_FORMAT=fmt))
    mpitest.expect("rma_epochs: %d ranks, ok" % n in r.stdout, "rma_epochs failed under liblog:\n" + r.stdout + r.stderr)
    return r, os.path.join(r.workdir, "rma.mpelog")


def check_log(n):
    r, log = run_logged(n)
    got, times = transfers(log)
    mpitest.expect_eq(sorted(got), expected_transfers(n), "%d ranks: the transfers of mpe print" % n)
    for start, done in times:
        mpitest.expect(done >= start, "%d ranks: a transfer completed at %d, before it started at %d" % (n, done, start))
    st = json.loads(mpe("stat", "--json", log))["rma"]
    per_kind = collections.defaultdict(lambda: [0, 0, 0])
    for kind, _, sent, recv, _, _, _ in PER_RANK:
        k = per_kind[kind]
        k[0], k[1], k[2] = k[0] + n, k[1] + n * sent, k[2] + n * recv
    mpitest.expect_eq(
        (st["windows"], st["operations"], st["completed"], st["unresolved"], st["bytes_sent"], st["bytes_received"]),
        (2, 9 * n, 9 * n, 0, 124 * n, 76 * n), "%d ranks: mpe stat's one-sided totals" % n)
    mpitest.expect_eq({k: [v["count"], v["bytes_sent"], v["bytes_received"]] for k, v in st["by_kind"].items()},
                      dict(per_kind), "%d ranks: mpe stat's operations per kind" % n)
    # The synchronisation calls are states; window creation is printed as a definition.
    states = json.loads(mpe("stat", "--json", log))["states"]
    for fn, calls in (("MPI_Win_fence", 3), ("MPI_Win_lock", 3), ("MPI_Win_unlock", 3), ("MPI_Win_flush", 1),
                      ("MPI_Win_lock_all", 1), ("MPI_Win_flush_all", 1), ("MPI_Win_unlock_all", 1)):
        mpitest.expect_eq(states.get(fn, {}).get("count"), calls * n, "%d ranks: %s states" % (n, fn))
    wins = [l for l in mpe("print", "--kind", "win", log).splitlines()]
    mpitest.expect_eq(sorted(l.split()[3] for l in wins), sorted(["MPI_Win_create"] * n + ["MPI_Win_allocate"] * n),
                      "%d ranks: window creations" % n)
    mpitest.expect(all(("bytes=512" in l) if "MPI_Win_create" in l else ("bytes=128" in l) for l in wins),
                   "%d ranks: window sizes in %r" % (n, wins))
    mpitest.cleanup(r)


def site_lines():
    """Line of each RMA call in rma_epochs.c, by routine (the Put to MPI_PROC_NULL apart)."""
    lines = {}
    with open(SOURCE) as f:
        for no, text in enumerate(f, 1):
            m = re.match(r"\s*(MPI_\w+)\(", text)
            if not m:
                continue
            name = m.group(1)
            if name == "MPI_Put" and "MPI_PROC_NULL" in text:
                name = "MPI_Put to MPI_PROC_NULL"
            lines.setdefault(name, no)
    return lines


def check_time(n):
    r = mpitest.run(n, [mpitest.program("rma_epochs")], tools=("time",), env=dict(OSC, MPE_LOGFILE_PREFIX="rmat"))
    doc = r.json("rmat.mpetime.json")
    want = {fn: (1, sent, recv) for _, fn, sent, recv, _, _, _ in PER_RANK}
    want["MPI_Put"] = (2, 64, 0)  # one more call, to MPI_PROC_NULL: no bytes
    for p in doc["per_rank"]:
        got = {fn: (p["routines"][fn]["calls"], p["routines"][fn]["bytes_sent"], p["routines"][fn]["bytes_recv"])
               for fn in want if fn in p["routines"]}
        mpitest.expect_eq(got, want, "rank %d: calls, bytes sent and received per RMA routine" % p["rank"])
    lines = site_lines()
    for _, fn, sent, recv, _, _, _ in PER_RANK + [(None, "MPI_Put to MPI_PROC_NULL", 0, 0, None, None, None)]:
        routine = fn.split()[0]
        sites = [s for s in doc["callsites"] if s["routine"] == routine and s["line"] == lines[fn]
                 and os.path.basename(s["file"]) == "rma_epochs.c"]
        mpitest.expect(len(sites) == 1, "%s: one call site at rma_epochs.c:%d, got %r" % (fn, lines[fn], sites))
        s = sites[0]
        mpitest.expect_eq((s["calls"], s["bytes_sent"], s["bytes_recv"], s["ranks"]),
                          (n, n * sent, n * recv, n), "%s: its call site (calls, sent, received, ranks)" % fn)
    mpitest.cleanup(r)


def otf2_counts(archive):
    anchor = os.path.join(archive, "traces.otf2")
    p = subprocess.run(["otf2-print", anchor], capture_output=True, text=True, timeout=180)
    mpitest.expect(p.returncode == 0 and p.stderr.strip() == "", "otf2-print %s: %s" % (anchor, p.stderr[-2000:]))
    counts = collections.Counter()
    started = False
    for line in p.stdout.splitlines():
        if line.startswith("-----"):
            started = True
        elif started and line.startswith("RMA_"):
            counts[line.split()[0]] += 1
    return counts


def check_otf2(n):
    r, log = run_logged(n, "both")
    want, times = transfers(log)
    converted = os.path.join(r.workdir, "converted")
    mpe("convert", log, "--to", "otf2", converted)
    expected = {"RMA_WIN_CREATE": 2 * n, "RMA_PUT": 2 * n, "RMA_GET": 2 * n, "RMA_ATOMIC": 5 * n,
                "RMA_OP_COMPLETE_NON_BLOCKING": 9 * n}
    for archive in (os.path.join(r.workdir, "rma.otf2"), converted):
        mpitest.expect_eq(dict(otf2_counts(archive)), expected, "%s: RMA events" % archive)
        back, back_times = transfers(os.path.join(archive, "traces.otf2"))
        mpitest.expect_eq(sorted(back), sorted(want), "%s: the transfers read back" % archive)
        mpitest.expect_eq(sorted(back_times), sorted(times), "%s: the transfers' times read back" % archive)
    mpitest.cleanup(r)


if GROUP == "log":
    check_log(3)
    check_log(4)
elif GROUP == "time":
    check_time(4)
elif GROUP == "otf2":
    check_otf2(3)
else:
    mpitest.fail("unknown RMA_TEST group " + GROUP)
print("rma %s: ok" % GROUP)
