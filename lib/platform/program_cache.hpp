// platform/program_cache.hpp — one build per (device, source, build options, driver).
//
// Programs are kept in memory per context and their binaries on disk under the cache directory,
// so a second process skips the compiler. A corrupt or stale cache file is rebuilt, never fatal;
// files are written to a temporary name and renamed, so concurrent processes never see half a file,
// and a lock file per program makes processes that want it at once build it once (the others wait
// and load it).
#pragma once

#include "platform/cl.hpp"

#include <sinew/error.hpp>

#include <atomic>
#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace sinew::detail {

struct ProgramSource {
  std::string text;
  std::string origin;   // file name or "<source>", for messages
};

class ProgramCache {
 public:
  // `dir` empty: memory only. (A Runtime's is RuntimeOptions::cache_dir.)
  explicit ProgramCache(std::string dir);

  // A built program for every device of `devices` (all in `context`). Throws sinew::Error with
  // errc::build_failure and the build log when the source does not compile.
  cl::Program get(const cl::Context& context, const std::vector<cl::Device>& devices,
                  const ProgramSource& source, const std::string& options, ErrorContext where = {});

  struct Stats {
    std::size_t memory_hits = 0, disk_hits = 0, builds = 0, corrupt_files = 0, write_failures = 0;
    std::size_t crashed_loads = 0;  // binaries dropped because a process died while loading them
  };
  Stats stats() const;
  const std::string& dir() const { return dir_; }
  // The cache file a device's binary of (source, options) is stored in.
  std::string file_for(const cl::Device& device, const std::string& source, const std::string& options) const;

 private:
  using Key = std::tuple<cl_context, std::string, std::string>;  // context, source key, options

  // The program kept in memory for `key` (counted as a memory hit); none before it is built.
  std::optional<cl::Program> kept(const Key& key);
  // The mutex that the one thread building `key`'s program holds; the same for every caller.
  std::shared_ptr<std::mutex> build_mutex(const Key& key);
  // The program from every device's stored binary (`paths`, in device order), built; none where
  // a binary is missing, corrupt or stale, or a process died loading them (then they are dropped).
  std::optional<cl::Program> load_stored(const cl::Context& context, const std::vector<cl::Device>& devices,
                                         const ProgramSource& source, const std::string& options,
                                         const std::vector<std::string>& paths);
  // The program built from its source; throws sinew::Error (errc::build_failure, with the log)
  // where it does not compile.
  static cl::Program build_from_source(const cl::Context& context, const std::vector<cl::Device>& devices,
                                       const ProgramSource& source, const std::string& options, ErrorContext& where);
  // Every device's binary of `program` written to its file in `paths` (a failure only counted).
  void store_binaries(const cl::Program& program, const std::vector<cl::Device>& devices,
                      const ProgramSource& source, const std::string& options, const std::vector<std::string>& paths);
  bool load_binary(const std::string& path, const cl::Device& device, const std::string& source,
                   const std::string& options, std::vector<unsigned char>& binary);
  void store_binary(const std::string& path, const cl::Device& device, const std::string& source,
                    const std::string& options, const std::vector<unsigned char>& binary);

  std::string dir_;
  mutable std::mutex mutex_;
  std::map<Key, cl::Program> programs_;
  std::map<Key, std::shared_ptr<std::mutex>> building_;
  Stats stats_;
};

// Identity of a device's compiler for cache keys: name, vendor, driver and platform versions.
std::string device_identity(const cl::Device& device);

}  // namespace sinew::detail
