// Runs a shell command as a user would and keeps what it printed: the CLI tests' one subprocess runner.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
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

struct Interrupted {
  Outcome outcome;       // the command's exit status (its stdout is discarded)
  std::string progress;  // what it wrote to stderr before and after the SIGINT
};

// Runs `command` (a `chipfit profile …` line, without redirections) in the background and sends it
// SIGINT once its stderr shows `marker` (a progress line such as "end-to-end"), or after 60 s. Never a
// fixed delay: a loaded or cold machine (a fresh CI clone loading Qt and oneDNN from disk) may not reach
// the signal handler within one, and a SIGINT before it kills the process instead of testing it.
inline Interrupted InterruptWhenProgressShows(const std::string& command, const std::string& marker,
                                              const std::string& log_path) {
  const std::string script = command + " 2>" + log_path + " >/dev/null & pid=$!; for i in $(seq 1200); do grep -q '" +
                             marker + "' " + log_path + " && break; sleep 0.05; done; kill -INT $pid; wait $pid";
  std::string quoted = "'";
  for (char c : script) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  Interrupted result{.outcome = RunShell("sh -c " + quoted + "' 2>&1"), .progress = {}};
  std::ifstream log(log_path);
  result.progress.assign(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
  log.close();
  std::remove(log_path.c_str());
  return result;
}

}  // namespace chipfit::testing
