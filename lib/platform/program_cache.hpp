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
    double build_seconds = 0;       // wall time building programs and loading them from disk
  };
  Stats stats() const;
  const std::string& dir() const { return dir_; }
  // The cache file a device's binary of (source, options) is stored in.
  std::string file_for(const cl::Device& device, const std::string& source, const std::string& options) const;

 private:
  // Context, the devices built for, source key, options: in a context of several devices a
  // program built for one of them is never handed to a queue of another.
  using Key = std::tuple<cl_context, std::vector<cl_device_id>, std::string, std::string>;

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

// The devices a queue of `device` in `context` builds its programs for: every device of the
// context where they are one CPU's sub-devices (a fission set: one build serves them all), the
// queue's device alone in a context of several devices (docs/decisions/174: each device builds
// only what it runs, and no program is used on a device it was not built for).
std::vector<cl::Device> program_devices(const cl::Context& context, const cl::Device& device);

// Identity of a device's compiler for cache keys: name, vendor, driver and platform versions.
std::string device_identity(const cl::Device& device);

// The build options that give one queue's programs a build of their own, held as long as the
// queue lives (an empty text where the device needs none).
//
// PoCL's CPU drivers (pthread, basic) keep one process-wide cache of the kernel libraries they
// load, an entry per (program build hash, work-group size, grid specialisation); the hash covers
// the source, the options and the kind of device, so it is the same on identical devices. A
// launch takes the first entry that fits it, and when it finishes releases the entry most
// recently taken with its hash and work-group size, which is not always its own: launches of one
// build in flight at once (on three devices, each its first launch of a kernel over a grid wider
// than the last) take three entries and release the newest three times, and PoCL aborts
// (`found->ref_count > 0' in pocl_release_dlhandle_cache). An in-order queue has one launch in
// flight at a time, and a define that names the queue (-DSINEW_QUEUE_BUILD=n, n the lowest number
// no queue in use holds: the same few numbers in every process, so the disk cache still serves
// them) keeps every such entry to one queue's launches. A pooled queue gives its number back
// while it waits (give_back, once its launches have ended) and takes the lowest free one when it
// is used again (take): runtimes used one after another build the same few programs (docs/decisions/133).
class QueueBuild {
 public:
  explicit QueueBuild(const cl::Device& device);
  ~QueueBuild();
  QueueBuild(const QueueBuild&) = delete;
  QueueBuild& operator=(const QueueBuild&) = delete;
  // Appended to the options of every program this queue's kernels come from.
  const std::string& options() const { return options_; }
  // Whether the device needs a number (a PoCL CPU driver): the others' options are empty.
  bool numbered() const { return numbered_; }
  // The number back to the free ones; the queue's launches must have ended. Options are empty
  // until take().
  void give_back();
  // The lowest free number (where the device needs one).
  void take();
  // The number given back last, where it is free (or none is needed): a queue that kept kernels
  // built with it runs them again; false where another queue holds it now (nothing taken).
  bool take_again();

 private:
  void hold(unsigned number);

  bool numbered_ = false;
  std::optional<unsigned> number_;
  std::optional<unsigned> last_;  // the number given back last
  std::string options_;
};

}  // namespace sinew::detail
