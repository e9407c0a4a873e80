// Status: the names of the codes and the one-line form of an error.
#include "mpe/status.h"

namespace mpe {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kNotALogfile:
      return "not a logfile";
    case StatusCode::kUnsupportedVersion:
      return "unsupported version";
    case StatusCode::kCorrupt:
      return "corrupt";
    case StatusCode::kTruncated:
      return "truncated";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kOutOfMemory:
      return "out of memory";
    case StatusCode::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return message_.empty() ? std::string(status_code_name(code_))
                          : std::string(status_code_name(code_)) + ": " + message_;
}

}  // namespace mpe
