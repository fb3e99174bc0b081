// Runs a shell command as a user would and keeps what it printed: the CLI tests' one subprocess runner.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace chipfit::testing {

struct Outcome {
  int exit_code = -1;  // -1: the command did not exit normally (killed, or popen failed)
  std::string out;     // what it printed (stderr too where the command joins it)
};

// `command` through /bin/sh; the caller adds "2>&1" or "2>/dev/null" as it needs.
inline Outcome RunShell(const std::string& command) {
  Outcome outcome;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) outcome.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

}  // namespace chipfit::testing
