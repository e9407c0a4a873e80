// One log through every consumer of its messages: the reader's model (load_trace), the OTF2
// writer (read back through the OTF2 reader), the Chrome JSON writer (flow events), the analyses'
// matching (the endpoints `mpe waits` and `mpe umq` measure) and, when the viewer is built,
// upshot's model. Each must give exactly the messages the log holds: same sender, receiver, send
// and receive times, bytes. The log has the special cases each consumer once handled its own way:
// a cancelled send followed by a real send on the same (communicator, source, destination, tag),
// a receive completed without a status (MPI_STATUS_IGNORE: liblog logs the status it substituted,
// so the record is an ordinary receive), a send to MPI_PROC_NULL (liblog writes nothing for it),
// a nonblocking collective with its request records between the messages, and two threads of one
// rank sending on the same key, the later-logged thread's send first in time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/endpoint_collector.h"
#include "mpe/interop.h"
#include "mpe/log_layout.h"
#include "mpe/log_reader.h"
#include "mpe/log_writer.h"
#include "mpe/records.h"
#ifdef MPE_TEST_VIEWER_MODEL
#include "tracebuilder.h"
#endif

namespace {

using namespace mpe::format;

// (sender, receiver, send time ns, receive time ns, bytes): what every consumer must agree on.
using Msg = std::tuple<int32_t, int32_t, int64_t, int64_t, uint64_t>;

enum : uint16_t { kInit, kSend, kRecv, kIsend, kCancel, kWait, kIallreduce, kWaitall };

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "one_log_" + std::to_string(getpid()) + "_" + name;
}

Record state(uint64_t start, uint64_t end, uint16_t cat, uint32_t depth = 0) {
  return StateRecord{start, cat, depth, 0, end - start}.to_record();
}

// Three ranks, 1 tick = 1 ns, no clock correction: the times below are the model's times.
std::vector<std::vector<Record>> rank_records() {
  std::vector<std::vector<Record>> ranks(3);
  // Rank 0: a blocking send to 1 (tag 7); an Isend to 1 (tag 8) cancelled and completed as such;
  // a blocking send to 1 on the same tag 8 that is received; the Iallreduce; a send to 2.
  ranks[0] = {
      state(0, 10, kInit),
      state(100, 110, kSend),
      SendRecord{100, kSend, 1, 7, 0, 64}.to_record(),
      state(200, 205, kIsend),
      SendRecord{200, kIsend, 1, 8, 0, 32}.to_record(),
      RequestPostRecord{{200, kIsend, 1, RequestWhat::kSend}}.to_record(),
      state(210, 215, kCancel),
      state(220, 230, kWait),
      SendCancelRecord{230, kWait, 1, 8, 0}.to_record(),
      RequestDoneRecord{{230, kWait, 1, RequestWhat::kCancelled}}.to_record(),
      state(240, 250, kSend),
      SendRecord{240, kSend, 1, 8, 0, 16}.to_record(),
      state(300, 305, kIallreduce),
      CollectiveRecord{300, kIallreduce, -1, 0, 8, 8}.to_record(),
      RequestPostRecord{{300, kIallreduce, 2, RequestWhat::kCollective}}.to_record(),
      state(400, 450, kWait),
      RequestDoneRecord{{450, kWait, 2, RequestWhat::kCollective}}.to_record(),
      state(500, 510, kSend),
      SendRecord{500, kSend, 2, 9, 0, 128}.to_record(),
  };
  // Rank 1: receives tag 7, then tag 8 (the send after the cancelled one); the Iallreduce.
  ranks[1] = {
      state(0, 10, kInit),
      state(90, 150, kRecv),
      RecvRecord{150, kRecv, 0, 7, 0, 64}.to_record(),
      state(152, 158, kRecv),
      RecvRecord{158, kRecv, 0, 7, 0, 64}.to_record(),
      state(160, 260, kRecv),
      RecvRecord{260, kRecv, 0, 8, 0, 16}.to_record(),
      state(310, 312, kIallreduce),
      CollectiveRecord{310, kIallreduce, -1, 0, 8, 8}.to_record(),
      RequestPostRecord{{310, kIallreduce, 1, RequestWhat::kCollective}}.to_record(),
      state(320, 460, kWait),
      RequestDoneRecord{{460, kWait, 1, RequestWhat::kCollective}}.to_record(),
  };
  // Rank 2: the Iallreduce, completed in a Waitall, then the receive of tag 9 (MPI_STATUS_IGNORE).
  ranks[2] = {
      state(0, 10, kInit),
      state(320, 322, kIallreduce),
      CollectiveRecord{320, kIallreduce, -1, 0, 8, 8}.to_record(),
      RequestPostRecord{{320, kIallreduce, 1, RequestWhat::kCollective}}.to_record(),
      state(330, 470, kWaitall),
      RequestDoneRecord{{470, kWaitall, 1, RequestWhat::kCollective}}.to_record(),
      state(480, 600, kRecv),
      RecvRecord{600, kRecv, 0, 9, 0, 128}.to_record(),
  };
  return ranks;
}

// Rank 0's second thread: a send on tag 7 before its first thread's, logged after all of that
// thread's records. In time order it is the first of the two, and meets rank 1's first receive.
std::vector<Record> second_thread_records() {
  return {state(50, 55, kSend), SendRecord{50, kSend, 1, 7, 0, 64}.to_record()};
}

// The messages the log holds, known by construction.
const std::vector<Msg> kTruth = {
    {0, 1, 50, 150, 64}, {0, 1, 100, 158, 64}, {0, 1, 240, 260, 16}, {0, 2, 500, 600, 128}};

std::string write_log() {
  const std::string path = temp_path("log.mpelog");
  LogWriter w;
  EXPECT_TRUE(w.open(path).ok());
  const auto ranks = rank_records();
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    std::string chunk;
    encode_events(ranks[r].data(), static_cast<uint32_t>(ranks[r].size()), r, 0, 1, &chunk);
    EXPECT_TRUE(w.add_events_chunk(chunk).ok());
    if (r == 0) {
      const std::vector<Record> second = second_thread_records();
      std::string second_chunk;
      encode_events(second.data(), static_cast<uint32_t>(second.size()), 0, 1, 1, &second_chunk);
      EXPECT_TRUE(w.add_events_chunk(second_chunk).ok());
    }
  }
  Definitions d;
  d.world_size = 3;
  d.program = "one_log";
  d.clock = "monotonic";
  d.ticks_per_second = 1e9;
  d.categories = mpi_categories({"MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Cancel", "MPI_Wait",
                                 "MPI_Iallreduce", "MPI_Waitall"});
  for (uint32_t r = 0; r < 3; ++r) {
    RankMeta m;
    m.rank = r;
    m.world_size = 3;
    m.host = "h";
    m.ticks_per_second = 1e9;
    m.threads = {ThreadDef{0, 100 + r}};
    if (r == 0) m.threads.push_back(ThreadDef{1, 200});
    m.comms = {CommDef{0, 0, false, {0, 1, 2}},
               CommDef{1, (1ull << 62) | r, false, {static_cast<int32_t>(r)}}};
    d.ranks.push_back(m);
  }
  EXPECT_TRUE(w.finish(d).ok());
  return path;
}

std::vector<Msg> sorted(std::vector<Msg> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<Msg> reader_messages(const std::string& path) {
  auto file = LogFile::open(path);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  if (!file.ok()) return {};
  auto tr = load_trace(*file);
  EXPECT_TRUE(tr.ok()) << tr.status().to_string();
  if (!tr.ok()) return {};
  std::vector<Msg> out;
  for (const Message& m : tr->messages) out.emplace_back(m.src, m.dst, m.send_time, m.recv_time, m.bytes);
  return sorted(out);
}

class OneLog : public ::testing::Test {
 protected:
  void SetUp() override { path_ = write_log(); }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(OneLog, ReaderGivesTheLogsMessages) { EXPECT_EQ(reader_messages(path_), kTruth); }

TEST_F(OneLog, Otf2WriterAgreesWithTheReader) {
  const std::string dir = temp_path("otf2");
  ASSERT_TRUE(mpe::interop::mpelog_to_otf2(path_, dir).ok());
  const std::string back = temp_path("back.mpelog");
  ASSERT_TRUE(mpe::interop::otf2_to_mpelog(dir + "/traces.otf2", back).ok());
  EXPECT_EQ(reader_messages(back), kTruth);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(back);
}

TEST_F(OneLog, ChromeWriterAgreesWithTheReader) {
  const std::string json = temp_path("chrome.json");
  ASSERT_TRUE(mpe::interop::mpelog_to_chrome(path_, json).ok());
  std::ifstream in(json);
  const nlohmann::json doc = nlohmann::json::parse(in);
  // A flow's start ("s") and finish ("f") share an id; ts in µs.
  std::map<uint64_t, std::pair<const nlohmann::json*, const nlohmann::json*>> flows;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "s") flows[e["id"].get<uint64_t>()].first = &e;
    if (ph == "f") flows[e["id"].get<uint64_t>()].second = &e;
  }
  std::vector<Msg> out;
  for (const auto& [id, f] : flows) {
    ASSERT_TRUE(f.first && f.second) << "flow " << id << " has one end only";
    auto ns = [](const nlohmann::json& e) { return std::llround(e["ts"].get<double>() * 1000); };
    out.emplace_back(f.first->at("pid").get<int32_t>(), f.second->at("pid").get<int32_t>(), ns(*f.first),
                     ns(*f.second), f.first->at("args").at("bytes").get<uint64_t>());
  }
  EXPECT_EQ(sorted(out), kTruth);
  std::filesystem::remove(json);
}

TEST_F(OneLog, AnalysesMatchAsTheReader) {
  auto file = LogFile::open(path_);
  ASSERT_TRUE(file.ok());
  mpe::analysis::EndpointCollector collector(*file);
  ASSERT_TRUE(run_chunk_pass(*file, {collector.consumer()}).ok());
  const auto collected = collector.finish();
  std::vector<Msg> out;
  for (const mpe::analysis::MatchedMessage& m : mpe::analysis::matched_messages(*collected))
    out.emplace_back(m.src, m.dst, m.send_time, m.recv_time, m.bytes);
  EXPECT_EQ(sorted(out), kTruth);
}

#ifdef MPE_TEST_VIEWER_MODEL
TEST_F(OneLog, ViewerModelAgreesWithTheReader) {
  auto file = LogFile::open(path_);
  ASSERT_TRUE(file.ok());
  auto model = upshot::buildModel(*file);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  std::vector<Msg> out;
  for (const upshot::Message& m : (*model)->messages())
    out.emplace_back(static_cast<int32_t>((*model)->rank(static_cast<int>(m.send_timeline))),
                     static_cast<int32_t>((*model)->rank(static_cast<int>(m.recv_timeline))), m.send_time,
                     m.recv_time, m.bytes);
  EXPECT_EQ(sorted(out), kTruth);
}
#endif

}  // namespace
