// libumq's report: the gather encoding of call sites, and the files the shared writer's merge and
// text and JSON forms (umq_report.h) go to.
#include "report.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "mpe/byte_codec.h"
#include "mpe/config.h"

namespace mpe::libumq {

namespace {

// The gather encoding (mpe::ByteWriter): each site is its fields in a fixed order: mpi_function,
// communicator, occurrences, sum, max, the peer count and (peer, times, max) per peer, the frame
// count and (function, file, line, module, offset) per frame. Not JSON: nlohmann's parser cannot fail
// safely on a rank short of memory (see EmptiedOnExit in umq_report.cpp).

// Decodes one rank's sites; false on bytes encode_sites did not write.
bool decode_sites(const std::string& bytes, std::vector<SiteRecord>* out) {
  ByteReader in(bytes.data(), bytes.size());
  while (in.left() > 0) {
    SiteRecord r;
    uint32_t npeers = 0, nframes = 0;
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
    if (!in.count(&nframes, 20)) return false;
    for (uint32_t i = 0; i < nframes; ++i) {
      Frame f;
      int64_t line = 0;
      uint64_t offset = 0;
      if (!in.str(&f.function) || !in.str(&f.file) || !in.i64(&line) || !in.str(&f.module) ||
          !in.u64(&offset))
        return false;
      f.line = static_cast<int>(line);
      f.offset = static_cast<uintptr_t>(offset);
      r.stack.push_back(std::move(f));
    }
    out->push_back(std::move(r));
  }
  return true;
}

// Opens a report file for writing, or says on stderr why not.
FILE* open_report(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) mpe::config::warn("umq: cannot write " + path + ": " + std::strerror(errno));
  return f;
}

// Closes a report file, saying on stderr when a write failed.
void close_report(FILE* f, const std::string& path) {
  const bool failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || failed)
    mpe::config::warn("umq: writing " + path + " failed: " + std::strerror(errno));
}

// Writes one report file, or says on stderr why not.
void write_file(const std::string& suffix, const std::string& text) {
  const std::string path = mpe::config::output_path(suffix);
  FILE* f = open_report(path);
  if (!f) return;
  std::fputs(text.c_str(), f);
  close_report(f, path);
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
    out.u32(static_cast<uint32_t>(s.stack.size()));
    for (const Frame& f : s.stack) {
      out.str(f.function);
      out.str(f.file);
      out.i64(f.line);
      out.str(f.module);
      out.u64(f.offset);
    }
  }
  return std::move(out.data());
}

void write_report(const std::vector<std::string>& encoded, const VariableInfo& variable) {
  umq::SiteMerge merge;
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
  const std::vector<const umq::MergedSite*> sites = merge.ranked();
  write_file(".umq.txt", umq::report_text(sites, variable, nranks));
  write_file(".umq.json", umq::report_json(sites, variable, nranks));
}

}  // namespace mpe::libumq
