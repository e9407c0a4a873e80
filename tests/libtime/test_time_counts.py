"""Exact calls and bytes per routine for the ring and the ping-pong, whose traffic is documented;
MPI time never exceeds run time; an unwritable output path costs one line, not the run."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))
import mpitest  # noqa: E402
from timelib import calls, profiles  # noqa: E402

NP = 4


def check_common(run, prefix):
    profs = profiles(run.workdir, prefix)
    mpitest.expect_eq(sorted(profs), list(range(NP)), "%s: ranks with a per-process file" % prefix)
    for rank, p in profs.items():
        h = p["header"]
        mpitest.expect(0 < h["mpi_ns"] <= h["run_ns"], "%s rank %d: MPI time %d outside (0, run %d]"
                       % (prefix, rank, h["mpi_ns"], h["run_ns"]))
        mpitest.expect_eq(h["size"], NP, "%s rank %d size" % (prefix, rank))
        for name, r in p["routines"].items():
            mpitest.expect(r["min_ns"] <= r["max_ns"] <= r["incl_ns"] and r["excl_ns"] <= r["incl_ns"],
                           "%s rank %d %s: inconsistent times %r" % (prefix, rank, name, r))
    for f in (prefix + ".mpetime.txt", prefix + ".mpetime.json"):
        mpitest.expect(os.path.exists(os.path.join(run.workdir, f)), "report %s missing" % f)
    mpitest.expect("libmpetime: report in" in run.stderr, "rank 0 did not say where the files went: %s" % run.stderr)
    return profs


# samples/ring.c: every rank makes L MPI_Send and L MPI_Recv of one MPI_INT.
LAPS = 7
r = mpitest.run(NP, [mpitest.program("ring"), str(LAPS)], tools=("time",))
profs = check_common(r, "ring")
for rank, p in profs.items():
    mpitest.expect_eq(calls(p), {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Send": LAPS,
                                 "MPI_Recv": LAPS, "MPI_Finalize": 1}, "ring rank %d calls" % rank)
    rt = p["routines"]
    mpitest.expect_eq((rt["MPI_Send"]["bytes_sent"], rt["MPI_Send"]["bytes_recv"]), (4 * LAPS, 0), "ring send bytes")
    mpitest.expect_eq((rt["MPI_Recv"]["bytes_sent"], rt["MPI_Recv"]["bytes_recv"]), (0, 4 * LAPS), "ring recv bytes")
mpitest.cleanup(r)

# samples/pingpong.c: ranks 0 and 1 exchange I messages of B bytes each way and finish the
# closing MPI_Ibarrier with MPI_Wait; 2 and 3 only poll it with MPI_Test (timing-dependent count).
B, I = 100, 50
r = mpitest.run(NP, [mpitest.program("pingpong"), str(B), str(I)], tools=("time",))
profs = check_common(r, "pingpong")
base = {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Ibarrier": 1, "MPI_Finalize": 1}
for rank, p in profs.items():
    got = calls(p)
    want = dict(base)
    if rank < 2:
        want.update({"MPI_Send": I, "MPI_Recv": I, "MPI_Wait": 1})
    else:
        mpitest.expect(got.get("MPI_Test", 0) >= 1, "pingpong rank %d polls the barrier" % rank)
        want["MPI_Test"] = got.get("MPI_Test", 0)
    if rank == 0:
        want["MPI_Wtime"] = 2
    mpitest.expect_eq(got, want, "pingpong rank %d calls" % rank)
    if rank < 2:
        rt = p["routines"]
        mpitest.expect_eq((rt["MPI_Send"]["bytes_sent"], rt["MPI_Recv"]["bytes_recv"]), (B * I, B * I),
                          "pingpong rank %d bytes" % rank)
    total = sum(x["bytes_sent"] + x["bytes_recv"] for x in p["routines"].values())
    mpitest.expect_eq(total, 2 * B * I if rank < 2 else 0, "pingpong rank %d total bytes" % rank)
mpitest.cleanup(r)

# An output path that cannot be written: one warning line per process, the program still succeeds.
# (/proc takes no new files, even from root, for whom every directory passes access(W_OK); a
# prefix whose directory is missing falls back to the working directory instead: test_prefix.py.)
r = mpitest.run(NP, [mpitest.program("ring"), str(LAPS)], tools=("time",),
                env={"MPE_LOGFILE_PREFIX": "/proc/ring"})
mpitest.expect("token=%d" % (LAPS * NP) in r.stdout, "ring output changed: %s" % r.stdout)
warnings = [l for l in r.stderr.splitlines() if "libmpetime" in l]
mpitest.expect(len(warnings) == NP + 1 and all(l.startswith("mpe-tools: ") for l in warnings),
               "expected one line per process and one for the report: %r" % warnings)
mpitest.cleanup(r)
print("time counts: ring and pingpong calls and bytes exact on %d ranks; unwritable output tolerated" % NP)
