/* Conformance test: point-to-point semantics must be unchanged by an interposed profiling tool. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int left, right;

/*
 * GCC 11+ mistakes MPICH's MPI_STATUSES_IGNORE, the constant (MPI_Status *)1,
 * for a pointer to a zero-sized array and warns under -Wstringop-overflow,
 * which is on by default. The argument is valid MPI, so only these wrappers
 * silence it.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static void waitall_ignoring_statuses(int count, MPI_Request *requests) {
  MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
}

static void testall_ignoring_statuses(int count, MPI_Request *requests, int *flag) {
  MPI_Testall(count, requests, flag, MPI_STATUSES_IGNORE);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* Rank 0 receives one message from every other rank through each kind of wildcard. */
static void test_wildcards(void) {
  /* A private communicator per round keeps wildcard receives from matching another round's traffic. */
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);

  long long value = 0;
  int ok = 1;
  if (rank == 0) {
    int received_from = 0;
    for (int i = 0; i < NRANKS - 1; i++) {
      int buffer[8] = {0};
      MPI_Status status;
      MPI_Recv(buffer, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &status);
      int source = status.MPI_SOURCE, count = -1, bytes = -1, elements = -1;
      MPI_Get_count(&status, MPI_INT, &count);
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      MPI_Get_elements(&status, MPI_INT, &elements);
      if (source < 1 || source >= NRANKS || status.MPI_TAG != 100 + source || count != source + 1 ||
          bytes != 4 * (source + 1) || elements != count || (received_from & (1 << source))) {
        ok = 0;
        continue;
      }
      received_from |= 1 << source;
      for (int k = 0; k < count; k++)
        if (buffer[k] != source * 10 + k) ok = 0;
      /* Arrival order is up to the implementation, so only an order-independent sum is reported. */
      value += source * 100 + count;
    }
    ok &= received_from == 0xE;
  } else {
    int buffer[8];
    for (int k = 0; k <= rank; k++) buffer[k] = rank * 10 + k;
    MPI_Send(buffer, rank + 1, MPI_INT, 0, 100 + rank, comm);
    value = rank + 1;
  }
  check("wildcard_any_source_any_tag", value, ok);
  MPI_Comm_free(&comm);

  /* Each wildcard alone: fixed source with MPI_ANY_TAG, then MPI_ANY_SOURCE with a fixed tag. */
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  value = 0;
  ok = 1;
  if (rank == 0) {
    int x = -1;
    MPI_Status status;
    MPI_Recv(&x, 1, MPI_INT, 2, MPI_ANY_TAG, comm, &status);
    ok &= status.MPI_SOURCE == 2 && status.MPI_TAG == 202 && x == 2002;
    value += x;
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 201, comm, &status);
    ok &= status.MPI_SOURCE == 1 && status.MPI_TAG == 201 && x == 2001;
    value += x;
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &status);
    ok &= status.MPI_SOURCE == 3 && status.MPI_TAG == 203 && x == 2003;
    value += x;
  } else {
    int x = 2000 + rank;
    MPI_Send(&x, 1, MPI_INT, 0, 200 + rank, comm);
    value = x;
  }
  check("wildcard_single", value, ok);

  MPI_Comm_free(&comm);
}

/* A 6-byte message is not a whole number of ints; MPI_Get_count must say so. */
static void test_get_count_undefined(void) {
  char out[6] = {1, 2, 3, 4, 5, 6}, in[8] = {0};
  MPI_Status status;
  MPI_Sendrecv(out, 6, MPI_BYTE, right, 11, in, 8, MPI_BYTE, left, 11, MPI_COMM_WORLD, &status);
  int as_int = 0, as_short = 0, as_byte = 0;
  MPI_Get_count(&status, MPI_INT, &as_int);
  MPI_Get_count(&status, MPI_SHORT, &as_short);
  MPI_Get_count(&status, MPI_BYTE, &as_byte);
  int ok = as_int == MPI_UNDEFINED && as_short == 3 && as_byte == 6 && memcmp(in, out, 6) == 0;
  check("get_count_undefined", as_short * 10 + as_byte, ok);
}

static void test_status_ignore(void) {
  int out = rank * 7 + 1, in = -1;
  MPI_Request request;
  MPI_Isend(&out, 1, MPI_INT, right, 12, MPI_COMM_WORLD, &request);
  MPI_Recv(&in, 1, MPI_INT, left, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  int ok = in == left * 7 + 1 && request == MPI_REQUEST_NULL;

  int in2 = -1, out2 = rank * 5 + 2;
  MPI_Request requests[2];
  MPI_Irecv(&in2, 1, MPI_INT, right, 13, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(&out2, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &requests[1]);
  waitall_ignoring_statuses(2, requests);
  ok &= in2 == right * 5 + 2 && requests[0] == MPI_REQUEST_NULL && requests[1] == MPI_REQUEST_NULL;
  check("status_ignore", in * 100 + in2, ok);
}

static void test_persistent(void) {
  int out = 0, in = -1;
  MPI_Request requests[2];
  MPI_Recv_init(&in, 1, MPI_INT, left, 20, MPI_COMM_WORLD, &requests[0]);
  MPI_Send_init(&out, 1, MPI_INT, right, 20, MPI_COMM_WORLD, &requests[1]);

  int ok = 1;
  long long sum = 0;
  for (int round = 0; round < 3; round++) {
    out = rank * 10 + round;
    MPI_Startall(2, requests);
    MPI_Status statuses[2];
    MPI_Waitall(2, requests, statuses);
    ok &= in == left * 10 + round && statuses[0].MPI_SOURCE == left && statuses[0].MPI_TAG == 20;
    /* Completed persistent requests stay allocated but inactive. */
    ok &= requests[0] != MPI_REQUEST_NULL && requests[1] != MPI_REQUEST_NULL;
    sum += in;
  }
  for (int round = 3; round < 5; round++) {
    out = rank * 10 + round;
    MPI_Start(&requests[0]);
    MPI_Start(&requests[1]);
    MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
    MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    ok &= in == left * 10 + round;
    sum += in;
  }

  /* Testing an inactive persistent request completes at once. */
  int flag = 0;
  MPI_Test(&requests[0], &flag, MPI_STATUS_IGNORE);
  ok &= flag == 1 && requests[0] != MPI_REQUEST_NULL;

  MPI_Request_free(&requests[0]);
  MPI_Request_free(&requests[1]);
  ok &= requests[0] == MPI_REQUEST_NULL && requests[1] == MPI_REQUEST_NULL;
  check("persistent", sum, ok);
}

static void test_cancel(void) {
  int never = -1;
  MPI_Request request;
  /* Nobody sends tag 999, so the cancel must succeed. */
  MPI_Irecv(&never, 1, MPI_INT, right, 999, MPI_COMM_WORLD, &request);
  MPI_Cancel(&request);
  MPI_Status status;
  MPI_Wait(&request, &status);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  check("cancel_irecv", cancelled, cancelled == 1 && never == -1 && request == MPI_REQUEST_NULL);
}

/* Completion calls on arrays of only MPI_REQUEST_NULL: each bit of the value is one expected outcome. */
static void test_null_request_arrays(void) {
  MPI_Request nulls[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int indices[3], index = -5, outcount = -5, flag = 0, bits = 0;
  MPI_Status status, statuses[3];

  MPI_Waitany(3, nulls, &index, &status);
  bits |= (index == MPI_UNDEFINED) << 0;
  outcount = -5;
  MPI_Waitsome(3, nulls, &outcount, indices, statuses);
  bits |= (outcount == MPI_UNDEFINED) << 1;
  index = -5;
  flag = 0;
  MPI_Testany(3, nulls, &index, &flag, &status);
  bits |= (flag == 1 && index == MPI_UNDEFINED) << 2;
  outcount = -5;
  MPI_Testsome(3, nulls, &outcount, indices, statuses);
  bits |= (outcount == MPI_UNDEFINED) << 3;
  flag = 0;
  MPI_Testall(3, nulls, &flag, statuses);
  bits |= (flag == 1) << 4;
  MPI_Waitall(3, nulls, statuses);
  bits |= (nulls[0] == MPI_REQUEST_NULL && nulls[2] == MPI_REQUEST_NULL) << 5;
  check("null_request_arrays", bits, bits == 0x3F);
}

/* Builds {NULL, Irecv, NULL, Isend} around the ring so each completion call must skip the nulls. */
static void post_mixed(MPI_Request requests[4], int *in, int *out, int tag) {
  *out = rank * 1000 + tag;
  *in = -1;
  requests[0] = MPI_REQUEST_NULL;
  requests[2] = MPI_REQUEST_NULL;
  MPI_Irecv(in, 1, MPI_INT, left, tag, MPI_COMM_WORLD, &requests[1]);
  MPI_Isend(out, 1, MPI_INT, right, tag, MPI_COMM_WORLD, &requests[3]);
}

static int all_null(const MPI_Request requests[4]) {
  for (int i = 0; i < 4; i++)
    if (requests[i] != MPI_REQUEST_NULL) return 0;
  return 1;
}

static void test_mixed_request_arrays(void) {
  MPI_Request requests[4];
  int in, out, ok = 1;
  long long value = 0;

  /* Waitany: value counts completions, index sum must be 1+3 and the last call must say MPI_UNDEFINED. */
  post_mixed(requests, &in, &out, 31);
  int completions = 0, index_sum = 0;
  for (;;) {
    int index;
    MPI_Status status;
    MPI_Waitany(4, requests, &index, &status);
    if (index == MPI_UNDEFINED) break;
    completions++;
    index_sum += index;
    if (index == 1) ok &= status.MPI_SOURCE == left && status.MPI_TAG == 31;
  }
  ok &= completions == 2 && index_sum == 4 && in == left * 1000 + 31 && all_null(requests);
  value = value * 10 + completions;

  post_mixed(requests, &in, &out, 32);
  completions = 0;
  index_sum = 0;
  for (;;) {
    int outcount, indices[4];
    MPI_Status statuses[4];
    MPI_Waitsome(4, requests, &outcount, indices, statuses);
    if (outcount == MPI_UNDEFINED) break;
    for (int i = 0; i < outcount; i++) index_sum += indices[i];
    completions += outcount;
  }
  ok &= completions == 2 && index_sum == 4 && in == left * 1000 + 32 && all_null(requests);
  value = value * 10 + completions;

  post_mixed(requests, &in, &out, 33);
  for (int flag = 0; !flag;) testall_ignoring_statuses(4, requests, &flag);
  ok &= in == left * 1000 + 33 && all_null(requests);
  value = value * 10 + 2;

  post_mixed(requests, &in, &out, 34);
  completions = 0;
  index_sum = 0;
  for (;;) {
    int index, flag;
    MPI_Testany(4, requests, &index, &flag, MPI_STATUS_IGNORE);
    if (flag && index == MPI_UNDEFINED) break;
    if (flag) {
      completions++;
      index_sum += index;
    }
  }
  ok &= completions == 2 && index_sum == 4 && in == left * 1000 + 34 && all_null(requests);
  value = value * 10 + completions;

  post_mixed(requests, &in, &out, 35);
  completions = 0;
  index_sum = 0;
  for (;;) {
    int outcount, indices[4];
    MPI_Status statuses[4];
    MPI_Testsome(4, requests, &outcount, indices, statuses);
    if (outcount == MPI_UNDEFINED) break;
    for (int i = 0; i < outcount; i++) index_sum += indices[i];
    completions += outcount;
  }
  ok &= completions == 2 && index_sum == 4 && in == left * 1000 + 35 && all_null(requests);
  value = value * 10 + completions;

  check("mixed_request_arrays", value, ok);
}

static void test_sendrecv(void) {
  int out = rank * 3, in = -1;
  MPI_Status status;
  MPI_Sendrecv(&out, 1, MPI_INT, right, 40, &in, 1, MPI_INT, left, 40, MPI_COMM_WORLD, &status);
  int ok = in == left * 3 && status.MPI_SOURCE == left && status.MPI_TAG == 40;
  check("sendrecv", in, ok);

  int buffer[3] = {rank, rank * rank, -rank};
  MPI_Sendrecv_replace(buffer, 3, MPI_INT, left, 41, right, 41, MPI_COMM_WORLD, &status);
  ok = buffer[0] == right && buffer[1] == right * right && buffer[2] == -right && status.MPI_SOURCE == right;
  check("sendrecv_replace", buffer[0] * 100 + buffer[1], ok);
}

/* Even ranks synchronously send to their odd partner first, then the direction flips. */
static void test_ssend(void) {
  int partner = rank ^ 1;
  int out = rank + 50, in = -1;
  if (rank % 2 == 0) {
    MPI_Ssend(&out, 1, MPI_INT, partner, 50, MPI_COMM_WORLD);
    MPI_Recv(&in, 1, MPI_INT, partner, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&in, 1, MPI_INT, partner, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ssend(&out, 1, MPI_INT, partner, 50, MPI_COMM_WORLD);
  }
  check("ssend", in, in == partner + 50);
}

static void test_bsend(void) {
  int packed_size;
  MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &packed_size);
  int buffer_size = packed_size + MPI_BSEND_OVERHEAD;
  char *attached = malloc((size_t)buffer_size);
  MPI_Buffer_attach(attached, buffer_size);

  int out[4] = {rank, rank + 1, rank + 2, rank + 3}, in[4] = {-1, -1, -1, -1};
  MPI_Bsend(out, 4, MPI_INT, right, 60, MPI_COMM_WORLD);
  MPI_Status status;
  MPI_Recv(in, 4, MPI_INT, left, 60, MPI_COMM_WORLD, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_INT, &count);

  void *detached = NULL;
  int detached_size = 0;
  /* Detach blocks until the buffered message has left, so freeing afterwards is safe. */
  MPI_Buffer_detach(&detached, &detached_size);
  int ok = detached == attached && detached_size == buffer_size && count == 4;
  for (int k = 0; k < 4; k++) ok &= in[k] == left + k;
  free(attached);
  check("bsend", in[0] * 10 + count, ok);
}

static void test_rsend(void) {
  int out = rank * 11, in = -1;
  MPI_Request request;
  MPI_Irecv(&in, 1, MPI_INT, left, 70, MPI_COMM_WORLD, &request);
  /* The ready-send contract: every receive is posted before any rank gets past the barrier. */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Rsend(&out, 1, MPI_INT, right, 70, MPI_COMM_WORLD);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  check("rsend", in, in == left * 11);
}

static void test_issend(void) {
  int out = rank * 13 + 1, in = -1;
  MPI_Request request;
  MPI_Issend(&out, 1, MPI_INT, right, 80, MPI_COMM_WORLD, &request);
  MPI_Recv(&in, 1, MPI_INT, left, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Status status;
  MPI_Wait(&request, &status);
  int cancelled = 1;
  MPI_Test_cancelled(&status, &cancelled);
  check("issend", in, in == left * 13 + 1 && cancelled == 0);
}

int main(int argc, char **argv) {
  if (!start(&argc, &argv, "p2p")) return 1;
  left = (rank + NRANKS - 1) % NRANKS;
  right = (rank + 1) % NRANKS;

  test_wildcards();
  test_get_count_undefined();
  test_status_ignore();
  test_persistent();
  test_cancel();
  test_null_request_arrays();
  test_mixed_request_arrays();
  test_sendrecv();
  test_ssend();
  test_bsend();
  test_rsend();
  test_issend();

  return finish("p2p");
}
