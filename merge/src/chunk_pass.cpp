// One decode of every chunk, handed to several consumers in index order or in an order given. The
// design comment is in mpe/chunk_pass.h.
#include "mpe/chunk_pass.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>

#include "mpe/log_reader.h"

namespace mpe::format {

namespace {

// Decoded chunks [0, n) in a ring of `window` slots, filled by decoder threads at most `window`
// chunks ahead of the consumer, taken in order.
class DecodeRing {
 public:
  // Decodes the chunks order[0], order[1], ... (order.size() of them).
  DecodeRing(const LogFile& file, const std::vector<size_t>& order, int decoders, size_t window)
      : file_(file), order_(order), slots_(window) {
    // A thread that cannot be made (no memory for its stack) leaves fewer decoders; with none the
    // error goes up, and no thread is left running.
    try {
      for (int d = 0; d < decoders; ++d) threads_.emplace_back([this] { decode(); });
    } catch (const std::system_error&) {
      if (threads_.empty()) throw;
    }
  }
  ~DecodeRing() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // Blocks until the i-th chunk of the order (the next) is decoded; its records stay valid until release().
  Status take(size_t i, const std::vector<Record>** records) {
    std::unique_lock lock(mutex_);
    Slot& s = slots_[i % slots_.size()];
    cv_.wait(lock, [&] { return s.ready; });
    *records = &s.records;
    return s.status;
  }
  // Frees the i-th chunk's slot for the decoders.
  void release(size_t i) {
    {
      std::lock_guard lock(mutex_);
      slots_[i % slots_.size()].ready = false;
      consumed_ = i + 1;
    }
    cv_.notify_all();
  }

 private:
  struct Slot {
    std::vector<Record> records;  // kept between laps: its capacity is reused
    Status status;
    bool ready = false;
  };

  void decode() {
    LogFile::ChunkScratch scratch;
    const size_t n = order_.size();
    for (;;) {
      size_t i;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || next_ < std::min(consumed_ + slots_.size(), n); });
        if (stop_) return;
        i = next_++;
      }
      // Slot i % window is free: the consumer released chunk i - window before next_ got here.
      Slot& s = slots_[i % slots_.size()];
      // A decoder that cannot get memory says so to the consumer instead of ending the program.
      Status status;
      try {
        status = file_.read_chunk(order_[i], &scratch, &s.records);
      } catch (const std::bad_alloc&) {
        status = Status::out_of_memory();
      }
      {
        std::lock_guard lock(mutex_);
        s.status = std::move(status);
        s.ready = true;
      }
      cv_.notify_all();
    }
  }

  const LogFile& file_;
  const std::vector<size_t>& order_;
  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable cv_;
  size_t next_ = 0;      // the next chunk a decoder takes
  size_t consumed_ = 0;  // chunks released by the consumer
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

std::vector<size_t> chunks_by_start(const LogFile& file) {
  const std::vector<IndexEntry>& index = file.index();
  std::vector<std::pair<int64_t, size_t>> starts(index.size());
  // The latest start so far of each timeline, whose chunks may be interleaved with others' in the
  // index (a writer's order) but come in their logged order.
  std::unordered_map<uint64_t, int64_t> timeline_start;
  for (size_t i = 0; i < index.size(); ++i) {
    const int64_t t = file.to_ns(index[i].rank, index[i].t_first);
    auto [latest, first] = timeline_start.try_emplace(uint64_t{index[i].rank} << 32 | index[i].thread, t);
    if (!first) latest->second = std::max(latest->second, t);
    starts[i] = {latest->second, i};
  }
  std::sort(starts.begin(), starts.end());
  std::vector<size_t> order(index.size());
  for (size_t k = 0; k < starts.size(); ++k) order[k] = starts[k].second;
  return order;
}

std::vector<int64_t> starts_still_to_come(const LogFile& file, const std::vector<size_t>& order) {
  std::vector<int64_t> least(order.size() + 1, INT64_MAX);
  for (size_t k = order.size(); k-- > 0;) {
    const IndexEntry& e = file.index()[order[k]];
    least[k] = std::min(least[k + 1], file.to_ns(e.rank, e.t_first));
  }
  return least;
}

Status run_chunk_pass(const LogFile& file, const std::vector<ChunkConsumer>& consumers,
                      const ChunkPassOptions& options) {
  std::vector<size_t> index_order;
  if (!options.order) {
    index_order.resize(file.index().size());
    for (size_t i = 0; i < index_order.size(); ++i) index_order[i] = i;
  }
  const std::vector<size_t>& order = options.order ? *options.order : index_order;
  const size_t n = order.size();
  if (n == 0) return Status();
  int decoders = options.decoders;
  if (decoders <= 0) decoders = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Four chunks per decoder: enough that a slow chunk does not stall the others.
  DecodeRing ring(file, order, decoders, 4 * static_cast<size_t>(decoders));
  for (size_t k = 0; k < n; ++k) {
    const std::vector<Record>* records = nullptr;
    MPE_RETURN_IF_ERROR(ring.take(k, &records));
    const size_t i = order[k];
    const Chunk chunk{i, file.index()[i], records->data(), records->size()};
    for (const ChunkConsumer& consume : consumers) consume(chunk);
    ring.release(k);
    if (options.keep_going && !options.keep_going(k + 1))
      return Status(StatusCode::kCancelled, options.what + " stopped");
  }
  return Status();
}

}  // namespace mpe::format
