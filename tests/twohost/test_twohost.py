"""liblog on two simulated hosts (tests/twohost.py): the finalize merge when the nodes do not share
the working directory (the relay), what a shared directory with two hostnames gives (clock sync,
OTF2 system tree, libmpetime's host column), a failed merge, and `mpe merge --recover` from one
directory per node. TWOHOST_TEST selects a group: relay, shared, failed, recover."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402
import twohost  # noqa: E402

GROUP = os.environ.get("TWOHOST_TEST", "relay")
A, B = twohost.HOSTS
mpe = mpitest.mpe


def stat(path):
    return json.loads(mpe("stat", "--json", path).stdout)


def logs_in(d):
    """Files that are or could pass for a logfile, partial ones included."""
    return sorted(f for f in os.listdir(d) if ".mpelog" in f and not f.endswith(".part")) if os.path.isdir(d) else []


def events_and_index(path):
    """The events chunks and the index of a logfile, as bytes (docs/FORMAT.md: the footer's first
    fields give where the definitions and the index are)."""
    data = open(path, "rb").read()
    defs_at, _, index_at = struct.unpack_from("<3Q", data, len(data) - 64)
    return data[64:defs_at], data[index_at:len(data) - 64]  # the index runs up to the footer


def expect_exact_counts(st, np, events, laps, what):
    mpitest.expect_eq(st["ranks"], np, what + ": ranks")
    for r in range(np):
        c = st["states_per_rank"][str(r)]
        got = (c.get("MPI_Iprobe", 0), c.get("MPI_Send", 0), c.get("MPI_Recv", 0))
        mpitest.expect_eq(got, (events, laps, laps), "%s: rank %d Iprobe, Send, Recv" % (what, r))
    m = st["messages"]
    got = (m["matched"], m["unmatched_sends"], m["unmatched_recvs"], m["backward"])
    mpitest.expect_eq(got, (np * laps, 0, 0, 0), what + ": matched, unmatched sends/receives, backward")


def relay():
    # Each host has its own working directory: ranks 2 and 3 (nodeB) cannot see the logfile rank 0
    # creates, and relay their chunks. Small buffers and pieces: many chunks, cut across pieces,
    # many more pieces than the window.
    np, events, laps = 4, 100000, 3
    # OTF2 asked for: it needs a shared directory, so liblog says so and keeps the .mpelog.
    env = {"MPE_LOG_BUFFER": "65536", "MPE_LOG_RELAY_PIECE": "4096", "MPE_DELETE_LOCALFILE": "0",
           "MPE_LOG_FORMAT": "otf2"}
    r = twohost.run(np, [mpitest.program("relay_prog"), str(events), str(laps)], tools=("log",), env=env,
                    private=["."])
    dir_a, dir_b = r.host_dir(A), r.host_dir(B)
    mpitest.expect_eq(logs_in(dir_a), ["relay_prog.mpelog"], "nodeA's directory")
    mpitest.expect_eq(logs_in(dir_b), [], "nodeB's directory (no logfile, no partial file)")
    mpitest.expect("2 ranks that do not see this directory sent their chunks" in r.stderr,
                   "the relay is reported: %r" % r.stderr)
    mpitest.expect("no OTF2 archive: 2 ranks do not see the directory" in r.stderr,
                   "OTF2 declined in one line: %r" % r.stderr)
    mpitest.expect(not any(f.endswith(".otf2") for f in os.listdir(dir_a)), "no OTF2 archive on nodeA")
    merged = os.path.join(dir_a, "relay_prog.mpelog")
    st = stat(merged)
    expect_exact_counts(st, np, events, laps, "relayed merge")
    mpitest.expect(st["chunks"] > 4 * np, "several chunks per rank: %d" % st["chunks"])
    mpitest.expect(os.path.getsize(merged) > 2 * np * 4 * 4096, "more relayed pieces than the window")
    # The relayed bytes are exactly the spilled ones: `--recover` on the same spill files, from the
    # two directories, places the same chunks with the same planner, so the events chunks and the
    # index must be byte for byte the same (the definitions differ: the recovered flag, and the
    # clock rate liblog measures again at finalize).
    mpitest.expect_eq([len(r.host_files(h, suffix=".part")) for h in (A, B)], [2, 2], "spill files per host")
    rec = os.path.join(r.workdir, "recovered.mpelog")
    mpe("merge", "--recover", dir_a, dir_b, "-o", rec)
    ev_merged, ix_merged = events_and_index(merged)
    ev_rec, ix_rec = events_and_index(rec)
    mpitest.expect(ev_merged == ev_rec and ix_merged == ix_rec and len(ev_merged) > 0,
                   "events chunks (%d and %d bytes) or index (%d and %d bytes) differ from --recover's" %
                   (len(ev_merged), len(ev_rec), len(ix_merged), len(ix_rec)))
    # And the same content as a run in one shared directory.
    s = mpitest.run(np, [mpitest.program("relay_prog"), str(events), str(laps)], tools=("log",),
                    env={"MPE_LOG_BUFFER": "65536"})
    st_shared = stat(os.path.join(s.workdir, "relay_prog.mpelog"))
    mpitest.expect_eq(st["states_per_rank"].keys(), st_shared["states_per_rank"].keys(), "ranks")
    for rank, c in st_shared["states_per_rank"].items():
        mpitest.expect_eq(st["states_per_rank"][rank], c, "rank %s calls, relayed against shared" % rank)
    mpitest.expect_eq(st["records"], st_shared["records"], "records, relayed against shared")
    mpitest.cleanup(s)
    mpitest.cleanup(r)
    shutil.rmtree(r.root, ignore_errors=True)
    print("relay: %d records, %d chunks; identical to --recover and to a shared run" % (st["records"], st["chunks"]))


def shared():
    np, events, laps = 4, 2000, 3
    r = twohost.run(np, [mpitest.program("relay_prog"), str(events), str(laps)], tools=("log", "time"),
                    env={"MPE_LOG_FORMAT": "both"})
    mpitest.expect("do not see" not in r.stderr, "no relay in a shared directory: %r" % r.stderr)
    log = os.path.join(r.workdir, "relay_prog.mpelog")
    st = stat(log)
    expect_exact_counts(st, np, events, laps, "two hosts, shared directory")
    # Clock sync: ranks on nodeA (0, 1) share rank 0's clock; ranks on nodeB are measured with
    # ping-pongs. All run on one TSC here, so the true offset is 0 and the min-round-trip method
    # bounds each measured offset by half the round trip it came from.
    sync = {c["rank"]: c for c in st["clock_sync"]}
    for rank in (0, 1):
        mpitest.expect_eq((sync[rank]["offset_init_ns"], sync[rank]["rtt_init_ns"]), (0, 0),
                          "rank %d (nodeA): offset and round trip" % rank)
    for rank in (2, 3):
        c = sync[rank]
        mpitest.expect(c["rtt_init_ns"] > 0, "rank %d (nodeB) was measured: %r" % (rank, c))
        mpitest.expect(abs(c["offset_init_ns"]) <= c["rtt_init_ns"] // 2 + 1,
                       "rank %d: |offset| %d ns within half the round trip %d ns" % (rank, c["offset_init_ns"], c["rtt_init_ns"]))
    # OTF2: one system tree node per host, the ranks under theirs.
    defs = subprocess.run(["otf2-print", "-G", os.path.join(r.workdir, "relay_prog.otf2", "traces.otf2")],
                          capture_output=True, text=True, timeout=60)
    mpitest.expect(defs.returncode == 0, "otf2-print: %s" % defs.stderr)
    nodes = [l for l in defs.stdout.splitlines() if l.startswith("SYSTEM_TREE_NODE ")]
    names = sorted(n for n in (A, B) if any('"%s"' % n in l for l in nodes))
    mpitest.expect_eq(names, [A, B], "OTF2 system tree nodes %r" % nodes)
    # libmpetime: the report's hosts and each rank's host.
    report = open(os.path.join(r.workdir, "relay_prog.mpetime.txt")).read()
    mpitest.expect("Hosts   : 2 (%s, %s)" % (A, B) in report, "report hosts:\n" + report)
    rows = {}
    for line in report.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].isdigit() and f[1] in (A, B):
            rows.setdefault(int(f[0]), f[1])
    mpitest.expect_eq(rows, {0: A, 1: A, 2: B, 3: B}, "report host column")
    mpitest.cleanup(r)
    shutil.rmtree(r.root, ignore_errors=True)
    print("shared: clock offsets within half a round trip, OTF2 nodes %s/%s, report hosts" % (A, B))


def failed():
    # nodeA's working directory is a tmpfs too small for the logfile: the merge (rank 0's own
    # copy, or the pieces relayed from nodeB) fails. The program must end normally, every rank
    # must leave the merge (no hang), no file that looks like a logfile may remain, and the spill
    # files (in MPE_TMPDIR, one directory per host) must give the log with --recover.
    np, events, laps = 4, 30000, 2
    tmp = tempfile.mkdtemp(prefix="mpetest-spill-")
    root = tempfile.mkdtemp(prefix="mpetest-hosts-")
    small = os.path.join(root, A, "0")
    os.makedirs(small)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small], check=True)
    try:
        r = twohost.run(np, [mpitest.program("relay_prog"), str(events), str(laps)], tools=("log",),
                        env={"MPE_LOG_BUFFER": "65536", "MPE_TMPDIR": tmp}, private=[".", tmp], root=root)
        mpitest.expect_eq(logs_in(small), [], "nodeA's directory after the failed merge")
        mpitest.expect_eq(logs_in(r.host_dir(B)), [], "nodeB's directory after the failed merge")
        mpitest.expect("the merge into" in r.stderr and "failed" in r.stderr and "--recover" in r.stderr,
                       "one line says the merge failed: %r" % r.stderr)
        spills = [r.host_dir(A, 1), r.host_dir(B, 1)]
        mpitest.expect_eq([len(r.host_files(h, 1, ".part")) for h in (A, B)], [2, 2], "spill files kept per host")
        out = os.path.join(r.workdir, "recovered.mpelog")
        mpe("merge", "--recover", *spills, "-o", out)
        expect_exact_counts(stat(out), np, events, laps, "recovered after the failed merge")
    finally:
        subprocess.run(["umount", small])
    mpitest.cleanup(r)
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)
    print("failed: no partial logfile, one line, the program ended normally, recovered from two hosts")


def recover():
    # rank 1 (nodeB) kills itself: each host's MPE_TMPDIR holds its rank's spill file.
    n, cap = 300, 4096 // 32
    tmp = tempfile.mkdtemp(prefix="mpetest-spill-")
    r = twohost.run(2, [mpitest.program("crash_prog"), str(n)], tools=("log",), check=False,
                    env={"MPE_LOG_BUFFER": "4096", "MPE_TMPDIR": tmp}, private=[tmp])
    mpitest.expect(r.rc != 0, "the killed run should fail")
    dir_a, dir_b = r.host_dir(A), r.host_dir(B)
    mpitest.expect_eq([os.path.basename(f) for f in r.host_files(A) + r.host_files(B)],
                      ["crash_prog.mpelog.0.part", "crash_prog.mpelog.1.part"], "spill files per host")
    # One directory gives one rank, and says the other is missing.
    p = mpe("merge", "--recover", dir_a, "-o", os.path.join(r.workdir, "half.mpelog"))
    mpitest.expect("1 ranks (1 missing)" in p.stdout, "one directory: %r" % p.stdout)
    # Both directories give the whole run.
    out = os.path.join(r.workdir, "whole.mpelog")
    p = mpe("merge", "--recover", dir_a, dir_b, "-o", out)
    mpitest.expect("2 ranks (0 missing)" in p.stdout, "two directories: %r" % p.stdout)
    st = stat(out)
    mpitest.expect(st["recovered"], "recovered flag")
    c1 = st["states_per_rank"]["1"]
    # Everything but the last buffer (< cap records, 3 per round trip) reached the disk before the kill.
    mpitest.expect(c1.get("MPI_Send", 0) >= n - cap // 3, "rank 1 sends recovered: %r" % c1.get("MPI_Send"))
    # A list of the files works as the directories do.
    files = r.host_files(A, suffix=".part") + r.host_files(B, suffix=".part")
    out2 = os.path.join(r.workdir, "files.mpelog")
    mpe("merge", "--recover", *files, "-o", out2)
    mpitest.expect_eq(mpe("print", out2).stdout, mpe("print", out).stdout, "from the files against from the directories")
    # Parts of another run: the same rank twice, and another world size, are refused by name.
    twin = tempfile.mkdtemp(prefix="mpetest-twin-")
    shutil.copy(files[0], twin)
    p = mpe("merge", "--recover", dir_a, dir_b, twin, "-o", os.path.join(twin, "x.mpelog"), check=False)
    mpitest.expect(p.returncode != 0 and "rank 0 has two spill files" in p.stderr, "duplicated rank: %r" % p.stderr)
    other = mpitest.run(3, [mpitest.program("crash_prog"), "5"], tools=("log",), check=False)
    third = os.path.join(other.workdir, "crash_prog.mpelog.2.part")
    mpitest.expect(os.path.exists(third), "the 3-rank run's spill files: %r" % os.listdir(other.workdir))
    p = mpe("merge", "--recover", dir_a, dir_b, third, "-o", os.path.join(twin, "x.mpelog"), check=False)
    mpitest.expect(p.returncode != 0 and "run of 3 ranks" in p.stderr, "another world size: %r" % p.stderr)
    mpitest.expect_eq(logs_in(twin), [], "no output after a refused recovery")
    for d in (twin, tmp, r.root):
        shutil.rmtree(d, ignore_errors=True)
    mpitest.cleanup(other)
    mpitest.cleanup(r)
    print("recover: from two directories, from the files; mismatched runs refused")


twohost.skip_unless_available()
{"relay": relay, "shared": shared, "failed": failed, "recover": recover}[GROUP]()
