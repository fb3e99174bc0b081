// The `chipfit profile …` command line that reproduces a recorded run, built from what the run recorded
// (shapes, targets, timing, threads, inputs, throughput points, int8 settings, the recommendation's limits
// and objective), for the reports' "Command" line. Plain C++, no Qt.
#pragma once

#include <string>
#include <vector>

#include "profilers/run_result.h"

namespace chipfit::report {

// argv of the command, "chipfit" first: ["chipfit", "profile", MODEL, "--shape", "x=1x3x48x192", …].
// Every value is written as `chipfit profile` parses it back (numbers at full precision). Settings a run
// does not record (--percentile, --calibration-samples, --task, --auto-fp32-*) cannot be repeated: a run
// made with them differs from the rerun there.
std::vector<std::string> ProfileCommandArgs(const RunResult& run);

// POSIX shell quoting: an argument with anything but letters, digits and `_-.,:/=+@%` goes in single quotes
// (a path with spaces, a weights list), so pasting the line into a shell passes the same argv.
std::string ShellQuote(const std::string& arg);

// ProfileCommandArgs quoted and joined by spaces.
std::string ProfileCommandLine(const RunResult& run);

}  // namespace chipfit::report
