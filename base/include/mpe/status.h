// Status and StatusOr: how library code reports errors without throwing. Only the main() of `mpe`
// and `upshot` turns one into a message; the tools turn one into a single `mpe-tools:` line.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace mpe {

enum class StatusCode {
  kOk,
  kNotALogfile,
  kUnsupportedVersion,
  kCorrupt,
  kTruncated,
  kIoError,
  kInvalidArgument,
  kOutOfMemory,
  kCancelled  // the caller asked the work to stop
};

// Names a code ("corrupt", "truncated"...).
const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok_status() { return Status(); }
  // A damaged input (a log, an index): the message names what is wrong and where.
  static Status corrupt(std::string message) { return Status(StatusCode::kCorrupt, std::move(message)); }
  // A failed allocation, made without allocating (its message is empty): safe in a catch handler.
  static Status out_of_memory() noexcept {
    Status s;
    s.code_ = StatusCode::kOutOfMemory;
    return s;
  }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Returns "<code>: <message>".
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design
  StatusOr(T value) : v_(std::move(value)) {}         // NOLINT
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  T& operator*() { return std::get<T>(v_); }

 private:
  std::variant<Status, T> v_;
};

#define MPE_RETURN_IF_ERROR(expr) \
  do {                            \
    ::mpe::Status _st = (expr);   \
    if (!_st.ok()) return _st;    \
  } while (0)

}  // namespace mpe
