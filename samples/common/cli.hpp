// samples/common/cli.hpp — the command line every benchmark sample program shares.
//
// Common flags: --size S (a number, or a sample's own form such as WIDTHxHEIGHT), --device
// i|ID|all, --shares a,b,... [--fission NAME] [--overlap N], --repeat n, --dump, --no-check, --profile,
// --mpi [--rank-shares a,b,...], --help. A program adds its own flags (e.g. --steps), reads them
// with Options::get and sets its descriptor's params before calling run().
#pragma once

#include "common/sample.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
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
  std::string program;         // argv[0], for messages
  // As given to Sample::prepare(string); empty when --size was left out (the sample's standard size).
  std::optional<std::string> size;
  std::string device;          // "": the runtime's default device; "all": the runtime plans; else index or id
  std::vector<double> shares;  // a manual plan (one share per runtime device)
  std::string fission = "none";
  unsigned overlap = 1;
  std::size_t repeat = 1;
  bool dump = false;
  bool check = true;
  bool pinned = false;         // host data in Runtime::pinned memory
  bool profile = false;        // --profile: device times in the report (RunOptions::profile)
  bool mpi = false;            // --mpi: over every rank of the MPI job (sinew::Cluster)
  std::vector<double> rank_shares;  // --rank-shares: one share per rank (ClusterOptions::rank_shares)
  std::map<std::string, std::string> values;  // the program's own flags, by name

  bool has(const std::string& name) const { return values.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback) const;
  // The program's own numeric flags, read with sinew::parse: a whole number in [min, max], a finite
  // number in [min, max] ((min, max] with min_open). A bad value prints a one-line message naming
  // the flag, the value and what is accepted, and exits with 2.
  std::uint64_t get_count(const std::string& name, std::uint64_t fallback, std::uint64_t min, std::uint64_t max) const;
  // get_count() for a count that must also be a power of two (a bitonic network's keys).
  std::uint64_t get_power_of_two(const std::string& name, std::uint64_t fallback, std::uint64_t min,
                                 std::uint64_t max) const;
  double get_number(const std::string& name, double fallback, double min, double max, bool min_open = false) const;
};

// Parses argv with Boost.Program_options. Prints usage and exits with 0 for --help; prints the
// problem and exits with 2 for an unknown or abbreviated flag, a value given to a switch
// ("--dump=no"), a flag given twice, or a malformed or out-of-range value: every count is read with sinew::parse, the
// overlap and the shares (each in [0, 1], adding up to 1) are checked by Config's own checks.
Options parse(int argc, char** argv, const Sample& sample, const std::vector<Flag>& extra = {});

// Checks opts.size against the sample and this machine's memory (check_size_argument) before
// making a Runtime, prepares `sample` at opts.size, runs it opts.repeat times on the chosen device
// or plan, prints the tree (--dump), the times, the last Report and the check. Returns the exit
// code: 0 when the result matches the reference, 1 on a mismatch ("result: MISMATCH ..."), 2 on
// bad usage or an error.
int run(Sample& sample, const Options& opts);

// The command line of a program that is no sample descriptor (cg, kmeans, pagerank, timestep):
// its own flags only, each a non-negative number, parsed as parse() parses (Boost.Program_options,
// no abbreviations, no words). --help prints `about` and the flags and exits with 0; an unknown or
// repeated flag, a flag without a value or a value that is not a finite non-negative number
// prints the problem naming the flag and exits with 2. Returns the values given, by name.
std::map<std::string, double> parse_numbers(int argc, char** argv, const std::string& program,
                                            const std::string& about, const std::vector<Flag>& flags);

}  // namespace sinew::samples::cli
