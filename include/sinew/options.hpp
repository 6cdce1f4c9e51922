// sinew/options.hpp — every setting of a Runtime and of a run, and the one reader of the
// environment.
//
// One precedence: what the program set wins; the environment fills what it left unset; the
// default fills the rest. Each setting that a SINEW_* variable can give names its variable
// below; `environment_variables()` lists them all (the README's table is checked against it).
// Every variable is read and checked once, by RuntimeOptions::from_environment(), when a Runtime
// is made: a bad value is a sinew::Error naming the variable, the value and what it accepts,
// also when the program set the same setting itself.
//
// Option structs are plain values; an empty std::optional means "not set here", and so does an
// empty string.
#pragma once

#include <sinew/config.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinew {

/// How training searches the distribution (the spec's strategies).
enum class Strategy {
  even_split,    ///< "50/50": move work between device groups until their times agree
  cpu_assisted,  ///< "CPU-assisted GPU": add work to the CPU while the total time falls
  model,         ///< SkePU's tuning: a linear time model per device, fitted from a few runs, and its
                 ///< closed-form split (or one device alone); at most 10 executions to a plan
};
/// How a plan is derived for an input the knowledge base has not seen.
enum class Interpolation {
  nearest,           ///< the nearest stored input's plan (the spec's method)
  inverse_distance,  ///< shares weighted by inverse distance over the nearest inputs
  cost_model,        ///< each device's time alone fitted over the input size at each level, from the
                     ///< runs at other inputs; the fastest predicted plan (a device alone or the split
                     ///< finishing together); the nearest input's plan where the runs fit no line
};
/// What a run of a known tree does for an input the knowledge base has no plan for.
enum class UnseenPolicy { derive, train };
/// How pageable host data reaches discrete devices.
enum class TransferMode {
  staged,  ///< through pinned chunks, copied while the DMA engine moves the previous one
  direct,  ///< handed to the driver as it is (for comparison)
};
/// How host threads wait for discrete devices (see lib/exec/wait.hpp).
enum class WaitMode { automatic, block, poll };
/// What a logged line is: progress of a training (one line per measured plan; on a terminal the
/// default logger rewrites one line in place), information (a plan trained, a balancer move), a
/// warning.
enum class LogLevel { info, warning, progress };

/// The one spelling of each value (the enumerator's name), in the API, on command lines, in
/// variables and in the knowledge base; from_string<E> reads exactly that spelling.
std::string_view to_string(Strategy v) noexcept;
std::string_view to_string(Interpolation v) noexcept;  ///< see to_string(Strategy)
std::string_view to_string(UnseenPolicy v) noexcept;   ///< see to_string(Strategy)
std::string_view to_string(TransferMode v) noexcept;   ///< see to_string(Strategy)
std::string_view to_string(WaitMode v) noexcept;       ///< see to_string(Strategy)
std::string_view to_string(LogLevel v) noexcept;       ///< see to_string(Strategy)
/// The E whose to_string() is `text`; nullopt for any other text.
template <class E>
std::optional<E> from_string(std::string_view text) noexcept;
/// "a, b or c": every spelling of E, for messages.
template <class E>
std::string spellings();

/// Where the library's lines go: training progress and balancer moves (info), warnings. Called
/// from the thread that logs (a request's thread, the knowledge base's writer); must be
/// thread-safe. Default: stderr, each line prefixed "sinew: ".
using Logger = std::function<void(LogLevel level, const std::string& line)>;
/// The default: "sinew: <line>" (warnings "sinew: warning: <line>") on stderr, a line at a time.
/// Where stderr is a terminal (and TERM is not "dumb"), progress lines rewrite one line in place,
/// cut to the terminal's width, and the next other line replaces it; elsewhere every line is a
/// plain line.
Logger stderr_logger();

/// How training searches (the spec's precision value and quality factor, and its strategy).
struct TrainingSettings {
  std::optional<Strategy> strategy;            ///< $SINEW_STRATEGY; default even_split
  std::optional<double> precision;             ///< $SINEW_PRECISION; default 0.05, in (0, 1]
  std::optional<unsigned> quality;             ///< $SINEW_QUALITY; executions per measured point, 1..1000; default 3
  std::optional<bool> exhaustive;              ///< $SINEW_EXHAUSTIVE; every fission x overlap combination; default false
  std::optional<std::size_t> max_executions;   ///< runs per training, 1..100000; default 40
  /// The wall time a training (or a pinned device's screening, or a derived plan's check) may
  /// take: it stops once it has run max(time_budget_s, TrainingTuning::budget_best_plan_times x
  /// the fastest plan measured so far), or max_executions, whichever comes first, and keeps the
  /// fastest measured plan (Report::training_end says what ended it). Its first plan is always
  /// measured. 0: no time budget, executions only. $SINEW_TRAINING_TIME; seconds, 0..86400;
  /// default 2.
  std::optional<double> time_budget_s;
  /// A plan derived for unseen inputs is checked with at most this many runs (on scratch copies):
  /// its GPU overlap and CPU fission screened at the derived distribution, one rebalancing step,
  /// each device alone (each device's fastest plan alone three times); the fastest is stored (a
  /// split only where it beats every device alone by more than the precision: most points are
  /// measured once). 0: derived plans are used as derived, unmeasured
  /// (the spec's derivation). $SINEW_DERIVE_EXECUTIONS; 0..100000; default 24.
  std::optional<std::size_t> derive_executions;

  /// Every unset setting given its default, every setting checked: throws sinew::Error naming
  /// the setting (TrainingSettings::quality, ...), its value and what it accepts.
  TrainingSettings with_defaults() const;
};

/// The online balancer's tuned values: the thresholds and run counts that measurements chose,
/// grouped by the part of the balancer that uses them (lib/schedule/balancer_*.cpp). The
/// measurements behind them are in docs/decisions/ (cited below by record). The defaults are what
/// the balancer is tested and measured with (test/unit/balancer_policy_test.cpp pins them);
/// other values are for experiments (BalancerSettings::tuning). A "noise deviation" is a standard
/// deviation of a device's log time from run to run; "standard errors" are those of the
/// balancer's estimates.
struct BalancerTuning {
  /// What the balancer keeps of each device's runs, and the time model it fits to them
  /// (time = fixed + ms_per_unit * share over the device's current *regime*: its runs since its
  /// rate last changed).
  struct Watch {
    /// Runs of its current regime that a device's model is fitted over (its latest).
    std::size_t regime_runs = 48;
    /// Run-to-run changes (|log t_i / t_(i-1)| within one plan) whose median is a device's noise.
    std::size_t noise_runs = 64;
    /// A device's noise before it has shown any, so that nothing moves on the first few runs'
    /// differences (docs/decisions/001).
    double unknown_noise = 0.3;
    /// The unknown noise counts as if seen this many times (the median of a few changes is often
    /// half the noise).
    double unknown_noise_weight = 8;
    /// The least noise a device is taken to have.
    double least_noise = 0.01;
    /// The latest runs whose spread about the model (time over modelled time) hedges the device's
    /// share (docs/decisions/012).
    std::size_t spread_runs = 24;
    /// The standard error of a median (or interquartile mean) of n runs, in noise deviations
    /// over sqrt(n).
    double centre_efficiency = 1.25;
    /// A plan's first run counts towards the model where it lies at most this many noise
    /// deviations above the centre of the plan's later runs at that share (docs/decisions/011).
    double first_run_within = 2;
    /// A fixed cost is fitted through the shares a regime ran at once they span this much of the
    /// work ...
    double fit_span = 0.05;
    /// ... and the line's slope is known within this fraction of the proportional rate.
    double fit_slope_within = 0.1;
    /// A fitted fixed cost is at most this fraction of the fastest share's time.
    double fitted_fixed_at_most = 0.9;
    /// A fixed cost carried from an earlier regime is at most this fraction of the current
    /// regime's fastest time (docs/decisions/005).
    double carried_fixed_at_most = 0.5;
  } watch;  ///< see Watch

  /// When a device's rate changed for good (a *step*: a load arriving or leaving).
  struct Steps {
    /// Runs in a row that show a step, each beyond `deviations` of the plan's earlier median, on
    /// one side (docs/decisions/002).
    std::size_t runs = 3;
    /// A noisy step: all but a third of the last `runs` + 1 to `noisy_runs` runs beyond, on one
    /// side (docs/decisions/003).
    std::size_t noisy_runs = 9;
    /// Noise deviations a step's runs lie beyond (the band of a kept regime too).
    double deviations = 2.5;
    /// A step is taken where its runs would lie where they do with less than this chance without
    /// one.
    double chance = 1e-3;
    /// The band is wider while the plan's earlier runs are few: times (1 + this / their count).
    double few_runs_widening = 3;
    /// A noisy regime ended: the last `quiet_runs` runs' median beyond their own band from the
    /// earlier median ...
    std::size_t quiet_runs = 5;
    /// ... their noise taken as at least this ...
    double quiet_noise = 0.15;
    /// ... and every one beyond this quantile of the earlier runs, on that side.
    double quiet_edge_quantile = 0.1;
    /// A device slower than the plan's runs before this balancer (the knowledge base's): the
    /// median of its last this many runs beyond the band (docs/decisions/006).
    std::size_t recalled_runs = 4;
    /// Earlier runs before a step's first that lie beyond this fraction of the band (and nearer
    /// the new runs than the old) belong to the step (docs/decisions/004).
    double onset_band_fraction = 0.5;
  } steps;  ///< see Steps

  /// The regimes a device left at its steps (docs/decisions/014).
  struct Regimes {
    /// Regimes kept per device, the latest first.
    std::size_t kept = 3;
    /// A device is back in a kept regime where its current regime's model is off its latest runs
    /// by this many times as much as the kept one's.
    double current_off_ratio = 2;
    /// ... and its current regime has at least this many times `Steps::noisy_runs` earlier runs.
    std::size_t earlier_runs_ratio = 2;
  } regimes;  ///< see Regimes

  /// Probes of a device the balancer took all work from (docs/decisions/013).
  struct Probes {
    /// The share a probe gives it (also what a step within a young regime leaves a device it
    /// would idle).
    double share = 0.05;
    /// Watched runs before the first probe; doubled after each probe that did not pay ...
    std::size_t first_wait = 32;
    /// ... up to this many.
    std::size_t last_wait = 128;
  } probes;  ///< see Probes

  /// When a plan moves, and when a move stays.
  struct Moves {
    /// Slow drift: a run is unbalanced where the move to the optimum is predicted to gain more
    /// than this many standard errors ... (docs/decisions/007)
    double drift_errors = 2.5;
    /// ... and more than this fraction of the balance bound.
    double drift_bound_fraction = 0.5;
    /// A confirming move (after the first) needs a gain beyond this many standard errors ...
    double confirm_errors = 1.0;
    /// ... and this fraction of the balance bound.
    double confirm_bound_fraction = 0.25;
    /// A plan that ends an episode slower than the plan it started from by more than this
    /// (log time), beyond `pay_errors` standard errors of the comparison, goes back
    /// (docs/decisions/010).
    double must_pay = 0.03;
    double pay_errors = 2.0;  ///< see must_pay
    /// For this many runs after a step the episode follows the optimum ... (docs/decisions/008)
    std::size_t young_runs = 12;
    /// ... wherever it lies this much of the work away without idling a device.
    double young_move = 0.05;
    /// Lopsided: a device at a share of at most `lopsided_share` finishing within this fraction
    /// of another's time ... (docs/decisions/009)
    double lopsided_within = 0.5;
    double lopsided_share = 0.25;  ///< see lopsided_within
    /// ... for this many windows in a row is moved whatever the noise.
    std::size_t lopsided_windows = 3;
    /// Runs without a slow-drift move after a plan went back; doubled each time ...
    std::size_t first_backoff = 8;
    /// ... up to this many.
    std::size_t last_backoff = 512;
  } moves;  ///< see Moves

  /// The split the devices' models predict best (lib/schedule/split_model.cpp).
  struct Split {
    /// A device's share below this is not worth its run's fixed costs and noise: it goes idle.
    double least_share = 0.02;
    /// Shares are multiples of 1 / grid_steps (docs/decisions/011).
    double grid_steps = 100;
    /// Splits predicted within this fraction of each other tie; the one with fewer devices wins.
    double tie = 1e-3;
    /// Every set of devices is tried up to this many known devices; beyond, all and each alone.
    std::size_t every_set_up_to = 10;
    /// The split is hedged against the estimates' errors and noise up to this many known devices.
    std::size_t hedged_up_to = 4;
  } split;  ///< see Split
};

/// The online two-level balancer (the spec's controller and "Adjust work distribution"). After every
/// run it watches, the deviation between the active devices' times, dev = 1 - fastest/slowest, is
/// judged on the element-wise median of the last `window` runs of the plan: unbalanced when the
/// fastest device finished before `balanced_within` of the slowest's time.
/// lbt(n) = unbalanced(n) * weight + lbt(n-1) * (1 - weight); when lbt reaches `trigger`,
/// level 1 moves work between device kinds (and between devices of one kind) in proportion to
/// their measured rates (median of the last `window` runs), over the following runs until they
/// are balanced; when `level1_steps` moves have not balanced them (and did not go back and forth:
/// moves that reverse have bracketed the balance, and the rest is noise), level 2 retrains the
/// distribution within the current fission/overlap configuration (at most `level2_executions`
/// runs, on scratch copies). Balanced plans are stored in the knowledge base (provenance
/// "balanced"), so the next process starts from them.
struct BalancerSettings {
  std::optional<bool> enabled;                  ///< $SINEW_BALANCE; default true
  std::optional<double> balanced_within;        ///< $SINEW_BALANCE_WITHIN; in (0, 1]; default 0.88
  std::optional<double> weight;                 ///< w; $SINEW_BALANCE_WEIGHT; in (0, 1]; default 0.5
  std::optional<double> trigger;                ///< in (0, 1]; default 0.85: three judged runs in a row at w = 0.5
  std::optional<unsigned> level1_steps;         ///< 1..1000; default 4
  std::optional<unsigned> window;               ///< 1..1000; default 3
  std::optional<std::size_t> level2_executions; ///< 1..100000; default 16
  /// The balancer's policy, by its registered name (lib/schedule/balancer_registry.cpp lists
  /// them); an unknown name is an error listing the registered ones. Default "two_level", the
  /// balancer described above.
  std::optional<std::string> policy;
  /// The two-level balancer's tuned values, for experiments; default BalancerTuning{} (every value
  /// checked: a count of at least 1, a fraction in (0, 1], ...).
  std::optional<BalancerTuning> tuning;

  /// Every unset setting given its default, every setting checked (as TrainingSettings).
  BalancerSettings with_defaults() const;
};

/// The schedules' tuned values: the constants a measurement chose for the dynamic (guided)
/// schedule's chunks and for streaming a discrete device's share in chunks. The measurements
/// behind them are in docs/decisions/ (cited by record). The defaults are what the schedules are
/// tested and measured with (test/unit/schedule_policy_test.cpp pins them); other values are for
/// experiments (RuntimeOptions::schedule_tuning). Checked where a tree is prepared: a value out of
/// its range is a sinew::Error naming it.
struct ScheduleTuning {
  /// The dynamic schedule (Config::schedule "dynamic"; lib/decompose/schedules/dynamic/).
  struct Dynamic {
    /// A slot's next chunk is what is left over `divisor` times the slots, scaled by the slot's
    /// weight against the mean (EngineCL's HGuided); at least 1 (docs/decisions/021).
    double divisor = 2;
    /// With min_chunk 0, a slot's least chunk is its even share of the units over this many: the
    /// guided tail ends in a few dozen chunks rather than in single granules; at least 1
    /// (docs/decisions/021).
    std::size_t least_chunk_parts = 64;
    /// A slot under this fraction of the other slots' speed takes no chunk; in [0, 1)
    /// (docs/decisions/022).
    double negligible = 1.0 / 16;
    /// A slot under 1/`slow_share` of the others' speed commits 1/`slow_margin` of the chunk that
    /// would end with them; any other half of what it would end by then; both at least 1
    /// (docs/decisions/022).
    double slow_share = 8;
    double slow_margin = 4;  ///< see slow_share
    /// The most runs a device kept out by its remembered rate sits out between two probes; at
    /// least 1 (docs/decisions/025).
    unsigned probe_interval = 32;
    /// The devices taking chunks running this many times slower than in the run before has a
    /// kept-out device probed in the next run; above 1 (docs/decisions/025).
    double slowdown = 1.5;
  };
  Dynamic dynamic;  ///< the dynamic schedule's values
  /// The work-stealing schedule (Config::schedule "steal"; lib/decompose/schedules/steal/).
  struct Steal {
    /// Without a least_range for every device, the least range a queue takes (a piece of its
    /// own range, a stolen range) is the even share of a queue over this many; at least 1. (The
    /// dynamic schedule's least_chunk_parts; no measurement of the steal schedule chose it.)
    std::size_t least_range_parts = 64;
    /// A queue's next piece of its own range, as a fraction of what is left, between devices of one rate (larger by
    /// the rates for a faster discrete device, smaller for a slower zero-copy one; whole where no other device
    /// could steal: docs/decisions/155); at least its least range; in (0, 1]. (Tascell's halving; no measurement.)
    double piece_fraction = 0.5;
    /// A queue of a discrete device cuts the first piece of a range it begins (its first range,
    /// a stolen one) while no other queue of its device holds a piece in two: this fraction of
    /// the range, then the rest of the piece, so that the second upload overlaps the first
    /// kernel rather than all of the first piece waiting behind its upload (where another
    /// queue's piece runs, its kernel overlaps the upload: no cut, docs/decisions/184); the
    /// pieces after those two are as without the cut. In (0, 1]; at
    /// the piece's fraction or above (1: always), no cut. Queues of zero-copy devices, which move no data, are
    /// not cut; a queue's rate leaves out a first piece that was cut (docs/decisions/132).
    double first_piece_fraction = 0.25;
    /// The runs of one plan try leaving out the device that ran the least part of the units where
    /// that part is under this, and keep whichever way ran faster (a device whose work slows the
    /// others: docs/decisions/182). A half: the least of two or more devices, whatever its part
    /// (a device slowing the others runs a larger part for it). In [0, 1); 0: every device
    /// always works.
    double leave_out_part = 0.5;
    /// Runs each way compared (the least time of each); at least 1 (docs/decisions/182).
    std::size_t leave_out_runs = 3;
    /// The most runs the way kept runs between two trials of the other (the interval starts at
    /// leave_out_runs and doubles each time the kept way stays faster); at least leave_out_runs.
    std::size_t leave_out_interval = 64;
  };
  Steal steal;  ///< the work-stealing schedule's values
  /// A streamable tree's share on a discrete device, cut into chunks dealt round its queues.
  struct Streaming {
    /// Chunk sizes when RuntimeOptions::chunk_mb leaves them to the data: an eighth of the
    /// device's data within [min_chunk_bytes, max_chunk_bytes] (docs/decisions/026).
    std::size_t min_chunk_bytes = std::size_t{16} << 20;
    std::size_t max_chunk_bytes = std::size_t{64} << 20;  ///< see min_chunk_bytes
    /// The last chunks that shrink by halves (1/2, 1/4, ...), so that what follows the last
    /// upload is short; 0: none (docs/decisions/026).
    std::size_t shrinking_chunks = 3;
  };
  Streaming streaming;  ///< see Streaming
};

/// A Runtime's settings. Each unset one comes from its SINEW_* variable, then from its default
/// (effective()); `sinew options` lists them.
struct RuntimeOptions {
  /// Devices to use: "all", "cpu", "gpu", "gpu:0,cpu", ... $SINEW_DEVICES; default "all".
  std::optional<std::string> devices;
  /// Devices to drive as discrete GPUs (selection syntax, e.g. "cpu:1"): explicit transfers and
  /// overlap queues instead of zero copy and fission. A testing aid for CPU-only machines.
  /// $SINEW_DISCRETE; default none ("").
  std::optional<std::string> discrete;
  /// Devices whose leaves with per-kind variants (sinew::variants) run their GPU variant
  /// (selection syntax, e.g. "cpu:1"; DeviceInfo::variant_kind): a testing aid for CPU-only
  /// machines, where every device would otherwise run the CPU variant. Nothing else about the
  /// device changes. $SINEW_VARIANT_GPU; default none ("").
  std::optional<std::string> variant_gpu;
  /// A cap on the device memory Sinew uses on some devices: "selection=size" items,
  /// comma-separated, e.g. "gpu:0=256MB" or "cpu:1=64MB,gpu=2GB" (sizes in B, KB, MB, GB, TB,
  /// powers of 1024; a bare number is bytes). A device's memory is then the least of its
  /// CL_DEVICE_GLOBAL_MEM_SIZE and its cap (DeviceInfo::memory()). Streamable trees drag a share
  /// larger than that through a bounded set of buffers; others are refused or planned around it.
  /// $SINEW_MEMORY_CAP; default none ("").
  std::optional<std::string> memory_cap;
  /// The plan for runs that name neither a device nor a config (Config::parse syntax, e.g.
  /// "cpu=0.6,overlap=2"). $SINEW_CONFIG; default none (""): the knowledge base plans them.
  std::optional<std::string> config;
  /// Streamable trees reach discrete devices in chunks of about this many MB (summed over the
  /// partitioned vectors), dealt round-robin to the overlap queues. $SINEW_CHUNK_MB; a number
  /// in (0, 65536]; default: an eighth of the device's data, within 16-64 MB.
  std::optional<double> chunk_mb;
  /// $SINEW_TRANSFER; default staged.
  std::optional<TransferMode> transfer;
  /// Threads that copy each staged chunk between pageable host memory and the pinned ring, the
  /// queue's own thread included: 0 (the default) splits each copy over the host's hardware
  /// threads shared among the run's staging queues (at most 8 each; at most 4 where a CPU device
  /// computes beside them, docs/decisions/172); N uses N always (1: one per queue). It does not
  /// know of other requests or processes running at the same time.
  /// $SINEW_COPY_THREADS; 0..16 (a staged chunk is 4 MB, its pieces at least 256 KB).
  std::optional<unsigned> copy_threads;
  /// $SINEW_WAIT; default automatic.
  std::optional<WaitMode> wait;
  /// Map and unmap a CPU device's zero-copy results even where discovery's probe found that its
  /// buffers are the host memory itself. $SINEW_MAP_ZERO_COPY; default false.
  std::optional<bool> map_zero_copy;
  /// The discrete devices of one OpenCL platform (GPUs, and devices RuntimeOptions::discrete
  /// drives like them) share one OpenCL context, so halo units, replicas and a whole leaf's
  /// gather move between them with device-side copies rather than through the host. False keeps
  /// a context per device. CPU devices driven zero-copy (and their fission sub-devices) keep
  /// contexts of their own either way. Off by default: on GPUs whose driver keeps each buffer on
  /// one device at a time, a loop exchanging halos between them ran slower in one context than
  /// with a context each (docs/decisions/174). $SINEW_SHARED_CONTEXT; default false.
  std::optional<bool> shared_context;
  /// Profile every run's queues (device times per partition and kernel in the Report), unless a
  /// run says otherwise (RunOptions::profile). $SINEW_PROFILE; default false.
  std::optional<bool> profile;
  /// Checks that kernels read nothing beyond their slices and declared halos: on discrete devices
  /// (GPUs, or a CPU driven like one with `discrete`), each slice and halo buffer is surrounded by
  /// poison bytes, and each run (not training runs) is made twice, first on scratch copies of what
  /// it writes with one poison and then on the bound data with another; results that differ are an
  /// error naming the vector and the element. Costs a second run and memory: for tests and
  /// debugging. $SINEW_POISON_CHECK; default false.
  std::optional<bool> poison_check;
  /// Write a Chrome trace of every run to this file ("-N" appended when it exists); a trace
  /// profiles the run. A path in a missing or unwritable directory is refused when the Runtime is
  /// made. $SINEW_TRACE; default none ("").
  std::optional<std::string> trace;

  /// Directory of the on-disk program cache. Default $XDG_CACHE_HOME/sinew, else ~/.cache/sinew.
  std::optional<std::string> cache_dir;
  /// False keeps compiled programs in memory only. Default true.
  std::optional<bool> disk_cache;

  /// The knowledge base plans runs that name no device, config or plan. Its file: $SINEW_KB;
  /// default ${XDG_DATA_HOME:-~/.local/share}/sinew/kb.sqlite; ":memory:" keeps nothing.
  std::optional<std::string> kb_path;
  /// Train even for trees and inputs the knowledge base knows. $SINEW_TRAIN; default false.
  std::optional<bool> force_training;
  /// For inputs it has no entry for, of a tree it knows: derive a plan from the nearest entries
  /// (the spec's option b) or train (option a). $SINEW_UNSEEN; default derive.
  std::optional<UnseenPolicy> unseen;
  /// How a plan is derived for an unseen input. $SINEW_INTERPOLATOR; default cost_model.
  std::optional<Interpolation> interpolation;
  TrainingSettings training;  ///< how the knowledge base trains (see TrainingSettings)
  BalancerSettings balancer;  ///< the online balancer (see BalancerSettings)
  /// The schedules' tuned values, for experiments; default ScheduleTuning{}.
  std::optional<ScheduleTuning> schedule_tuning;

  /// No info lines (training progress, balancer moves); warnings still go to `log`. $SINEW_QUIET;
  /// default false.
  std::optional<bool> quiet;
  /// Where the library's lines go. Default: stderr.
  Logger log;

  /// Every SINEW_* variable that is set (and not empty), parsed and checked; the settings of
  /// unset variables stay empty. Throws sinew::Error(errc::invalid_argument) naming the variable,
  /// its value and what it accepts.
  static RuntimeOptions from_environment();
  /// The same over the given variables (name -> value) instead of the process environment.
  static RuntimeOptions from_variables(const std::map<std::string, std::string>& variables);
  /// These options, with every setting they leave unset taken from `fallback`.
  RuntimeOptions or_else(const RuntimeOptions& fallback) const;
  /// Every unset setting given its default (paths resolved from XDG_CACHE_HOME, XDG_DATA_HOME,
  /// HOME), and every setting checked against what it accepts: throws sinew::Error naming the
  /// setting (RuntimeOptions::balancer.weight, ...), its value and what it accepts.
  RuntimeOptions with_defaults() const;
  /// What a Runtime made with these options uses: or_else(from_environment()).with_defaults().
  RuntimeOptions effective() const;
};

/// Every member has a default member initialiser, so that designated initialisers naming some of
/// them (`{.device = i}`) compile warning-free under -Wextra (-Wmissing-field-initializers).
struct RunOptions {
  /// Run on this runtime device alone (an index into Runtime::devices()).
  std::optional<std::size_t> device = std::nullopt;
  /// Run with this plan (overrides `device`).
  std::optional<Config> config = std::nullopt;
  /// Or a plan in Config::parse syntax, e.g. "cpu=0.6,overlap=2" (used when `config` is empty).
  std::string plan = {};
  /// With none of the above, the knowledge base plans the run; `train` retrains even when it
  /// already knows this tree and input.
  bool train = false;
  /// The online balancer: empty means on for plans from the knowledge base (when
  /// BalancerSettings::enabled) and off for plans given here; true also adapts a given plan
  /// (`config`/`plan`), which is then only the starting point (nothing is stored for it).
  std::optional<bool> balance = std::nullopt;
  /// Device-side timing: the run's queues profile every command, so the Report has each
  /// partition's busy, kernel and transfer times and each kernel's (`partitions[i].ms`,
  /// `kernels`). Empty: RuntimeOptions::profile. Profiling adds to a run's time
  /// (docs/decisions/035); Report::device_ms, which the scheduler uses, is host-timed and
  /// always there. A trace being written (RuntimeOptions::trace) profiles whatever this says.
  std::optional<bool> profile = std::nullopt;
};

/// One setting that a variable gives: for `sinew options`, the README's table and messages.
struct EnvironmentVariable {
  std::string name;           ///< "SINEW_QUALITY"
  std::string setting;        ///< "RuntimeOptions::training.quality"
  std::string accepted;       ///< "a whole number from 1 to 1000"
  std::string default_value;  ///< "3"
  std::string effect;         ///< one line
};
/// Every SINEW_* variable Sinew reads, in the order of the README's table.
const std::vector<EnvironmentVariable>& environment_variables();
/// That table as Markdown (a header row, then one row per variable).
std::string environment_table_markdown();

// The checks behind every setting, for programs that read the same kinds of values from their
// own command lines (the samples, `sinew`). Each returns the value or throws
// sinew::Error(errc::invalid_argument) naming `what`, the text and what is accepted; text is taken
// whole (no leading or trailing characters, no sign on counts).
namespace parse {
std::uint64_t count(std::string_view text, const std::string& what, std::uint64_t min, std::uint64_t max);
/// A finite number within [min, max] (or (min, max] with min_open).
double number(std::string_view text, const std::string& what, double min, double max, bool min_open = false);
/// 1/0, true/false, yes/no, on/off.
bool flag(std::string_view text, const std::string& what);
template <class E>
E choice(std::string_view text, const std::string& what);
/// A size in bytes: a whole number with an optional unit B, KB, MB, GB or TB (powers of 1024),
/// at least 1 byte.
std::uint64_t bytes(std::string_view text, const std::string& what);
/// A memory cap's items ("gpu:0=256MB,cpu:1=64MB"): each device selection with its size. The
/// selections are read against the devices by select_devices.
std::vector<std::pair<std::string, std::uint64_t>> memory_caps(std::string_view text, const std::string& what);
}  // namespace parse

}  // namespace sinew
