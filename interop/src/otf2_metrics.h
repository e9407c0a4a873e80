// MPI_T counters (kCounter records, mpe/log_counters.h) as OTF2 metrics, both ways.
//
// Out, as Score-P's metric plugins write theirs: per counter of the run (run-wide id c) a
// MetricMember c-1 and a MetricClass c-1 holding it (ASYNCHRONOUS: samples come when a value
// changed at an MPI call, not at every enter and leave; recorder kind ABSTRACT), then one Metric
// event per sample on the location (rank, thread) that read it. Counters, timers and aggregates
// are recorded as deltas: mode RELATIVE_LAST (the value since the location's previous sample);
// the other classes ABSOLUTE_POINT. The value keeps its 64 bits in its type (UINT64, INT64,
// DOUBLE). The member's description starts with "[MPI_T <class>, <datatype>]" (", per
// communicator" for variables bound to communicators) so that our reader restores the
// definition; a sample of such a variable carries its communicator in the attribute
// kCommAttribute (type COMM), and the world rank of its largest element in kPeerAttribute.
//
// In: every metric member of an archive becomes a counter (ours come back as they were; other
// tools' are read by their mode: RELATIVE modes as deltas, ACCUMULATED ones made deltas by
// differencing per location, ABSOLUTE ones as values of class level). A rank gets a counter's
// definition on its first sample.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mpe/log_counters.h"
#include "mpe/log_defs.h"

namespace mpe::interop::detail {

// The archive's attributes (no other attribute is defined by our writer).
inline constexpr OTF2_AttributeRef kCommAttribute = 0;  // OTF2_TYPE_COMM: the sample's communicator
inline constexpr OTF2_AttributeRef kPeerAttribute = 1;  // OTF2_TYPE_INT32: its largest element's rank

class MetricExport {
 public:
  explicit MetricExport(const format::LogFile& log) : log_(log), counters_(log) {}
  bool empty() const { return counters_.all().empty(); }
  // Registers the definitions' strings (ref(s) returns the string's ref); call before write.
  void strings(const std::function<OTF2_StringRef(const std::string&)>& ref);
  // Attributes, metric members and classes.
  OTF2_ErrorCode write_definitions(OTF2_GlobalDefWriter* w) const;
  // A kCounter record of `rank` as a Metric event at time t; comm: the OTF2 communicator of the
  // record's, OTF2_UNDEFINED_COMM for a process-wide variable.
  OTF2_ErrorCode write_event(OTF2_EvtWriter* w, uint64_t t, uint32_t rank, const format::CounterRecord& r,
                             OTF2_CommRef comm) const;

 private:
  struct Strings {
    OTF2_StringRef name, description, unit;
  };
  const format::LogFile& log_;
  format::Counters counters_;
  std::vector<Strings> strings_;  // by run-wide id - 1
  OTF2_StringRef comm_name_ = 0, comm_desc_ = 0, peer_name_ = 0, peer_desc_ = 0;
};

class MetricImport {
 public:
  // Global definitions, as the reader's callbacks get them.
  void member(OTF2_MetricMemberRef self, std::string name, std::string description, OTF2_MetricMode mode,
              OTF2_Type type);
  void metric_class(OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef* members);
  // The records of one Metric event of location `loc` on `rank` (one per member), defining the
  // rank's counters on first use in rm. comm_index maps an OTF2 communicator to the rank's index.
  void records(uint32_t rank, format::RankMeta* rm, uint64_t loc, uint64_t ticks, OTF2_MetricRef metric,
               uint8_t n, const OTF2_Type* types, const OTF2_MetricValue* values,
               OTF2_AttributeList* attributes, const std::function<uint32_t(OTF2_CommRef)>& comm_index,
               std::vector<format::Record>* out);

 private:
  struct Member {
    std::string name;
    format::CounterDef def;    // id unset: per rank
    bool accumulated = false;  // values since the start: made deltas per location
  };
  std::map<OTF2_MetricMemberRef, Member> members_;
  std::map<OTF2_MetricRef, std::vector<OTF2_MetricMemberRef>> classes_;
  std::map<std::pair<uint32_t, OTF2_MetricMemberRef>, uint16_t> local_;  // (rank, member) -> local id
  std::map<std::pair<uint64_t, OTF2_MetricMemberRef>, uint64_t>
      last_;  // (location, member) -> last raw value
};

}  // namespace mpe::interop::detail
