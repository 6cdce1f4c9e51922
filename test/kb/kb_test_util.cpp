// test/kb/kb_test_util.cpp — helpers shared by the knowledge-base tests.
#include "kb/kb_test_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kbtest {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "sinew-kb-test-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> TempDir::list() const {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path);
}

sinew::KbKey key(const std::string& tree) {
  return {tree, "cpu:0 Test CPU (Test platform, driver 1.0, 8 CUs); gpu:0 Test GPU (Test platform, driver 2.0, 80 CUs)",
          "0.1.0"};
}

sinew::Config config(std::vector<double> shares, const std::string& fission, unsigned overlap) {
  sinew::Config c;
  c.shares = std::move(shares);
  c.fission = fission;
  c.overlap = overlap;
  return c;
}

sinew::KbEntry entry(const sinew::KbKey& k, sinew::KbFeatures features, sinew::Config c, double time_ms,
                     sinew::Provenance provenance) {
  sinew::KbEntry e;
  e.key = k;
  e.features = std::move(features);
  e.config = std::move(c);
  e.time_ms = time_ms;
  e.provenance = provenance;
  e.precision = 0.05;
  e.quality = 3;
  e.strategy = "even_split";
  return e;
}

sinew::KbRun run(const sinew::KbKey& k, sinew::KbFeatures features, sinew::Config c, double time_ms,
                 const std::string& purpose) {
  sinew::KbRun r;
  r.key = k;
  r.features = std::move(features);
  r.config = std::move(c);
  r.time_ms = time_ms;
  r.partition_ms = {time_ms * 0.9, time_ms};
  r.purpose = purpose;
  return r;
}

}  // namespace kbtest
