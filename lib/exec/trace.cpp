// exec/trace.cpp — writing Chrome trace JSON.
#include "exec/trace.hpp"

#include "platform/json_text.hpp"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

namespace sinew::detail {
namespace {

std::string unique_path(const std::string& path) {
  namespace fs = std::filesystem;
  static std::atomic<int> counter{0};
  if (!fs::exists(path)) return path;
  const fs::path p(path);
  for (;;) {
    fs::path candidate = p.parent_path() / (p.stem().string() + "-" + std::to_string(++counter) + p.extension().string());
    if (!fs::exists(candidate)) return candidate.string();
  }
}

}  // namespace

void write_chrome_trace(const std::string& path, const std::vector<TraceRecord>& records, const Logger& log) {
  const std::string target = unique_path(path);
  std::ofstream out(target);
  std::map<std::string, int> pids, tids;
  auto id = [](std::map<std::string, int>& m, const std::string& k) {
    auto [it, inserted] = m.emplace(k, static_cast<int>(m.size()) + 1);
    return it->second;
  };
  out << "{\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (const auto& r : records) {
    int pid = id(pids, r.process), tid = id(tids, r.process + "|" + r.thread);
    sep();
    out << "{\"name\":" << json_quote(r.name) << ",\"cat\":\"" << r.category << "\",\"ph\":\"X\""
        << ",\"ts\":" << json_number(r.start_us) << ",\"dur\":" << json_number(r.duration_us)
        << ",\"pid\":" << pid << ",\"tid\":" << tid << "}";
  }
  for (const auto& [name, pid] : pids) {
    sep();
    out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << pid << ",\"args\":{\"name\":" << json_quote(name) << "}}";
  }
  for (const auto& [key, tid] : tids) {
    const std::string process = key.substr(0, key.find('|'));
    sep();
    out << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << pids[process] << ",\"tid\":" << tid
        << ",\"args\":{\"name\":" << json_quote(key.substr(key.find('|') + 1)) << "}}";
  }
  out << "\n]}\n";
  if (!out && log) log(LogLevel::warning, "could not write the trace to '" + target + "'");
}

}  // namespace sinew::detail
