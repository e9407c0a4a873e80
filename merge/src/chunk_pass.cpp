// One decode of every chunk, handed to several consumers in index order. The design comment is in
// mpe/chunk_pass.h.
#include "mpe/chunk_pass.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

#include "mpe/log_reader.h"

namespace mpe::format {

namespace {

// Decoded chunks [0, n) in a ring of `window` slots, filled by decoder threads at most `window`
// chunks ahead of the consumer, taken in order.
class DecodeRing {
 public:
  DecodeRing(const LogFile& file, int decoders, size_t window) : file_(file), slots_(window) {
    for (int d = 0; d < decoders; ++d) threads_.emplace_back([this] { decode(); });
  }
  ~DecodeRing() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  // Blocks until chunk i (the next in order) is decoded; its records stay valid until release().
  Status take(size_t i, const std::vector<Record>** records) {
    std::unique_lock lock(mutex_);
    Slot& s = slots_[i % slots_.size()];
    cv_.wait(lock, [&] { return s.ready; });
    *records = &s.records;
    return s.status;
  }
  // Frees chunk i's slot for the decoders.
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
    const size_t n = file_.index().size();
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
      Status status = file_.read_chunk(i, &scratch, &s.records);
      {
        std::lock_guard lock(mutex_);
        s.status = std::move(status);
        s.ready = true;
      }
      cv_.notify_all();
    }
  }

  const LogFile& file_;
  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable cv_;
  size_t next_ = 0;      // the next chunk a decoder takes
  size_t consumed_ = 0;  // chunks released by the consumer
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

Status run_chunk_pass(const LogFile& file, const std::vector<ChunkConsumer>& consumers,
                      const ChunkPassOptions& options) {
  const size_t n = file.index().size();
  if (n == 0) return Status();
  int decoders = options.decoders;
  if (decoders <= 0) decoders = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Four chunks per decoder: enough that a slow chunk does not stall the others.
  DecodeRing ring(file, decoders, 4 * static_cast<size_t>(decoders));
  for (size_t i = 0; i < n; ++i) {
    const std::vector<Record>* records = nullptr;
    MPE_RETURN_IF_ERROR(ring.take(i, &records));
    const Chunk chunk{i, file.index()[i], records->data(), records->size()};
    for (const ChunkConsumer& consume : consumers) consume(chunk);
    ring.release(i);
    if (options.keep_going && !options.keep_going(i + 1))
      return Status(StatusCode::kCancelled, options.what + " stopped");
  }
  return Status();
}

}  // namespace mpe::format
