// The pieces of a wait-state report that the spread replay sends to process 0 and adds up there,
// and the clock shifts decided from the backward messages' constraints (waits_report_parts.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpe/log_reader.h"
#include "mpe/waits.h"

namespace mpe::analysis::waits {

// Per rank pair with a backward message, (source << 32 | destination): the tightest constraint.
using Constraints = std::unordered_map<uint64_t, int64_t>;

// A report with every per-rank table sized to the log's ranks and nothing in it.
Report empty_report(const format::LogFile& file);
// A report and its constraints as bytes, for process 0.
std::string pack(const Report& r, const Constraints& need);
// Adds a packed report into `into` and its constraints into `need` (the tightest of each pair).
void unpack_into(const std::string& bytes, Report* into, Constraints* need);
// The reader's per-rank causality shifts from the constraints (endpoints.h's causality_shifts):
// all 0 without any.
std::vector<int64_t> shifts_for(const Constraints& need, uint32_t nranks);

}  // namespace mpe::analysis::waits
