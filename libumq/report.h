// libumq's report: each rank's call sites encoded for the gather, merged on rank 0 by site, and
// written as <prefix>.umq.txt and <prefix>.umq.json.
#pragma once

#include <string>
#include <vector>

#include "call_sites.h"
#include "queue_reader.h"

namespace mpe::tools::umq {

// Encodes this rank's call sites for the gather to rank 0. Throws std::bad_alloc.
std::string encode_sites(const std::vector<SiteRecord>& sites) MPE_HIDDEN;

// Merges every rank's encoded call sites (index = rank) by MPI routine and callsite_key() (the
// same site on every rank, PIE or not), ranks them by occurrences and writes <prefix>.umq.txt and
// <prefix>.umq.json. A rank whose bytes do not decode is left out, and a file that cannot be
// written is skipped, each with one line on stderr. Throws std::bad_alloc.
void write_report(const std::vector<std::string>& encoded, const VariableInfo& variable) MPE_HIDDEN;

}  // namespace mpe::tools::umq
