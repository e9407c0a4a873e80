/* Conformance test: matched and unmatched probes must report the same messages with a tool interposed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

static int left, right;

static long long sum_ints(const int *values, int count) {
  long long sum = 0;
  for (int i = 0; i < count; i++) sum += values[i];
  return sum;
}

static void fill(int *values, int count, int seed) {
  for (int i = 0; i < count; i++) values[i] = seed * 1000 + i;
}

static int matches_fill(const int *values, int count, int seed) {
  for (int i = 0; i < count; i++)
    if (values[i] != seed * 1000 + i) return 0;
  return 1;
}

/* Rank 0 learns size and origin of each message from MPI_Mprobe before allocating for MPI_Mrecv. */
static void test_mprobe_mrecv(MPI_Comm comm) {
  long long value = 0;
  int ok = 1;
  if (rank == 0) {
    int seen = 0;
    for (int i = 0; i < NRANKS - 1; i++) {
      MPI_Message message;
      MPI_Status probed, received;
      MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &message, &probed);
      int count = -1;
      MPI_Get_count(&probed, MPI_INT, &count);
      int source = probed.MPI_SOURCE;
      if (source < 1 || source >= NRANKS || count != source * 3 + 1 || probed.MPI_TAG != 10 + source ||
          (seen & (1 << source))) {
        ok = 0;
        count = count > 0 ? count : 0;
      }
      if (source >= 0 && source < NRANKS) seen |= 1 << source;
      int *buffer = malloc(sizeof(int) * (size_t)(count > 0 ? count : 1));
      MPI_Mrecv(buffer, count, MPI_INT, &message, &received);
      int received_count = -1;
      MPI_Get_count(&received, MPI_INT, &received_count);
      ok &= message == MPI_MESSAGE_NULL && received.MPI_SOURCE == source &&
            received.MPI_TAG == probed.MPI_TAG && received_count == count &&
            matches_fill(buffer, count, source);
      /* Arrival order is up to the implementation, so only an order-independent sum is reported. */
      value += source * 100 + count;
      free(buffer);
    }
    ok &= seen == 0xE;
  } else {
    int count = rank * 3 + 1;
    int buffer[16];
    fill(buffer, count, rank);
    MPI_Send(buffer, count, MPI_INT, 0, 10 + rank, comm);
    value = count;
  }
  check("mprobe_mrecv", value, ok);
}

/* Around the ring: poll MPI_Improbe until the message is there, then receive it with MPI_Imrecv. */
static void test_improbe_imrecv(MPI_Comm comm) {
  int out[8];
  int out_count = rank + 2;
  fill(out, out_count, rank);
  MPI_Request send_request;
  MPI_Isend(out, out_count, MPI_INT, right, 5, comm, &send_request);

  int flag = 0;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status probed;
  while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 5, comm, &flag, &message, &probed);
  int count = -1;
  MPI_Get_count(&probed, MPI_INT, &count);
  int ok = probed.MPI_SOURCE == left && count == left + 2;
  int in[8] = {0};
  if (count < 0 || count > 8) count = 0;

  MPI_Request receive_request;
  MPI_Imrecv(in, count, MPI_INT, &message, &receive_request);
  ok &= message == MPI_MESSAGE_NULL;
  MPI_Status received;
  MPI_Wait(&receive_request, &received);
  MPI_Wait(&send_request, MPI_STATUS_IGNORE);
  ok &= received.MPI_SOURCE == left && received.MPI_TAG == 5 && matches_fill(in, count, left);
  check("improbe_imrecv", count * 1000 + sum_ints(in, count) % 1000, ok);
}

/* MPI_Probe with both wildcards, then a receive aimed exactly at the probed source and tag. */
static void test_probe_wildcards(MPI_Comm comm) {
  int out[4];
  int out_count = rank % 3 + 1;
  fill(out, out_count, rank);
  MPI_Request send_request;
  MPI_Isend(out, out_count, MPI_INT, left, 200 + rank, comm, &send_request);

  MPI_Status probed;
  MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &probed);
  int count = -1;
  MPI_Get_count(&probed, MPI_INT, &count);
  int ok = probed.MPI_SOURCE == right && probed.MPI_TAG == 200 + right && count == right % 3 + 1;
  int in[4] = {0};
  if (count < 0 || count > 4) count = 0;
  MPI_Status received;
  MPI_Recv(in, count, MPI_INT, probed.MPI_SOURCE, probed.MPI_TAG, comm, &received);
  MPI_Wait(&send_request, MPI_STATUS_IGNORE);
  ok &= received.MPI_SOURCE == right && matches_fill(in, count, right);
  check("probe_wildcards", probed.MPI_TAG * 10 + count, ok);
}

/* Rank 0 drains two messages from every other rank by polling MPI_Iprobe with wildcards. */
static void test_iprobe_wildcards(MPI_Comm comm) {
  long long value = 0;
  int ok = 1;
  if (rank == 0) {
    int per_source[NRANKS] = {0};
    for (int received = 0; received < 2 * (NRANKS - 1);) {
      int flag = 0;
      MPI_Status probed;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &probed);
      if (!flag) continue;
      int count = -1, source = probed.MPI_SOURCE, tag = probed.MPI_TAG;
      MPI_Get_count(&probed, MPI_INT, &count);
      int in[16] = {0};
      if (source < 1 || source >= NRANKS || count < 0 || count > 16) {
        ok = 0;
        break;
      }
      MPI_Recv(in, count, MPI_INT, source, tag, comm, MPI_STATUS_IGNORE);
      /* Messages from one source arrive in send order, so its k-th message has a known shape. */
      int k = per_source[source]++;
      ok &= tag == 300 + k && count == source + k + 1 && matches_fill(in, count, source * 10 + k);
      value += source * 100 + count;
      received++;
    }
    for (int source = 1; source < NRANKS; source++) ok &= per_source[source] == 2;
  } else {
    for (int k = 0; k < 2; k++) {
      int out[16];
      fill(out, rank + k + 1, rank * 10 + k);
      MPI_Send(out, rank + k + 1, MPI_INT, 0, 300 + k, comm);
      value += rank + k + 1;
    }
  }
  check("iprobe_wildcards", value, ok);
}

/* A message far above any eager threshold exercises the rendezvous path under MPI_Mprobe. */
static void test_mprobe_large(MPI_Comm comm) {
  enum { LARGE = 1 << 18 };
  int *out = malloc(sizeof(int) * LARGE);
  int *in = malloc(sizeof(int) * LARGE);
  int out_count = LARGE - rank;
  fill(out, out_count, rank);
  MPI_Request send_request;
  MPI_Isend(out, out_count, MPI_INT, right, 77, comm, &send_request);

  MPI_Message message;
  MPI_Status probed;
  MPI_Mprobe(left, 77, comm, &message, &probed);
  int count = -1, bytes = -1;
  MPI_Get_count(&probed, MPI_INT, &count);
  MPI_Get_count(&probed, MPI_BYTE, &bytes);
  int ok = count == LARGE - left && bytes == 4 * count;
  if (count < 0 || count > LARGE) count = 0;
  MPI_Mrecv(in, count, MPI_INT, &message, MPI_STATUS_IGNORE);
  MPI_Wait(&send_request, MPI_STATUS_IGNORE);
  ok &= count > 0 && in[0] == left * 1000 && in[count - 1] == left * 1000 + count - 1;
  check("mprobe_large", count, ok);
  free(out);
  free(in);
}

/* Probing MPI_PROC_NULL succeeds at once with an empty status and MPI_MESSAGE_NO_PROC. */
static void test_probe_proc_null(MPI_Comm comm) {
  int bits = 0, count = -1;
  MPI_Status status;

  MPI_Probe(MPI_PROC_NULL, 1, comm, &status);
  MPI_Get_count(&status, MPI_INT, &count);
  bits |= (status.MPI_SOURCE == MPI_PROC_NULL && status.MPI_TAG == MPI_ANY_TAG && count == 0) << 0;

  int flag = 0;
  MPI_Iprobe(MPI_PROC_NULL, 1, comm, &flag, &status);
  bits |= (flag == 1 && status.MPI_SOURCE == MPI_PROC_NULL) << 1;

  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Mprobe(MPI_PROC_NULL, 1, comm, &message, &status);
  bits |= (message == MPI_MESSAGE_NO_PROC && status.MPI_SOURCE == MPI_PROC_NULL) << 2;
  int dummy = 7;
  count = -1;
  MPI_Mrecv(&dummy, 1, MPI_INT, &message, &status);
  MPI_Get_count(&status, MPI_INT, &count);
  bits |= (message == MPI_MESSAGE_NULL && status.MPI_SOURCE == MPI_PROC_NULL && count == 0 && dummy == 7)
          << 3;

  flag = 0;
  message = MPI_MESSAGE_NULL;
  MPI_Improbe(MPI_PROC_NULL, 1, comm, &flag, &message, &status);
  bits |= (flag == 1 && message == MPI_MESSAGE_NO_PROC) << 4;
  MPI_Request request;
  MPI_Imrecv(&dummy, 1, MPI_INT, &message, &request);
  MPI_Wait(&request, &status);
  bits |= (status.MPI_SOURCE == MPI_PROC_NULL && dummy == 7) << 5;

  check("probe_proc_null", bits, bits == 0x3F);
}

int main(int argc, char **argv) {
  if (!start(&argc, &argv, "mprobe")) return 1;
  left = (rank + NRANKS - 1) % NRANKS;
  right = (rank + 1) % NRANKS;

  /* Each test gets its own communicator so wildcard probes never see another test's messages. */
  void (*tests[])(MPI_Comm) = {test_mprobe_mrecv,     test_improbe_imrecv, test_probe_wildcards,
                               test_iprobe_wildcards, test_mprobe_large,   test_probe_proc_null};
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    tests[i](comm);
    MPI_Comm_free(&comm);
  }

  return finish("mprobe");
}
