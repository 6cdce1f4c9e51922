// exec/trace.hpp — Chrome trace JSON (chrome://tracing, Perfetto) of one request: every transfer
// and kernel per device and queue, from OpenCL profiling events, and the host threads' phases.
#pragma once

#include <sinew/options.hpp>

#include <string>
#include <vector>

namespace sinew::detail {

struct TraceRecord {
  std::string name;     // node path or "upload"/"download"/"sync"
  std::string category; // "kernel", "transfer" or "host"
  std::string process;  // device: its id and name, e.g. "gpu:0 <device name>"
  std::string thread;   // partition / queue, e.g. "partition 2 (queue 1)"
  double start_us = 0;  // relative to the request's start
  double duration_us = 0;
};

// Writes the records as a Chrome trace, times at full precision (json_number); appends "-N" before ".json" when `path` exists, so
// successive requests of one process do not overwrite each other. Failure to write is silent
// beyond a warning through `log`: tracing never fails a run.
void write_chrome_trace(const std::string& path, const std::vector<TraceRecord>& records, const Logger& log);

}  // namespace sinew::detail
