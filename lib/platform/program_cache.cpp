// platform/program_cache.cpp — building OpenCL programs once, in memory and on disk.
#include "platform/program_cache.hpp"

#include "platform/error.hpp"
#include "platform/hash.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace sinew::detail {
namespace fs = std::filesystem;

namespace {
// A cached binary: the magic, then what built it (the hashes of the device's identity — name,
// vendor, driver, device and platform versions — and of the source and options), then the
// binary's length and hash, then the binary; the file is exactly that long. A file whose header
// or length does not say so, however valid its checksum, is rebuilt: the driver trusts what it
// is handed (a header claiming half of a real PoCL binary crashes every process that loads it).
constexpr char kMagic[8] = {'S', 'I', 'N', 'E', 'W', 'B', 'I', '2'};
constexpr std::size_t kHeader = 8 + 4 * 8;

struct Header {
  std::uint64_t identity = 0, source = 0, size = 0, check = 0;
};

std::string source_key(const std::string& source, const std::string& options) {
  return Hasher().add(source).add(options).hex();
}

// An exclusive lock on a file beside the cache entries, held while one program is loaded or
// built and stored, so that processes sharing the cache build a program once: the others wait,
// then load what it stored. It also keeps PoCL from crashing: reading a program's binary back
// (CL_PROGRAM_BINARIES) walks PoCL's own kernel cache, and PoCL 3.1 dereferences a null directory
// handle when another process removes a temporary directory there meanwhile (it compiles a
// kernel's work-group variants at its first launches). A process launches a program's kernels
// only once its binary is stored, so whoever still builds it waits here and then finds the file.
// Best effort: where the lock cannot be had, the build goes on without it. The lock files stay
// (removing one while another process waits on it would let a third one in).
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};
}  // namespace

std::string device_identity(const cl::Device& device) {
  cl::Platform platform(device.getInfo<CL_DEVICE_PLATFORM>());
  return device.getInfo<CL_DEVICE_NAME>() + "|" + device.getInfo<CL_DEVICE_VENDOR>() + "|" +
         device.getInfo<CL_DRIVER_VERSION>() + "|" + device.getInfo<CL_DEVICE_VERSION>() + "|" +
         platform.getInfo<CL_PLATFORM_VERSION>();
}

namespace {

// Whether launches on `device` go through PoCL's process-wide cache of kernel libraries (its CPU
// drivers: QueueBuild says why that matters).
bool loads_kernel_libraries(const cl::Device& device) {
  try {
    const cl::Platform platform(device.getInfo<CL_DEVICE_PLATFORM>());
    return platform.getInfo<CL_PLATFORM_NAME>().find("Portable Computing Language") != std::string::npos &&
           (device.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU) != 0;
  } catch (const cl::Error&) {
    return false;
  }
}

// The queue build numbers that live queues hold, across every Runtime of the process.
struct QueueBuildNumbers {
  std::mutex mutex;
  std::set<unsigned> held;
  unsigned take() {
    std::lock_guard lock(mutex);
    unsigned n = 0;
    while (held.count(n)) ++n;
    held.insert(n);
    return n;
  }
  bool take(unsigned n) {
    std::lock_guard lock(mutex);
    return held.insert(n).second;
  }
  void give_back(unsigned n) {
    std::lock_guard lock(mutex);
    held.erase(n);
  }
};
QueueBuildNumbers& queue_build_numbers() {
  static auto* numbers = new QueueBuildNumbers;  // never destroyed: a queue may outlive static destruction
  return *numbers;
}

}  // namespace

QueueBuild::QueueBuild(const cl::Device& device) : numbered_(loads_kernel_libraries(device)) { take(); }

QueueBuild::~QueueBuild() { give_back(); }

void QueueBuild::take() {
  if (!numbered_ || number_) return;
  hold(queue_build_numbers().take());
}

bool QueueBuild::take_again() {
  if (!numbered_ || number_) return true;
  if (!last_ || !queue_build_numbers().take(*last_)) return false;
  hold(*last_);
  return true;
}

void QueueBuild::hold(unsigned number) {
  number_ = number;
  options_ = " -DSINEW_QUEUE_BUILD=" + std::to_string(number);
}

void QueueBuild::give_back() {
  if (!number_) return;
  queue_build_numbers().give_back(*number_);
  last_ = number_;
  number_.reset();
  options_.clear();
}

std::vector<cl::Device> program_devices(const cl::Context& context, const cl::Device& device) {
  auto devices = context.getInfo<CL_CONTEXT_DEVICES>();
  if (devices.size() < 2 || device.getInfo<CL_DEVICE_PARENT_DEVICE>()() != nullptr) return devices;
  return {device};
}

ProgramCache::ProgramCache(std::string dir) : dir_(std::move(dir)) {
  if (!dir_.empty()) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) dir_.clear();  // an unusable cache directory only costs compile time
  }
}

ProgramCache::Stats ProgramCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::string ProgramCache::file_for(const cl::Device& device, const std::string& source,
                                   const std::string& options) const {
  if (dir_.empty()) return {};
  std::string key = Hasher().add(device_identity(device)).add(source).add(options).hex();
  return dir_ + "/" + key + ".bin";
}

namespace {
std::uint64_t hash_of(const std::vector<unsigned char>& binary) {
  return Hasher().add(std::string_view(reinterpret_cast<const char*>(binary.data()), binary.size())).value();
}

// The header of `binary` built for `device` from (source, options): what a stored file must say.
Header header_of(const cl::Device& device, const std::string& source, const std::string& options,
                 const std::vector<unsigned char>& binary) {
  return {Hasher().add(device_identity(device)).value(), Hasher().add(source).add(options).value(), binary.size(),
          hash_of(binary)};
}
}  // namespace

bool ProgramCache::load_binary(const std::string& path, const cl::Device& device, const std::string& source,
                               const std::string& options, std::vector<unsigned char>& binary) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char magic[8];
  Header h;
  in.read(magic, 8);
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  std::error_code ec;
  const auto file_size = fs::file_size(path, ec);
  bool ok = in && !ec && std::memcmp(magic, kMagic, 8) == 0 && h.size > 0 && h.size < (1ULL << 31) &&
            file_size == kHeader + h.size;
  if (ok) {
    binary.resize(h.size);
    in.read(reinterpret_cast<char*>(binary.data()), static_cast<std::streamsize>(h.size));
    const Header want = header_of(device, source, options, binary);
    ok = in.gcount() == static_cast<std::streamsize>(h.size) && h.identity == want.identity &&
         h.source == want.source && h.check == want.check;
  }
  if (!ok) {
    std::lock_guard lock(mutex_);
    ++stats_.corrupt_files;
  }
  return ok;
}

void ProgramCache::store_binary(const std::string& path, const cl::Device& device, const std::string& source,
                                const std::string& options, const std::vector<unsigned char>& binary) {
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const Header h = header_of(device, source, options, binary);
    out.write(kMagic, 8);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(reinterpret_cast<const char*>(binary.data()), static_cast<std::streamsize>(binary.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      std::lock_guard lock(mutex_);
      ++stats_.write_failures;
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);  // atomic: readers see the old file or the new one, never half
  if (ec) {
    fs::remove(tmp, ec);
    std::lock_guard lock(mutex_);
    ++stats_.write_failures;
  }
}

namespace {

std::string build_log(const cl::Program& program, const std::vector<cl::Device>& devices) {
  std::string log;
  for (const auto& d : devices) {
    try {
      std::string l = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(d);
      while (!l.empty() && (l.back() == '\n' || l.back() == '\0')) l.pop_back();
      if (!l.empty()) log += l + "\n";
    } catch (const cl::Error&) {
    }
  }
  return log;
}

}  // namespace

std::optional<cl::Program> ProgramCache::kept(const Key& key) {
  std::lock_guard lock(mutex_);
  auto it = programs_.find(key);
  if (it == programs_.end()) return std::nullopt;
  ++stats_.memory_hits;
  return it->second;
}

std::shared_ptr<std::mutex> ProgramCache::build_mutex(const Key& key) {
  std::lock_guard lock(mutex_);
  auto& m = building_[key];
  if (!m) m = std::make_shared<std::mutex>();
  return m;
}

std::optional<cl::Program> ProgramCache::load_stored(const cl::Context& context, const std::vector<cl::Device>& devices,
                                                     const ProgramSource& source, const std::string& options,
                                                     const std::vector<std::string>& paths) {
  // A binary that passes every check can still crash the driver while it loads: a marker is
  // kept while one loads, so the next process (the caller holds the entry's lock: no other is
  // loading) finds the marker of one that died, drops the binaries and builds from source instead.
  const std::string loading = paths.front() + ".loading";
  std::error_code ec;
  if (fs::exists(loading, ec)) {
    for (const auto& p : paths) fs::remove(p, ec);
    fs::remove(loading, ec);
    std::lock_guard lock(mutex_);
    ++stats_.crashed_loads;
  }
  std::vector<std::vector<unsigned char>> binaries(devices.size());
  bool all = true;
  for (std::size_t i = 0; i < devices.size() && all; ++i)
    all = load_binary(paths[i], devices[i], source.text, options, binaries[i]);
  if (!all) return std::nullopt;
  std::optional<cl::Program> program;
  { std::ofstream(loading) << ::getpid() << "\n"; }
  try {
    program = cl::Program(context, devices, binaries);
    program->build(devices, options.c_str());
  } catch (const cl::Error&) {
    // Stale or foreign binary: the caller builds from the source.
    program.reset();
    std::lock_guard lock(mutex_);
    ++stats_.corrupt_files;
  }
  fs::remove(loading, ec);
  return program;
}

cl::Program ProgramCache::build_from_source(const cl::Context& context, const std::vector<cl::Device>& devices,
                                            const ProgramSource& source, const std::string& options,
                                            ErrorContext& where) {
  cl::Program program;
  try {
    program = cl::Program(context, source.text);
  } catch (const cl::Error& e) {
    throw_cl(e, where);
  }
  try {
    program.build(devices, options.c_str());
  } catch (const cl::Error& e) {
    where.build_log = build_log(program, devices);
    where.api_call = "clBuildProgram";
    if (where.fix.empty()) where.fix = "correct the kernel source; the compiler's log follows";
    throw Error(make_error_code(errc::build_failure),
                "kernel source '" + source.origin + "' failed to build (" + opencl_status_name(e.err()) + ")", where);
  }
  return program;
}

void ProgramCache::store_binaries(const cl::Program& program, const std::vector<cl::Device>& devices,
                                  const ProgramSource& source, const std::string& options,
                                  const std::vector<std::string>& paths) {
  try {
    auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
    for (std::size_t i = 0; i < binaries.size() && i < paths.size(); ++i)
      if (!binaries[i].empty()) store_binary(paths[i], devices[i], source.text, options, binaries[i]);
  } catch (const cl::Error&) {
    std::lock_guard lock(mutex_);
    ++stats_.write_failures;
  }
}

cl::Program ProgramCache::get(const cl::Context& context, const std::vector<cl::Device>& devices,
                              const ProgramSource& source, const std::string& options, ErrorContext where) {
  std::vector<cl_device_id> built_for;
  for (const auto& d : devices) built_for.push_back(d());
  const Key key = std::make_tuple(context(), std::move(built_for), source_key(source.text, options), options);
  if (auto program = kept(key)) return *program;
  const auto started = std::chrono::steady_clock::now();
  // One thread builds a given program; others wait for it rather than build it again.
  const auto mutex = build_mutex(key);
  std::lock_guard build_lock(*mutex);
  if (auto program = kept(key)) return *program;
  if (where.kernel_file.empty()) where.kernel_file = source.origin;
  if (where.device.empty() && !devices.empty()) where.device = devices.front().getInfo<CL_DEVICE_NAME>();

  std::vector<std::string> paths;
  if (!dir_.empty())
    for (const auto& d : devices) paths.push_back(file_for(d, source.text, options));
  FileLock disk_lock(paths.empty() ? std::string() : paths.front() + ".lock");
  std::optional<cl::Program> stored;
  if (!dir_.empty()) stored = load_stored(context, devices, source, options, paths);
  cl::Program program;
  if (stored) {
    program = *stored;
  } else {
    program = build_from_source(context, devices, source, options, where);
    if (!dir_.empty()) store_binaries(program, devices, source, options, paths);
  }
  std::lock_guard lock(mutex_);
  if (stored) ++stats_.disk_hits; else ++stats_.builds;
  stats_.build_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  programs_[key] = program;
  return program;
}

}  // namespace sinew::detail
