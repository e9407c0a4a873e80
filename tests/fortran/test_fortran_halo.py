"""The Fortran halo sample (FORTRAN_HALO_SAMPLE: fortran_halo or fortran_halo_f08) under each tool
alone and all three together, preloaded and linked: same exit and output as plain, libmpetime's
exact call counts, and a log whose messages all match, as many as halo2d.c's with the same grid."""
import glob
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "libtime"))
import mpitest  # noqa: E402
from timelib import calls, profiles  # noqa: E402

SAMPLE = os.environ.get("FORTRAN_HALO_SAMPLE", "fortran_halo")
NP = 4
# Not a multiple of 8, so that the completion modes are made different numbers of times
# (modes 0-3 three times, 4-7 twice), and halo2d.c's default.
ITERS = 20
# 64 doubles per halo (a row, or one MPI_TYPE_VECTOR column), as in halo2d.c.
HALO_BYTES = 64 * 8
COMBOS = (("time",), ("umq",), ("log",), ("time", "umq", "log"))
POLLED = ("MPI_Waitany", "MPI_Waitsome", "MPI_Testall", "MPI_Testany", "MPI_Testsome")
QUIET = {"MPE_QUIET": "1"}

check, failures = mpitest.check, mpitest.failures


def dims_create(nranks):
    """MPI_Dims_create(nranks, 2): the two factors as close as possible, the larger first."""
    a = max(d for d in range(1, int(nranks ** 0.5) + 1) if nranks % d == 0)
    return nranks // a, a


def messages_per_iteration(nranks):
    """Messages of one halo exchange on the non-periodic a x b grid: one each way across every
    inner edge between blocks; the MPI_PROC_NULL sends at the grid's edge are not messages."""
    a, b = dims_create(nranks)
    return 2 * ((a - 1) * b + a * (b - 1))


def mode_counts(iters):
    """n[k]: the iterations that use completion mode k (it mod 8; see the sample's header)."""
    return [sum(1 for it in range(iters) if it % 8 == k) for k in range(8)]


def expected_calls(iters, polled):
    """Every rank's exact MPI calls, by C name, from the sample's header; `polled` is the rank's
    own count of the routines whose number depends on timing (its counts file)."""
    n = mode_counts(iters)
    nonpersistent = iters - n[7]
    want = {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Dims_create": 1, "MPI_Cart_create": 1,
            "MPI_Cart_coords": 1, "MPI_Cart_shift": 2, "MPI_Type_vector": 1, "MPI_Type_commit": 1,
            "MPI_Recv_init": 4, "MPI_Send_init": 4, "MPI_Request_free": 8,
            "MPI_Irecv": 4 * nonpersistent, "MPI_Isend": 4 * nonpersistent, "MPI_Startall": n[7],
            "MPI_Waitall": n[0] + n[7], "MPI_Wait": 8 * n[6], "MPI_Allreduce": iters + 1,
            "MPI_Type_free": 1, "MPI_Comm_free": 1, "MPI_Finalize": 1}
    if SAMPLE.endswith("_f08"):
        want["MPI_Get_library_version"] = 1  # to learn the base of MPICH 4.0's f08 indices
    want.update(polled)
    return {k: v for k, v in want.items() if v}


def read_polled(workdir, rank, what):
    """The rank's counts file: its calls of the routines whose number depends on timing."""
    path = os.path.join(workdir, "counts.%d.txt" % rank)
    if not check(os.path.exists(path), "%s: rank %d wrote no counts file" % (what, rank)):
        return None
    with open(path) as f:
        got = {name: int(n) for name, n in (line.split() for line in f if line.strip())}
    n = mode_counts(ITERS)
    # One request per MPI_WAITANY; the polling loops run at least once per iteration of their mode.
    check(got.get("MPI_Waitany") == 8 * n[1], "%s rank %d: MPI_WAITANY calls %r, expected %d"
          % (what, rank, got.get("MPI_Waitany"), 8 * n[1]))
    for name, k in (("MPI_Waitsome", 2), ("MPI_Testall", 3), ("MPI_Testany", 4), ("MPI_Testsome", 5)):
        check(got.get(name, 0) >= n[k], "%s rank %d: %s called %r times in %d iterations"
              % (what, rank, name, got.get(name), n[k]))
    return got


def run(argv, preload, what):
    t0 = time.time()
    r = mpitest.run(NP, argv, tools=preload, env=QUIET, check=False)
    print("%-44s exit %d in %.1f s" % (what, r.rc, time.time() - t0), flush=True)
    return r


def stat(path):
    p = mpitest.mpe("stat", "--json", path, check=False)
    if not check(p.returncode == 0, "mpe stat --json %s exited %d: %s" % (path, p.returncode, p.stderr.strip())):
        return None
    return json.loads(p.stdout)


def check_log(r, what, want_calls):
    logs = glob.glob(os.path.join(r.workdir, "*.mpelog"))
    if not check(len(logs) == 1, "%s: expected one .mpelog, found %r; files %r" % (what, logs, os.listdir(r.workdir))):
        return
    st = stat(logs[0])
    if st is None:
        return
    m = st["messages"]
    msgs = messages_per_iteration(NP) * ITERS
    check(m["unmatched_sends"] == 0 and m["unmatched_recvs"] == 0,
          "%s: unmatched messages: %d sends, %d receives" % (what, m["unmatched_sends"], m["unmatched_recvs"]))
    check(m["backward"] == 0, "%s: %d messages received before they were sent" % (what, m["backward"]))
    check(m["matched"] == msgs, "%s: %d matched messages, the program sent %d" % (what, m["matched"], msgs))
    check(m["matched"] == C_HALO["matched"], "%s: %d matched messages, halo2d.c with the same grid %d"
          % (what, m["matched"], C_HALO["matched"]))
    check(m["bytes"] == msgs * HALO_BYTES, "%s: %d message bytes, expected %d" % (what, m["bytes"], msgs * HALO_BYTES))
    check(st["collectives"] == NP * (ITERS + 1), "%s: %d collectives logged, expected %d (MPI_Allreduce)"
          % (what, st["collectives"], NP * (ITERS + 1)))
    for rank in range(NP):
        got = st["states_per_rank"].get(str(rank), {})
        want = want_calls.get(rank)
        if want is None:
            continue
        # MPI_Init and MPI_Finalize bracket the log; every call between is one state.
        want = {k: v for k, v in want.items() if k not in ("MPI_Init", "MPI_Finalize")}
        got = {k: v for k, v in got.items() if k.startswith("MPI_") and k not in ("MPI_Init", "MPI_Finalize")}
        check(got == want, "%s rank %d: logged calls differ: %s" % (what, rank, diff(got, want)))


def diff(got, want):
    keys = sorted(set(got) | set(want))
    return ", ".join("%s %s (expected %s)" % (k, got.get(k), want.get(k)) for k in keys if got.get(k) != want.get(k))


def check_run(argv, tools, preload, what):
    """One run of the sample under `tools` (preloaded when `preload`, else linked into argv[0]):
    exit, output, and each tool's account of the calls."""
    r = run(argv, tools if preload else (), what)
    if not check(r.rc == 0, "%s exited %d\nstderr (last lines):\n%s" % (what, r.rc, "\n".join(r.stderr.splitlines()[-15:]))):
        mpitest.cleanup(r)
        return
    check(r.stdout == PLAIN.stdout, "%s: output %r, plain %r" % (what, r.stdout, PLAIN.stdout))
    want_calls = {}
    for rank in range(NP):
        polled = read_polled(r.workdir, rank, what)
        if polled is not None:
            want_calls[rank] = expected_calls(ITERS, polled)
    if "time" in tools:
        prefix = os.path.basename(argv[0])
        profs = profiles(r.workdir, prefix)
        if check(sorted(profs) == list(range(NP)), "%s: libmpetime files for ranks %r" % (what, sorted(profs))):
            for rank, p in profs.items():
                if rank in want_calls:
                    got = calls(p)
                    check(got == want_calls[rank], "%s rank %d: libmpetime counts differ: %s"
                          % (what, rank, diff(got, want_calls[rank])))
    if "log" in tools:
        check_log(r, what, want_calls)
    mpitest.cleanup(r)


def plain_counts_ok(r):
    """The plain run's own counts files are sane (so a later failure is the tools')."""
    for rank in range(NP):
        read_polled(r.workdir, rank, "plain")


exe = mpitest.program(SAMPLE)
PLAIN = run([exe, str(ITERS), "counts"], (), "%s plain" % SAMPLE)
mpitest.expect(PLAIN.rc == 0, "%s exits %d plain:\n%s" % (SAMPLE, PLAIN.rc, PLAIN.stderr))
mpitest.expect(PLAIN.stdout.startswith("%s: ranks=%d iterations=%d residual=" % (SAMPLE, NP, ITERS)),
               "%s plain output: %r" % (SAMPLE, PLAIN.stdout))
plain_counts_ok(PLAIN)
mpitest.cleanup(PLAIN)

# The C halo with the same grid under liblog: the count the Fortran log must equal.
t0 = time.time()
c = mpitest.run(NP, [mpitest.program("halo2d"), str(ITERS)], tools=("log",), env=QUIET)
c_logs = glob.glob(os.path.join(c.workdir, "*.mpelog"))
mpitest.expect(len(c_logs) == 1, "halo2d under liblog: logs %r" % c_logs)
C_HALO = json.loads(mpitest.mpe("stat", "--json", c_logs[0]).stdout)["messages"]
mpitest.expect(C_HALO["unmatched_sends"] == 0 and C_HALO["unmatched_recvs"] == 0, "halo2d: unmatched %r" % C_HALO)
mpitest.expect_eq(C_HALO["matched"], messages_per_iteration(NP) * ITERS, "halo2d: matched messages")
print("%-44s %d messages in %.1f s" % ("halo2d under log", C_HALO["matched"], time.time() - t0), flush=True)
mpitest.cleanup(c)

for tools in COMBOS:
    name = "+".join(tools)
    check_run([exe, str(ITERS), "counts"], tools, True, "%s preloaded %s" % (SAMPLE, name))
    linked = mpitest.program("%s_linked_%s" % (SAMPLE, "all" if len(tools) > 1 else name))
    check_run([linked, str(ITERS), "counts"], tools, False, "%s linked %s" % (SAMPLE, name))

if failures:
    mpitest.fail("%d checks failed:\n  %s" % (len(failures), "\n  ".join(f.splitlines()[0] for f in failures)))
print("%s: %d ranks, %d iterations, exact under time, umq, log and all three, preloaded and linked; "
      "%d messages, all matched, as halo2d.c" % (SAMPLE, NP, ITERS, C_HALO["matched"]))
