#include "mpe/call_filter.h"

#include <memory>
#include <mutex>
#include <new>
#include <optional>

#include "mpe/config.h"
#include "mpe/log_filter.h"
#include "mpe/symbolizer.h"

namespace mpe::call_filter {

bool g_active = false;
uint8_t g_routine_left_out[kFnCount] = {};
bool g_site_rules = false;

namespace {

// Sites beyond this many keep their calls (a program has hundreds).
constexpr uint32_t kMaxJudgedSites = 1 << 16;
enum Verdict : uint8_t { kUnknown = 0, kKept = 1, kLeftOut = 2 };

std::once_flag g_loaded;
std::optional<format::LogFilter> g_filter;  // set once, before any call reads it
std::unique_ptr<std::atomic<uint8_t>[]> g_site_verdicts;
std::mutex g_symbolize_mutex;  // one Symbolizer, one thread at a time
Symbolizer* g_symbolizer = nullptr;

void apply(format::LogFilter filter) {
  bool any = false;
  for (int i = 0; i < kFnCount; ++i) {
    g_routine_left_out[i] = filter.excludes_routine(kFnInfo[i].name) ? 1 : 0;
    any = any || g_routine_left_out[i];
  }
  if (filter.has_site_rules()) {
    g_site_verdicts.reset(new std::atomic<uint8_t>[kMaxJudgedSites]());
    g_symbolizer = new Symbolizer;
    g_site_rules = true;
  }
  g_filter = std::move(filter);
  g_active = any || g_site_rules;
}

void load_once(const char* tool) noexcept {
  const char* path = std::getenv("MPE_LOG_FILTER");
  if (!path || !*path) return;
  try {
    StatusOr<format::LogFilter> filter = format::LogFilter::read(path);
    if (!filter.ok()) {
      config::warn(std::string(tool) + ": MPE_LOG_FILTER: " + filter.status().message() +
                   "; recording without a filter");
      return;
    }
    apply(std::move(*filter));
  } catch (const std::bad_alloc&) {
    config::warn("MPE_LOG_FILTER: out of memory while reading the filter; recording without a filter");
  }
}

}  // namespace

void load(const char* tool) noexcept {
  std::call_once(g_loaded, [tool] { load_once(tool); });
}

bool site_left_out(uint32_t site) noexcept {
  if (site == 0 || site >= kMaxJudgedSites) return false;
  const uint8_t v = g_site_verdicts[site].load(std::memory_order_acquire);
  if (__builtin_expect(v != kUnknown, 1)) return v == kLeftOut;
  std::lock_guard<std::mutex> lock(g_symbolize_mutex);
  try {
    const bool out = g_filter->excludes_site(symbolize_callsite(*g_symbolizer, site));
    g_site_verdicts[site].store(out ? kLeftOut : kKept, std::memory_order_release);
    return out;
  } catch (const std::bad_alloc&) {
    return false;  // judged again at its next call
  }
}

bool records_rank(int rank) noexcept { return !g_filter || g_filter->records_rank(rank); }
bool records_at_level(int level) noexcept {
  return g_filter ? g_filter->records_at_level(level) : level != 0;
}
bool drops_messages() noexcept { return g_filter && g_filter->drops_messages(); }
std::string text() { return g_filter ? g_filter->text() : std::string(); }

}  // namespace mpe::call_filter
