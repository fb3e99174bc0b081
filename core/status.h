// Status and Result<T>: the error currency of core (no exceptions cross a core API).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace chipfit {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: flag, shape, value
  kNotFound,         // missing file, input, node
  kParseError,       // malformed model, .npy, manifest
  kUnsupported,      // valid input chipfit does not handle (yet); message says why
  kCancelled,        // stopped through a stop_token
  kIoError,          // reading or writing failed
  kInternal,         // a bug or a library failure chipfit did not expect
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "<code name>: <message>", or "ok".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string message) { return {StatusCode::kInvalidArgument, std::move(message)}; }
inline Status NotFound(std::string message) { return {StatusCode::kNotFound, std::move(message)}; }
inline Status ParseError(std::string message) { return {StatusCode::kParseError, std::move(message)}; }
inline Status Unsupported(std::string message) { return {StatusCode::kUnsupported, std::move(message)}; }
inline Status Cancelled(std::string message) { return {StatusCode::kCancelled, std::move(message)}; }
inline Status IoError(std::string message) { return {StatusCode::kIoError, std::move(message)}; }
inline Status Internal(std::string message) { return {StatusCode::kInternal, std::move(message)}; }

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : data_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(data_).ok() && "a Result holding a Status must hold an error");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(data_); }

  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace chipfit

#define CHIPFIT_CONCAT_INNER(a, b) a##b
#define CHIPFIT_CONCAT(a, b) CHIPFIT_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::chipfit::Status chipfit_status_ = (expr);        \
    if (!chipfit_status_.ok()) return chipfit_status_; \
  } while (false)

#define CHIPFIT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

// ASSIGN_OR_RETURN(auto x, Foo()); declares x from a Result or returns its Status.
#define ASSIGN_OR_RETURN(lhs, expr) CHIPFIT_ASSIGN_OR_RETURN_IMPL(CHIPFIT_CONCAT(chipfit_result_, __LINE__), lhs, expr)
