// An optional NVIDIA library opened with dlopen (cuBLASLt, cuDNN): the first of its sonames that loads,
// and its entry points resolved by name into function pointers typed from the library's own header, so
// chipfit neither links nor needs it, and says why when it is missing.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/status.h"

namespace chipfit::cuda {

class DynamicLibrary {
 public:
  // The first of `sonames` dlopen loads; Unsupported "<what> not found: <each dlerror>" when none does.
  static Result<DynamicLibrary> Open(std::string what, std::initializer_list<const char*> sonames) {
    std::string errors;
    for (const char* name : sonames) {
      if (void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return DynamicLibrary(std::move(what), handle);
      const char* err = dlerror();
      errors += errors.empty() ? "" : "; ";
      errors += err != nullptr ? err : name;
    }
    return Unsupported(what + " not found: " + errors);
  }

  // Resolves a required entry point; the first one missing is remembered for Finish().
  template <typename Fn>
  void Resolve(const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(dlsym(handle_, name));
    if (fn == nullptr && missing_.empty()) missing_ = name;
  }
  // An entry point the caller can do without (nullptr when absent).
  template <typename Fn>
  void ResolveOptional(const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(dlsym(handle_, name));
    dlerror();  // a missing optional symbol is not an error
  }
  // OK when every required entry point resolved; else Unsupported naming the first missing one, and the
  // library is closed (the process keeps the loaded copy only when it is complete).
  Status Finish() {
    if (missing_.empty()) return Status();
    dlclose(handle_);
    return Unsupported(fmt::format("{} not found: the library lacks {}", what_, missing_));
  }

 private:
  DynamicLibrary(std::string what, void* handle) : what_(std::move(what)), handle_(handle) {}
  std::string what_;
  void* handle_;
  std::string missing_;
};

}  // namespace chipfit::cuda
