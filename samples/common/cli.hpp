// samples/common/cli.hpp — the command line every benchmark sample program shares.
//
// Common flags: --size S (a number, or a sample's own form such as WIDTHxHEIGHT), --device
// i|ID|all, --shares a,b,... [--fission NAME] [--overlap N], --repeat n, --dump, --no-check, --profile,
// --help. A program adds its own flags (e.g. --steps), reads them with Options::get and sets its
// descriptor's params before calling run().
#pragma once

#include "common/sample.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace sinew::samples::cli {

struct Flag {
  std::string name;           // without the dashes: "steps"
  std::string help;
  std::string default_value;  // shown in --help; an empty default marks a switch (no value)
  bool is_switch = false;
};

struct Options {
  std::string size;            // as given to Sample::prepare(string); "": the sample's default
  std::string device;          // "": the runtime's default device; "all": the runtime plans; else index or id
  std::vector<double> shares;  // a manual plan (one share per runtime device)
  std::string fission = "none";
  unsigned overlap = 1;
  std::size_t repeat = 1;
  bool dump = false;
  bool check = true;
  bool pinned = false;         // host data in Runtime::pinned memory
  bool profile = false;        // --profile: device times in the report (RunOptions::profile)
  std::map<std::string, std::string> values;  // the program's own flags, by name

  bool has(const std::string& name) const { return values.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback) const;
  std::size_t get_size(const std::string& name, std::size_t fallback) const;
  double get_double(const std::string& name, double fallback) const;
};

// Parses argv. Prints usage and exits with 0 for --help; prints the problem and exits with 2 for
// an unknown flag or a malformed value.
Options parse(int argc, char** argv, const Sample& sample, const std::vector<Flag>& extra = {});

// Prepares `sample` at opts.size, runs it opts.repeat times on the chosen device or plan, prints
// the tree (--dump), the times, the last Report and the check. Returns the exit code: 0 when the
// result matches the reference, 1 on a mismatch ("result: MISMATCH ..."), 2 on an error.
int run(Sample& sample, const Options& opts);

}  // namespace sinew::samples::cli
