// .mpelog -> Chrome/Perfetto JSON (the "Trace Event Format"), streamed: one chunk at a time.
// Message arrows need no matching pass: a send and a receive get the same flow id when they
// have the same key (communicator, source, destination, tag) and the same ordinal within it,
// which is how the reader matches them (MPI's non-overtaking rule). Memory: one chunk, one
// counter per key, one user-state stack per thread.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "mpe/interop.h"
#include "mpe/log_reader.h"
#include "user_states.h"

namespace mpe::interop {

namespace {

using log::Record;
using log::RecordKind;

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += c;
    }
  }
  return o;
}

// Microseconds with three decimals, exactly (no floating-point rounding of ns).
std::string micros(int64_t ns) {
  char b[32];
  const char* sign = ns < 0 ? "-" : "";
  const uint64_t a = ns < 0 ? static_cast<uint64_t>(-ns) : static_cast<uint64_t>(ns);
  std::snprintf(b, sizeof b, "%s%" PRIu64 ".%03" PRIu64, sign, a / 1000, a % 1000);
  return b;
}

using MessageKey = std::tuple<uint64_t, int32_t, int32_t, int32_t>;  // comm, src, dst, tag

// A flow id both ends compute alone; below 2^53 so JavaScript keeps it exact.
uint64_t flow_id(const MessageKey& k, uint64_t ordinal) {
  const uint64_t words[5] = {std::get<0>(k), static_cast<uint64_t>(static_cast<uint32_t>(std::get<1>(k))),
                             static_cast<uint64_t>(static_cast<uint32_t>(std::get<2>(k))),
                             static_cast<uint64_t>(static_cast<uint32_t>(std::get<3>(k))), ordinal};
  const uint64_t h = log::hash64(words, sizeof words) & ((uint64_t{1} << 53) - 1);
  return h ? h : 1;
}

class JsonOut {
 public:
  explicit JsonOut(FILE* f) : f_(f) {}
  void event(const std::string& body) {
    std::fputs(first_ ? "\n{" : ",\n{", f_);
    std::fputs(body.c_str(), f_);
    std::fputc('}', f_);
    first_ = false;
  }

 private:
  FILE* f_;
  bool first_ = true;
};

}  // namespace

Status mpelog_to_chrome(const std::string& log_path, const std::string& out_json, ChromeCounts* counts_out) {
  auto file = log::LogFile::open(log_path);
  if (!file.ok()) return Status(file.status().code(), log_path + ": " + file.status().message());
  const log::LogFile& log = *file;
  const log::Definitions& d = log.definitions();
  AtomicOutput out(out_json);
  std::vector<char> buffer(1 << 20);  // declared before the file: it outlives the fclose
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(out.tmp_path().c_str(), "w"), std::fclose);
  if (!f) return Status(StatusCode::kIoError, "cannot create " + out.tmp_path());
  std::setvbuf(f.get(), buffer.data(), _IOFBF, buffer.size());
  std::fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"mpe-tools\",\"program\":\"", f.get());
  std::fputs(json_escape(d.program).c_str(), f.get());
  std::fputs("\"},\"traceEvents\":[", f.get());
  JsonOut json(f.get());
  ChromeCounts counts;

  auto pt = [](uint32_t rank, uint32_t thread) {
    return "\"pid\":" + std::to_string(rank) + ",\"tid\":" + std::to_string(thread);
  };
  // Names: one process per rank, one thread per thread.
  for (const auto& rm : d.ranks) {
    json.event("\"ph\":\"M\",\"name\":\"process_name\"," + pt(rm.rank, 0) + ",\"args\":{\"name\":\"rank " +
               std::to_string(rm.rank) + (rm.host.empty() ? "" : " (" + json_escape(rm.host) + ")") + "\"}");
    json.event("\"ph\":\"M\",\"name\":\"process_sort_index\"," + pt(rm.rank, 0) +
               ",\"args\":{\"sort_index\":" + std::to_string(rm.rank) + "}");
    for (const auto& t : rm.threads)
      json.event("\"ph\":\"M\",\"name\":\"thread_name\"," + pt(rm.rank, t.index) + ",\"args\":{\"name\":\"thread " +
                 std::to_string(t.index) + " (tid " + std::to_string(t.tid) + ")\"}");
  }

  std::map<MessageKey, uint64_t> sends, recvs;  // next ordinal per key, at each end
  // One user-state stack per thread: chunks of different threads may interleave in the index.
  std::map<std::pair<uint32_t, uint32_t>, detail::UserStates> user_states;
  auto instant = [&](uint32_t rank, uint32_t thread, int64_t t, const std::string& name, const char* cat,
                     const std::string& args) {
    json.event("\"ph\":\"i\",\"s\":\"t\"," + pt(rank, thread) + ",\"ts\":" + micros(t) + ",\"name\":\"" +
               json_escape(name) + "\",\"cat\":\"" + cat + "\",\"args\":{" + args + "}");
    ++counts.instants;
  };
  auto slice = [&](uint32_t rank, uint32_t thread, int64_t start, int64_t dur, uint32_t cat) {
    json.event("\"ph\":\"X\"," + pt(rank, thread) + ",\"ts\":" + micros(start) + ",\"dur\":" + micros(dur) +
               ",\"name\":\"" + json_escape(log.category_name(cat)) + "\",\"cat\":\"" +
               (cat < log::kUserCategoryBase ? "MPI" : "user") + "\"");
    ++counts.slices;
  };

  Progress progress("writing Chrome JSON", log.index().size());
  for (size_t i = 0; i < log.index().size(); ++i) {
    const log::IndexEntry& e = log.index()[i];
    detail::UserStates& thread_states = user_states.try_emplace({e.rank, e.thread}, log).first->second;
    auto recs = log.read_chunk(i);
    if (!recs.ok()) return recs.status();
    const log::RankMeta& rm = d.ranks[e.rank];
    auto world = [&](uint32_t comm, int32_t r, int32_t* out, uint64_t* gid) {
      if (comm >= rm.comms.size()) return false;
      const log::CommDef& c = rm.comms[comm];
      if (c.index != comm || r < 0 || static_cast<size_t>(r) >= c.members.size()) return false;
      *out = c.members[static_cast<size_t>(r)];
      *gid = c.global_id;
      return true;
    };
    for (const Record& r : *recs) {
      const int64_t t = log.to_ns(e.rank, r.time);
      switch (static_cast<RecordKind>(r.kind)) {
        case RecordKind::kState:
          slice(e.rank, e.thread, t, log.duration_ns(e.rank, r.c), r.cat);
          break;
        case RecordKind::kSend:
        case RecordKind::kRecv: {
          const bool send = r.kind == static_cast<uint8_t>(RecordKind::kSend);
          int32_t peer;
          uint64_t gid;
          if (!world(r.comm, r.a, &peer, &gid)) break;  // unknown communicator: no arrow
          const auto me = static_cast<int32_t>(e.rank);
          const MessageKey key = send ? MessageKey{gid, me, peer, r.b} : MessageKey{gid, peer, me, r.b};
          const uint64_t id = flow_id(key, (send ? sends : recvs)[key]++);
          json.event(std::string("\"ph\":\"") + (send ? "s" : "f\",\"bp\":\"e") + "\",\"id\":" + std::to_string(id) +
                     "," + pt(e.rank, e.thread) + ",\"ts\":" + micros(t) +
                     ",\"name\":\"message\",\"cat\":\"message\",\"args\":{\"tag\":" + std::to_string(r.b) +
                     ",\"bytes\":" + std::to_string(r.c) + "}");
          ++(send ? counts.flow_starts : counts.flow_ends);
          break;
        }
        case RecordKind::kCollective:
          instant(e.rank, e.thread, t, log.category_name(r.cat), "collective",
                  "\"root\":" + std::to_string(r.a) + ",\"bytes_sent\":" + std::to_string(r.c) +
                      ",\"bytes_received\":" + std::to_string(r.b > 0 ? r.b : 0));
          break;
        case RecordKind::kMarker:
          instant(e.rank, e.thread, t, "MPI_Pcontrol", "marker",
                  "\"level\":" + std::to_string(r.a) + ",\"logging\":" + (r.b ? "true" : "false"));
          break;
        case RecordKind::kCommCreate:
          instant(e.rank, e.thread, t, "communicator created", "comm",
                  "\"index\":" + std::to_string(r.comm) + ",\"size\":" + std::to_string(r.a));
          break;
        case RecordKind::kUserEvent: {
          detail::UserStates::Closed c;
          const auto fed = thread_states.feed(r.cat, t, &c);
          if (fed == detail::UserStates::Fed::kEnded) slice(e.rank, e.thread, c.start, t - c.start, c.cat);
          if (fed == detail::UserStates::Fed::kLone)
            instant(e.rank, e.thread, t, log.category_name(r.cat), "user", "\"data\":" + std::to_string(r.c));
          break;
        }
        default:  // kSendCancel: the arrow already written stays (rare; see docs/interop.md)
          break;
      }
    }
    progress.advance();
  }
  for (auto& [where, states] : user_states)  // user states begun and never ended: instants
    for (const auto& [cat, t] : states.take_open())
      instant(where.first, where.second, t, log.category_name(cat), "user", "");
  std::fputs("\n]}\n", f.get());
  if (std::fflush(f.get()) != 0 || std::ferror(f.get()))
    return Status(StatusCode::kIoError, "writing " + out.tmp_path() + " failed");
  if (std::fclose(f.release()) != 0) return Status(StatusCode::kIoError, "closing " + out.tmp_path() + " failed");
  if (counts_out) *counts_out = counts;
  return out.commit();
}

}  // namespace mpe::interop
