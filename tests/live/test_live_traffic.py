"""The live view against programs whose traffic is known: halo2d (each rank's Cartesian
neighbours, 512-byte messages) and ring (rank -> rank+1), under `mpe run --live --log` with
`mpe top --json` attached before the job starts. What `mpe top` shows must match the program,
and the counts summed over every interval must equal the log's, exactly."""
import os
import sys
import tempfile

import livetest
import mpitest
from mpitest import expect, expect_eq

SAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples")


def watch(np, argv, tools=(), env=None):
    """Runs argv under --live --log (and `tools`, with `env` added) with a viewer attached from the
    start; returns (job, snapshots, the last snapshot)."""
    workdir = tempfile.mkdtemp(prefix="mpetest-live-")
    top = livetest.Top(os.path.join(workdir, os.path.basename(argv[0]) + ".live"), refresh=0.3)
    job = livetest.LiveJob(np, argv, log=True, workdir=workdir, tools=tools, env=env)
    job.finish()
    snaps = top.snapshots(timeout=60)
    expect(snaps, "mpe top printed no snapshot: %s" % getattr(top, "stderr", ""))
    final = snaps[-1]
    expect(final["ended"], "the last snapshot does not say the job ended: %s" % final)
    expect_eq(final["exit_status"], 0, "exit status the relay reported")
    expect_eq(final["ranks_seen"], np, "ranks seen")
    expect_eq(final["ranks_finalized"], np, "ranks whose last frame arrived")
    drops = final["drops"]
    expect_eq(drops["frames_lost_in_transit"] + drops["frames_dropped_by_ranks"], 0, "frames lost with a fast viewer")
    return job, snaps, final


def check_pairs(final, pairs, count, size):
    """Each pair carried `count` messages of `size` bytes: exactly, when no event was dropped; when
    a thread's ring overflowed (a fast MPI sends more than 2048 events in one interval, counted in
    events_dropped), the pairs show fewer, never more, and every message is still `size` bytes.
    The totals, counted apart from the events, stay exact either way (check_log_totals)."""
    dropped = final["drops"]["events_dropped"]
    for key, p in pairs.items():
        expect_eq(p["bytes"], p["count"] * size, "bytes %d -> %d (%d per message)" % (key + (size,)))
        if dropped == 0:
            expect_eq(p["count"], count, "messages %d -> %d" % key)
        else:
            expect(0 < p["count"] <= count, "messages %d -> %d: %d of %d" % (key + (p["count"], count)))
    if dropped:
        print("(%d events dropped by full rings, counted; the pairs show the rest)" % dropped)


def check_log_totals(job, final):
    stat = livetest.log_messages(os.path.join(job.workdir, job.prefix + ".mpelog"))
    m = stat["messages"]
    sends = m["matched"] + m["unmatched_sends"]
    expect_eq(final["traffic"]["sends"], sends, "sends summed over the intervals vs the log's messages")
    expect_eq(final["traffic"]["send_bytes"], m["bytes"], "bytes summed over the intervals vs the log's")
    expect_eq(final["traffic"]["recvs"], m["matched"] + m["unmatched_recvs"], "receives summed vs the log's")


def calls_seen(snaps):
    """Every (rank, routine, callsite, peer) an in-MPI row showed."""
    return {(r["rank"], r["routine"], r["callsite"], r.get("peer")) for s in snaps for r in s["now"] if r["in_mpi"]}


# Open MPI runs these samples about 20 times faster than MPICH on this machine's oversubscribed
# cores: more iterations let the viewer see the job while it runs, not only its last frames.
FASTER = 12 if mpitest.MPI == "openmpi" else 1


def test_halo2d():
    iterations = 800 * FASTER
    plain = mpitest.run(4, [mpitest.program("halo2d"), str(iterations)])
    # All four tools at once: liblive beside libmpetime, libumq and liblog. Rank 3 sleeps 1.5 s
    # before its sends in one iteration, so its neighbours wait that long in MPI_Waitall: a
    # snapshot every 0.3 s must show it, however fast the MPI runs the other iterations
    # (Open MPI's whole run can fall between two snapshots).
    stall = {"HALO2D_DELAY_RANK": "3", "HALO2D_DELAY_US": "1500000", "HALO2D_DELAY_ITERATIONS": "100-100"}
    job, snaps, final = watch(4, [mpitest.program("halo2d"), str(iterations)], tools=("--time", "--umq"), env=stall)
    expect_eq(job.stdout, plain.stdout, "halo2d's output under --live --log --time --umq")
    expect(os.path.exists(os.path.join(job.workdir, "halo2d.mpetime.txt")), "libmpetime's report beside the live view")
    # 2 x 2 grid, row-major: neighbours are rank +-1 in a row and +-2 in a column.
    expected = {(0, 1), (1, 0), (2, 3), (3, 2), (0, 2), (2, 0), (1, 3), (3, 1)}
    pairs = {(p["from"], p["to"]): p for p in final["traffic"]["pairs"]}
    expect_eq(set(pairs), expected, "halo2d's sending pairs")
    check_pairs(final, pairs, iterations, 64 * 8)
    check_log_totals(job, final)
    waitall_line = mpitest.marked_line(os.path.join(SAMPLES, "halo2d.c"), "MPI_Waitall(8, requests")
    seen = calls_seen(snaps)
    expect(any(routine == "MPI_Waitall" and ("halo2d.c:%d" % waitall_line) in site for _, routine, site, _ in seen),
           "no snapshot showed a rank in MPI_Waitall at halo2d.c:%d; saw %s" % (waitall_line, sorted(seen)[:20]))
    for rank, routine, site, _ in seen:
        expect(routine in ("MPI_Waitall", "MPI_Isend", "MPI_Irecv", "MPI_Allreduce", "MPI_Finalize", "MPI_Init",
                           "MPI_Cart_create", "MPI_Type_free", "MPI_Comm_free"),
               "rank %d shown in %s, which halo2d does not call in its loop" % (rank, routine))
    print("halo2d: %d snapshots, %d sends, pairs and sizes as programmed" % (len(snaps), final["traffic"]["sends"]))


def test_ring():
    laps, np = 3000 * FASTER, 3
    job, snaps, final = watch(np, [mpitest.program("ring"), str(laps)])
    pairs = {(p["from"], p["to"]): p for p in final["traffic"]["pairs"]}
    expect_eq(set(pairs), {(r, (r + 1) % np) for r in range(np)}, "ring's sending pairs")
    check_pairs(final, pairs, laps, 4)
    check_log_totals(job, final)
    for rank, routine, site, peer in calls_seen(snaps):
        if routine == "MPI_Recv":
            expect_eq(peer, (rank - 1) % np, "rank %d's MPI_Recv source" % rank)
        if routine == "MPI_Send":
            expect_eq(peer, (rank + 1) % np, "rank %d's MPI_Send destination" % rank)
    print("ring: %d snapshots, %d sends" % (len(snaps), final["traffic"]["sends"]))


if __name__ == "__main__":
    for name in sys.argv[1:] or ["halo2d", "ring"]:
        globals()["test_" + name]()
    print("PASS")
