"""Generates the conformance matrix's programs (C, mpif.h, use mpi, use mpi_f08) from core/mpi_calls.tsv.

Every table row of a covered class becomes one "case" of its language's program, emitted from the
one template of its class (and mode; a few classes pick a shape from the row's roles, or, where
the arguments differ routine by routine, the routine's own template). A new row of a class that
has a template is tested without editing this file; a row without one is reported as not covered.

In a template, `@MPI_X(` is a counted MPI call: the program counts every MPI call it makes (in C
the call becomes `(mx_n[k]++, MPI_X)(`; in Fortran `call @MPI_X(` gets a counting line before it),
and the class of MPI_X in the table adds it to the program's own count of collectives, one-sided
operations and Pcontrol markers. `$F` is the routine under test. `call msg(n)` / `MSG(n)` counts
point-to-point messages sent. At the end each rank writes matrix_counts.<rank>.txt (routine call
counts, messages, collectives, rma, markers), which matrix.py compares with the tools' output.

Outputs (--outdir): matrix_c.c, matrix_mpif.f90, matrix_usempi.f90, matrix_f08.f90, tested.txt
("<lang> <C name>" per tested routine) and coverage.json (covered and skipped routines, reasons).
"""
import argparse
import json
import os
import re
import subprocess
import sys

NP = 4  # every program runs on 4 ranks: pairs (0,1) (2,3) and a periodic ring for neighbours

P2P = ["send", "recv", "sendrecv", "probe", "mprobe", "mrecv"]
COMPLETION = ["wait", "waitall", "waitany", "waitsome", "test", "testall", "testany", "testsome",
              "request_get_status", "start", "cancel", "request_free"]
COLLECTIVE = ["barrier", "bcast", "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block", "scan",
              "exscan", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall",
              "alltoallv", "alltoallw", "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
              "neighbor_alltoallv", "neighbor_alltoallw"]
ONESIDED = ["rma", "win_sync", "win_create"]
COVERED = P2P + COMPLETION + COLLECTIVE + ONESIDED + ["pcontrol"]
LEFT_OUT = {  # classes of the table the matrix does not target, and why
    "pready": "partitioned communication (MPI-4) is left out",
    "parrived": "partitioned communication (MPI-4) is left out",
    "file_read": "MPI-IO is left out", "file_write": "MPI-IO is left out",
    "file_open": "MPI-IO is left out", "file_close": "MPI-IO is left out",
    "comm_create": "communicator creation is left out (Dist_graph_create_adjacent is called as a helper)",
    "comm_free": "communicator release is left out (Comm_free is called as a helper)",
    "init": "called by every program, not a target", "finalize": "called by every program, not a target",
    "abort": "ends the program: left out",
}
LANGS = ["c", "mpif", "usempi", "f08"]
LANG_NAMES = {"c": "C", "mpif": "Fortran mpif.h", "usempi": "Fortran use mpi", "f08": "Fortran use mpi_f08"}


class Row:
    def __init__(self, fn, cls, mode, roles):
        self.fn, self.cls, self.mode, self.roles = fn, cls, mode, roles


def read_table(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()  # '#' starts a comment only at the start of a line ('|#N' is a position)
            if not line or line[0] in "#%":
                continue
            parts = line.split()
            roles = dict(p.split("=", 1) for p in parts[3:])
            rows.append(Row(parts[0], parts[1], parts[2], roles))
    return rows


def shape(row):
    """Which template of its class a row needs, from its roles (classes whose routines differ)."""
    r = row.roles
    if row.cls == "sendrecv":
        return "replace" if r.get("sendbuf") == r.get("recvbuf") else ""
    if row.cls == "start":
        return "all" if "nrequests" in r else ""
    if row.cls == "rma":
        if "op" in r and "recvbuf" in r:
            return "get_accumulate" if "recvcount" in r else "fetch_and_op"
        if "recvbuf" in r and "sendbuf" in r:
            return "compare_and_swap"
        if "op" in r:
            return "accumulate"
        return "get" if "recvbuf" in r else "put"
    return ""


# ---------------------------------------------------------------------------------------------
# C templates. W is MPI_COMM_WORLD, `sender` the even rank of a pair, `partner` the other rank.
# ---------------------------------------------------------------------------------------------
C_POST4 = """@MPI_Irecv(rbuf, 4, MPI_INT, partner, 20, W, &reqs[0]);
@MPI_Irecv(rbuf2, 4, MPI_INT, partner, 21, W, &reqs[1]);
@MPI_Isend(sbuf, 4, MPI_INT, partner, 20, W, &reqs[2]);
@MPI_Isend(sbuf2, 4, MPI_INT, partner, 21, W, &reqs[3]);
MSG(2);
"""
C_DONE4 = "add(rbuf, 4);\nadd(rbuf2, 4);\n"

C_T = {
    ("send", "b"): """if (!sender) @MPI_Irecv(rbuf, 4, MPI_INT, partner, 1, W, &req);
@MPI_Barrier(W); /* the receive is posted: a ready send may start */
if (sender) { @$F(sbuf, 4, MPI_INT, partner, 1, W); MSG(1); }
else { @MPI_Wait(&req, &st); add(rbuf, 4); }
""",
    ("send", "nb"): """if (!sender) @MPI_Irecv(rbuf, 4, MPI_INT, partner, 2, W, &req);
@MPI_Barrier(W);
if (sender) { @$F(sbuf, 4, MPI_INT, partner, 2, W, &req); MSG(1); }
@MPI_Wait(&req, &st);
if (!sender) add(rbuf, 4);
""",
    ("send", "pi"): """if (sender) @$F(sbuf, 4, MPI_INT, partner, 3, W, &preq);
for (int k = 0; k < 2; ++k) {
  if (!sender) @MPI_Irecv(rbuf, 4, MPI_INT, partner, 3, W, &req);
  @MPI_Barrier(W);
  if (sender) {
    if (k == 0) @MPI_Start(&preq); else @MPI_Startall(1, &preq);
    MSG(1);
    if (k == 0) @MPI_Wait(&preq, &st); else @MPI_Waitall(1, &preq, sts);
  } else { @MPI_Wait(&req, &st); add(rbuf, 4); }
}
if (sender) @MPI_Request_free(&preq);
""",
    ("recv", "b"): """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, 4, W); MSG(1); }
else { @$F(rbuf, 4, MPI_INT, partner, 4, W, &st); add(rbuf, 4); }
""",
    ("recv", "nb"): """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, 5, W); MSG(1); }
else { @$F(rbuf, 4, MPI_INT, partner, 5, W, &req); @MPI_Wait(&req, &st); add(rbuf, 4); }
""",
    ("recv", "pi"): """if (sender) {
  @MPI_Send(sbuf, 4, MPI_INT, partner, 6, W); @MPI_Send(sbuf2, 4, MPI_INT, partner, 6, W); MSG(2);
} else {
  @$F(rbuf, 4, MPI_INT, partner, 6, W, &preq);
  @MPI_Start(&preq); @MPI_Wait(&preq, &st); add(rbuf, 4);
  @MPI_Startall(1, &preq); @MPI_Waitall(1, &preq, sts); add(rbuf, 4);
  @MPI_Request_free(&preq);
}
""",
    ("sendrecv", "b", ""): """@$F(sbuf, 4, MPI_INT, partner, 7, rbuf, 4, MPI_INT, partner, 7, W, &st);
MSG(1); add(rbuf, 4);
""",
    ("sendrecv", "nb", ""): """@$F(sbuf, 4, MPI_INT, partner, 7, rbuf, 4, MPI_INT, partner, 7, W, &req);
@MPI_Wait(&req, &st); MSG(1); add(rbuf, 4);
""",
    ("sendrecv", "b", "replace"): """@$F(sbuf, 4, MPI_INT, partner, 8, partner, 8, W, &st);
MSG(1); add(sbuf, 4);
""",
    ("sendrecv", "nb", "replace"): """@$F(sbuf, 4, MPI_INT, partner, 8, partner, 8, W, &req);
@MPI_Wait(&req, &st); MSG(1); add(sbuf, 4);
""",
    ("probe", "b"): """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, 9, W); MSG(1); }
else {
  @$F(partner, 9, W, &st); @MPI_Get_count(&st, MPI_INT, &n);
  @MPI_Recv(rbuf, n, MPI_INT, partner, 9, W, &st); add(rbuf, 4);
}
""",
    ("probe", "nb"): """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, 10, W); MSG(1); }
else {
  flag = 0;
  while (!flag) @$F(partner, 10, W, &flag, &st);
  @MPI_Recv(rbuf, 4, MPI_INT, partner, 10, W, MPI_STATUS_IGNORE); add(rbuf, 4);
}
""",
    ("mprobe", "b"): """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, 11, W); MSG(1); }
else { @$F(partner, 11, W, &msg, &st); @MPI_Mrecv(rbuf, 4, MPI_INT, &msg, &st); add(rbuf, 4); }
""",
    ("mprobe", "nb"): """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, 12, W); MSG(1); }
else {
  flag = 0;
  while (!flag) @$F(partner, 12, W, &flag, &msg, &st);
  @MPI_Mrecv(rbuf, 4, MPI_INT, &msg, &st); add(rbuf, 4);
}
""",
    ("mrecv", "b"): """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, 13, W); MSG(1); }
else { @MPI_Mprobe(partner, 13, W, &msg, &st); @$F(rbuf, 4, MPI_INT, &msg, &st); add(rbuf, 4); }
""",
    ("mrecv", "nb"): """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, 14, W); MSG(1); }
else {
  @MPI_Mprobe(partner, 14, W, &msg, &st); @$F(rbuf, 4, MPI_INT, &msg, &req);
  @MPI_Wait(&req, &st); add(rbuf, 4);
}
""",
    ("wait", "b"): C_POST4 + """for (int k = 0; k < 4; ++k) @$F(&reqs[k], k % 2 ? MPI_STATUS_IGNORE : &st);
""" + C_DONE4,
    ("waitall", "b"): C_POST4 + "@$F(4, reqs, sts);\n" + C_DONE4 + C_POST4 +
    "@$F(4, reqs, MPI_STATUSES_IGNORE);\n" + C_DONE4,
    ("waitany", "b"): C_POST4 + """for (int k = 0; k < 5; ++k) { /* the fifth finds no active request */
  @$F(4, reqs, &idx, &st);
  if ((k < 4) != (idx != MPI_UNDEFINED)) ++errs;
}
""" + C_DONE4,
    ("waitsome", "b"): C_POST4 + """for (int done = 0; done < 4;) {
  @$F(4, reqs, &outc, idxs, sts);
  if (outc == MPI_UNDEFINED) { ++errs; break; }
  done += outc;
}
""" + C_DONE4,
    ("test", "b"): C_POST4 + """for (int k = 0; k < 4; ++k)
  for (flag = 0; !flag;) @$F(&reqs[k], &flag, k % 2 ? MPI_STATUS_IGNORE : &st);
""" + C_DONE4,
    ("testall", "b"): C_POST4 + "for (flag = 0; !flag;) @$F(4, reqs, &flag, sts);\n" + C_DONE4,
    ("testany", "b"): C_POST4 + """for (int done = 0; done < 4;) {
  @$F(4, reqs, &idx, &flag, &st);
  if (flag && idx != MPI_UNDEFINED) ++done;
}
""" + C_DONE4,
    ("testsome", "b"): C_POST4 + """for (int done = 0; done < 4;) {
  @$F(4, reqs, &outc, idxs, sts);
  if (outc == MPI_UNDEFINED) { ++errs; break; }
  done += outc;
}
""" + C_DONE4,
    ("request_get_status", "b"): C_POST4 + """for (int k = 0; k < 4; ++k) {
  for (flag = 0; !flag;) @$F(reqs[k], &flag, &st);
  @MPI_Wait(&reqs[k], &st);
}
""" + C_DONE4,
    ("start", "b", ""): """@MPI_Recv_init(rbuf, 4, MPI_INT, partner, 22, W, &reqs[0]);
@MPI_Send_init(sbuf, 4, MPI_INT, partner, 22, W, &reqs[1]);
@$F(&reqs[0]); @$F(&reqs[1]); MSG(1);
@MPI_Waitall(2, reqs, sts); add(rbuf, 4);
@MPI_Request_free(&reqs[0]); @MPI_Request_free(&reqs[1]);
""",
    ("start", "b", "all"): """@MPI_Recv_init(rbuf, 4, MPI_INT, partner, 22, W, &reqs[0]);
@MPI_Send_init(sbuf, 4, MPI_INT, partner, 22, W, &reqs[1]);
@$F(2, reqs); MSG(1);
@MPI_Waitall(2, reqs, sts); add(rbuf, 4);
@MPI_Request_free(&reqs[0]); @MPI_Request_free(&reqs[1]);
""",
    ("cancel", "b"): """@MPI_Irecv(rbuf, 4, MPI_INT, rank, 999, W, &req); /* no one sends tag 999 */
@$F(&req);
@MPI_Wait(&req, &st);
@MPI_Test_cancelled(&st, &flag);
if (!flag) ++errs;
""",
    ("request_free", "b"): """if (sender) { @MPI_Isend(sbuf, 4, MPI_INT, partner, 23, W, &req); MSG(1); @$F(&req); }
else { @MPI_Recv(rbuf, 4, MPI_INT, partner, 23, W, &st); add(rbuf, 4); }
@MPI_Barrier(W);
""",
    ("pcontrol", "b"): "@$F(0);\n@$F(1);\n",
    # One-sided: a window gwin over wbuf (16 ints a rank) exists for the whole program.
    ("rma", "b", "put"): """@MPI_Win_fence(0, gwin);
@$F(sbuf, 4, MPI_INT, partner, 0, 4, MPI_INT, gwin);
@MPI_Win_fence(0, gwin);
add(wbuf, 4);
""",
    ("rma", "nb", "put"): """@MPI_Win_lock_all(0, gwin);
@$F(sbuf, 4, MPI_INT, partner, 4, 4, MPI_INT, gwin, &req);
@MPI_Wait(&req, &st);
@MPI_Win_unlock_all(gwin);
@MPI_Barrier(W);
""",
    ("rma", "b", "accumulate"): """@MPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, gwin);
@$F(sbuf, 4, MPI_INT, partner, 8, 4, MPI_INT, MPI_SUM, gwin);
@MPI_Win_flush(partner, gwin);
@MPI_Win_unlock(partner, gwin);
@MPI_Barrier(W);
""",
    ("rma", "nb", "accumulate"): """@MPI_Win_lock_all(0, gwin);
@$F(sbuf, 4, MPI_INT, partner, 8, 4, MPI_INT, MPI_SUM, gwin, &req);
@MPI_Wait(&req, &st);
@MPI_Win_unlock_all(gwin);
@MPI_Barrier(W);
""",
    ("rma", "b", "get"): """@MPI_Comm_group(W, &wgrp);
@MPI_Group_incl(wgrp, 1, &partner, &pgrp);
@MPI_Win_post(pgrp, 0, gwin);
@MPI_Win_start(pgrp, 0, gwin);
@$F(rbuf, 4, MPI_INT, partner, 0, 4, MPI_INT, gwin);
@MPI_Win_complete(gwin);
@MPI_Win_wait(gwin);
add(rbuf, 4);
@MPI_Group_free(&pgrp);
@MPI_Group_free(&wgrp);
""",
    ("rma", "nb", "get"): """@MPI_Win_lock_all(0, gwin);
@$F(rbuf, 4, MPI_INT, partner, 0, 4, MPI_INT, gwin, &req);
@MPI_Wait(&req, &st);
@MPI_Win_unlock_all(gwin);
add(rbuf, 4);
@MPI_Barrier(W);
""",
    ("rma", "b", "get_accumulate"): """@MPI_Win_lock_all(0, gwin);
@$F(sbuf, 4, MPI_INT, rbuf, 4, MPI_INT, partner, 12, 4, MPI_INT, MPI_SUM, gwin);
@MPI_Win_flush_all(gwin);
@MPI_Win_unlock_all(gwin);
add(rbuf, 4);
@MPI_Barrier(W);
""",
    ("rma", "nb", "get_accumulate"): """@MPI_Win_lock_all(0, gwin);
@$F(sbuf, 4, MPI_INT, rbuf, 4, MPI_INT, partner, 12, 4, MPI_INT, MPI_SUM, gwin, &req);
@MPI_Wait(&req, &st);
@MPI_Win_unlock_all(gwin);
add(rbuf, 4);
@MPI_Barrier(W);
""",
    ("rma", "b", "fetch_and_op"): """@MPI_Win_lock(MPI_LOCK_SHARED, partner, 0, gwin);
@$F(sbuf, rbuf, MPI_INT, partner, 13, MPI_SUM, gwin);
@MPI_Win_unlock(partner, gwin);
add(rbuf, 1);
@MPI_Barrier(W);
""",
    ("rma", "b", "compare_and_swap"): """@MPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, gwin);
@$F(sbuf, rbuf2, rbuf, MPI_INT, partner, 14, gwin);
@MPI_Win_unlock(partner, gwin);
add(rbuf, 1);
@MPI_Barrier(W);
""",
    "MPI_Win_create": """@$F(wbuf2, 16 * sizeof(int), sizeof(int), MPI_INFO_NULL, W, &win);
@MPI_Win_fence(0, win);
@MPI_Win_fence(0, win);
@MPI_Win_free(&win);
""",
    "MPI_Win_allocate": """@$F(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, W, &base, &win);
@MPI_Win_fence(0, win);
@MPI_Win_fence(0, win);
@MPI_Win_free(&win);
""",
    "MPI_Win_create_dynamic": """@$F(MPI_INFO_NULL, W, &win);
@MPI_Win_free(&win);
""",
}
C_T["MPI_Win_allocate_shared"] = C_T["MPI_Win_allocate"]

# Collectives: the argument lists of one call of the class (a second list: the in-place form) and
# what to add to the checksum after it; the mode decides how the call is made and completed.
C_COLL = {
    "barrier": [("W", "")],
    "bcast": [("sbuf, 4, MPI_INT, 0, W", "add(sbuf, 4);")],
    "reduce": [("sbuf, rbuf, 4, MPI_INT, MPI_SUM, 0, W", "if (rank == 0) add(rbuf, 4);")],
    "allreduce": [("sbuf, rbuf, 4, MPI_INT, MPI_SUM, W", "add(rbuf, 4);"),
                  ("MPI_IN_PLACE, sbuf, 4, MPI_INT, MPI_SUM, W", "add(sbuf, 4);")],
    "reduce_scatter": [("sbuf, rbuf, cnts, MPI_INT, MPI_SUM, W", "add(rbuf, 2);")],
    "reduce_scatter_block": [("sbuf, rbuf, 2, MPI_INT, MPI_SUM, W", "add(rbuf, 2);")],
    "scan": [("sbuf, rbuf, 4, MPI_INT, MPI_SUM, W", "add(rbuf, 4);")],
    "exscan": [("sbuf, rbuf, 4, MPI_INT, MPI_SUM, W", "if (rank > 0) add(rbuf, 4);")],
    "gather": [("sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, W", "if (rank == 0) add(rbuf, 8);")],
    "gatherv": [("sbuf, 2, MPI_INT, rbuf, cnts, dsp, MPI_INT, 0, W", "if (rank == 0) add(rbuf, 8);")],
    "scatter": [("sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, 0, W", "add(rbuf, 2);")],
    "scatterv": [("sbuf, cnts, dsp, MPI_INT, rbuf, 2, MPI_INT, 0, W", "add(rbuf, 2);")],
    "allgather": [("sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, W", "add(rbuf, 8);")],
    "allgatherv": [("sbuf, 2, MPI_INT, rbuf, cnts, dsp, MPI_INT, W", "add(rbuf, 8);"),
                   ("MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, cnts, dsp, MPI_INT, W", "add(rbuf, 8);")],
    "alltoall": [("sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, W", "add(rbuf, 8);")],
    "alltoallv": [("sbuf, cnts, dsp, MPI_INT, rbuf, cnts, dsp, MPI_INT, W", "add(rbuf, 8);")],
    "alltoallw": [("sbuf, cnts, wdsp, tys, rbuf, cnts, wdsp, tys, W", "add(rbuf, 8);")],
    "neighbor_allgather": [("sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring", "add(rbuf, 4);")],
    "neighbor_allgatherv": [("sbuf, 2, MPI_INT, rbuf, cnts, dsp, MPI_INT, ring", "add(rbuf, 4);")],
    "neighbor_alltoall": [("sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ring", "add(rbuf, 4);")],
    "neighbor_alltoallv": [("sbuf, cnts, dsp, MPI_INT, rbuf, cnts, dsp, MPI_INT, ring", "add(rbuf, 4);")],
    "neighbor_alltoallw": [("sbuf, cnts, adsp, tys, rbuf, cnts, adsp, tys, ring", "add(rbuf, 4);")],
}
C_COLL_MODE = {
    "b": "@$F($ARGS);\n",
    "nb": "@$F($ARGS, &req);\n@MPI_Wait(&req, MPI_STATUS_IGNORE);\n",
    # started once: liblog records a persistent collective at its init, MPI counts one operation
    "pi": "@$F($ARGS, MPI_INFO_NULL, &preq);\n@MPI_Start(&preq);\n@MPI_Wait(&preq, MPI_STATUS_IGNORE);\n"
          "@MPI_Request_free(&preq);\n",
}

# ---------------------------------------------------------------------------------------------
# Fortran templates, one set for mpif.h, use mpi and use mpi_f08 (only declarations differ, and
# $SOURCE(st), the status's source field). Buffers are integer arrays of 16; ierr is passed always.
# ---------------------------------------------------------------------------------------------
F_POST4 = """call @MPI_Irecv(rbuf, 4, MPI_INTEGER, partner, 20, W, reqs(1), ierr)
call @MPI_Irecv(rbuf2, 4, MPI_INTEGER, partner, 21, W, reqs(2), ierr)
call @MPI_Isend(sbuf, 4, MPI_INTEGER, partner, 20, W, reqs(3), ierr)
call @MPI_Isend(sbuf2, 4, MPI_INTEGER, partner, 21, W, reqs(4), ierr)
call msg(2)
"""
F_DONE4 = "call add(rbuf, 4)\ncall add(rbuf2, 4)\n"

F_T = {
    ("send", "b"): """if (.not. sender) call @MPI_Irecv(rbuf, 4, MPI_INTEGER, partner, 1, W, req, ierr)
call @MPI_Barrier(W, ierr)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, 1, W, ierr)
  call msg(1)
else
  call @MPI_Wait(req, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("send", "nb"): """if (.not. sender) call @MPI_Irecv(rbuf, 4, MPI_INTEGER, partner, 2, W, req, ierr)
call @MPI_Barrier(W, ierr)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, 2, W, req, ierr)
  call msg(1)
end if
call @MPI_Wait(req, st, ierr)
if (.not. sender) call add(rbuf, 4)
""",
    ("send", "pi"): """if (sender) call @$F(sbuf, 4, MPI_INTEGER, partner, 3, W, preq, ierr)
do k = 1, 2
  if (.not. sender) call @MPI_Irecv(rbuf, 4, MPI_INTEGER, partner, 3, W, req, ierr)
  call @MPI_Barrier(W, ierr)
  if (sender) then
    if (k == 1) call @MPI_Start(preq, ierr)
    if (k == 2) call @MPI_Startall(1, preqs, ierr)
    call msg(1)
    if (k == 1) call @MPI_Wait(preq, st, ierr)
    if (k == 2) call @MPI_Waitall(1, preqs, sts, ierr)
  else
    call @MPI_Wait(req, st, ierr)
    call add(rbuf, 4)
  end if
end do
if (sender) call @MPI_Request_free(preq, ierr)
""",
    ("recv", "b"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 4, W, ierr)
  call msg(1)
else
  call @$F(rbuf, 4, MPI_INTEGER, partner, 4, W, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("recv", "nb"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 5, W, ierr)
  call msg(1)
else
  call @$F(rbuf, 4, MPI_INTEGER, partner, 5, W, req, ierr)
  call @MPI_Wait(req, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("recv", "pi"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 6, W, ierr)
  call @MPI_Send(sbuf2, 4, MPI_INTEGER, partner, 6, W, ierr)
  call msg(2)
else
  call @$F(rbuf, 4, MPI_INTEGER, partner, 6, W, preq, ierr)
  call @MPI_Start(preq, ierr)
  call @MPI_Wait(preq, st, ierr)
  call add(rbuf, 4)
  call @MPI_Startall(1, preqs, ierr)
  call @MPI_Waitall(1, preqs, sts, ierr)
  call add(rbuf, 4)
  call @MPI_Request_free(preq, ierr)
end if
""",
    ("sendrecv", "b", ""): """call @$F(sbuf, 4, MPI_INTEGER, partner, 7, rbuf, 4, MPI_INTEGER, partner, 7, W, st, ierr)
call msg(1)
call add(rbuf, 4)
""",
    ("sendrecv", "nb", ""): """call @$F(sbuf, 4, MPI_INTEGER, partner, 7, rbuf, 4, MPI_INTEGER, partner, 7, W, req, ierr)
call @MPI_Wait(req, st, ierr)
call msg(1)
call add(rbuf, 4)
""",
    ("sendrecv", "b", "replace"): """call @$F(sbuf, 4, MPI_INTEGER, partner, 8, partner, 8, W, st, ierr)
call msg(1)
call add(sbuf, 4)
""",
    ("sendrecv", "nb", "replace"): """call @$F(sbuf, 4, MPI_INTEGER, partner, 8, partner, 8, W, req, ierr)
call @MPI_Wait(req, st, ierr)
call msg(1)
call add(sbuf, 4)
""",
    ("probe", "b"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 9, W, ierr)
  call msg(1)
else
  call @$F(partner, 9, W, st, ierr)
  call @MPI_Get_count(st, MPI_INTEGER, n, ierr)
  call @MPI_Recv(rbuf, n, MPI_INTEGER, $SOURCE(st), 9, W, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("probe", "nb"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 10, W, ierr)
  call msg(1)
else
  flag = .false.
  do while (.not. flag)
    call @$F(partner, 10, W, flag, st, ierr)
  end do
  call @MPI_Recv(rbuf, 4, MPI_INTEGER, partner, 10, W, MPI_STATUS_IGNORE, ierr)
  call add(rbuf, 4)
end if
""",
    ("mprobe", "b"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 11, W, ierr)
  call msg(1)
else
  call @$F(partner, 11, W, msgh, st, ierr)
  call @MPI_Mrecv(rbuf, 4, MPI_INTEGER, msgh, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("mprobe", "nb"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 12, W, ierr)
  call msg(1)
else
  flag = .false.
  do while (.not. flag)
    call @$F(partner, 12, W, flag, msgh, st, ierr)
  end do
  call @MPI_Mrecv(rbuf, 4, MPI_INTEGER, msgh, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("mrecv", "b"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 13, W, ierr)
  call msg(1)
else
  call @MPI_Mprobe(partner, 13, W, msgh, st, ierr)
  call @$F(rbuf, 4, MPI_INTEGER, msgh, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("mrecv", "nb"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 14, W, ierr)
  call msg(1)
else
  call @MPI_Mprobe(partner, 14, W, msgh, st, ierr)
  call @$F(rbuf, 4, MPI_INTEGER, msgh, req, ierr)
  call @MPI_Wait(req, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("wait", "b"): F_POST4 + """do k = 1, 4
  if (mod(k, 2) == 1) call @$F(reqs(k), st, ierr)
  if (mod(k, 2) == 0) call @$F(reqs(k), MPI_STATUS_IGNORE, ierr)
end do
""" + F_DONE4,
    ("waitall", "b"): F_POST4 + "call @$F(4, reqs, sts, ierr)\n" + F_DONE4 + F_POST4 +
    "call @$F(4, reqs, MPI_STATUSES_IGNORE, ierr)\n" + F_DONE4,
    ("waitany", "b"): F_POST4 + """do k = 1, 5
  call @$F(4, reqs, idx, st, ierr)
  ! MPICH 4.0.2's own bindings: mpif.h returns MPI_UNDEFINED + 1 when no request is active, and
  ! mpi_f08 returns 0-based indices; so only "a request completed" and "none was active" are checked
  if (k == 5 .and. idx /= MPI_UNDEFINED .and. idx /= MPI_UNDEFINED + 1) errs = errs + 1
  if (k < 5 .and. (idx < 0 .or. idx > 4)) errs = errs + 1
end do
""" + F_DONE4,
    ("waitsome", "b"): F_POST4 + """done = 0
do while (done < 4)
  call @$F(4, reqs, outc, idxs, sts, ierr)
  if (outc == MPI_UNDEFINED) then
    errs = errs + 1
    exit
  end if
  done = done + outc
end do
""" + F_DONE4,
    ("test", "b"): F_POST4 + """do k = 1, 4
  flag = .false.
  do while (.not. flag)
    call @$F(reqs(k), flag, st, ierr)
  end do
end do
""" + F_DONE4,
    ("testall", "b"): F_POST4 + """flag = .false.
do while (.not. flag)
  call @$F(4, reqs, flag, sts, ierr)
end do
""" + F_DONE4,
    ("testany", "b"): F_POST4 + """done = 0
do while (done < 4)
  call @$F(4, reqs, idx, flag, st, ierr)
  if (flag .and. idx /= MPI_UNDEFINED) done = done + 1
end do
""" + F_DONE4,
    ("testsome", "b"): F_POST4 + """done = 0
do while (done < 4)
  call @$F(4, reqs, outc, idxs, sts, ierr)
  if (outc == MPI_UNDEFINED) then
    errs = errs + 1
    exit
  end if
  done = done + outc
end do
""" + F_DONE4,
    ("request_get_status", "b"): F_POST4 + """do k = 1, 4
  flag = .false.
  do while (.not. flag)
    call @$F(reqs(k), flag, st, ierr)
  end do
  call @MPI_Wait(reqs(k), st, ierr)
end do
""" + F_DONE4,
    ("start", "b", ""): """call @MPI_Recv_init(rbuf, 4, MPI_INTEGER, partner, 22, W, reqs(1), ierr)
call @MPI_Send_init(sbuf, 4, MPI_INTEGER, partner, 22, W, reqs(2), ierr)
call @$F(reqs(1), ierr)
call @$F(reqs(2), ierr)
call msg(1)
call @MPI_Waitall(2, reqs, sts, ierr)
call add(rbuf, 4)
call @MPI_Request_free(reqs(1), ierr)
call @MPI_Request_free(reqs(2), ierr)
""",
    ("start", "b", "all"): """call @MPI_Recv_init(rbuf, 4, MPI_INTEGER, partner, 22, W, reqs(1), ierr)
call @MPI_Send_init(sbuf, 4, MPI_INTEGER, partner, 22, W, reqs(2), ierr)
call @$F(2, reqs, ierr)
call msg(1)
call @MPI_Waitall(2, reqs, sts, ierr)
call add(rbuf, 4)
call @MPI_Request_free(reqs(1), ierr)
call @MPI_Request_free(reqs(2), ierr)
""",
    ("cancel", "b"): """call @MPI_Irecv(rbuf, 4, MPI_INTEGER, rank, 999, W, req, ierr)
call @$F(req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Test_cancelled(st, flag, ierr)
if (.not. flag) errs = errs + 1
""",
    ("request_free", "b"): """if (sender) then
  call @MPI_Isend(sbuf, 4, MPI_INTEGER, partner, 23, W, req, ierr)
  call msg(1)
  call @$F(req, ierr)
else
  call @MPI_Recv(rbuf, 4, MPI_INTEGER, partner, 23, W, st, ierr)
  call add(rbuf, 4)
end if
call @MPI_Barrier(W, ierr)
""",
    ("pcontrol", "b"): "call @$F(0)\ncall @$F(1)\n",
    ("rma", "b", "put"): """call @MPI_Win_fence(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, partner, d0, 4, MPI_INTEGER, gwin, ierr)
call @MPI_Win_fence(0, gwin, ierr)
call add(wbuf, 4)
""",
    ("rma", "nb", "put"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, partner, d4, 4, MPI_INTEGER, gwin, req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "accumulate"): """call @MPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, partner, d8, 4, MPI_INTEGER, MPI_SUM, gwin, ierr)
call @MPI_Win_flush(partner, gwin, ierr)
call @MPI_Win_unlock(partner, gwin, ierr)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "nb", "accumulate"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, partner, d8, 4, MPI_INTEGER, MPI_SUM, gwin, req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "get"): """call @MPI_Comm_group(W, wgrp, ierr)
pr(1) = partner
call @MPI_Group_incl(wgrp, 1, pr, pgrp, ierr)
call @MPI_Win_post(pgrp, 0, gwin, ierr)
call @MPI_Win_start(pgrp, 0, gwin, ierr)
call @$F(rbuf, 4, MPI_INTEGER, partner, d0, 4, MPI_INTEGER, gwin, ierr)
call @MPI_Win_complete(gwin, ierr)
call @MPI_Win_wait(gwin, ierr)
call add(rbuf, 4)
call @MPI_Group_free(pgrp, ierr)
call @MPI_Group_free(wgrp, ierr)
""",
    ("rma", "nb", "get"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(rbuf, 4, MPI_INTEGER, partner, d0, 4, MPI_INTEGER, gwin, req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call add(rbuf, 4)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "get_accumulate"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, rbuf, 4, MPI_INTEGER, partner, d12, 4, MPI_INTEGER, MPI_SUM, gwin, ierr)
call @MPI_Win_flush_all(gwin, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call add(rbuf, 4)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "nb", "get_accumulate"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, rbuf, 4, MPI_INTEGER, partner, d12, 4, MPI_INTEGER, MPI_SUM, gwin, req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call add(rbuf, 4)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "fetch_and_op"): """call @MPI_Win_lock(MPI_LOCK_SHARED, partner, 0, gwin, ierr)
call @$F(sbuf, rbuf, MPI_INTEGER, partner, d13, MPI_SUM, gwin, ierr)
call @MPI_Win_unlock(partner, gwin, ierr)
call add(rbuf, 1)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "compare_and_swap"): """call @MPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, gwin, ierr)
call @$F(sbuf, rbuf2, rbuf, MPI_INTEGER, partner, d14, gwin, ierr)
call @MPI_Win_unlock(partner, gwin, ierr)
call add(rbuf, 1)
call @MPI_Barrier(W, ierr)
""",
    "MPI_Win_create": """call @$F(wbuf2, wsize, 4, MPI_INFO_NULL, W, win, ierr)
call @MPI_Win_fence(0, win, ierr)
call @MPI_Win_fence(0, win, ierr)
call @MPI_Win_free(win, ierr)
""",
    "MPI_Win_allocate": """call @$F(wsize, 4, MPI_INFO_NULL, W, baseptr, win, ierr)
call @MPI_Win_fence(0, win, ierr)
call @MPI_Win_fence(0, win, ierr)
call @MPI_Win_free(win, ierr)
""",
    "MPI_Win_create_dynamic": """call @$F(MPI_INFO_NULL, W, win, ierr)
call @MPI_Win_free(win, ierr)
""",
}
F_T["MPI_Win_allocate_shared"] = F_T["MPI_Win_allocate"]

F_COLL = {
    "barrier": [("W", "")],
    "bcast": [("sbuf, 4, MPI_INTEGER, 0, W", "call add(sbuf, 4)")],
    "reduce": [("sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, 0, W", "if (rank == 0) call add(rbuf, 4)")],
    "allreduce": [("sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, W", "call add(rbuf, 4)"),
                  ("MPI_IN_PLACE, sbuf, 4, MPI_INTEGER, MPI_SUM, W", "call add(sbuf, 4)")],
    "reduce_scatter": [("sbuf, rbuf, cnts, MPI_INTEGER, MPI_SUM, W", "call add(rbuf, 2)")],
    "reduce_scatter_block": [("sbuf, rbuf, 2, MPI_INTEGER, MPI_SUM, W", "call add(rbuf, 2)")],
    "scan": [("sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, W", "call add(rbuf, 4)")],
    "exscan": [("sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, W", "if (rank > 0) call add(rbuf, 4)")],
    "gather": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, 0, W", "if (rank == 0) call add(rbuf, 8)")],
    "gatherv": [("sbuf, 2, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, 0, W", "if (rank == 0) call add(rbuf, 8)")],
    "scatter": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, 0, W", "call add(rbuf, 2)")],
    "scatterv": [("sbuf, cnts, dsp, MPI_INTEGER, rbuf, 2, MPI_INTEGER, 0, W", "call add(rbuf, 2)")],
    "allgather": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, W", "call add(rbuf, 8)")],
    "allgatherv": [("sbuf, 2, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, W", "call add(rbuf, 8)"),
                   ("MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, cnts, dsp, MPI_INTEGER, W", "call add(rbuf, 8)")],
    "alltoall": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, W", "call add(rbuf, 8)")],
    "alltoallv": [("sbuf, cnts, dsp, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, W", "call add(rbuf, 8)")],
    "alltoallw": [("sbuf, cnts, wdsp, tys, rbuf, cnts, wdsp, tys, W", "call add(rbuf, 8)")],
    "neighbor_allgather": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, ring", "call add(rbuf, 4)")],
    "neighbor_allgatherv": [("sbuf, 2, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, ring", "call add(rbuf, 4)")],
    "neighbor_alltoall": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, ring", "call add(rbuf, 4)")],
    "neighbor_alltoallv": [("sbuf, cnts, dsp, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, ring",
                            "call add(rbuf, 4)")],
    "neighbor_alltoallw": [("sbuf, cnts, adsp, tys, rbuf, cnts, adsp, tys, ring", "call add(rbuf, 4)")],
}
F_COLL_MODE = {
    "b": "call @$F($ARGS, ierr)\n",
    "nb": "call @$F($ARGS, req, ierr)\ncall @MPI_Wait(req, MPI_STATUS_IGNORE, ierr)\n",
    "pi": "call @$F($ARGS, MPI_INFO_NULL, preq, ierr)\ncall @MPI_Start(preq, ierr)\n"
          "call @MPI_Wait(preq, MPI_STATUS_IGNORE, ierr)\ncall @MPI_Request_free(preq, ierr)\n",
}


def template(row, lang):
    """The case text for a row (its routine still as $F), or None when its class has no template."""
    base = row.fn
    if row.cls in COLLECTIVE:
        forms = (C_COLL if lang == "c" else F_COLL)[row.cls]
        mode = (C_COLL_MODE if lang == "c" else F_COLL_MODE)[row.mode]
        return "".join(mode.replace("$ARGS", args) + (post + "\n" if post else "") for args, post in forms)
    table = C_T if lang == "c" else F_T
    for key in (base, (row.cls, row.mode, shape(row)), (row.cls, row.mode)):
        if key in table:
            return table[key]
    return None


# ---------------------------------------------------------------------------------------------
# Emitting the programs.
# ---------------------------------------------------------------------------------------------
class Counter:
    """Numbers the MPI routines a program calls; the class decides the extra counters."""

    def __init__(self, classes):
        self.names, self.classes = [], classes

    def index(self, name):
        if name not in self.names:
            self.names.append(name)
        return self.names.index(name)

    def extra(self, name):
        cls = self.classes.get(name[:-2] if name.endswith("_c") else name)
        if cls in COLLECTIVE:
            return "coll"
        if cls == "rma":
            return "rma"
        if cls == "pcontrol":
            return "markers"
        return None


def emit_c_calls(text, counter):
    def repl(m):
        name = m.group(1)
        k = counter.index(name)
        extra = counter.extra(name)
        return "(mx_n[%d]++, %s%s)(" % (k, "mx_%s++, " % extra if extra else "", name)
    return re.sub(r"@(MPI_\w+)\(", repl, text)


F_CALL = re.compile(r"^(\s*)(if \((.*?)\) )?call @(MPI_\w+)\((.*)$")


def emit_f_calls(text, counter):
    out = []
    for line in text.split("\n"):
        m = F_CALL.match(line)
        if not m:
            if "@MPI_" in line:
                raise SystemExit("gen_matrix: a counted Fortran call must start its line: " + line)
            out.append(line)
            continue
        ind, cond, name, rest = m.group(1), m.group(3), m.group(4), m.group(5)
        k = counter.index(name) + 1
        extra = counter.extra(name)
        body = ["mx_n(%d) = mx_n(%d) + 1" % (k, k)]
        if extra:
            body.append("mx_%s = mx_%s + 1" % (extra, extra))
        body.append("call %s(%s" % (name, rest))
        if cond:
            out.append("%sif (%s) then" % (ind, cond))
            out += [ind + "  " + b for b in body]
            out.append(ind + "end if")
        else:
            out += [ind + b for b in body]
    return "\n".join(out)


def indent(text, n):
    return "".join((" " * n + l if l.strip() else l) + "\n" for l in text.rstrip("\n").split("\n"))


C_HEAD = r"""/* matrix_c: generated by tests/matrix/gen_matrix.py from core/mpi_calls.tsv; do not edit. */
/* Calls every routine of the covered classes that this MPI has, counts its own calls, and writes
   the counts to matrix_counts.<rank>.txt for tests/matrix/matrix.py to compare with the tools. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define W MPI_COMM_WORLD
#define MSG(n) (mx_msgs += (n))
#define NROUTINES @NROUTINES@
static long mx_n[NROUTINES];
static const char* const mx_names[NROUTINES] = {@NAMES@};
static long mx_msgs, mx_coll, mx_rma, mx_markers;
static int rank, size, partner, sender, errs;
static unsigned long long chk;
static int sbuf[16], sbuf2[16], rbuf[16], rbuf2[16], wbuf[16], wbuf2[16];
static char bsend_buffer[65536];

/* A checksum of what a rank received, in the order received: the output the tools must not change. */
static void add(const int* a, int n) {
  for (int i = 0; i < n; ++i) chk = (chk * 31u + (unsigned)a[i] + 7u) % 1000000007u;
}

/* Each case sends values that name the rank, the case and the element. */
static void fill(int c) {
  for (int i = 0; i < 16; ++i) {
    sbuf[i] = rank * 1000 + c * 16 + i;
    sbuf2[i] = -sbuf[i];
    rbuf[i] = rbuf2[i] = -1;
  }
}

int main(int argc, char** argv) {
  MPI_Request req = MPI_REQUEST_NULL, preq = MPI_REQUEST_NULL, reqs[4];
  MPI_Status st, sts[4];
  MPI_Message msg;
  MPI_Win gwin, win;
  MPI_Group wgrp, pgrp;
  MPI_Comm ring;
  int flag, idx, outc, n, idxs[4];
  void* base;
  (void)base;
  @MPI_Init(&argc, &argv);
  @MPI_Comm_rank(W, &rank);
  @MPI_Comm_size(W, &size);
  if (size != @NP@) {
    if (rank == 0) fprintf(stderr, "matrix_c: run on @NP@ ranks, not %d\n", size);
    @MPI_Abort(W, 2);
  }
  partner = rank ^ 1;
  sender = rank % 2 == 0;
  @MPI_Buffer_attach(bsend_buffer, sizeof bsend_buffer); /* for the buffered sends; kept to the end */
  /* neighbours: the ranks on either side, as a distributed graph (MPICH 4.0.2's mpi_f08
     neighbour collectives reject a Cartesian communicator); MPI_UNWEIGHTED is a sentinel to test */
  int nb[2] = {(rank + size - 1) % size, (rank + 1) % size};
  @MPI_Dist_graph_create_adjacent(W, 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring);
  @MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, W, &gwin);
"""

C_TAIL = r"""
  @MPI_Win_free(&gwin);
  @MPI_Comm_free(&ring);
  unsigned long long all[@NP@];
  @MPI_Gather(&chk, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, W);
  int total_errs = 0;
  @MPI_Allreduce(&errs, &total_errs, 1, MPI_INT, MPI_SUM, W);
  if (rank == 0) {
    printf("matrix_c: @NCASES@ cases on %d ranks\n", size);
    for (int r = 0; r < size; ++r) printf("rank %d checksum %llu\n", r, all[r]);
    printf(total_errs ? "%d Errors\n" : "No Errors\n", total_errs);
  }
  char path[64];
  snprintf(path, sizeof path, "matrix_counts.%d.txt", rank);
  FILE* f = fopen(path, "w");
  if (!f) return 1;
  for (int i = 0; i < NROUTINES; ++i)
    if (mx_n[i]) fprintf(f, "%s %ld\n", mx_names[i], mx_n[i]);
  fprintf(f, "MPI_Finalize 1\nmessages %ld\ncollectives %ld\nrma %ld\nmarkers %ld\n", mx_msgs, mx_coll, mx_rma,
          mx_markers);
  fclose(f);
  @MPI_Finalize();
  return total_errs != 0;
}
"""

F_HEAD = """! matrix_@LANG@: generated by tests/matrix/gen_matrix.py from core/mpi_calls.tsv; do not edit.
! Calls every routine of the covered classes that this MPI has (@LANGNAME@), counts its own calls,
! and writes the counts to matrix_counts.<rank>.txt for tests/matrix/matrix.py.
program matrix_@LANG@
  @USE@
  implicit none
  @INCLUDE@
  integer, parameter :: NROUTINES = @NROUTINES@
  integer(8) :: mx_n(NROUTINES) = 0
  character(len=48) :: mx_names(NROUTINES)
  integer(8) :: mx_msgs = 0, mx_coll = 0, mx_rma = 0, mx_markers = 0
  integer(8) :: chk = 0, allchk(@NP@)
  integer :: rank, size, partner, errs = 0, total_errs, ierr, k, n, idx, outc, done, i
  integer :: idxs(4), nb(2), pr(1), cnts(4), dsp(4), wdsp(4)
  integer(kind=MPI_ADDRESS_KIND) :: adsp(4), wsize, d0 = 0, d4 = 4, d8 = 8, d12 = 12, d13 = 13, d14 = 14
  logical :: sender, flag
  integer, asynchronous :: sbuf(16), sbuf2(16), rbuf(16), rbuf2(16), wbuf(16), wbuf2(16)
  integer :: bsend_buffer(16384)
  character(len=64) :: path
@DECLS@
@NAMES@
  call @MPI_Init(ierr)
  call @MPI_Comm_rank(W, rank, ierr)
  call @MPI_Comm_size(W, size, ierr)
  if (size /= @NP@) then
    if (rank == 0) write (0, '(A,I0)') 'matrix_@LANG@: run on @NP@ ranks, not ', size
    call @MPI_Abort(W, 2, ierr)
  end if
  partner = ieor(rank, 1)
  sender = mod(rank, 2) == 0
  do i = 1, 4
    cnts(i) = 2
    dsp(i) = 2 * (i - 1)
    wdsp(i) = 8 * (i - 1)
    adsp(i) = 8 * (i - 1)
    tys(i) = MPI_INTEGER
  end do
  wsize = 64
  ! for the buffered sends; kept to the end
  call @MPI_Buffer_attach(bsend_buffer, 65536, ierr)
  ! neighbours: the ranks on either side, as a distributed graph (MPICH 4.0.2's mpi_f08
  ! neighbour collectives reject a Cartesian communicator); MPI_UNWEIGHTED is a sentinel to test
  nb(1) = modulo(rank - 1, size)
  nb(2) = modulo(rank + 1, size)
  call @MPI_Dist_graph_create_adjacent(W, 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED, MPI_INFO_NULL, .false., ring, ierr)
  call @MPI_Win_create(wbuf, wsize, 4, MPI_INFO_NULL, W, gwin, ierr)
"""

F_TAIL = """
  call @MPI_Win_free(gwin, ierr)
  call @MPI_Comm_free(ring, ierr)
  call @MPI_Gather(chk, 1, MPI_INTEGER8, allchk, 1, MPI_INTEGER8, 0, W, ierr)
  call @MPI_Allreduce(errs, total_errs, 1, MPI_INTEGER, MPI_SUM, W, ierr)
  if (rank == 0) then
    write (*, '(A,I0,A,I0,A)') 'matrix_@LANG@: ', @NCASES@, ' cases on ', size, ' ranks'
    do i = 1, size
      write (*, '(A,I0,A,I0)') 'rank ', i - 1, ' checksum ', allchk(i)
    end do
    if (total_errs == 0) then
      write (*, '(A)') 'No Errors'
    else
      write (*, '(I0,A)') total_errs, ' Errors'
    end if
  end if
  write (path, '(A,I0,A)') 'matrix_counts.', rank, '.txt'
  open (unit=11, file=trim(path), status='replace', action='write')
  do i = 1, NROUTINES
    if (mx_n(i) > 0) write (11, '(A,1X,I0)') trim(mx_names(i)), mx_n(i)
  end do
  write (11, '(A)') 'MPI_Finalize 1'
  write (11, '(A,I0)') 'messages ', mx_msgs
  write (11, '(A,I0)') 'collectives ', mx_coll
  write (11, '(A,I0)') 'rma ', mx_rma
  write (11, '(A,I0)') 'markers ', mx_markers
  close (11)
  call @MPI_Finalize(ierr)

contains

  ! A checksum of what a rank received, in the order received: the output the tools must not change.
  subroutine add(a, m)
    integer, intent(in) :: a(*)
    integer, intent(in) :: m
    integer :: j
    do j = 1, m
      chk = modulo(chk * 31_8 + int(a(j), 8) + 7_8, 1000000007_8)
    end do
  end subroutine add

  subroutine msg(m)
    integer, intent(in) :: m
    mx_msgs = mx_msgs + m
  end subroutine msg

  ! Each case sends values that name the rank, the case and the element.
  subroutine fill(c)
    integer, intent(in) :: c
    integer :: j
    do j = 1, 16
      sbuf(j) = rank * 1000 + c * 16 + j - 1
      sbuf2(j) = -sbuf(j)
      rbuf(j) = -1
      rbuf2(j) = -1
    end do
  end subroutine fill
end program matrix_@LANG@
"""

F_DECLS_OLD = """  integer :: req, preqs(1), reqs(4), msgh, gwin, win, wgrp, pgrp, ring, tys(4)
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4)
  integer(kind=MPI_ADDRESS_KIND) :: baseptr
"""
F_DECLS_F08 = """  type(MPI_Request) :: req, preqs(1), reqs(4)
  type(MPI_Message) :: msgh
  type(MPI_Win) :: gwin, win
  type(MPI_Group) :: wgrp, pgrp
  type(MPI_Comm) :: ring
  type(MPI_Datatype) :: tys(4)
  type(MPI_Status) :: st, sts(4)
  type(c_ptr) :: baseptr
"""


def fortran_names(names):
    # one DATA-free assignment per name: character arrays of fixed length, padded by the compiler
    return "\n".join("  mx_names(%d) = '%s'" % (i + 1, n) for i, n in enumerate(names))


def build_program(lang, cases, classes):
    """cases: [(routine, row, text)]. Returns the program's source."""
    counter = Counter(classes)
    body = []
    for i, (name, row, text) in enumerate(cases):
        code = text.replace("$F", name)
        if lang == "c":
            large = name.endswith("_c")
            # the large-count twins take MPI_Count counts and MPI_Aint displacements
            ct, dt = ("MPI_Count", "MPI_Aint") if large else ("int", "int")
            decl = ("%s cnts[4] = {2, 2, 2, 2};\n%s dsp[4] = {0, 2, 4, 6};\n%s wdsp[4] = {0, 8, 16, 24};\n"
                    "MPI_Aint adsp[4] = {0, 8, 16, 24};\n"
                    "MPI_Datatype tys[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};\n"
                    "(void)cnts; (void)dsp; (void)wdsp; (void)adsp; (void)tys;\n") % (ct, dt, dt)
            body.append("  /* case %d: %s (%s, %s) */\n  {\n    fill(%d);\n%s%s  }\n" % (
                i, name, row.cls, row.mode, i, indent(decl, 4), indent(emit_c_calls(code, counter), 4)))
        else:
            # one persistent request, also passed as an array of one to Startall / Waitall
            code = re.sub(r"\bpreq\b", "preqs(1)", code)
            if lang == "f08":
                code = re.sub(r"\$SOURCE\((\w+)\)", r"\1%MPI_SOURCE", code)
            else:
                code = re.sub(r"\$SOURCE\((\w+)\)", r"\1(MPI_SOURCE)", code)
            body.append("  ! case %d: %s (%s, %s)\n  call fill(%d)\n%s" % (
                i, name, row.cls, row.mode, i, indent(emit_f_calls(code, counter), 2)))
    if lang == "c":
        head = emit_c_calls(C_HEAD, counter)
        tail = emit_c_calls(C_TAIL, counter)
        src = head + "\n".join(body) + tail
        names = ", ".join('"%s"' % n for n in counter.names)
    else:
        head = emit_f_calls(F_HEAD, counter)
        tail = emit_f_calls(F_TAIL, counter)
        src = head + "\n".join(body) + tail
        names = fortran_names(counter.names)
        use = {"mpif": "", "usempi": "use mpi", "f08": "use mpi_f08\n  use, intrinsic :: iso_c_binding, only: c_ptr"}[lang]
        src = src.replace("@USE@", use).replace("@INCLUDE@", "include 'mpif.h'" if lang == "mpif" else "")
        decls = (F_DECLS_F08 if lang == "f08" else F_DECLS_OLD)
        decls += "  %s, parameter :: W = MPI_COMM_WORLD\n" % ("type(MPI_Comm)" if lang == "f08" else "integer")
        src = src.replace("@DECLS@", decls).replace("@LANGNAME@", LANG_NAMES[lang])
        # The parameter W must be declared before use: move it into the declarations (done above).
    src = src.replace("@NAMES@", names).replace("@NROUTINES@", str(len(counter.names)))
    src = src.replace("@NP@", str(NP)).replace("@NCASES@", str(len(cases))).replace("@LANG@", lang)
    return src, counter.names


def f08_exported(libs):
    """The mpi_x_f08_ / mpi_x_f08ts_ entry points the MPI's mpi_f08 libraries export, as C names' lower case."""
    names = set()
    for lib in libs:
        if not lib or not os.path.exists(lib):
            continue
        out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
        for line in out.split("\n"):
            sym = line.rsplit(" ", 1)[-1]
            m = re.match(r"^mpi_(\w+?)_f08(ts)?_$", sym)
            if m:
                names.add("mpi_" + m.group(1))
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--table", required=True)
    ap.add_argument("--wrapped", required=True, help="<build>/core/generated/wrapped.txt")
    ap.add_argument("--exported", required=True, help="<build>/core/generated/exported_symbols.txt")
    ap.add_argument("--f08-library", action="append", default=[], help="a library exporting mpi_x_f08_")
    ap.add_argument("--mpi", default="")
    ap.add_argument("--outdir", required=True)
    a = ap.parse_args()
    rows = read_table(a.table)
    classes = {r.fn: r.cls for r in rows}
    wrapped = set(open(a.wrapped).read().split())
    exported = set(open(a.exported).read().split())
    f08 = f08_exported(a.f08_library)
    cases = {lang: [] for lang in LANGS}
    skipped = {lang: {} for lang in LANGS}  # routine -> reason
    for row in rows:
        if row.cls not in COVERED:
            continue
        if "partitions" in row.roles:
            for lang in LANGS:
                skipped[lang][row.fn] = "partitioned communication (MPI-4) is left out"
            continue
        for lang in LANGS:
            text = template(row, lang)
            variants = [row.fn] + ([row.fn + "_c"] if lang == "c" else [])
            for name in variants:
                if lang == "c":
                    have = name in wrapped and "P" + name in exported
                    why = "not in %s (no P%s)" % (a.mpi, name)
                elif lang in ("mpif", "usempi"):
                    have = name.lower() + "_" in wrapped
                    why = "not in %s's Fortran library (no p%s_)" % (a.mpi, name.lower())
                else:
                    have = name.lower() in f08
                    why = "not in %s's mpi_f08 library (no %s_f08_)" % (a.mpi, name.lower())
                if not have:
                    if name == row.fn:  # a missing large-count twin is no news (MPI-3.1 has none)
                        skipped[lang][name] = why
                    continue
                if text is None:
                    skipped[lang][name] = "no template for class %s mode %s" % (row.cls, row.mode)
                    continue
                cases[lang].append((name, row, text))
    os.makedirs(a.outdir, exist_ok=True)
    cov = {"mpi": a.mpi, "ranks": NP, "languages": {}}
    tested_lines = []
    for lang in LANGS:
        src, called = build_program(lang, cases[lang], classes)
        ext = "c" if lang == "c" else "f90"
        path = os.path.join(a.outdir, "matrix_%s.%s" % (lang, ext))
        # Rewrite only when changed, so an unchanged table does not rebuild the programs.
        old = open(path).read() if os.path.exists(path) else None
        if old != src:
            with open(path, "w") as f:
                f.write(src)
        targets = sorted({n for n in called if (n[:-2] if n.endswith("_c") else n) in classes and
                          classes[n[:-2] if n.endswith("_c") else n] in COVERED})
        for name in list(skipped[lang]):
            if name in targets:  # called by another routine's template after all
                del skipped[lang][name]
        tested_lines += ["%s %s" % (lang, n) for n in targets]
        cov["languages"][lang] = {"name": LANG_NAMES[lang], "program": "matrix_" + lang,
                                  "cases": [n for n, _, _ in cases[lang]], "tested": targets,
                                  "skipped": skipped[lang]}
    left = {}
    for row in rows:
        if row.cls in LEFT_OUT:
            left[row.fn] = LEFT_OUT[row.cls]
    cov["left_out"] = left
    with open(os.path.join(a.outdir, "tested.txt"), "w") as f:
        f.write("# Routines the conformance matrix calls, per language (c, mpif, usempi, f08); generated by "
                "tests/matrix/gen_matrix.py\n")
        f.write("\n".join(tested_lines) + "\n")
    with open(os.path.join(a.outdir, "coverage.json"), "w") as f:
        json.dump(cov, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
