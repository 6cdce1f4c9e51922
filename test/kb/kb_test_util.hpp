// test/kb/kb_test_util.hpp — helpers shared by the knowledge-base tests: a temporary directory,
// whole-file reads and writes, and sample keys, entries and runs.
#pragma once

#include <sinew/kb.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace kbtest {

// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Names of the directory's entries, sorted.
  std::vector<std::string> list() const;

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);

sinew::KbKey key(const std::string& tree = "00112233aabbccdd");
sinew::Config config(std::vector<double> shares, const std::string& fission = "none", unsigned overlap = 1);
sinew::KbEntry entry(const sinew::KbKey& k, sinew::KbFeatures features, sinew::Config c, double time_ms,
                     sinew::Provenance provenance = sinew::Provenance::trained);
sinew::KbRun run(const sinew::KbKey& k, sinew::KbFeatures features, sinew::Config c, double time_ms,
                 const std::string& purpose = "training");

}  // namespace kbtest
