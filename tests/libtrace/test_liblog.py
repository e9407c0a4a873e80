"""liblog integration tests: real programs under mpiexec, checked through `mpe stat --json` and
`mpe print`. LIBLOG_TEST selects a group: samples, pcontrol, threads, api, fortran_api, crash,
errors, callsites."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "callsites"))
import callsites as samples_of_sites  # noqa: E402
import mpitest  # noqa: E402

MPE = os.path.join(mpitest.BUILD, "bin", "mpe")
GROUP = os.environ.get("LIBLOG_TEST", "samples")


def mpe(*args, check=True):
    p = subprocess.run([MPE] + list(args), capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        mpitest.fail("mpe %s exited %d:\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p


def logfile(r, name):
    path = os.path.join(r.workdir, name + ".mpelog")
    mpitest.expect(os.path.exists(path), "no %s in %s; files %r\nstderr:\n%s" % (path, r.workdir, os.listdir(r.workdir), r.stderr))
    leftovers = [f for f in os.listdir(r.workdir) if f.endswith(".part")]
    mpitest.expect_eq(leftovers, [], "per-rank files left after a successful merge")
    return path


def stat(path):
    return json.loads(mpe("stat", "--json", path).stdout)


def logged(np, prog, args=(), env=None, name=None):
    r = mpitest.run(np, [mpitest.program(prog)] + [str(a) for a in args], tools=("log",), env=env)
    path = logfile(r, name or prog)
    return r, path, stat(path)


def counts(st, rank):
    return st["states_per_rank"].get(str(rank), {})


def expect_clean_messages(st, what, matched=None):
    m = st["messages"]
    mpitest.expect_eq(m["unmatched_sends"], 0, what + ": unmatched sends")
    mpitest.expect_eq(m["unmatched_recvs"], 0, what + ": unmatched receives")
    mpitest.expect_eq(m["backward"], 0, what + ": messages received before they were sent")
    if matched is not None:
        mpitest.expect_eq(m["matched"], matched, what + ": matched messages")


def samples():
    np, laps = 4, 10
    r, path, st = logged(np, "ring", [laps])
    mpitest.expect_eq(st["ranks"], np, "ring: ranks")
    for rank in range(np):
        c = counts(st, rank)
        for fn, n in (("MPI_Init", 1), ("MPI_Comm_rank", 1), ("MPI_Comm_size", 1), ("MPI_Send", laps),
                      ("MPI_Recv", laps), ("MPI_Finalize", 1)):
            mpitest.expect_eq(c.get(fn, 0), n, "ring rank %d: %s" % (rank, fn))
        mpitest.expect_eq(sum(c.values()), 4 + 2 * laps, "ring rank %d: all states" % rank)
    expect_clean_messages(st, "ring", np * laps)
    mpitest.expect_eq(st["messages"]["bytes"], np * laps * 4, "ring: bytes")
    mpitest.cleanup(r)

    iters = 2000
    r, path, st = logged(2, "pingpong", [8, iters])
    c0, c1 = counts(st, 0), counts(st, 1)
    for fn, n in (("MPI_Send", iters), ("MPI_Recv", iters), ("MPI_Wtime", 2), ("MPI_Ibarrier", 1), ("MPI_Wait", 1)):
        mpitest.expect_eq(c0.get(fn, 0), n, "pingpong rank 0: " + fn)
    for fn, n in (("MPI_Send", iters), ("MPI_Recv", iters), ("MPI_Ibarrier", 1), ("MPI_Wait", 1)):
        mpitest.expect_eq(c1.get(fn, 0), n, "pingpong rank 1: " + fn)
    expect_clean_messages(st, "pingpong", 2 * iters)
    per_call = st["event_bytes"] / (4.0 * iters)
    print("pingpong: %.2f bytes on disk per logged blocking send or receive (events chunks, %d calls)" % (per_call, 4 * iters))
    mpitest.expect(per_call <= 8.0, "pingpong: %.2f B per call, budget 8" % per_call)
    mpitest.cleanup(r)

    iters = 20
    r, path, st = logged(4, "halo2d", [iters])
    for rank in range(4):
        c = counts(st, rank)
        for fn, n in (("MPI_Isend", 4 * iters), ("MPI_Irecv", 4 * iters), ("MPI_Waitall", iters), ("MPI_Cart_create", 1),
                      ("MPI_Allreduce", 1)):
            mpitest.expect_eq(c.get(fn, 0), n, "halo2d rank %d: %s" % (rank, fn))
    # A 2x2 grid: every rank has two real neighbours, so 2 messages per rank per iteration.
    expect_clean_messages(st, "halo2d", 4 * 2 * iters)
    mpitest.expect_eq(st["comm_creates"], 4, "halo2d: communicators created (one Cart_create per rank)")
    colls = [line.split(" coll ")[1] for line in mpe("print", "--kind", "coll", path).stdout.splitlines()]
    mpitest.expect_eq(sorted(c.split(" comm=")[0] + c[c.index(" bytes="):] for c in colls),
                      ["MPI_Allreduce root=-1 bytes=8 received=8"] * 4,
                      "halo2d: one MPI_Allreduce of a double per rank, bytes sent and received")
    mpitest.cleanup(r)

    k = 6
    for mode in ("world", "dup", "split", "balanced"):
        r, path, st = logged(4, "flood", [k, mode])
        expect_clean_messages(st, "flood " + mode, 3 * k)
        mpitest.cleanup(r)
    print("samples: exact counts, every message matched, none backward")


def pcontrol():
    np = 4
    r, path, st = logged(np, "pcontrol")
    for rank in range(np):
        c = counts(st, rank)
        # Logging is on from the start: before and inside the region are logged, after is not.
        mpitest.expect_eq(c.get("MPI_Allreduce", 0), 12, "pcontrol rank %d: Allreduce" % rank)
        mpitest.expect_eq(c.get("MPI_Barrier", 0), 6, "pcontrol rank %d: Barrier" % rank)
        mpitest.expect_eq(c.get("MPI_Sendrecv", 0), 1, "pcontrol rank %d: Sendrecv" % rank)
        mpitest.expect_eq(c.get("MPI_Pcontrol", 0), 2, "pcontrol rank %d: Pcontrol" % rank)
    mpitest.expect_eq(st["markers"], 2 * np, "pcontrol: markers")
    expect_clean_messages(st, "pcontrol", np)
    # Between each rank's two markers: exactly the bracketed work.
    lines = mpe("print", path, "--kind", "state", "--kind", "marker").stdout.splitlines()
    for rank in range(np):
        inside, state = {}, "before"
        for line in lines:
            f = line.split()
            if f[1] != "r%d.t0" % rank:
                continue
            if f[2] == "marker":
                state = "inside" if "level=1" in line else "after"
            elif f[2] == "state" and state == "inside" and f[3] != "MPI_Pcontrol":
                inside[f[3]] = inside.get(f[3], 0) + 1
        mpitest.expect_eq(inside, {"MPI_Allreduce": 10, "MPI_Barrier": 5}, "pcontrol rank %d: states in the region" % rank)
    mpitest.cleanup(r)
    r, path, st = logged(np, "pcontrol", env={"MPE_LOG_PAUSED": "yes"})
    for rank in range(np):
        c = counts(st, rank)
        mpitest.expect_eq({k: v for k, v in c.items() if k != "MPI_Pcontrol"}, {"MPI_Allreduce": 10, "MPI_Barrier": 5},
                          "pcontrol paused at start, rank %d" % rank)
    mpitest.cleanup(r)
    print("pcontrol: regions are exactly what was bracketed")


def threads():
    np, m = 2, 30
    r, path, st = logged(np, "threads", [m])
    for rank in range(np):
        mpitest.expect_eq(st["threads"][str(rank)], 5, "threads: timelines of rank %d (main + 4 workers)" % rank)
        c = counts(st, rank)
        mpitest.expect_eq(c.get("MPI_Sendrecv", 0), 4 * m, "threads rank %d: Sendrecv" % rank)
        mpitest.expect_eq(c.get("MPI_Isend", 0), 4, "threads rank %d: Isend" % rank)
        mpitest.expect_eq(c.get("MPI_Wait", 0), 4, "threads rank %d: Wait" % rank)
    expect_clean_messages(st, "threads", np * 4 * m)
    mpitest.cleanup(r)
    print("threads: one stream per thread, every message matched")


def api():
    r, path, st = logged(2, "mpe_api_prog", name="apitest")
    cats = st["categories"]
    mpitest.expect_eq(cats.get("compute", {}).get("color"), "#ff0000", "compute colour")
    mpitest.expect_eq(cats.get("io", {}).get("color"), "#2e8b57", "io colour")
    mpitest.expect_eq(cats.get("tick", {}).get("kind"), "event", "tick kind")
    for rank in range(2):
        c = counts(st, rank)
        mpitest.expect_eq(c.get("compute", 0), 3, "rank %d: compute states" % rank)
        mpitest.expect_eq(c.get("io", 0), 2, "rank %d: io states" % rank)
    mpitest.expect_eq(st["user_events"], 2, "tick events")
    expect_clean_messages(st, "MPE_Log_send/receive", 1)
    # A user state's call site is its start event's MPE_Log_event line; a lone event has its own.
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpe_api_prog.c")
    lines = open(source).read().splitlines()
    line = lambda text: next(i + 1 for i, l in enumerate(lines) if text in l)  # noqa: E731
    sites = {(s["state"], s["site"].split(" ")[0]): s["count"] for s in st["callsites"]}
    mpitest.expect_eq(sites.get(("compute", "mpe_api_prog.c:%d" % line("MPE_Log_event(cs, i"))), 6, "compute site")
    mpitest.expect_eq(sites.get(("io", "mpe_api_prog.c:%d" % line("MPE_Log_bare_event(is)"))), 4, "io site")
    ticks = [l for l in mpe("print", "--kind", "event", path).stdout.splitlines() if " tick " in l]
    want = "at mpe_api_prog.c:%d (main)" % line("MPE_Log_event(tick")
    mpitest.expect(len(ticks) == 2 and all(l.endswith(want) for l in ticks), "tick events %r, want %r" % (ticks, want))
    mpitest.cleanup(r)
    print("api: MPE user states with their names, colours and call sites")


def fortran_api():
    r, path, st = logged(2, "mpe_api_fortran", name="fapitest")
    cats = st["categories"]
    mpitest.expect_eq(cats.get("fcompute", {}).get("color"), "#ffa500", "fcompute colour")
    mpitest.expect_eq(cats.get("ftick", {}).get("kind"), "event", "ftick kind")
    for rank in range(2):
        mpitest.expect_eq(counts(st, rank).get("fcompute", 0), 4, "rank %d: fcompute states" % rank)
    mpitest.expect_eq(st["user_events"], 2, "ftick events")
    expect_clean_messages(st, "mpe_log_send/receive from Fortran", 1)
    mpitest.cleanup(r)
    print("fortran_api: MPE user states from Fortran with their names and colours")


def crash():
    n = 20000
    r = mpitest.run(2, [mpitest.program("crash_prog"), str(n)], tools=("log",), check=False,
                    env={"MPE_LOG_BUFFER": "65536"})
    mpitest.expect(r.rc != 0, "the killed run should fail")
    parts = r.files(".part")
    mpitest.expect_eq(len(parts), 2, "per-rank files after the kill")
    p = mpe("merge", "--recover", r.workdir)
    path = os.path.join(r.workdir, "crash_prog.mpelog")
    st = stat(path)
    mpitest.expect(st["recovered"], "recovered flag")
    c1 = counts(st, 1)
    cap = 65536 // 32
    # Everything but the last buffer (< cap records, 3 per round trip) reached the disk before the kill.
    mpitest.expect(c1.get("MPI_Send", 0) >= n - cap // 3, "rank 1 sends recovered: %r" % c1.get("MPI_Send"))
    mpitest.expect(c1.get("MPI_Recv", 0) >= n - cap // 3, "rank 1 receives recovered: %r" % c1.get("MPI_Recv"))
    print("crash: " + p.stdout.strip())
    mpitest.cleanup(r)
    # SIGTERM: the handler stores every buffered record, so nothing of rank 1 is lost.
    r = mpitest.run(2, [mpitest.program("crash_prog"), str(n), "term"], tools=("log",), check=False,
                    env={"MPE_LOG_BUFFER": "65536"})
    mpitest.expect(r.rc != 0, "the terminated run should fail")
    mpe("merge", "--recover", r.workdir)
    st = stat(os.path.join(r.workdir, "crash_prog.mpelog"))
    c1 = counts(st, 1)
    mpitest.expect_eq((c1.get("MPI_Send", 0), c1.get("MPI_Recv", 0)), (n, n), "rank 1 after SIGTERM: sends, receives")
    print("crash: SIGTERM flushed everything")
    mpitest.cleanup(r)


def errors():
    r, path, st = logged(2, "ring", [2])
    data = open(path, "rb").read()
    cut = os.path.join(r.workdir, "cut.mpelog")
    with open(cut, "wb") as f:
        f.write(data[: len(data) // 2])
    p = mpe("stat", cut, check=False)
    mpitest.expect(p.returncode == 1 and "truncated" in p.stderr and len(p.stderr.splitlines()) == 1,
                   "truncated file: rc %d, stderr %r" % (p.returncode, p.stderr))
    bad = os.path.join(r.workdir, "bad.mpelog")
    b = bytearray(data)
    b[100] ^= 0xFF
    with open(bad, "wb") as f:
        f.write(bytes(b))
    p = mpe("stat", bad, check=False)
    mpitest.expect(p.returncode == 1 and "corrupt" in p.stderr, "corrupt file: rc %d, stderr %r" % (p.returncode, p.stderr))
    p = mpe("print", os.path.join(mpitest.BUILD, "CMakeCache.txt"), check=False)
    mpitest.expect(p.returncode == 1 and "not an .mpelog" in p.stderr, "not a logfile: %r" % p.stderr)
    mpitest.cleanup(r)
    print("errors: one clear line each")


def callsite_rows(st):
    """`mpe stat --json`'s call sites by (routine, "file:line")."""
    return {(s["state"], s["site"].split(" ")[0]): s for s in st["callsites"]}


def expect_sites(st, table, nprocs, what):
    """Every site of a sample's table has its exact calls and bytes, summed over the ranks."""
    rows = callsite_rows(st)
    for site, (source, routine, calls, nbytes) in table.items():
        _, line = samples_of_sites.line_of(site, source)
        ranks = samples_of_sites.ranks_making(site, nprocs)
        row = rows.get((routine, "%s:%d" % (source, line)))
        mpitest.expect(row is not None, "%s: no %s site at %s:%d in %r" % (what, routine, source, line, sorted(rows)))
        mpitest.expect_eq(row["count"], calls * len(ranks), "%s %s: calls" % (what, site))
        mpitest.expect_eq(row["ranks"], len(ranks), "%s %s: ranks" % (what, site))
        moved = row["bytes_received"] if routine == "MPI_Recv" else row["bytes_sent"]
        mpitest.expect_eq(moved, calls * nbytes * len(ranks), "%s %s: bytes" % (what, site))
    return rows


def callsites():
    np = 4
    r, path, st = logged(np, "callsites")
    rows = expect_sites(st, samples_of_sites.C_SITES, np, "C")
    _, line = samples_of_sites.line_of("lib_barrier")
    barrier = rows[("MPI_Barrier", "csite.c:%d" % line)]
    mpitest.expect(barrier["frames"][0]["module"].endswith("libcsite.so"), "barrier module %r" % barrier["frames"])
    mpitest.expect_eq(barrier["frames"][0]["function"], "csite_barriers", "barrier function")
    printed = [l for l in mpe("print", "--kind", "state", path).stdout.splitlines() if "MPI_Send" in l]
    mpitest.expect(len(printed) == 16 and all(" at callsites.c:" in l for l in printed), "print: %r" % printed[:3])
    mpitest.cleanup(r)

    r, path, st = logged(2, "callsites_f")
    expect_sites(st, samples_of_sites.F_SITES, 2, "Fortran")
    mpitest.cleanup(r)

    # Three frames through the two wrapper layers of the sample.
    r, path, st = logged(np, "callsites", env={"MPE_CALLSITE_DEPTH": "3"})
    deep = [s for s in st["callsites"] if s["state"] == "MPI_Allreduce"]
    mpitest.expect_eq(len(deep), 1, "depth 3: one Allreduce site")
    got = [(f["file"].split("/")[-1], f["line"]) for f in deep[0]["frames"]]
    want = [samples_of_sites.line_of(m) for m in ("deep_allreduce", "deep_layer_one", "deep_main")]
    mpitest.expect_eq(got, want, "depth 3: frames")
    mpitest.expect_eq(deep[0]["count"], 4 * np, "depth 3: calls")
    mpitest.cleanup(r)
    print("callsites: C (PIE and a shared library) and Fortran sites with exact calls and bytes; 3 frames")


{"samples": samples, "pcontrol": pcontrol, "threads": threads, "api": api, "fortran_api": fortran_api, "crash": crash, "errors": errors, "callsites": callsites}[GROUP]()
