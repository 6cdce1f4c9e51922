// test/unit/cli_run.hpp — runs a built program (`sinew`, a sample program) with arguments passed
// as they are (each one quoted for the shell, empty ones included), capturing its streams, exit
// status and wall time. Shared by the command-line tests.
#pragma once

#include "kb/kb_test_util.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace clitest {

struct Result {
  int status = -1;
  std::string out, err;
  double seconds = 0;
  // The first line of stderr: where the one-line message is.
  std::string first_error_line() const { return err.substr(0, err.find('\n')); }
};

// 'text' for sh, quotes included.
inline std::string quoted(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `program args...` in `dir`'s files; `prefix` goes before the command (e.g. "ulimit -v N;"
// or "env VAR=value").
inline Result run(const kbtest::TempDir& dir, const std::string& program, const std::vector<std::string>& args,
                  const std::string& prefix = "") {
  const std::string out = dir.file("stdout"), err = dir.file("stderr");
  std::string command = prefix + " " + quoted(program);
  for (const auto& a : args) command += " " + quoted(a);
  command += " >" + quoted(out) + " 2>" + quoted(err);
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(command.c_str());
  Result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = kbtest::read_file(out);
  r.err = kbtest::read_file(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// This machine's physical memory, as the programs measure it.
inline std::uint64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : 0;
}

}  // namespace clitest
