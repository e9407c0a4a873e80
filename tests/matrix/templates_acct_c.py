"""The message-accounting programs' C templates: one per class (and mode, or shape), the head and tail.

Read by gen_accounting.py, whose docstring says what the markup means (`@MPI_X(`, `$F`, `MSG(n)`,
`$STATUS`, `$READY`) and which variables a template sees."""

# Each case is (before the iterations, one iteration, after them), run once per communicator.
# W is MPI_COMM_WORLD; cm the communicator of the round; `sender` its even rank of a pair,
# `partner` the other; src/rtag what this iteration's receives name (wildcards in some),
# csrc/ctag what a persistent receive names (wildcards on the reversed communicator).
A_C = {
    ("send", "b"): ("", """if (!sender) @MPI_Irecv(rbuf, 4, MPI_INT, src, rtag, cm, &req);
$READY @MPI_Barrier(cm); /* the receive is posted: the ready send may start */
if (sender) {
  @$F(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1);
  @$F(sbuf, 4, MPI_INT, MPI_PROC_NULL, tg, cm); /* moves nothing */
} else { wait1(&req); add(rbuf, 4); }
""", ""),
    ("send", "nb"): ("", """if (!sender) @MPI_Irecv(rbuf, 4, MPI_INT, src, rtag, cm, &req);
$READY @MPI_Barrier(cm);
if (sender) {
  @$F(sbuf, 4, MPI_INT, partner, tg, cm, &req); MSG(1);
  @$F(sbuf, 4, MPI_INT, MPI_PROC_NULL, tg, cm, &reqs[0]);
  wait1(&reqs[0]);
}
wait1(&req);
if (!sender) add(rbuf, 4);
""", ""),
    # Started by MPI_Start and MPI_Startall in turn; the second request sends to MPI_PROC_NULL.
    ("send", "pi"): ("""if (sender) {
  @$F(sbuf, 4, MPI_INT, partner, tg, cm, &pq[0]);
  @$F(sbuf, 4, MPI_INT, MPI_PROC_NULL, tg, cm, &pq[1]);
}
""", """if (!sender) @MPI_Irecv(rbuf, 4, MPI_INT, src, rtag, cm, &req);
$READY @MPI_Barrier(cm);
if (sender) {
  if (k % 2) @MPI_Startall(2, pq); else { @MPI_Start(&pq[0]); @MPI_Start(&pq[1]); }
  MSG(1);
  wait1(&pq[0]); wait1(&pq[1]);
} else { wait1(&req); add(rbuf, 4); }
""", """if (sender) { @MPI_Request_free(&pq[0]); @MPI_Request_free(&pq[1]); }
"""),
    # Partitioned (MPI-4): two partitions of two ints, one message a round; source and tag are never wild.
    ("send", "pi", "partitioned"): ("""if (sender) @$F(sbuf, 2, 2, MPI_INT, partner, tg, cm, MPI_INFO_NULL, &pq[0]);
else @MPI_Precv_init(rbuf, 2, 2, MPI_INT, partner, tg, cm, MPI_INFO_NULL, &pq[0]);
""", """if (k % 2) @MPI_Startall(1, pq); else @MPI_Start(&pq[0]);
if (sender) { @MPI_Pready(1, pq[0]); @MPI_Pready(0, pq[0]); MSG(1); }
if (!sender) @MPI_Parrived(pq[0], 1, &flag); /* once: polling here spins ~1000 times a message */
wait1(&pq[0]);
if (!sender) add(rbuf, 4);
""", """@MPI_Request_free(&pq[0]);
"""),
    ("recv", "pi", "partitioned"): ("""if (sender) @MPI_Psend_init(sbuf, 2, 2, MPI_INT, partner, tg, cm, MPI_INFO_NULL, &pq[0]);
else @$F(rbuf, 2, 2, MPI_INT, partner, tg, cm, MPI_INFO_NULL, &pq[0]);
""", """if (k % 2) @MPI_Startall(1, pq); else @MPI_Start(&pq[0]);
if (sender) { @MPI_Pready(0, pq[0]); @MPI_Pready(1, pq[0]); MSG(1); }
wait1(&pq[0]);
if (!sender) add(rbuf, 4);
""", """@MPI_Request_free(&pq[0]);
"""),
    ("recv", "b"): ("", """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
else {
  @$F(rbuf, 4, MPI_INT, src, rtag, cm, $STATUS); add(rbuf, 4);
  @$F(rbuf2, 4, MPI_INT, MPI_PROC_NULL, rtag, cm, $STATUS);
}
""", ""),
    ("recv", "nb"): ("", """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
else {
  @$F(rbuf, 4, MPI_INT, src, rtag, cm, &req);
  @$F(rbuf2, 4, MPI_INT, MPI_PROC_NULL, rtag, cm, &reqs[0]);
  wait1(&req); wait1(&reqs[0]); add(rbuf, 4);
}
""", ""),
    ("recv", "pi"): ("""if (!sender) {
  @$F(rbuf, 4, MPI_INT, csrc, ctag, cm, &pq[0]);
  @$F(rbuf2, 4, MPI_INT, MPI_PROC_NULL, ctag, cm, &pq[1]);
}
""", """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
else {
  if (k % 2) @MPI_Startall(2, pq); else { @MPI_Start(&pq[0]); @MPI_Start(&pq[1]); }
  wait1(&pq[0]); wait1(&pq[1]); add(rbuf, 4);
}
""", """if (!sender) { @MPI_Request_free(&pq[0]); @MPI_Request_free(&pq[1]); }
"""),
    # Both ways, then one way (the other side's half names MPI_PROC_NULL).
    ("sendrecv", "b", ""): ("", """@$F(sbuf, 4, MPI_INT, partner, tg, rbuf, 4, MPI_INT, src, rtag, cm, $STATUS);
MSG(1); add(rbuf, 4);
if (sender) { @$F(sbuf, 4, MPI_INT, partner, tg, rbuf2, 4, MPI_INT, MPI_PROC_NULL, rtag, cm, $STATUS); MSG(1); }
else { @$F(sbuf, 4, MPI_INT, MPI_PROC_NULL, tg, rbuf2, 4, MPI_INT, src, rtag, cm, $STATUS); add(rbuf2, 4); }
""", ""),
    # MPI_Isendrecv(_replace) names its partner and tag: MPICH 4.0.2 completes it with an empty
    # status (source 0, tag 0, count 0), so neither the program nor a tool can learn the source or
    # tag of a wildcard one (docs/liblog.md, "Messages MPI does not describe").
    ("sendrecv", "nb", ""): ("", """@$F(sbuf, 4, MPI_INT, partner, tg, rbuf, 4, MPI_INT, partner, tg, cm, &req);
wait1(&req); MSG(1); add(rbuf, 4);
if (sender) { @$F(sbuf, 4, MPI_INT, partner, tg, rbuf2, 4, MPI_INT, MPI_PROC_NULL, rtag, cm, &req); MSG(1); }
else @$F(sbuf, 4, MPI_INT, MPI_PROC_NULL, tg, rbuf2, 4, MPI_INT, partner, tg, cm, &req);
wait1(&req);
if (!sender) add(rbuf2, 4);
""", ""),
    ("sendrecv", "b", "replace"): ("", """@$F(sbuf, 4, MPI_INT, partner, tg, src, rtag, cm, $STATUS);
MSG(1); add(sbuf, 4);
if (sender) { @$F(sbuf, 4, MPI_INT, partner, tg, MPI_PROC_NULL, rtag, cm, $STATUS); MSG(1); }
else { @$F(sbuf, 4, MPI_INT, MPI_PROC_NULL, tg, src, rtag, cm, $STATUS); add(sbuf, 4); }
""", ""),
    ("sendrecv", "nb", "replace"): ("", """@$F(sbuf, 4, MPI_INT, partner, tg, partner, tg, cm, &req);
wait1(&req); MSG(1); add(sbuf, 4);
if (sender) { @$F(sbuf, 4, MPI_INT, partner, tg, MPI_PROC_NULL, rtag, cm, &req); MSG(1); }
else @$F(sbuf, 4, MPI_INT, MPI_PROC_NULL, tg, partner, tg, cm, &req);
wait1(&req);
if (!sender) add(sbuf, 4);
""", ""),
    # The receive names what the probe found.
    ("probe", "b"): ("", """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
else {
  @$F(MPI_PROC_NULL, rtag, cm, &st);
  @$F(src, rtag, cm, &st); @MPI_Get_count(&st, MPI_INT, &n);
  @MPI_Recv(rbuf, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, cm, $STATUS); add(rbuf, 4);
}
""", ""),
    ("probe", "nb"): ("", """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
@MPI_Barrier(cm); /* the message is on its way: few polls (each one a state in the log) */
if (!sender) {
  @$F(MPI_PROC_NULL, rtag, cm, &flag, &st);
  for (flag = 0; !flag;) @$F(src, rtag, cm, &flag, &st);
  @MPI_Recv(rbuf, 4, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, cm, $STATUS); add(rbuf, 4);
}
""", ""),
    # A probe of MPI_PROC_NULL (MPI_MESSAGE_NO_PROC, received later, moving nothing) before the
    # real one: a tool must tell the probed messages apart, not take them in order.
    ("mprobe", "b"): ("", """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
else {
  @$F(MPI_PROC_NULL, rtag, cm, &msg0, &st);
  @$F(src, rtag, cm, &msg, &st);
  @MPI_Mrecv(rbuf2, 4, MPI_INT, &msg0, $STATUS);
  if (k % 2) { @MPI_Imrecv(rbuf, 4, MPI_INT, &msg, &req); wait1(&req); }
  else @MPI_Mrecv(rbuf, 4, MPI_INT, &msg, $STATUS);
  add(rbuf, 4);
}
""", ""),
    ("mprobe", "nb"): ("", """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
@MPI_Barrier(cm); /* few polls */
if (!sender) {
  @$F(MPI_PROC_NULL, rtag, cm, &flag, &msg0, &st);
  for (flag = 0; !flag;) @$F(src, rtag, cm, &flag, &msg, &st);
  @MPI_Mrecv(rbuf2, 4, MPI_INT, &msg0, $STATUS);
  if (k % 2) { @MPI_Imrecv(rbuf, 4, MPI_INT, &msg, &req); wait1(&req); }
  else @MPI_Mrecv(rbuf, 4, MPI_INT, &msg, $STATUS);
  add(rbuf, 4);
}
""", ""),
    ("mrecv", "b"): ("", """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
@MPI_Barrier(cm); /* few polls */
if (!sender) {
  @MPI_Mprobe(MPI_PROC_NULL, rtag, cm, &msg0, &st);
  if (k % 2) for (flag = 0; !flag;) @MPI_Improbe(src, rtag, cm, &flag, &msg, &st);
  else @MPI_Mprobe(src, rtag, cm, &msg, &st);
  @$F(rbuf2, 4, MPI_INT, &msg0, $STATUS);
  @$F(rbuf, 4, MPI_INT, &msg, $STATUS); add(rbuf, 4);
}
""", ""),
    ("mrecv", "nb"): ("", """if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
@MPI_Barrier(cm); /* few polls */
if (!sender) {
  @MPI_Mprobe(MPI_PROC_NULL, rtag, cm, &msg0, &st);
  if (k % 2) for (flag = 0; !flag;) @MPI_Improbe(src, rtag, cm, &flag, &msg, &st);
  else @MPI_Mprobe(src, rtag, cm, &msg, &st);
  @$F(rbuf2, 4, MPI_INT, &msg0, &reqs[0]);
  @$F(rbuf, 4, MPI_INT, &msg, &req);
  wait1(&req); wait1(&reqs[0]); add(rbuf, 4);
}
""", ""),
    ("start", "b", ""): ("""if (sender) @MPI_Send_init(sbuf, 4, MPI_INT, partner, tg, cm, &pq[0]);
else @MPI_Recv_init(rbuf, 4, MPI_INT, csrc, ctag, cm, &pq[0]);
""", """@$F(&pq[0]);
if (sender) MSG(1);
wait1(&pq[0]);
if (!sender) add(rbuf, 4);
""", """@MPI_Request_free(&pq[0]);
"""),
    ("start", "b", "all"): ("""if (sender) @MPI_Send_init(sbuf, 4, MPI_INT, partner, tg, cm, &pq[0]);
else @MPI_Recv_init(rbuf, 4, MPI_INT, csrc, ctag, cm, &pq[0]);
""", """@$F(1, pq);
if (sender) MSG(1);
wait1(&pq[0]);
if (!sender) add(rbuf, 4);
""", """@MPI_Request_free(&pq[0]);
"""),
    # A receive no one matches, cancelled; then a persistent receive cancelled before anything
    # is sent (the barrier), started again and receiving: one message a round.
    ("cancel", "b"): ("""if (!sender) @MPI_Recv_init(rbuf, 4, MPI_INT, csrc, ctag, cm, &pq[0]);
""", """@MPI_Irecv(rbuf2, 4, MPI_INT, partner, 30000, cm, &req); /* no one sends tag 30000 */
@$F(&req);
if (ignore) wait1(&req);
else { @MPI_Wait(&req, &st); @MPI_Test_cancelled(&st, &flag); if (!flag) ++errs; }
if (!sender) { @MPI_Start(&pq[0]); @$F(&pq[0]); wait1(&pq[0]); }
@MPI_Barrier(cm);
if (sender) { @MPI_Send(sbuf, 4, MPI_INT, partner, tg, cm); MSG(1); }
else { @MPI_Start(&pq[0]); wait1(&pq[0]); add(rbuf, 4); }
""", """if (!sender) @MPI_Request_free(&pq[0]);
"""),
    # The send's request freed at once: its message still goes.
    ("request_free", "b"): ("", """if (sender) { @MPI_Isend(sbuf, 4, MPI_INT, partner, tg, cm, &req); MSG(1); @$F(&req); }
else { @MPI_Recv(rbuf, 4, MPI_INT, src, rtag, cm, $STATUS); add(rbuf, 4); }
@MPI_Barrier(cm); /* the freed send is done before its buffer is refilled */
""", ""),
}


A_C_HEAD = r"""/* acct_c: generated by tests/matrix/gen_accounting.py from core/mpi_calls.tsv; do not edit. */
/* Moves point-to-point messages with every routine of the table that moves one, on MPI_COMM_WORLD
   and on a communicator whose ranks are reversed; counts each message by its destination's world
   rank; writes the counts to matrix_counts.<rank>.txt for tests/matrix/accounting.py. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NROUTINES @NROUTINES@
#define MSG(n) (mx_msgs += (n), mx_pair[wpartner] += (n))
static long mx_n[NROUTINES];
static const char* const mx_names[NROUTINES] = {@NAMES@};
static long mx_msgs, mx_coll, mx_rma, mx_markers, mx_pair[@NP@];
static MPI_Comm cm, comms[2];
static int rank, size, partner, sender, wpartner, src, rtag, csrc, ctag, tg, k, ignore, errs;
static MPI_Status st, sts[4], *stp, *stsp;
static unsigned long long chk;
static int sbuf[16], rbuf[16], rbuf2[16];
static char bsend_buffer[65536];
static const char* only;

/* ACCT_ONLY=<routine>[,<routine>...] runs those cases alone (accounting.py --each: which case a
   count misses, or which cases together). */
static int wanted(const char* name) {
  if (!only || !*only) return 1;
  size_t n = strlen(name);
  for (const char* p = strstr(only, name); p; p = strstr(p + 1, name))
    if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
  return 0;
}

/* A checksum of what a rank received, in the order received: the output the tools must not change. */
static void add(const int* a, int n) {
  for (int i = 0; i < n; ++i) chk = (chk * 31u + (unsigned)a[i] + 7u) % 1000000007u;
}

/* Each case sends values that name the rank, the case and the element. */
static void fill(int c) {
  for (int i = 0; i < 16; ++i) {
    sbuf[i] = rank * 1000 + c * 16 + i;
    rbuf[i] = rbuf2[i] = -1;
  }
}

/* Makes communicator c current (0: MPI_COMM_WORLD, 1: the reversed one) for a case of tag t:
   pairs of its ranks (0,1) (2,3), the even one sending, and the partner's world rank. */
static void use_comm(int c, int t) {
  int crank;
  MPI_Group g, wg;
  cm = comms[c];
  tg = t;
  @MPI_Comm_rank(cm, &crank);
  partner = crank ^ 1;
  sender = crank % 2 == 0;
  @MPI_Comm_group(cm, &g);
  @MPI_Comm_group(MPI_COMM_WORLD, &wg);
  @MPI_Group_translate_ranks(g, 1, &partner, wg, &wpartner);
  @MPI_Group_free(&g);
  @MPI_Group_free(&wg);
  /* a persistent receive names its source and tag once: named on WORLD, wildcards on the other */
  csrc = c ? MPI_ANY_SOURCE : partner;
  ctag = c ? MPI_ANY_TAG : tg;
}

/* Iteration kk: a status (even) or MPI_STATUS(ES)_IGNORE (odd); receives name the
   partner and tag (0), MPI_ANY_SOURCE (1), both wildcards (2), MPI_ANY_TAG (3). */
static void iteration(int kk) {
  k = kk;
  ignore = k % 2;
  stp = ignore ? MPI_STATUS_IGNORE : &st;
  stsp = ignore ? MPI_STATUSES_IGNORE : sts;
  src = k % 4 == 1 || k % 4 == 2 ? MPI_ANY_SOURCE : partner;
  rtag = k % 4 >= 2 ? MPI_ANY_TAG : tg;
}

/* Completes one request: MPI_Wait in iterations 0 and 1, MPI_Waitall in 2 and 3. */
static void wait1(MPI_Request* r) {
  if (k % 4 < 2) @MPI_Wait(r, stp);
  else @MPI_Waitall(1, r, stsp);
}

int main(int argc, char** argv) {
  MPI_Request req = MPI_REQUEST_NULL, reqs[4], pq[2];
  MPI_Message msg, msg0;
  int flag, n;
  only = getenv("ACCT_ONLY");
  @MPI_Init(&argc, &argv);
  @MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  @MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != @NP@) {
    if (rank == 0) fprintf(stderr, "acct_c: run on @NP@ ranks, not %d\n", size);
    @MPI_Abort(MPI_COMM_WORLD, 2);
  }
  @MPI_Buffer_attach(bsend_buffer, sizeof bsend_buffer); /* for the buffered sends; kept to the end */
  comms[0] = MPI_COMM_WORLD;
  /* key size - rank: comm rank = size - 1 - world rank, so comm and world pairs differ */
  @MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]);
"""

A_C_CASE = """  /* case @I@: @NAME@ (@CLASS@, @MODE@) */
  for (int c = 0; c < 2 && wanted("@NAME@"); ++c) {
    use_comm(c, @TAG@);
    fill(@I@);
@PRE@    for (int kk = 0; kk < (c ? @ITER1@ : @ITER0@); ++kk) {
      iteration(kk);
@BODY@    }
@POST@  }
"""

A_C_TAIL = r"""
  @MPI_Comm_free(&comms[1]);
  unsigned long long all[@NP@];
  @MPI_Gather(&chk, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  int total_errs = 0;
  @MPI_Allreduce(&errs, &total_errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("acct_c: @NCASES@ cases on %d ranks\n", size);
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
  for (int r = 0; r < size; ++r)
    if (mx_pair[r]) fprintf(f, "pair %d %d %ld\n", rank, r, mx_pair[r]);
  fclose(f);
  @MPI_Finalize();
  return total_errs != 0;
}
"""
