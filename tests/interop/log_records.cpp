// Prints every record of a .mpelog in stored order, one per line, for tests that check records
// `mpe print` does not show (the request records, kinds 9 and 10) and their order:
//   r<rank>.t<thread> <kind> <time ns> <category> a=<a> b=<b> comm=<members> c=<c>
// kind is the RecordKind's number; for a state (kind 1) c is its duration in ns; comm lists the
// communicator's world ranks ("-" for none or unknown), so that logs whose communicator numbering
// differs (a log and its OTF2 round trip) print alike.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "mpe/log_reader.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE.mpelog\n", argv[0]);
    return 2;
  }
  auto file = mpe::format::LogFile::open(argv[1]);
  if (!file.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[1], file.status().to_string().c_str());
    return 1;
  }
  const auto& ranks = file->definitions().ranks;
  for (size_t i = 0; i < file->index().size(); ++i) {
    const auto& e = file->index()[i];
    auto recs = file->read_chunk(i);
    if (!recs.ok()) {
      std::fprintf(stderr, "%s: %s\n", argv[1], recs.status().to_string().c_str());
      return 1;
    }
    for (const mpe::format::Record& r : *recs) {
      const auto kind = static_cast<mpe::format::RecordKind>(r.kind);
      std::string comm = "-";
      if (kind != mpe::format::RecordKind::kState && e.rank < ranks.size())
        for (const auto& c : ranks[e.rank].comms)
          if (c.index == r.comm && kind != mpe::format::RecordKind::kRequestPost &&
              kind != mpe::format::RecordKind::kRequestDone) {
            comm.clear();
            for (int32_t m : c.members) comm += (comm.empty() ? "" : ",") + std::to_string(m);
          }
      const uint64_t c = kind == mpe::format::RecordKind::kState
                             ? static_cast<uint64_t>(file->duration_ns(e.rank, r.c))
                             : r.c;
      std::printf("r%u.t%u %u %" PRId64 " %s a=%d b=%d comm=%s c=%" PRIu64 "\n", e.rank, e.thread, r.kind,
                  file->to_ns(e.rank, r.time), file->category_name(r.cat).c_str(), r.a, r.b, comm.c_str(), c);
    }
  }
  return 0;
}
