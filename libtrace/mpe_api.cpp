// MPE's logging API (mpe_log.h) and its Fortran bindings, recording into liblog's buffers.
#include <mpi.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "log_tool.h"
#include "mpe/callsite.h"
#include "mpe/clock.h"
#include "mpe/records.h"
#include "mpe/tool.h"
#include "mpe_log.h"

namespace {

// Allocated ids start here; ids a program picks itself (MPE1 style) map below it.
constexpr int kFirstAllocated = 0xC000;
std::atomic<int> g_next_id{kFirstAllocated};

// The category of an MPE event id.
uint16_t category(int id) {
  if (id >= mpe::format::kUserCategoryBase && id < 0x10000) return static_cast<uint16_t>(id);
  return static_cast<uint16_t>(mpe::format::kUserCategoryBase + (static_cast<unsigned>(id) & 0x3FFF));
}

struct NamedColor {
  const char* name;
  uint32_t rgb;
};
constexpr NamedColor kColors[] = {
    {"red", 0xFF0000},        {"green", 0x00FF00},       {"blue", 0x0000FF},      {"yellow", 0xFFFF00},
    {"cyan", 0x00FFFF},       {"magenta", 0xFF00FF},     {"orange", 0xFFA500},    {"purple", 0xA020F0},
    {"white", 0xFFFFFF},      {"black", 0x000000},       {"gray", 0xBEBEBE},      {"grey", 0xBEBEBE},
    {"brown", 0xA52A2A},      {"pink", 0xFFC0CB},        {"gold", 0xFFD700},      {"navy", 0x000080},
    {"seagreen", 0x2E8B57},   {"forestgreen", 0x228B22}, {"maroon", 0xB03060},    {"violet", 0xEE82EE},
    {"turquoise", 0x40E0D0},  {"khaki", 0xF0E68C},       {"salmon", 0xFA8072},    {"coral", 0xFF7F50},
    {"tomato", 0xFF6347},     {"orchid", 0xDA70D6},      {"plum", 0xDDA0DD},      {"steelblue", 0x4682B4},
    {"skyblue", 0x87CEEB},    {"lightblue", 0xADD8E6},   {"darkgreen", 0x006400}, {"limegreen", 0x32CD32},
    {"chartreuse", 0x7FFF00}, {"beige", 0xF5F5DC},       {"tan", 0xD2B48C},       {"wheat", 0xF5DEB3},
    {"aquamarine", 0x7FFFD4}, {"firebrick", 0xB22222},   {"slateblue", 0x6A5ACD}, {"hotpink", 0xFF69B4},
};

// Parses an X11 colour name or "#rrggbb"; gray when unknown.
uint32_t parse_color(const char* c) {
  if (!c) return 0xBEBEBE;
  if (c[0] == '#' && std::strlen(c) == 7) return static_cast<uint32_t>(std::strtoul(c + 1, nullptr, 16));
  std::string n;
  for (const char* p = c; *p; ++p)
    if (*p != ' ') n += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
  for (const auto& k : kColors)
    if (n == k.name) return k.rgb;
  return 0xBEBEBE;
}

// The return address of the MPE entry point the application called: its call site.
#define MPE_CALLER() reinterpret_cast<uintptr_t>(__builtin_return_address(0))

int log_event(int event, uint64_t data, uintptr_t caller) {
  if (!mpe::tools::log::active()) return MPE_LOG_NOT_INITIALIZED;
  if (!mpe::tools::log::logging()) return MPE_LOG_OK;
  mpe::tools::log::put_record(
      mpe::format::UserEventRecord{mpe_clock_now(), category(event), mpe::core::callsite_of(caller), data}
          .to_record());
  return MPE_LOG_OK;
}

// MPE_Log_event's data: the integer, or the first 8 bytes of the string when there is one.
int log_text_event(int event, int data, const char* bytebuf, uintptr_t caller) {
  uint64_t v = static_cast<uint32_t>(data);
  if (bytebuf) {
    v = 0;
    std::memcpy(&v, bytebuf, strnlen(bytebuf, sizeof v));
  }
  return log_event(event, v, caller);
}

// MPE_Log_send and MPE_Log_receive: a SendRecord or RecvRecord (the same fields), category 0, on
// MPI_COMM_WORLD.
template <class MessageRecord>
int log_message(int other, int tag, int size) {
  if (!mpe::tools::log::active()) return MPE_LOG_NOT_INITIALIZED;
  if (!mpe::tools::log::logging()) return MPE_LOG_OK;
  mpe::tools::log::put_record(
      MessageRecord{mpe_clock_now(), 0, other, tag, 0, size > 0 ? static_cast<uint64_t>(size) : 0}
          .to_record());
  return MPE_LOG_OK;
}

uint64_t first8(const char* p) {
  uint64_t v = 0;
  if (p) std::memcpy(&v, p, sizeof v);
  return v;
}

std::string fstring(const char* s, int len) {
  std::string v(s, static_cast<size_t>(len > 0 ? len : 0));
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

// Runs an API body that allocates; a failed allocation becomes MPE_LOG_NO_MEMORY, never an
// exception into the application (these are extern "C" and Fortran entry points).
template <typename Body>
int guarded(Body body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return MPE_LOG_NO_MEMORY;
  }
}

int define(const mpe::format::Category& c) noexcept {
  return mpe::tools::log::define_category(c).ok() ? MPE_LOG_OK : MPE_LOG_NO_MEMORY;
}

}  // namespace

extern "C" {

MPE_EXPORT int MPE_Init_log(void) {
  int up = 0;
  PMPI_Initialized(&up);
  return up ? MPE_LOG_OK : MPE_LOG_NOT_INITIALIZED;
}

MPE_EXPORT int MPE_Initialized_logging(void) { return mpe::tools::log::active() ? 1 : 0; }

MPE_EXPORT int MPE_Finish_log(const char* filename) {
  if (!filename || !*filename) return MPE_LOG_OK;
  return mpe::tools::log::set_finish_name(filename).ok() ? MPE_LOG_OK : MPE_LOG_NO_MEMORY;
}

MPE_EXPORT int MPE_Start_log(void) {
  mpe::tools::log::set_logging(true);
  return MPE_LOG_OK;
}

MPE_EXPORT int MPE_Stop_log(void) {
  mpe::tools::log::set_logging(false);
  return MPE_LOG_OK;
}

MPE_EXPORT int MPE_Log_get_state_eventIDs(int* start, int* end) {
  const int id = g_next_id.fetch_add(2);
  if (start) *start = id;
  if (end) *end = id + 1;
  return MPE_LOG_OK;
}

MPE_EXPORT int MPE_Log_get_solo_eventID(int* event) {
  const int id = g_next_id.fetch_add(1);
  if (event) *event = id;
  return MPE_LOG_OK;
}

MPE_EXPORT int MPE_Log_get_event_number(void) { return g_next_id.fetch_add(1); }

MPE_EXPORT int MPE_Describe_info_state(int start, int end, const char* name, const char* color, const char*) {
  return guarded([&] {
    mpe::format::Category c;
    c.id = category(start);
    c.end_id = category(end);
    c.kind = mpe::format::CategoryKind::kState;
    c.color = parse_color(color);
    c.name = name ? name : "state";
    return define(c);
  });
}

MPE_EXPORT int MPE_Describe_state(int start, int end, const char* name, const char* color) {
  return MPE_Describe_info_state(start, end, name, color, nullptr);
}

MPE_EXPORT int MPE_Describe_info_event(int event, const char* name, const char* color, const char*) {
  return guarded([&] {
    mpe::format::Category c;
    c.id = category(event);
    c.kind = mpe::format::CategoryKind::kEvent;
    c.color = parse_color(color);
    c.name = name ? name : "event";
    return define(c);
  });
}

MPE_EXPORT int MPE_Describe_event(int event, const char* name, const char* color) {
  return MPE_Describe_info_event(event, name, color, nullptr);
}

MPE_EXPORT int MPE_Log_event(int event, int data, const char* bytebuf) {
  return log_text_event(event, data, bytebuf, MPE_CALLER());
}

MPE_EXPORT int MPE_Log_bare_event(int event) { return log_event(event, 0, MPE_CALLER()); }

MPE_EXPORT int MPE_Log_info_event(int event, const char* bytebuf) {
  return log_event(event, first8(bytebuf), MPE_CALLER());
}

MPE_EXPORT int MPE_Log_pack(MPE_LOG_BYTES bytebuf, int* position, char tokentype, int count,
                            const void* data) {
  if (!bytebuf || !position || count < 0 || !data) return MPE_LOG_PACK_FAIL;
  size_t unit = 1;
  switch (tokentype) {
    case 'd':
    case 'x':
    case 'X':
      unit = sizeof(int);
      break;
    case 'E':
    case 'e':
    case 'f':
      unit = sizeof(double);
      break;
    case 'l':
      unit = sizeof(long);
      break;
    case 's':
    case 'c':
      unit = 1;
      break;
    default:
      return MPE_LOG_PACK_FAIL;
  }
  const size_t need = unit * static_cast<size_t>(count);
  if (*position < 0 || static_cast<size_t>(*position) + need > MPE_LOG_BYTESIZE) return MPE_LOG_PACK_FAIL;
  std::memcpy(bytebuf + *position, data, need);
  *position += static_cast<int>(need);
  return MPE_LOG_OK;
}

MPE_EXPORT int MPE_Log_sync_clocks(void) { return MPE_LOG_OK; }

MPE_EXPORT int MPE_Log_send(int other, int tag, int size) {
  return log_message<mpe::format::SendRecord>(other, tag, size);
}

MPE_EXPORT int MPE_Log_receive(int other, int tag, int size) {
  return log_message<mpe::format::RecvRecord>(other, tag, size);
}

// Fortran bindings (gfortran: lower case, one trailing underscore, hidden string lengths last).
MPE_EXPORT void mpe_init_log_(int* ierr) { *ierr = MPE_Init_log(); }
MPE_EXPORT void mpe_start_log_(int* ierr) { *ierr = MPE_Start_log(); }
MPE_EXPORT void mpe_stop_log_(int* ierr) { *ierr = MPE_Stop_log(); }
MPE_EXPORT void mpe_log_sync_clocks_(int* ierr) { *ierr = MPE_Log_sync_clocks(); }
MPE_EXPORT void mpe_log_get_state_eventids_(int* start, int* end, int* ierr) {
  *ierr = MPE_Log_get_state_eventIDs(start, end);
}
MPE_EXPORT void mpe_log_get_solo_eventid_(int* event, int* ierr) { *ierr = MPE_Log_get_solo_eventID(event); }
MPE_EXPORT int mpe_log_get_event_number_() { return MPE_Log_get_event_number(); }
MPE_EXPORT void mpe_describe_state_(int* start, int* end, const char* name, const char* color, int* ierr,
                                    int name_len, int color_len) {
  *ierr = guarded([&] {
    return MPE_Describe_state(*start, *end, fstring(name, name_len).c_str(),
                              fstring(color, color_len).c_str());
  });
}
MPE_EXPORT void mpe_describe_event_(int* event, const char* name, const char* color, int* ierr, int name_len,
                                    int color_len) {
  *ierr = guarded([&] {
    return MPE_Describe_event(*event, fstring(name, name_len).c_str(), fstring(color, color_len).c_str());
  });
}
MPE_EXPORT void mpe_log_event_(int* event, int* data, const char* text, int* ierr, int text_len) {
  const uintptr_t caller = MPE_CALLER();
  *ierr = guarded([&] {
    const std::string t = fstring(text, text_len);
    return log_text_event(*event, *data, t.empty() ? nullptr : t.c_str(), caller);
  });
}
MPE_EXPORT void mpe_log_bare_event_(int* event, int* ierr) { *ierr = log_event(*event, 0, MPE_CALLER()); }
MPE_EXPORT void mpe_log_send_(int* other, int* tag, int* size, int* ierr) {
  *ierr = MPE_Log_send(*other, *tag, *size);
}
MPE_EXPORT void mpe_log_receive_(int* other, int* tag, int* size, int* ierr) {
  *ierr = MPE_Log_receive(*other, *tag, *size);
}
MPE_EXPORT void mpe_finish_log_(const char* name, int* ierr, int name_len) {
  *ierr = guarded([&] { return MPE_Finish_log(fstring(name, name_len).c_str()); });
}

}  // extern "C"
