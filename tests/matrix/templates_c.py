"""The conformance matrix's C templates: one per class (and mode, or shape), the program's head and tail.

Read by gen_matrix.py, whose docstring says what `@MPI_X(`, `$F`, `MSG(n)` mean in them."""

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
