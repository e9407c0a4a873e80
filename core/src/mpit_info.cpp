// Describing MPI_T variables: class, datatype, binding, verbosity and scope names, and the lists
// of performance and control variables (for `mpe mpit` and the shared reader's lookups).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mpe/mpit.h"

namespace mpe::mpit {

bool pvar_class(int mpi_class, PvarClass* out) {
  // The MPI_T_PVAR_CLASS_* values differ between implementations: compare with the macros.
  static const struct {
    int mpi;
    PvarClass ours;
  } kClasses[] = {
      {MPI_T_PVAR_CLASS_STATE, PvarClass::kState},
      {MPI_T_PVAR_CLASS_LEVEL, PvarClass::kLevel},
      {MPI_T_PVAR_CLASS_SIZE, PvarClass::kSize},
      {MPI_T_PVAR_CLASS_PERCENTAGE, PvarClass::kPercentage},
      {MPI_T_PVAR_CLASS_HIGHWATERMARK, PvarClass::kHighWatermark},
      {MPI_T_PVAR_CLASS_LOWWATERMARK, PvarClass::kLowWatermark},
      {MPI_T_PVAR_CLASS_COUNTER, PvarClass::kCounter},
      {MPI_T_PVAR_CLASS_AGGREGATE, PvarClass::kAggregate},
      {MPI_T_PVAR_CLASS_TIMER, PvarClass::kTimer},
      {MPI_T_PVAR_CLASS_GENERIC, PvarClass::kGeneric},
  };
  for (const auto& c : kClasses)
    if (c.mpi == mpi_class) {
      *out = c.ours;
      return true;
    }
  return false;
}

namespace {

// The datatypes MPI_T variables use (MPI-4, section 15.3.5), with their C sizes: MPI_Type_size
// may not be called before MPI_Init, and `mpe mpit` never calls it.
const struct {
  MPI_Datatype type;
  const char* name;
  int size;
} kTypes[] = {
    {MPI_INT, "MPI_INT", sizeof(int)},
    {MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(unsigned)},
    {MPI_LONG, "MPI_LONG", sizeof(long)},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(unsigned long)},
    {MPI_LONG_LONG, "MPI_LONG_LONG", sizeof(long long)},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long)},
    {MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count)},
    {MPI_DOUBLE, "MPI_DOUBLE", sizeof(double)},
    {MPI_CHAR, "MPI_CHAR", sizeof(char)},
};

}  // namespace

std::string type_name(MPI_Datatype t) {
  for (const auto& k : kTypes)
    if (k.type == t) return k.name;
  return "datatype?";
}

int type_size(MPI_Datatype t) {
  for (const auto& k : kTypes)
    if (k.type == t) return k.size;
  return 0;
}

const char* bind_name(int bind) {
  static const struct {
    int bind;
    const char* name;
  } kBinds[] = {
      {MPI_T_BIND_NO_OBJECT, "no object"},
      {MPI_T_BIND_MPI_COMM, "communicator"},
      {MPI_T_BIND_MPI_DATATYPE, "datatype"},
      {MPI_T_BIND_MPI_ERRHANDLER, "errhandler"},
      {MPI_T_BIND_MPI_FILE, "file"},
      {MPI_T_BIND_MPI_GROUP, "group"},
      {MPI_T_BIND_MPI_OP, "op"},
      {MPI_T_BIND_MPI_REQUEST, "request"},
      {MPI_T_BIND_MPI_WIN, "window"},
      {MPI_T_BIND_MPI_MESSAGE, "message"},
      {MPI_T_BIND_MPI_INFO, "info"},
  };
  for (const auto& b : kBinds)
    if (b.bind == bind) return b.name;
  return "object?";
}

const char* verbosity_name(int verbosity) {
  static const struct {
    int v;
    const char* name;
  } kLevels[] = {
      {MPI_T_VERBOSITY_USER_BASIC, "user/basic"},     {MPI_T_VERBOSITY_USER_DETAIL, "user/detail"},
      {MPI_T_VERBOSITY_USER_ALL, "user/all"},         {MPI_T_VERBOSITY_TUNER_BASIC, "tuner/basic"},
      {MPI_T_VERBOSITY_TUNER_DETAIL, "tuner/detail"}, {MPI_T_VERBOSITY_TUNER_ALL, "tuner/all"},
      {MPI_T_VERBOSITY_MPIDEV_BASIC, "mpidev/basic"}, {MPI_T_VERBOSITY_MPIDEV_DETAIL, "mpidev/detail"},
      {MPI_T_VERBOSITY_MPIDEV_ALL, "mpidev/all"},
  };
  for (const auto& l : kLevels)
    if (l.v == verbosity) return l.name;
  return "verbosity?";
}

const char* scope_name(int scope) {
  static const struct {
    int s;
    const char* name;
  } kScopes[] = {
      {MPI_T_SCOPE_CONSTANT, "constant"}, {MPI_T_SCOPE_READONLY, "readonly"}, {MPI_T_SCOPE_LOCAL, "local"},
      {MPI_T_SCOPE_GROUP, "group"},       {MPI_T_SCOPE_GROUP_EQ, "group_eq"}, {MPI_T_SCOPE_ALL, "all"},
      {MPI_T_SCOPE_ALL_EQ, "all_eq"},
  };
  for (const auto& s : kScopes)
    if (s.s == scope) return s.name;
  return "scope?";
}

namespace {

// Fills *out from MPI_T_pvar_get_info; false when the query fails.
bool pvar_info(int i, PvarInfo* out) {
  char name[256], desc[1024];
  int name_len = sizeof name, desc_len = sizeof desc;
  int verbosity, var_class, bind, readonly, continuous, atomic;
  MPI_Datatype type;
  MPI_T_enum enumtype;
  if (PMPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &enumtype, desc, &desc_len,
                           &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS)
    return false;
  out->index = i;
  out->name = name;
  out->description = desc;
  out->verbosity = verbosity;
  out->mpi_class = var_class;
  out->known_class = pvar_class(var_class, &out->cls);
  out->type = type;
  out->bind = bind;
  out->readonly = readonly != 0;
  out->continuous = continuous != 0;
  out->atomic = atomic != 0;
  return true;
}

// The elements of scalar values in buf, as text: "3", "1,0,2", or a string for MPI_CHAR.
std::string value_text(MPI_Datatype t, MPI_T_enum enumtype, const unsigned char* buf, int count) {
  if (t == MPI_CHAR)
    return std::string(reinterpret_cast<const char*>(buf),
                       strnlen(reinterpret_cast<const char*>(buf), static_cast<size_t>(count)));
  std::string text;
  char one[320];
  for (int i = 0; i < count; ++i) {
    if (t == MPI_INT) {
      int v;
      std::memcpy(&v, buf + i * sizeof v, sizeof v);
      std::snprintf(one, sizeof one, "%d", v);
      // An enumeration's value reads better by its item's name.
      int items = 0;
      if (enumtype != MPI_T_ENUM_NULL) {
        char ename[256];
        int elen = sizeof ename;
        if (PMPI_T_enum_get_info(enumtype, &items, ename, &elen) != MPI_SUCCESS) items = 0;
      }
      for (int k = 0; k < items; ++k) {
        int value;
        char iname[256];
        int ilen = sizeof iname;
        if (PMPI_T_enum_get_item(enumtype, k, &value, iname, &ilen) == MPI_SUCCESS && value == v) {
          std::snprintf(one, sizeof one, "%s", iname);
          break;
        }
      }
    } else if (t == MPI_UNSIGNED) {
      unsigned v;
      std::memcpy(&v, buf + i * sizeof v, sizeof v);
      std::snprintf(one, sizeof one, "%u", v);
    } else if (t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_COUNT) {
      long long v;
      std::memcpy(&v, buf + i * sizeof v, sizeof v);
      std::snprintf(one, sizeof one, "%lld", v);
    } else if (t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG) {
      unsigned long long v;
      std::memcpy(&v, buf + i * sizeof v, sizeof v);
      std::snprintf(one, sizeof one, "%llu", v);
    } else if (t == MPI_DOUBLE) {
      double v;
      std::memcpy(&v, buf + i * sizeof v, sizeof v);
      std::snprintf(one, sizeof one, "%g", v);
    } else {
      return "(" + type_name(t) + ")";
    }
    if (i) text += ',';
    text += one;
  }
  return text;
}

// A control variable's value, read through a handle bound to no object.
std::string cvar_value(int index, MPI_Datatype type, MPI_T_enum enumtype, int* count) {
  MPI_T_cvar_handle h;
  if (PMPI_T_cvar_handle_alloc(index, nullptr, &h, count) != MPI_SUCCESS) return "(unreadable)";
  std::string text = "(unreadable)";
  const int size = type_size(type);
  if (*count >= 0 && *count <= 4096 && size > 0) {
    std::vector<unsigned char> buf(static_cast<size_t>(*count > 0 ? *count : 1) * static_cast<size_t>(size) +
                                   1);
    if (PMPI_T_cvar_read(h, buf.data()) == MPI_SUCCESS) text = value_text(type, enumtype, buf.data(), *count);
  }
  PMPI_T_cvar_handle_free(&h);
  return text;
}

// Variables whose component MPI_T shows not to be in use: those of the categories starting with
// `category_prefix` while the category `in_use_when` is not registered. The one list of such
// cases: MPI_T cannot say that a component was opened but never initialised, only which
// components' categories are still registered, so each case names the component whose presence
// means the variables' component runs.
struct InUseRule {
  const char* category_prefix;
  const char* in_use_when;
  const char* why;
};
constexpr InUseRule kInUseRules[] = {
    // Open MPI: the MTLs (psm2, ofi, ...) are the transports of the cm PML alone, initialised only
    // when cm is the PML selected, yet their variables stay registered when ob1 wins (binding
    // psm2's then segfaults in psm2_mq_get_stats). Open MPI deregisters the PMLs it did not
    // select, so the category ompi_pml_cm is registered exactly when cm runs.
    {"ompi_mtl_", "ompi_pml_cm",
     "Open MPI's MTL components run only under its cm PML, which this run does not use (binding them "
     "crashes inside Open MPI)"},
};

}  // namespace

std::vector<std::string> unsafe_reasons() {
  int npvars = 0, ncats = 0;
  if (PMPI_T_pvar_get_num(&npvars) != MPI_SUCCESS || npvars <= 0) return {};
  std::vector<std::string> out(static_cast<size_t>(npvars));
  if (PMPI_T_category_get_num(&ncats) != MPI_SUCCESS) return out;
  // Category names (empty for a deregistered one) and their variable counts.
  std::vector<std::string> names(static_cast<size_t>(ncats));
  std::vector<int> counts(static_cast<size_t>(ncats), 0);
  for (int c = 0; c < ncats; ++c) {
    char name[256], desc[8];
    int name_len = sizeof name, desc_len = sizeof desc, ncvars = 0, nsub = 0;
    if (PMPI_T_category_get_info(c, name, &name_len, desc, &desc_len, &ncvars, &counts[c], &nsub) ==
        MPI_SUCCESS)
      names[c] = name;
  }
  auto registered = [&](const char* category) {
    for (const std::string& n : names)
      if (n == category) return true;
    return false;
  };
  for (const InUseRule& rule : kInUseRules) {
    if (registered(rule.in_use_when)) continue;
    for (int c = 0; c < ncats; ++c) {
      if (names[c].rfind(rule.category_prefix, 0) != 0 || counts[c] <= 0) continue;
      std::vector<int> indices(static_cast<size_t>(counts[c]));
      if (PMPI_T_category_get_pvars(c, counts[c], indices.data()) != MPI_SUCCESS) continue;
      for (const int i : indices)
        if (i >= 0 && i < npvars) out[i] = rule.why;
    }
  }
  return out;
}

std::vector<PvarInfo> performance_variables(MPI_T_pvar_session session) {
  std::vector<PvarInfo> out;
  int num = 0;
  if (PMPI_T_pvar_get_num(&num) != MPI_SUCCESS) return out;
  const std::vector<std::string> unsafe = unsafe_reasons();
  for (int i = 0; i < num; ++i) {
    PvarInfo v;
    if (!pvar_info(i, &v)) continue;  // e.g. Open MPI: an unloaded component's variable
    if (static_cast<size_t>(i) < unsafe.size()) v.unsafe = unsafe[i];
    if (v.bind == MPI_T_BIND_NO_OBJECT && session != MPI_T_PVAR_SESSION_NULL && v.unsafe.empty()) {
      MPI_T_pvar_handle h;
      int count = -1;
      if (PMPI_T_pvar_handle_alloc(session, i, nullptr, &h, &count) == MPI_SUCCESS) {
        v.count = count;
        PMPI_T_pvar_handle_free(session, &h);
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<CvarInfo> control_variables() {
  std::vector<CvarInfo> out;
  int num = 0;
  if (PMPI_T_cvar_get_num(&num) != MPI_SUCCESS) return out;
  for (int i = 0; i < num; ++i) {
    char name[256], desc[1024];
    int name_len = sizeof name, desc_len = sizeof desc;
    CvarInfo v;
    MPI_T_enum enumtype;
    if (PMPI_T_cvar_get_info(i, name, &name_len, &v.verbosity, &v.type, &enumtype, desc, &desc_len, &v.bind,
                             &v.scope) != MPI_SUCCESS)
      continue;
    v.index = i;
    v.name = name;
    v.description = desc;
    if (v.bind == MPI_T_BIND_NO_OBJECT) v.value = cvar_value(i, v.type, enumtype, &v.count);
    out.push_back(std::move(v));
  }
  return out;
}

bool find_pvar(const std::string& name, PvarInfo* out) {
  int num = 0;
  if (PMPI_T_pvar_get_num(&num) != MPI_SUCCESS) return false;
  for (int i = 0; i < num; ++i) {
    char buf[256], desc[8];
    int name_len = sizeof buf, desc_len = sizeof desc;
    int verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    // The description is not needed to compare names: a short buffer, filled later for the match.
    if (PMPI_T_pvar_get_info(i, buf, &name_len, &verbosity, &var_class, &type, &enumtype, desc, &desc_len,
                             &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS ||
        name != buf)
      continue;
    if (!pvar_info(i, out)) return false;
    const std::vector<std::string> unsafe = unsafe_reasons();
    if (static_cast<size_t>(i) < unsafe.size()) out->unsafe = unsafe[i];
    return true;
  }
  return false;
}

}  // namespace mpe::mpit
