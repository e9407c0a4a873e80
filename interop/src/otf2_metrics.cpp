// MPI_T counters <-> OTF2 metrics (otf2_metrics.h).
#include "otf2_metrics.h"

#include <cstring>

#include "mpe/pvar_class.h"
#include "mpe/records.h"

namespace mpe::interop::detail {

namespace {

constexpr const char* kPrefix = "[MPI_T ";
constexpr const char* kPerComm = "per communicator";

OTF2_Type otf2_type(PvarValueKind k) {
  return k == PvarValueKind::kDouble   ? OTF2_TYPE_DOUBLE
         : k == PvarValueKind::kSigned ? OTF2_TYPE_INT64
                                       : OTF2_TYPE_UINT64;
}

PvarValueKind value_kind(OTF2_Type t) {
  switch (t) {
    case OTF2_TYPE_DOUBLE:
    case OTF2_TYPE_FLOAT:
      return PvarValueKind::kDouble;
    case OTF2_TYPE_INT8:
    case OTF2_TYPE_INT16:
    case OTF2_TYPE_INT32:
    case OTF2_TYPE_INT64:
      return PvarValueKind::kSigned;
    default:
      return PvarValueKind::kUnsigned;
  }
}

// "[MPI_T level, MPI_UNSIGNED, per communicator] description": what our writer puts first.
std::string describe(const format::CounterDef& d) {
  std::string s = std::string(kPrefix) + pvar_class_name(d.cls) + ", " + d.datatype;
  if (d.per_comm) s += std::string(", ") + kPerComm;
  return s + "] " + d.description;
}

// Restores what describe() wrote into def; false when the description is another tool's.
bool parse_description(const std::string& text, format::CounterDef* def) {
  if (text.rfind(kPrefix, 0) != 0) return false;
  const size_t end = text.find("] ");
  if (end == std::string::npos) return false;
  std::vector<std::string> parts;
  for (size_t a = std::strlen(kPrefix); a <= end;) {
    size_t b = text.find(", ", a);
    if (b == std::string::npos || b > end) b = end;
    parts.push_back(text.substr(a, b - a));
    a = b + 2;
  }
  if (parts.size() < 2) return false;
  bool known = false;
  for (int c = 0; c < kPvarClassCount; ++c)
    if (parts[0] == pvar_class_name(static_cast<PvarClass>(c)))
      def->cls = static_cast<PvarClass>(c), known = true;
  if (!known) return false;
  def->semantics = pvar_semantics(def->cls);
  def->datatype = parts[1];
  def->per_comm = parts.size() > 2 && parts[2] == kPerComm;
  def->description = text.substr(end + 2);
  return true;
}

}  // namespace

void MetricExport::strings(const std::function<OTF2_StringRef(const std::string&)>& ref) {
  strings_.clear();
  if (empty()) return;
  for (const format::Counter& c : counters_.all())
    strings_.push_back(Strings{ref(c.def.name), ref(describe(c.def)), ref("#")});
  comm_name_ = ref("MPI_T communicator");
  comm_desc_ = ref("the communicator whose MPI_T handle a metric sample was read from");
  peer_name_ = ref("MPI_T element");
  peer_desc_ = ref("the rank, in the sample's communicator, of the element with the largest value");
}

OTF2_ErrorCode MetricExport::write_definitions(OTF2_GlobalDefWriter* w) const {
  if (empty()) return OTF2_SUCCESS;
  OTF2_ErrorCode e =
      OTF2_GlobalDefWriter_WriteAttribute(w, kCommAttribute, comm_name_, comm_desc_, OTF2_TYPE_COMM);
  if (e == OTF2_SUCCESS)
    e = OTF2_GlobalDefWriter_WriteAttribute(w, kPeerAttribute, peer_name_, peer_desc_, OTF2_TYPE_INT32);
  for (size_t k = 0; k < counters_.all().size() && e == OTF2_SUCCESS; ++k) {
    const format::CounterDef& d = counters_.all()[k].def;
    const OTF2_MetricMemberRef ref = static_cast<OTF2_MetricMemberRef>(k);
    const OTF2_MetricMode mode =
        d.semantics == PvarSemantics::kDelta ? OTF2_METRIC_RELATIVE_LAST : OTF2_METRIC_ABSOLUTE_POINT;
    e = OTF2_GlobalDefWriter_WriteMetricMember(w, ref, strings_[k].name, strings_[k].description,
                                               OTF2_METRIC_TYPE_OTHER, mode, otf2_type(d.kind),
                                               OTF2_BASE_DECIMAL, 0, strings_[k].unit);
    if (e == OTF2_SUCCESS)
      e = OTF2_GlobalDefWriter_WriteMetricClass(w, static_cast<OTF2_MetricRef>(k), 1, &ref,
                                                OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
  }
  return e;
}

OTF2_ErrorCode MetricExport::write_event(OTF2_EvtWriter* w, uint64_t t, uint32_t rank,
                                         const format::CounterRecord& r, OTF2_CommRef comm) const {
  const uint32_t id = counters_.id(rank, r.counter);
  const format::Counter* c = counters_.counter(id);
  if (!c) return OTF2_SUCCESS;  // a record without its definition: nothing to name it by
  const OTF2_Type type = otf2_type(c->def.kind);
  OTF2_MetricValue value;
  value.unsigned_int = r.value_bits;  // the value's 64 bits, in its type
  OTF2_AttributeList* attrs = nullptr;
  if (comm != OTF2_UNDEFINED_COMM) {
    attrs = OTF2_AttributeList_New();
    OTF2_AttributeList_AddCommRef(attrs, kCommAttribute, comm);
    if (r.top_element >= 0) OTF2_AttributeList_AddInt32(attrs, kPeerAttribute, r.top_element);
  }
  const OTF2_ErrorCode e =
      OTF2_EvtWriter_Metric(w, attrs, t, static_cast<OTF2_MetricRef>(id - 1), 1, &type, &value);
  if (attrs) OTF2_AttributeList_Delete(attrs);
  return e;
}

void MetricImport::member(OTF2_MetricMemberRef self, std::string name, std::string description,
                          OTF2_MetricMode mode, OTF2_Type type) {
  Member m;
  m.name = name;
  m.def.name = std::move(name);
  m.def.kind = value_kind(type);
  if (!parse_description(description, &m.def)) {
    // Another tool's metric: a counter when it adds up, else a level.
    const int value = mode & OTF2_METRIC_VALUE_MASK;
    m.def.cls = value == OTF2_METRIC_VALUE_ABSOLUTE ? PvarClass::kLevel : PvarClass::kCounter;
    m.def.semantics = pvar_semantics(m.def.cls);
    m.def.description = std::move(description);
    m.def.datatype = m.def.kind == PvarValueKind::kDouble ? "MPI_DOUBLE" : "MPI_UNSIGNED_LONG_LONG";
    m.accumulated = value == OTF2_METRIC_VALUE_ACCUMULATED;
  }
  members_[self] = std::move(m);
}

void MetricImport::metric_class(OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef* members) {
  classes_[self].assign(members, members + n);
}

void MetricImport::records(uint32_t rank, format::RankMeta* rm, uint64_t loc, uint64_t ticks,
                           OTF2_MetricRef metric, uint8_t n, const OTF2_Type* types,
                           const OTF2_MetricValue* values, OTF2_AttributeList* attributes,
                           const std::function<uint32_t(OTF2_CommRef)>& comm_index,
                           std::vector<format::Record>* out) {
  const auto cls = classes_.find(metric);
  if (cls == classes_.end()) return;  // a metric instance or an undefined class: not read
  uint32_t comm = format::kUnknownComm;
  int32_t peer = -1;
  OTF2_CommRef c;
  if (attributes && OTF2_AttributeList_GetCommRef(attributes, kCommAttribute, &c) == OTF2_SUCCESS)
    comm = comm_index(c);
  if (attributes) OTF2_AttributeList_GetInt32(attributes, kPeerAttribute, &peer);
  for (uint8_t k = 0; k < n && k < cls->second.size(); ++k) {
    const auto m = members_.find(cls->second[k]);
    if (m == members_.end()) continue;
    auto [it, fresh] = local_.try_emplace({rank, m->first}, static_cast<uint16_t>(rm->counters.size()));
    if (fresh) {
      format::CounterDef def = m->second.def;
      def.id = it->second;
      rm->counters.push_back(std::move(def));
    }
    uint64_t raw = values[k].unsigned_int;
    if (value_kind(types[k]) != m->second.def.kind) {  // a type other than its member's: convert
      const double v = types[k] == OTF2_TYPE_DOUBLE ? values[k].floating_point
                       : value_kind(types[k]) == PvarValueKind::kSigned
                           ? static_cast<double>(values[k].signed_int)
                           : static_cast<double>(values[k].unsigned_int);
      if (m->second.def.kind == PvarValueKind::kDouble)
        std::memcpy(&raw, &v, sizeof raw);
      else
        raw = static_cast<uint64_t>(static_cast<int64_t>(v));
    }
    if (m->second.accumulated) {  // since the start: the delta since this location's previous sample
      uint64_t& last = last_[{loc, m->first}];
      uint64_t delta = raw - last;
      if (m->second.def.kind == PvarValueKind::kDouble) {
        double a, b;
        std::memcpy(&a, &raw, sizeof a);
        std::memcpy(&b, &last, sizeof b);
        const double d = a - b;
        std::memcpy(&delta, &d, sizeof delta);
      }
      last = raw;
      raw = delta;
    }
    out->push_back(
        format::CounterRecord{ticks, it->second, comm, comm == format::kUnknownComm ? -1 : peer, 0, raw}
            .to_record());
  }
}

}  // namespace mpe::interop::detail
