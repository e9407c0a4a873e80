// The routine table's lookups (mpe/routine.h) and the default colours of MPI routines.
#include "mpe/routine.h"

#include <algorithm>
#include <cstring>

#include "mpe/log_reader.h"
#include "routine_table.h"

namespace mpe::format {

namespace {

const detail::RoutineRow* find_row(std::string_view name) {
  const detail::RoutineRow* end = detail::kRoutineRows + detail::kRoutineRowCount;
  const detail::RoutineRow* it =
      std::lower_bound(detail::kRoutineRows, end, name,
                       [](const detail::RoutineRow& r, std::string_view n) { return r.name < n; });
  return it != end && it->name == name ? it : nullptr;
}

}  // namespace

RoutineInfo routine_by_name(std::string_view name) {
  const detail::RoutineRow* row = find_row(name);
  if (!row && name.ends_with("_c")) row = find_row(name.substr(0, name.size() - 2));  // large-count twin
  if (!row) return RoutineInfo{};
  return RoutineInfo{row->family, row->mode, row->shape, row->send_mode, row->rma, row->cls};
}

const RoutineInfo& routine_of(const LogFile& file, uint32_t cat) {
  static const RoutineInfo kUnknown;
  const Category* c = file.category(cat);
  return c ? c->routine : kUnknown;
}

uint32_t default_mpi_color(const RoutineInfo& r) {
  switch (r.family) {
    case RoutineFamily::kCompletion:
      return 0xD03030;
    case RoutineFamily::kCollective:
      return r.shape == CollectiveShape::kBarrier ? 0xFFD700 : 0xFF8C00;
    case RoutineFamily::kSendrecv:
      return 0x8A2BE2;
    case RoutineFamily::kSend:
      return 0x1E90FF;
    case RoutineFamily::kRecv:
      return 0x32CD32;
    case RoutineFamily::kProbe:
      return 0x20B2AA;
    case RoutineFamily::kLifeCycle:
      return 0x808080;
    case RoutineFamily::kPcontrol:
      return 0xFFFFFF;
    case RoutineFamily::kFileIo:
      return 0x8B4513;
    case RoutineFamily::kRmaOp:
    case RoutineFamily::kRmaSync:
    case RoutineFamily::kWinCreate:
      return 0xDA70D6;
    case RoutineFamily::kNone:
    case RoutineFamily::kRequest:
    case RoutineFamily::kCommCreate:
    case RoutineFamily::kCommFree:
      break;
  }
  return 0xA0A0A0;
}

uint32_t default_mpi_color(std::string_view name) { return default_mpi_color(routine_by_name(name)); }

}  // namespace mpe::format
