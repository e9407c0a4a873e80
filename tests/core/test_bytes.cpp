// Unit tests of the byte counts of core/src/bytes.cpp: every expected value is worked out by hand
// from the MPI standard's semantics for the arguments given. Run on 3 ranks (mpiexec -n 3): the
// rooted collectives then have a root and two others, and each rank checks its own side.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>

#include "mpe/bytes.h"

namespace {

using mpe::Call;
using mpe::CallClass;
namespace role = mpe::role;

int g_rank = 0, g_size = 0;

// A call of class `cls` with the given role bits; every field zeroed first.
Call make(CallClass cls, uint64_t roles, mpe::Mode mode = mpe::Mode::kBlocking) {
  Call c;
  std::memset(static_cast<void*>(&c), 0, sizeof c);
  c.cls = cls;
  c.mode = mode;
  c.roles = roles;
  c.comm = MPI_COMM_WORLD;
  c.sendtype = c.recvtype = MPI_DATATYPE_NULL;
  return c;
}

constexpr uint64_t kRooted = role::sendbuf | role::recvbuf | role::sendcount | role::sendtype |
                             role::recvcount | role::recvtype | role::root | role::comm;

TEST(TypeSize, PredefinedAndDerived) {
  EXPECT_EQ(mpe::type_size(MPI_INT), 4);
  EXPECT_EQ(mpe::type_size(MPI_DOUBLE), 8);
  EXPECT_EQ(mpe::type_size(MPI_DATATYPE_NULL), 0);
  MPI_Datatype vec, empty, pair;
  MPI_Type_vector(3, 2, 5, MPI_INT, &vec);  // 3 blocks of 2 ints: 24 bytes of data, gaps not counted
  MPI_Type_contiguous(0, MPI_DOUBLE, &empty);
  const int lens[2] = {1, 1};
  const MPI_Aint disps[2] = {0, 8};
  const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, lens, disps, types, &pair);  // 4 + 8 bytes of data, padding not counted
  MPI_Type_commit(&vec);
  MPI_Type_commit(&empty);
  MPI_Type_commit(&pair);
  EXPECT_EQ(mpe::type_size(vec), 24);
  EXPECT_EQ(mpe::type_size(empty), 0);
  EXPECT_EQ(mpe::type_size(pair), 12);
  Call c = make(CallClass::kSend, role::sendcount | role::sendtype | role::dest | role::comm);
  c.sendcount = 10;
  c.sendtype = vec;
  c.dest = 0;
  EXPECT_EQ(mpe::send_bytes(c), 240);
  MPI_Type_free(&vec);
  MPI_Type_free(&empty);
  MPI_Type_free(&pair);
}

TEST(SendBytes, CountZeroProcNullAndPartitions) {
  Call c = make(CallClass::kSend, role::sendcount | role::sendtype | role::dest | role::comm);
  c.sendtype = MPI_DOUBLE;
  c.dest = 0;
  c.sendcount = 0;
  EXPECT_EQ(mpe::send_bytes(c), 0);
  c.sendcount = 3;
  EXPECT_EQ(mpe::send_bytes(c), 24);
  c.dest = MPI_PROC_NULL;
  EXPECT_EQ(mpe::send_bytes(c), 0);
  Call p =
      make(CallClass::kSend, role::sendcount | role::sendtype | role::dest | role::comm | role::partitions,
           mpe::Mode::kPersistentInit);  // MPI_Psend_init: 4 partitions of 5 ints
  p.sendcount = 5;
  p.sendtype = MPI_INT;
  p.dest = 0;
  p.partitions = 4;
  EXPECT_EQ(mpe::send_bytes(p), 80);
}

TEST(StatusBytes, FromARealReceive) {
  int out[5] = {1, 2, 3, 4, 5}, in[5];
  MPI_Status st;
  MPI_Sendrecv(out, 5, MPI_INT, g_rank, 7, in, 5, MPI_INT, g_rank, 7, MPI_COMM_WORLD, &st);
  EXPECT_EQ(mpe::status_bytes(&st), 20);
  MPI_Status null_st;
  MPI_Recv(in, 5, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &null_st);
  EXPECT_EQ(mpe::status_bytes(&null_st), 0);
  EXPECT_EQ(mpe::status_bytes(MPI_STATUS_IGNORE), 0);
  EXPECT_EQ(mpe::status_bytes(nullptr), 0);
}

// The predefined types' sizes come from a table built once: each must be the library's.
TEST(TypeSize, EveryPredefinedTypeAsTheLibrarySays) {
  for (MPI_Datatype t : {MPI_CHAR,
                         MPI_BYTE,
                         MPI_SHORT,
                         MPI_INT,
                         MPI_LONG,
                         MPI_LONG_LONG,
                         MPI_FLOAT,
                         MPI_DOUBLE,
                         MPI_LONG_DOUBLE,
                         MPI_C_BOOL,
                         MPI_INT8_T,
                         MPI_UINT64_T,
                         MPI_C_DOUBLE_COMPLEX,
                         MPI_AINT,
                         MPI_COUNT,
                         MPI_PACKED,
                         MPI_DOUBLE_INT,
                         MPI_2INT,
                         MPI_SHORT_INT,
                         MPI_LONG_INT,
                         MPI_INTEGER,
                         MPI_REAL,
                         MPI_DOUBLE_PRECISION,
                         MPI_DOUBLE_COMPLEX,
                         MPI_2DOUBLE_PRECISION}) {
    if (t == MPI_DATATYPE_NULL) continue;
    MPI_Count size = -1;
    MPI_Type_size_x(t, &size);
    EXPECT_EQ(mpe::type_size(t), size);
  }
  // A derived type's handle, reused after a free, is asked for again: never a stale size.
  for (int n : {1, 3, 7}) {
    MPI_Datatype block;
    MPI_Type_contiguous(n, MPI_DOUBLE, &block);
    MPI_Type_commit(&block);
    EXPECT_EQ(mpe::type_size(block), 8 * n);
    MPI_Type_free(&block);
  }
}

// Statuses the library itself fills, read from their fields on MPICH and Open MPI: counts past
// 2^31 and 2^32, the cancel flag both ways, and a receive really cancelled.
TEST(StatusBytes, FieldsAgreeWithTheLibrary) {
#if defined(MPICH_NUMVERSION) || defined(OPEN_MPI)
  EXPECT_TRUE(mpe::reads_status_fields());
#endif
  for (MPI_Count bytes : {MPI_Count{0}, MPI_Count{7}, (MPI_Count{1} << 31) + 1, (MPI_Count{1} << 32) + 9})
    for (int cancel : {0, 1}) {
      MPI_Status st{};
      st.MPI_SOURCE = 0;
      MPI_Status_set_elements_x(&st, MPI_BYTE, bytes);
      MPI_Status_set_cancelled(&st, cancel);
      MPI_Count n = -1;
      int flag = -1;
      MPI_Get_elements_x(&st, MPI_BYTE, &n);
      MPI_Test_cancelled(&st, &flag);
      EXPECT_EQ(mpe::status_bytes(&st), n);
      EXPECT_EQ(mpe::status_cancelled(&st), flag != 0);
    }
  int in[4];
  MPI_Request req;
  MPI_Status st;
  MPI_Irecv(in, 4, MPI_INT, g_rank, 4242, MPI_COMM_WORLD, &req);
  MPI_Cancel(&req);
  MPI_Wait(&req, &st);
  int flag = 0;
  MPI_Test_cancelled(&st, &flag);
  EXPECT_TRUE(flag);
  EXPECT_TRUE(mpe::status_cancelled(&st));
  EXPECT_FALSE(mpe::status_cancelled(MPI_STATUS_IGNORE));
}

TEST(CollectiveBytes, BcastRootSendsOthersReceive) {
  Call c =
      make(CallClass::kBcast, role::sendbuf | role::sendcount | role::sendtype | role::root | role::comm);
  c.sendcount = 7;
  c.sendtype = MPI_DOUBLE;
  c.root = 0;
  const mpe::Bytes b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, g_rank == 0 ? 56 : 0);
  EXPECT_EQ(b.recv, g_rank == 0 ? 0 : 56);
}

TEST(CollectiveBytes, ReduceAllreduceExscan) {
  Call r = make(CallClass::kReduce, kRooted | role::op);
  r.sendcount = 5;
  r.sendtype = MPI_INT;
  r.root = 1;
  mpe::Bytes b = mpe::collective_bytes(r);
  EXPECT_EQ(b.sent, 20);                    // every rank contributes
  EXPECT_EQ(b.recv, g_rank == 1 ? 20 : 0);  // the root gets the result
  Call a = r;
  a.cls = CallClass::kAllreduce;
  b = mpe::collective_bytes(a);
  EXPECT_EQ(b.sent, 20);
  EXPECT_EQ(b.recv, 20);
  Call e = r;
  e.cls = CallClass::kExscan;
  b = mpe::collective_bytes(e);
  EXPECT_EQ(b.sent, 20);
  EXPECT_EQ(b.recv, g_rank == 0 ? 0 : 20);  // rank 0's result is undefined: nothing arrives
}

// The classes collective_bytes takes inline give what the general rule gives, in place or not,
// for counts of zero and over 2^31 bytes, and for a derived type.
TEST(CollectiveBytes, InlineClassesAgreeWithTheGeneralRule) {
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);
  int dummy = 0;
  for (CallClass cls : {CallClass::kAllreduce, CallClass::kScan, CallClass::kBarrier})
    for (const void* buf : {static_cast<const void*>(&dummy), static_cast<const void*>(MPI_IN_PLACE)})
      for (int64_t count : {int64_t{0}, int64_t{3}, int64_t{1} << 31})
        for (MPI_Datatype type : {MPI_INT, pair}) {
          Call c = make(
              cls, role::sendbuf | role::recvbuf | role::sendcount | role::sendtype | role::op | role::comm);
          c.sendbuf = buf;
          c.sendcount = count;
          c.sendtype = type;
          const mpe::Bytes inline_rule = mpe::collective_bytes(c), general = mpe::collective_bytes_general(c);
          EXPECT_EQ(inline_rule.sent, general.sent) << static_cast<int>(cls) << " count " << count;
          EXPECT_EQ(inline_rule.recv, general.recv) << static_cast<int>(cls) << " count " << count;
          if (cls != CallClass::kBarrier) EXPECT_EQ(inline_rule.sent, count * (type == pair ? 16 : 4));
        }
  MPI_Type_free(&pair);
}

TEST(CollectiveBytes, GatherWithAndWithoutInPlace) {
  int dummy = 0;
  Call c = make(CallClass::kGather, kRooted);
  c.sendbuf = &dummy;
  c.sendcount = c.recvcount = 2;
  c.sendtype = c.recvtype = MPI_INT;
  c.root = 0;
  mpe::Bytes b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 8);
  EXPECT_EQ(b.recv, g_rank == 0 ? 3 * 8 : 0);
  if (g_rank == 0) {
    c.sendbuf = MPI_IN_PLACE;  // the root's own block is already in place: neither sent nor received
    b = mpe::collective_bytes(c);
    EXPECT_EQ(b.sent, 0);
    EXPECT_EQ(b.recv, 2 * 8);
  }
}

TEST(CollectiveBytes, GathervCountsIncludingZeroAndLargeCounts) {
  const int counts[3] = {1, 0, 3};
  const MPI_Count large[3] = {1, 0, 3};
  int dummy = 0;
  Call c = make(CallClass::kGatherv, kRooted | role::recvcounts);
  c.sendbuf = &dummy;
  c.sendcount = counts[g_rank];
  c.sendtype = c.recvtype = MPI_DOUBLE;
  c.recvcounts = counts;
  c.root = 2;
  mpe::Bytes b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 8 * counts[g_rank]);  // rank 1 sends nothing
  EXPECT_EQ(b.recv, g_rank == 2 ? 32 : 0);
  c.flags = mpe::kLargeCount;  // MPI_Gatherv_c: MPI_Count arrays
  c.recvcounts = large;
  b = mpe::collective_bytes(c);
  EXPECT_EQ(b.recv, g_rank == 2 ? 32 : 0);
  if (g_rank == 2) {
    c.sendbuf = MPI_IN_PLACE;
    b = mpe::collective_bytes(c);
    EXPECT_EQ(b.sent, 0);
    EXPECT_EQ(b.recv, 8);  // ranks 0 and 1 only: 1 + 0 doubles
  }
}

TEST(CollectiveBytes, ScatterCountZero) {
  int dummy = 0;
  Call c = make(CallClass::kScatter, kRooted);
  c.recvbuf = &dummy;
  c.sendcount = c.recvcount = 0;
  c.sendtype = c.recvtype = MPI_INT;
  c.root = 0;
  const mpe::Bytes b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 0);
  EXPECT_EQ(b.recv, 0);
}

TEST(CollectiveBytes, AllgathervInPlaceSendsOwnBlock) {
  const int counts[3] = {1, 2, 3};
  Call c = make(CallClass::kAllgatherv, role::sendbuf | role::recvbuf | role::sendcount | role::sendtype |
                                            role::recvcounts | role::recvtype | role::comm);
  c.sendbuf = MPI_IN_PLACE;
  c.recvcounts = counts;
  c.recvtype = MPI_INT;
  const mpe::Bytes b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 4 * counts[g_rank]);
  EXPECT_EQ(b.recv, 4 * (6 - counts[g_rank]));
}

TEST(CollectiveBytes, AllgatherAndAlltoall) {
  int dummy = 0;
  Call c = make(CallClass::kAllgather, role::sendbuf | role::recvbuf | role::sendcount | role::sendtype |
                                           role::recvcount | role::recvtype | role::comm);
  c.sendbuf = &dummy;
  c.sendcount = c.recvcount = 4;
  c.sendtype = c.recvtype = MPI_INT;
  mpe::Bytes b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 16);
  EXPECT_EQ(b.recv, 48);  // every rank's block, its own included
  c.sendbuf = MPI_IN_PLACE;
  b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 16);
  EXPECT_EQ(b.recv, 32);
  c.cls = CallClass::kAlltoall;
  c.sendbuf = &dummy;
  b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 48);
  EXPECT_EQ(b.recv, 48);
}

TEST(CollectiveBytes, AlltoallvAndAlltoallw) {
  const int scounts[3] = {0, 1, 2}, rcounts[3] = {3, 0, 1};
  int dummy = 0;
  Call c = make(CallClass::kAlltoallv, role::sendbuf | role::recvbuf | role::sendcounts | role::sendtype |
                                           role::recvcounts | role::recvtype | role::comm);
  c.sendbuf = &dummy;
  c.sendcounts = scounts;
  c.recvcounts = rcounts;
  c.sendtype = MPI_DOUBLE;
  c.recvtype = MPI_INT;
  mpe::Bytes b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 3 * 8);
  EXPECT_EQ(b.recv, 4 * 4);
  c.sendbuf = MPI_IN_PLACE;  // the receive buffer is sent and replaced
  b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 16);
  const MPI_Datatype stypes[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, rtypes[3] = {MPI_CHAR, MPI_INT, MPI_DOUBLE};
  Call w = make(CallClass::kAlltoallw, role::sendbuf | role::recvbuf | role::sendcounts | role::sendtypes |
                                           role::recvcounts | role::recvtypes | role::comm);
  w.sendbuf = &dummy;
  w.sendcounts = scounts;
  w.recvcounts = rcounts;
  w.sendtypes = stypes;
  w.recvtypes = rtypes;
  b = mpe::collective_bytes(w);
  EXPECT_EQ(b.sent, 0 * 4 + 1 * 8 + 2 * 1);
  EXPECT_EQ(b.recv, 3 * 1 + 0 * 4 + 1 * 8);
}

TEST(CollectiveBytes, ReduceScatter) {
  const int counts[3] = {2, 1, 0};
  Call c = make(CallClass::kReduceScatter,
                role::sendbuf | role::recvbuf | role::recvcounts | role::recvtype | role::comm | role::op);
  c.recvcounts = counts;
  c.recvtype = MPI_DOUBLE;
  mpe::Bytes b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 24);  // the whole vector
  EXPECT_EQ(b.recv, 8 * counts[g_rank]);
  Call k = make(CallClass::kReduceScatterBlock,
                role::sendbuf | role::recvbuf | role::recvcount | role::recvtype | role::comm | role::op);
  k.recvcount = 2;
  k.recvtype = MPI_INT;
  b = mpe::collective_bytes(k);
  EXPECT_EQ(b.sent, 24);
  EXPECT_EQ(b.recv, 8);
}

TEST(CollectiveBytes, NeighbourhoodOnAPeriodicRing) {
  MPI_Comm ring;
  const int dims[1] = {g_size}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);  // 2 neighbours each way
  int dummy = 0;
  Call c =
      make(CallClass::kNeighborAlltoall, role::sendbuf | role::recvbuf | role::sendcount | role::sendtype |
                                             role::recvcount | role::recvtype | role::comm);
  c.comm = ring;
  c.sendbuf = &dummy;
  c.sendcount = 3;
  c.recvcount = 1;
  c.sendtype = MPI_INT;
  c.recvtype = MPI_DOUBLE;
  const mpe::Bytes b = mpe::collective_bytes(c);
  EXPECT_EQ(b.sent, 2 * 12);
  EXPECT_EQ(b.recv, 2 * 8);
  EXPECT_EQ(mpe::per_peer_count(CallClass::kNeighborAlltoallv, ring, true), 2);
  EXPECT_EQ(mpe::per_peer_count(CallClass::kAlltoallv, MPI_COMM_WORLD, true), g_size);
  MPI_Comm_free(&ring);
}

TEST(RmaBytes, PutAndFetchAndOp) {
  Call put = make(CallClass::kRma, role::sendbuf | role::sendcount | role::sendtype | role::dest | role::win);
  put.sendcount = 4;
  put.sendtype = MPI_DOUBLE;
  put.dest = 1;
  mpe::Bytes b = mpe::rma_bytes(put);
  EXPECT_EQ(b.sent, 32);
  EXPECT_EQ(b.recv, 0);
  put.dest = MPI_PROC_NULL;
  b = mpe::rma_bytes(put);
  EXPECT_EQ(b.sent, 0);
  Call fop = make(CallClass::kRma,
                  role::sendbuf | role::recvbuf | role::sendtype | role::recvtype | role::dest | role::win);
  fop.sendtype = fop.recvtype = MPI_INT;  // one element each way
  fop.dest = 0;
  b = mpe::rma_bytes(fop);
  EXPECT_EQ(b.sent, 4);
  EXPECT_EQ(b.recv, 4);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  ::testing::InitGoogleTest(&argc, argv);
  int rc = 0;
  if (g_size != 3) {
    if (g_rank == 0) fprintf(stderr, "test_bytes: run on 3 ranks (mpiexec -n 3), not %d\n", g_size);
    rc = 1;
  } else {
    rc = RUN_ALL_TESTS();
  }
  MPI_Finalize();
  return rc;
}
