// libumq's report: the gather encoding of call sites, and the files the shared writer's merge and
// text and JSON forms (umq_report.h) go to.
#include "report.h"

#include <utility>

#include "mpe/byte_codec.h"
#include "mpe/config.h"
#include "mpe/file_io.h"
#include "mpe/frame.h"

namespace mpe::tools::umq {

namespace {

// The gather encoding (mpe::ByteWriter, the one the tools share): each site is its fields in a
// fixed order: mpi_function, communicator, occurrences, sum, max, the peer count and (peer, times,
// max) per peer, then its frames (encode_frames, mpe/frame.h). Not JSON: nlohmann's parser cannot
// fail safely on a rank short of memory (see EmptiedOnExit in umq_report.cpp).

// Decodes one rank's sites; false on bytes encode_sites did not write.
bool decode_sites(const std::string& bytes, std::vector<SiteRecord>* out) {
  ByteReader in(bytes.data(), bytes.size());
  while (in.left() > 0) {
    SiteRecord r;
    uint32_t npeers = 0;
    if (!in.str(&r.mpi_function) || !in.str(&r.communicator) || !in.u64(&r.occurrences) ||
        !in.u64(&r.sum_length) || !in.u64(&r.max_length) || !in.count(&npeers, 20))
      return false;
    for (uint32_t i = 0; i < npeers; ++i) {
      PeerCount p;
      int64_t peer = 0;
      if (!in.i64(&peer) || !in.u64(&p.times_top) || !in.u64(&p.max_queued)) return false;
      p.peer = static_cast<int>(peer);
      r.peers.push_back(p);
    }
    if (!decode_frames(in, &r.stack)) return false;
    out->push_back(std::move(r));
  }
  return true;
}

// Writes one report file through the checked writer, or says on stderr why not (and leaves no
// half file under its name).
void write_file(const std::string& suffix, const std::string& text) {
  const std::string path = mpe::config::output_path(suffix);
  const Status written = io::write_file(path, text);
  if (!written.ok())
    mpe::config::warn("umq: the report was not written: " + written.message() +
                      "; check that the output directory exists, is writable and has room (MPE_LOG_DIR, "
                      "MPE_LOGFILE_PREFIX)");
}

}  // namespace

std::string encode_sites(const std::vector<SiteRecord>& sites) {
  ByteWriter out;
  for (const SiteRecord& s : sites) {
    out.str(s.mpi_function);
    out.str(s.communicator);
    out.u64(s.occurrences);
    out.u64(s.sum_length);
    out.u64(s.max_length);
    out.u32(static_cast<uint32_t>(s.peers.size()));
    for (const PeerCount& p : s.peers) {
      out.i64(p.peer);
      out.u64(p.times_top);
      out.u64(p.max_queued);
    }
    encode_frames(out, s.stack);
  }
  return std::move(out.data());
}

void write_report(const std::vector<std::string>& encoded, const VariableInfo& variable) {
  analysis::umq::SiteMerge merge;
  const int nranks = static_cast<int>(encoded.size());
  for (int r = 0; r < nranks; ++r) {
    std::vector<SiteRecord> sites;
    if (!decode_sites(encoded[static_cast<size_t>(r)], &sites)) {
      mpe::config::warn("umq: rank " + std::to_string(r) +
                        "'s call sites are unreadable; they are left out of the report");
      continue;
    }
    merge.add_rank(sites, r);
  }
  const std::vector<const analysis::umq::MergedSite*> sites = merge.ranked();
  write_file(".umq.txt", analysis::umq::report_text(sites, variable, nranks));
  write_file(".umq.json", analysis::umq::report_json(sites, variable, nranks));
}

}  // namespace mpe::tools::umq
