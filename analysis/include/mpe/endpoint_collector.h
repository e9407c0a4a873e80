// Pass 1 of the analyses over messages (the wait states, the rebuilt unexpected queue) as a
// consumer of a shared chunk pass (mpe/chunk_pass.h): a front end that decodes the log once for
// its own model feeds this collector from the same pass, then hands what it collected to
// analysis::waits::analyze() and analysis::umq::rebuild(), instead of each of them decoding the log again.
// `mpe waits` and `mpe umq` keep their streaming analyze(file)/rebuild(file) forms, which run the
// same collector over a pass of their own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/log_reader.h"

namespace mpe::analysis {

// The endpoints pass 1 kept, matched, with the totals it counted (analysis/src/endpoints.h).
struct Collected;

// What the collector keeps.
struct CollectSettings {
  // A standard-mode blocking send of more bytes than this is taken to use a rendezvous.
  uint64_t eager_limit = 65536;
  bool collectives = true;  // keep the collectives (the wait states need them, the queue does not)
};

// Collects the communication endpoints of the chunks it is given: feed it every chunk of the log
// in index order (a ChunkConsumer), then finish() it once.
class EndpointCollector {
 public:
  explicit EndpointCollector(const format::LogFile& file, const CollectSettings& settings = {});
  ~EndpointCollector();
  EndpointCollector(const EndpointCollector&) = delete;
  EndpointCollector& operator=(const EndpointCollector&) = delete;

  // Takes the next chunk of the pass.
  void consume(const format::Chunk& chunk);
  // A ChunkConsumer that feeds this collector (which must outlive the pass).
  format::ChunkConsumer consumer() {
    return [this](const format::Chunk& c) { consume(c); };
  }
  // Ends pass 1 and matches the messages: what analysis::waits::analyze() and analysis::umq::rebuild() take.
  std::shared_ptr<Collected> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One message as pass 1 matched it, in the reader's terms (world ranks, corrected ns), so that
// the analyses' matching can be checked against the reader's and the writers'.
struct MatchedMessage {
  int32_t src;
  int32_t dst;
  int32_t tag;
  int64_t send_time;  // the send call's entry
  int64_t recv_time;  // the receive's completion
  uint64_t bytes;     // saturated at 2^32-1
};
// The matched messages of `collected`, in receive order.
std::vector<MatchedMessage> matched_messages(const Collected& collected);

}  // namespace mpe::analysis
