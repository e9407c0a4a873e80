// libmpestack's layers: MPE_STACK read once, each library loaded so that its own MPI_ and PMPI_
// calls come back here, and one table per routine (mpe/stack.h). The generated stack_c.cpp and
// stack_f.cpp hold the entry points; MPI_Pcontrol, variadic, is here.
#include "mpe/stack.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "mpe/config.h"

namespace mpe::stack {

Routine g_routines[kFnCount];
int g_layers = 0;
int g_mpe_layer = -1;
bool g_loaded = false;
__thread int t_level = kApplication;
__thread uintptr_t t_caller = 0;

namespace {

// One line on stderr, from the first rank only (before MPI_Init the rank is the launcher's).
void say(const std::string& what) {
  if (config::launcher_rank() > 0) return;
  std::fprintf(stderr, "mpe-tools: MPE_STACK: %s\n", what.c_str());
  std::fflush(stderr);
}

// `name` as the library behind `handle` defines it itself: dlsym also searches the library's
// dependencies, the MPI library among them, whose MPI_X is not a layer's.
void* own_symbol(void* handle, const std::string& name) {
  void* f = dlsym(handle, name.c_str());
  link_map* library = nullptr;
  if (!f || dlinfo(handle, RTLD_DI_LINKMAP, &library) != 0) return nullptr;
  Dl_info info;
  link_map* owner = nullptr;
  if (!dladdr1(f, &info, reinterpret_cast<void**>(&owner), RTLD_DL_LINKMAP) || owner != library)
    return nullptr;
  return f;
}

struct Layer {
  std::string name;
  std::vector<void*> fns;  // per routine, null where the layer does not define it
};

// The suite's own tools, when one of their libraries is in the process (preloaded or linked):
// their wrappers as a layer, mpe_stacked_MPI_X(call site, arguments...).
bool suite_layer(Layer* layer) {
  if (!dlsym(RTLD_DEFAULT, "mpe_stacked_MPI_Init")) return false;
  layer->name = kSuiteEntry;
  layer->fns.assign(kFnCount, nullptr);
  for (int i = 0; i < kFnCount; ++i)
    layer->fns[i] = dlsym(RTLD_DEFAULT, (std::string("mpe_stacked_") + kFnInfo[i].name).c_str());
  return true;
}

// A foreign PMPI library, loaded locally: its MPI_ definitions stay out of the global scope (the
// application keeps calling ours) while its own MPI_ and PMPI_ references resolve to ours.
bool foreign_layer(const std::string& path, Layer* layer) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    say("cannot load " + path + " (" + (why ? why : "unknown error") + "); the run goes on without it");
    return false;
  }
  layer->name = path;
  layer->fns.assign(kFnCount, nullptr);
  int defined = 0;
  for (int i = 0; i < kFnCount; ++i)
    defined += (layer->fns[i] = own_symbol(handle, kFnInfo[i].name)) != nullptr;
  if (defined == 0) {
    say(path + " defines no MPI_ routine, so it is not a PMPI tool; the run goes on without it");
    dlclose(handle);
    return false;
  }
  return true;
}

}  // namespace

void load() {
  // Once, at the process's first MPI call: not at load, since the launcher (mpiexec, its
  // proxies) may be preloaded too and must not load the layers. A layer's constructor that calls
  // MPI while it is being loaded comes back here and goes on to the MPI library, the only level
  // until the table is complete.
  static bool started = false;
  if (started) return;
  started = true;
  for (int i = 0; i < kFnCount; ++i) {
    g_routines[i].fn[0] = dlsym(RTLD_NEXT, (std::string("P") + kFnInfo[i].name).c_str());
    g_routines[i].next[0] = 0;
  }
  std::vector<Layer> layers;
  Layer suite;
  const bool have_suite = suite_layer(&suite);
  const char* listed = std::getenv("MPE_STACK");
  bool suite_listed = false;
  std::string_view rest = listed ? listed : "";
  std::string_view entry;
  while (next_entry(rest, &entry)) {
    if (layers.size() == kMaxLayers) {
      say("more than " + std::to_string(kMaxLayers) + " layers; " + std::string(entry) +
          " and those after it are left out");
      break;
    }
    Layer layer;
    if (entry == kSuiteEntry) {
      suite_listed = true;
      if (have_suite)
        layers.push_back(suite);
      else
        say("lists mpe, but no mpe-tools library (libmpetime, liblog, libumq, liblive) is loaded: "
            "link one or preload it after libmpestack.so");
    } else if (foreign_layer(std::string(entry), &layer)) {
      layers.push_back(std::move(layer));
    }
  }
  if (have_suite && !suite_listed && layers.size() < kMaxLayers) layers.insert(layers.begin(), suite);
  const int bottom = static_cast<int>(layers.size());
  for (int i = 0; i < kFnCount; ++i) {
    Routine& r = g_routines[i];
    r.fn[bottom] = r.fn[0];
    r.next[bottom] = static_cast<int8_t>(bottom);
    for (int k = bottom - 1; k >= 0; --k) {
      r.fn[k] = layers[k].fns[i];
      r.next[k] = static_cast<int8_t>(r.fn[k] ? k : r.next[k + 1]);
    }
  }
  for (int k = 0; k < bottom; ++k)
    if (layers[k].name == kSuiteEntry) g_mpe_layer = k;
  g_layers = bottom;
  __atomic_store_n(&g_loaded, true, __ATOMIC_RELEASE);
}

// MPI_Pcontrol reaches every layer that defines it, whether or not the one above passes it on (a
// profiler's wrapper often does not); what a layer passes on through PMPI_Pcontrol is then not
// passed again. Only the level is forwarded: the MPI standard gives the rest no meaning.
int pcontrol_from(int start, int level) {
  if (!g_loaded) load();
  const int saved = t_level;
  const Routine& r = g_routines[static_cast<int>(Fn::MPI_Pcontrol)];
  for (int k = start; k < g_layers; ++k) {
    if (!r.fn[k]) continue;
    if (k == g_mpe_layer) {
      t_level = g_layers;  // as in dispatch(): our tools' own calls go to the MPI library
      reinterpret_cast<int (*)(uintptr_t, int (*)(int, ...), int, ...)>(r.fn[k])(t_caller,
                                                                                 &below_mpe_pcontrol, level);
    } else {
      t_level = k;
      reinterpret_cast<int (*)(int, ...)>(r.fn[k])(level);
    }
  }
  t_level = g_layers;
  const int rc = reinterpret_cast<int (*)(int, ...)>(r.fn[g_layers])(level);
  t_level = saved;
  return rc;
}

// Our layer passing MPI_Pcontrol on: the stack reaches the layers below itself.
int below_mpe_pcontrol(int, ...) { return MPI_SUCCESS; }

}  // namespace mpe::stack

extern "C" MPE_EXPORT int MPI_Pcontrol(const int level, ...) {
  using namespace mpe::stack;
  return pcontrol_from(start_for_mpi<false>(MPE_RETURN_ADDRESS()), level);
}

extern "C" MPE_EXPORT int PMPI_Pcontrol(const int level, ...) {
  using namespace mpe::stack;
  if (t_level >= 0 && t_level < g_layers) return MPI_SUCCESS;  // a layer passing it on: done already
  return pcontrol_from(t_level == g_layers ? g_layers : start_for_pmpi<false>(MPE_RETURN_ADDRESS()), level);
}
