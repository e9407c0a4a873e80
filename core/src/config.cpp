// Environment settings and the single-line warnings tools print instead of failing.
#include "mpe/config.h"

#include <errno.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mpe/tool.h"

extern char* program_invocation_short_name;

namespace mpe::config {

namespace {
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}
}  // namespace

void warn(const char* message, bool rank0_only) noexcept {
  int rank = mpe_core_world_rank();
  if (rank < 0) rank = launcher_rank();  // -1 still: a process no launcher started is the first
  if (rank0_only && rank > 0) return;
  std::fprintf(stderr, "mpe-tools: %s\n", message);
  std::fflush(stderr);
}

void warn(const std::string& message, bool rank0_only) noexcept { warn(message.c_str(), rank0_only); }

void inform(const std::string& message, bool rank0_only) noexcept {
  static const bool quiet = env_bool("MPE_QUIET", false);  // read once: test harnesses set it per run
  if (!quiet) warn(message.c_str(), rank0_only);
}

int64_t env_int(const char* name, int64_t fallback, int64_t min, int64_t max) {
  const char* v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(v, &end, 10);
  if (errno || *end || parsed < min || parsed > max) {
    warn(std::string(name) + "='" + v + "' is not a whole number from " + std::to_string(min) + " to " +
         std::to_string(max) + "; using " + std::to_string(fallback) + ".");
    return fallback;
  }
  return parsed;
}

std::string env_string(const char* name, const std::string& fallback) {
  const char* v = env(name);
  return v ? std::string(v) : fallback;
}

bool env_bool(const char* name, bool fallback) {
  const char* v = env(name);
  if (!v) return fallback;
  for (const char* yes : {"1", "yes", "true", "on"})
    if (strcasecmp(v, yes) == 0) return true;
  for (const char* no : {"0", "no", "false", "off"})
    if (strcasecmp(v, no) == 0) return false;
  warn(std::string(name) + "='" + v + "' is not a yes/no value (1/0, yes/no, on/off); using " +
       (fallback ? "1." : "0."));
  return fallback;
}

std::string temp_dir() {
  std::string dir = env_string("MPE_TMPDIR", ".");
  if (access(dir.c_str(), W_OK) != 0) {
    warn("MPE_TMPDIR='" + dir + "' is not a writable directory; writing to the working directory.");
    dir = ".";
  }
  return dir;
}

std::string output_prefix() { return env_string("MPE_LOGFILE_PREFIX", program_invocation_short_name); }

std::string output_name() {
  const std::string prefix = output_prefix();
  const size_t slash = prefix.rfind('/');
  return slash == std::string::npos ? prefix : prefix.substr(slash + 1);
}

std::string output_path(const std::string& suffix) {
  const std::string prefix = output_prefix();
  const size_t slash = prefix.rfind('/');
  const std::string dir = slash == std::string::npos ? env_string("MPE_LOG_DIR", ".")
                          : slash == 0               ? std::string("/")
                                                     : prefix.substr(0, slash);
  const std::string name = output_name();
  if (access(dir.c_str(), W_OK) != 0) {
    warn("the output directory '" + dir + "' (" +
         (slash == std::string::npos ? "MPE_LOG_DIR" : "MPE_LOGFILE_PREFIX") +
         ") does not exist or is not writable; writing " + name + suffix + " to the working directory.");
    return "./" + name + suffix;
  }
  return (dir == "/" ? dir : dir + "/") + name + suffix;
}

}  // namespace mpe::config
