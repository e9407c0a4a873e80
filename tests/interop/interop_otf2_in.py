"""Interop group otf2_in: archives from another producer (OTF2's own Python writer, Score-P style,
with and without unwound calling contexts) read in."""
import json
import os
import shutil
import subprocess

import mpitest
from interop_common import MPE, SYSTEM_PYTHON, messages, mpe, require_python_otf2, site_table, stat, state_lines


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
    require_python_otf2()
    p = subprocess.run([SYSTEM_PYTHON, "-c", FOREIGN_WRITER, archive], capture_output=True, text=True)
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
