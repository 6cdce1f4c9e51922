// sinew/kb.hpp — the knowledge base: what Sinew has learnt about running each tree on this
// machine (trained, derived and balanced plans, every measurement), kept in one SQLite file.
//
// Identity. An entry is valid for a KbKey: the tree signature (Node::signature(): structure,
// kernel source hashes, build options), the device set (device_set_signature(): names, platforms
// and driver versions in runtime order) and the library version. Within a key, entries are told
// apart by their input features (named numbers such as vector sizes; matched by name, order
// free). There is one current entry per (key, features); its history lives in the runs (every
// measurement ever taken, never updated) and the balancer events. Every plan stored (entries,
// runs, events; imported or not) passes the runtime's own checks (Config::check): one share per
// device of its device set, shares adding up to 1, an overlap of 1 to 16, a fission
// configuration a CPU can offer; text is valid UTF-8.
//
// Durability. Every write is its own transaction, committed before the call returns (WAL mode,
// synchronous=NORMAL: a killed process loses at most the write in flight, a power cut at most the
// last few). Several processes may share one file: writers wait up to the busy timeout for each
// other and lose nothing.
//
// Failure. KnowledgeBase::open never throws for an unusable file: it warns once (KbOptions::log) and
// returns an in-memory knowledge base (see open()). Once open, a call that fails (disk full, an
// I/O error, a lock held past the busy timeout, a file damaged since it was opened) throws
// sinew::Error(errc::knowledge_base); a caller that must never stop (the Runtime) catches it,
// warns and goes on. Bad arguments (non-finite numbers, an unknown provenance, a malformed
// import) throw sinew::Error(errc::invalid_argument) before anything is written.
//
// Thread safety. A KnowledgeBase may be used from several threads at once (one connection behind
// a mutex). Not across fork(): a child process opens its own. Interpolators are stateless.
#pragma once

#include <sinew/config.hpp>
#include <sinew/device.hpp>
#include <sinew/options.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinew {

/// Named input features of one request: "<vector name>.size" (an unnamed vector: "v<k>.size", k
/// its position among the tree's vectors in the order Node::signature() numbers them),
/// "host.pinned", and scalars marked with as_feature(). Knowledge bases and exports of schema
/// versions before 4 named unnamed vectors by a process-wide counter; those names are rewritten
/// when such a file is migrated or such an export imported (from the stored tree description).
using KbFeatures = std::vector<std::pair<std::string, double>>;

/// What a knowledge-base row is valid for: a tree, a device set and a library version. A change
/// of any of them makes the row another key's, so nothing learnt elsewhere is applied here.
struct KbKey {
  std::string tree;     ///< Node::signature()
  std::string devices;  ///< device_set_signature(runtime devices)
  std::string library;  ///< Sinew version (sinew::version)
  /// Every field equal.
  friend bool operator==(const KbKey&, const KbKey&) = default;
};

/// The canonical text of a device set, in the given (runtime) order: per device its id ("gpu:0"),
/// name, platform and its version, driver version, compute units, and a marker when it is driven
/// unlike its kind (a CPU emulating a discrete device). Any change of these invalidates what was
/// learnt on the old set, e.g. "cpu:0 <name> (Portable Computing Language, OpenCL 3.0 PoCL 5.0,
/// driver 5.0, 16 CUs); gpu:0 <name> (<platform>, <OpenCL version>, driver <version>, <CUs> CUs)".
std::string device_set_signature(const std::vector<DeviceInfo>& devices);
/// How many devices a device_set_signature() names (its "; "-separated items).
std::size_t device_count(const std::string& device_set);
/// {tree, device_set_signature(devices), sinew::version}.
KbKey make_kb_key(std::string tree, const std::vector<DeviceInfo>& devices);

/// The current plan for one tree, device set, library and input features.
struct KbEntry {
  std::int64_t id = 0;                  ///< set by the knowledge base
  KbKey key;                            ///< tree, device set, library
  KbFeatures features;                  ///< the input it plans for
  Config config;                        ///< the plan
  double time_ms = 0;                   ///< measured (or, when derived, the source's) time
  Provenance provenance = Provenance::trained;  ///< trained | derived | balanced | manual
  std::optional<std::int64_t> source;   ///< derived / balanced from this entry
  double precision = 0;                 ///< training: the stoppage precision used
  unsigned quality = 0;                 ///< training: executions per measured point
  std::int64_t executions = 0;          ///< times this entry was used to run the tree
  /// How the plan was made: to_string(Strategy) when trained ("even_split", "cpu_assisted"); the
  /// interpolator's name when derived ("nearest", "inverse_distance"; "+screen" appended when runs
  /// checked the derived plan); "balancer" when the balancer moved it; "" when none was given
  /// (files from before strategies were kept). Older spellings ("even", "cpu-assisted", ...) are
  /// rewritten when a file is migrated or an export imported.
  std::string strategy;
  std::string created;                  ///< UTC, ISO 8601 with milliseconds; set by the KB
  std::string updated;                  ///< UTC, ISO 8601 with milliseconds; set by the KB
};

/// One measurement: the tree ran once (or `quality` times, averaged by the caller) with `config`.
struct KbRun {
  std::int64_t id = 0;                  ///< set by the knowledge base
  KbKey key;                            ///< tree, device set, library
  KbFeatures features;                  ///< the input
  Config config;                        ///< the plan that ran
  double time_ms = 0;                   ///< its measured time
  /// Per-partition busy times, in decomposition order; empty for runs that were not profiled
  /// (RunOptions::profile: training and unprofiled executions measure no device-side times).
  std::vector<double> partition_ms;
  /// Per-device busy times as the host measured them, one per share of `config` (0 where a device
  /// had no work); empty where they were not kept. Derivation fits a device's cost from them.
  std::vector<double> device_ms;
  std::string purpose = "training";     ///< training | balancing | execution
  std::string created;                  ///< set by the KB when empty
};

/// A load-balancer intervention on an entry.
struct KbEvent {
  std::int64_t id = 0;                  ///< set by the knowledge base
  std::int64_t entry = 0;               ///< the entry whose plan moved
  std::int64_t execution = 0;           ///< the entry's execution number that triggered it
  int level = 1;                        ///< 1: shares moved between device kinds; 2: partial retraining
  Config before;                        ///< the plan before the move
  Config after;                         ///< the plan after it
  double time_ms = 0;                   ///< the triggering execution's time
  std::vector<double> partition_ms;     ///< ... and its per-partition times
  double deviation = 0;                 ///< the deviation between partition times
  double lbt = 0;                       ///< the load-balancing threshold lbt(n)
  std::string created;                  ///< UTC, set by the KB
};

/// What `trees()` lists: one row per tree signature with anything stored.
struct KbTreeSummary {
  std::string tree;                     ///< Node::signature()
  std::string label;                    ///< from describe_tree(), "" when never described
  std::string description;              ///< from describe_tree(), "" when never described
  std::int64_t entries = 0;             ///< current plans stored for it
  std::int64_t runs = 0;                ///< measurements
  std::int64_t events = 0;              ///< balancer events
  std::string updated;                  ///< latest entry update or run
};

/// Rows touched by import_json / removed by clear.
struct KbCounts {
  std::int64_t entries = 0;  ///< plans
  std::int64_t runs = 0;     ///< measurements
  std::int64_t events = 0;   ///< balancer events
  /// All of them.
  std::int64_t total() const { return entries + runs + events; }
};

/// How KnowledgeBase::open opens a file.
struct KbOptions {
  /// How long a write (or the opening checks) waits for another process's lock.
  std::chrono::milliseconds busy_timeout{5000};
  /// Where open()'s warning goes (it is always available through warning()); empty: nowhere.
  Logger log = stderr_logger();
  /// For reading only (what `sinew kb list/show/export` do): open() creates, moves, converts and
  /// writes nothing — a file written by an older Sinew is migrated in memory — and every write
  /// fails. A file that cannot be read throws sinew::Error(errc::knowledge_base) instead of
  /// falling back to memory.
  bool read_only = false;
};

/// The SQLite store of every plan and measurement (see the header's description): one connection,
/// safe to share between threads and processes (each write is one transaction).
class KnowledgeBase {
 public:
  /// Opens (creating it and its parent directories when missing) the knowledge base at `path`;
  /// ":memory:" gives an in-memory one. A file is taken for a knowledge base when its
  /// application_id says so (or, written before Sinew set one, when it has Sinew's tables), checked
  /// read-only before anything is written: another program's database is left byte for byte as it
  /// was. Never throws for an unusable file (but with KbOptions::read_only): when it cannot be
  /// opened, is locked past the busy timeout, is corrupt (`PRAGMA quick_check` not "ok", "file is
  /// not a database"), is not a Sinew knowledge base, or was written by a newer Sinew, it prints
  /// ONE warning (KbOptions::log) saying what happened and where, and returns an in-memory knowledge base
  /// (persistent() false, warning() holds the text). A corrupt file is moved aside to
  /// `<path>.corrupt-<UTC timestamp>` (with its -wal and -shm files), never overwritten or
  /// deleted, so the next process starts a fresh file; every other unusable file is left untouched.
  /// Older schemas are migrated in place.
  static std::unique_ptr<KnowledgeBase> open(const std::string& path, KbOptions options = {});
  /// (The file a Runtime uses is RuntimeOptions::kb_path: RuntimeOptions{}.effective().kb_path.)
  static std::unique_ptr<KnowledgeBase> memory();

  ~KnowledgeBase();
  KnowledgeBase(const KnowledgeBase&) = delete;
  KnowledgeBase& operator=(const KnowledgeBase&) = delete;

  /// Whether it is a file (false: in memory, from ":memory:" or a fallback; see warning()).
  bool persistent() const;
  const std::string& path() const;      ///< the file, or ":memory:"
  const std::string& warning() const;   ///< why open() fell back to memory; "" otherwise

  // --- Measurements (append only) ---
  /// Records one measurement; returns its id. The run's key and plan are checked first.
  std::int64_t record_run(const KbRun& run);
  /// Records `runs` and counts entry uses (`executions`: (entry id, n) pairs, as add_executions;
  /// an entry that no longer exists is skipped) in ONE transaction: all or nothing, every run
  /// checked before anything is written. For callers that buffer frequent measurements (the
  /// Runtime's execution runs): one commit for many runs.
  void record_runs(const std::vector<KbRun>& runs,
                   const std::vector<std::pair<std::int64_t, std::int64_t>>& executions = {});
  /// Runs of the entry's key and features, oldest first.
  std::vector<KbRun> runs(std::int64_t entry) const;
  /// Runs of a key and features, oldest first.
  std::vector<KbRun> runs(const KbKey& key, const KbFeatures& features) const;
  /// Every run of a tree (any device set, library, features), oldest first.
  std::vector<KbRun> runs_for_tree(const std::string& tree) const;

  // --- Entries: one current entry per (key, features) ---
  /// Inserts the entry, or updates the current one of the same key and features (config, time,
  /// provenance, source, precision, quality, strategy; `updated` becomes now). On update the stored
  /// `executions` and `created` are kept (count uses with add_executions). Returns the entry's id.
  std::int64_t store_entry(const KbEntry& entry);
  /// The entry with this id, if it exists.
  std::optional<KbEntry> entry(std::int64_t id) const;
  /// The entry for exactly these features (matched by name, values compared exactly).
  std::optional<KbEntry> find(const KbKey& key, const KbFeatures& features) const;
  /// Every entry of the key, any features: what an Interpolator derives from.
  std::vector<KbEntry> entries(const KbKey& key) const;
  /// Every entry of a tree (any device set, library, features).
  std::vector<KbEntry> entries_for_tree(const std::string& tree) const;
  /// Counts `n` more uses of the entry. False when it no longer exists (cleared meanwhile).
  bool add_executions(std::int64_t entry, std::int64_t n = 1);

  // --- Balancer events ---
  /// Records a balancer event; returns its id.
  std::int64_t record_event(const KbEvent& event);
  /// The events of an entry, oldest first.
  std::vector<KbEvent> events(std::int64_t entry) const;

  // --- Trees ---
  /// A human-readable label and description (e.g. Node::label(), Node::dump()) for `kb list/show`.
  /// Cheap when unchanged (a read, no write lock).
  void describe_tree(const std::string& tree, const std::string& label, const std::string& description);
  /// Every tree with anything stored, with its label and counts.
  std::vector<KbTreeSummary> trees() const;
  /// The stored tree signatures starting with `prefix` (all when empty).
  std::vector<std::string> match_trees(std::string_view prefix) const;

  // --- Export, import, clear ---
  /// Every entry, run, event and tree description (of one tree, or all), as JSON.
  std::string export_json(const std::optional<std::string>& tree = std::nullopt) const;
  /// Merges an export into this knowledge base in one transaction (all or nothing): runs and
  /// events already present are skipped; an entry of the same key and features is replaced when
  /// the imported one was updated later (executions: the larger count). An older export is read
  /// as its file would be migrated: old strategy spellings and counter-named vector features (see
  /// KbFeatures, from the export's tree descriptions) become today's. An entry whose plan the tree
  /// cannot run — the dynamic schedule for a tree whose partitions meet mid-run (divide and
  /// conquer, a scan, a loop's predicate, halos or whole reads of what it writes), as the export's
  /// or this knowledge base's description of the tree shows — is refused. Throws
  /// sinew::Error(errc::invalid_argument) naming what is malformed.
  KbCounts import_json(std::string_view json);
  /// Removes everything of one tree, or everything. Returns what was removed.
  KbCounts clear(const std::optional<std::string>& tree = std::nullopt);

  class Impl;  ///< the library's own (lib/kb/)

 private:
  explicit KnowledgeBase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------------
// Derivation: a plan for features the knowledge base has no entry for.

/// A plan an Interpolator derived, and from what.
struct Derived {
  Config config;            ///< the plan
  std::int64_t source = 0;  ///< the nearest entry's id
  double distance = 0;      ///< normalised Euclidean distance to it (0: same features)
  std::string method;       ///< the interpolator's name
};

/// Derives a plan for features the knowledge base has no entry for (RuntimeOptions::interpolation).
class Interpolator {
 public:
  virtual ~Interpolator() = default;
  /// to_string() of its Interpolation value: "nearest", "inverse_distance".
  virtual std::string name() const = 0;
  /// A plan for `features` from `known` (normally KnowledgeBase::entries(key)). Features are
  /// matched by name: entries lacking one of the query's features are skipped, extra ones ignored.
  /// Each feature is normalised by its range over the usable entries and the query, so no feature
  /// dominates by its unit. Empty when no entry is usable.
  virtual std::optional<Derived> derive(const std::vector<KbEntry>& known, const KbFeatures& features) const = 0;
};

/// The spec's method: the nearest entry's plan, by Euclidean distance over normalised features.
/// Ties go to the more recently updated entry.
class NearestNeighbour final : public Interpolator {
 public:
  std::string name() const override { return std::string(to_string(Interpolation::nearest)); }  ///< "nearest"
  std::optional<Derived> derive(const std::vector<KbEntry>& known, const KbFeatures& features) const override;
};

/// Shares weighted by 1/distance^power over the k nearest entries (those with as many devices as
/// the nearest), renormalised to sum 1; fission and overlap from the nearest. An exact match is
/// returned as is.
class InverseDistance final : public Interpolator {
 public:
  /// Over the `k` nearest entries, weights 1/distance^`power`.
  explicit InverseDistance(std::size_t k = 4, double power = 2) : k_(k), power_(power) {}
  /// "inverse_distance"
  std::string name() const override { return std::string(to_string(Interpolation::inverse_distance)); }
  std::optional<Derived> derive(const std::vector<KbEntry>& known, const KbFeatures& features) const override;

 private:
  std::size_t k_;
  double power_;
};

/// The interpolator of a RuntimeOptions::interpolation value.
std::unique_ptr<Interpolator> make_interpolator(Interpolation kind);

}  // namespace sinew
