// bench/bench_global_index.cpp — issue 40's figures for kernels run as they are written
// (Kernel::global_indices, docs/decisions/100):
//   layouts   one partition of the hotspot step (the second half of the grid's rows, its halo row
//             above) on one OpenCL device driven as a discrete device (explicit transfers), in the
//             two layouts a global-index leaf may have: a buffer of the vector's whole extent into
//             which only the slice and its halo move (the kernel at its global offset), or buffers
//             of the slice alone presented at their global position (the kernel Sinew builds: the
//             source with origin parameters that move its pointers). Per step: upload, kernel,
//             download; the first step (allocation and first touch) apart; the memory of each.
//   leaf      the hotspot step through Sinew written for slices (halo pointer and offset(v)) against
//             the same step written for the whole range (global_indices), in interleaved rounds,
//             on each device alone and split over all of them (--split).
//   hotspot   the hotspot sample (global_indices) with the knowledge base's plan against the same
//             plan given as RunOptions::config, each device alone (Sinew, a pinned run: at its
//             best known level, named in the row) and a hand-written OpenCL loop with the same
//             kernel on each device (buffers made once, the grids' pointers swapped each step), in
//             --rounds x --repeat interleaved rounds.
#define CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/opencl.hpp>

#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "sinew_side.hpp"
#include "tree/nodes/kernel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>

using namespace bench;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// The hotspot step written for slices: `temp` is the slice with a halo row on each side (row y of
// the slice at row y + 1), the others the slice; the global row comes from `first` (offset(temp)
// / cols). What a user writes without global_indices.
const char* kSliceStep = R"CL(
__kernel void hotspot_slices(__global const float* temp, __global const float* power, __global float* result,
                             uint rows, uint cols, float step_div_cap, float rx_inv, float ry_inv, float rz_inv,
                             float amb, uint first) {
  uint c = get_global_id(0), y = get_global_id(1), r = first / cols + y;
  uint i = y * cols + c, h = i + cols;
  float t = temp[h];
  float n = r == 0 ? t : temp[h - cols];
  float s = r == rows - 1 ? t : temp[h + cols];
  float w = c == 0 ? t : temp[h - 1];
  float e = c == cols - 1 ? t : temp[h + 1];
  result[i] = t + step_div_cap * (power[i] + (s + n - 2.0f * t) * ry_inv + (e + w - 2.0f * t) * rx_inv +
                                  (amb - t) * rz_inv);
}
)CL";

cl::Device device_at(unsigned index) {
  std::vector<cl::Device> all;
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  for (auto& p : platforms) {
    std::vector<cl::Device> d;
    p.getDevices(CL_DEVICE_TYPE_ALL, &d);
    all.insert(all.end(), d.begin(), d.end());
  }
  if (index >= all.size()) throw std::runtime_error("no OpenCL device " + std::to_string(index));
  return all[index];
}

void set_coefficients(cl::Kernel& k, cl_uint first_arg, std::size_t n) {
  const auto c = sinew::samples::HotspotCoefficients::of(n, n);
  k.setArg(first_arg, static_cast<cl_uint>(n)), k.setArg(first_arg + 1, static_cast<cl_uint>(n));
  k.setArg(first_arg + 2, c.step_div_cap), k.setArg(first_arg + 3, c.rx_inv), k.setArg(first_arg + 4, c.ry_inv);
  k.setArg(first_arg + 5, c.rz_inv), k.setArg(first_arg + 6, c.amb);
}

// One partition of the hotspot step in layout `whole` (the vector's whole extent) or not (slices
// moved to their place), on its own context: step() uploads the slice and its halo row, runs the
// kernel at the partition's global offset and downloads the slice; its first call allocates.
struct Layout {
  cl::Context context;
  cl::CommandQueue q;
  cl::Kernel k;
  cl::Buffer t_in, p_in, t_out;
  std::size_t n, first, units, in_at, at;
  std::vector<float> temp, power, out;
  std::uint64_t bytes = 0;

  Layout(const cl::Device& device, std::size_t side, bool whole)
      : context(device), q(context, device), n(side), first(side / 2), units(side - side / 2),
        temp(side * side, 323.0f), power(side * side, 0.001f), out(side * side, 0.0f) {
    const std::string source = sinew::samples::kernel_text("hotspot.cl");
    std::string built = source;
    if (!whole) {  // the source Sinew launches a global-index leaf from
      auto leaf = sinew::kernel_source(source, "hotspot_step", "hotspot.cl").global_indices();
      built = static_cast<const sinew::detail::KernelNode&>(*leaf.impl()).built_source()->text;
    }
    cl::Program program(context, built);
    program.build({device});
    k = cl::Kernel(program, "hotspot_step");
    set_coefficients(k, 3, n);
    const std::size_t row = n * sizeof(float);
    // Whole extent: every buffer n rows, the slice at its global rows. Slices: the halo buffer one
    // row more than the slice, each moved by its origin.
    const std::size_t in_rows = whole ? n : units + 1, slice_rows = whole ? n : units;
    t_in = cl::Buffer(context, CL_MEM_READ_ONLY, in_rows * row);
    p_in = cl::Buffer(context, CL_MEM_READ_ONLY, slice_rows * row);
    t_out = cl::Buffer(context, CL_MEM_WRITE_ONLY, slice_rows * row);
    bytes = (in_rows + 2 * slice_rows) * row;
    k.setArg(0, t_in), k.setArg(1, p_in), k.setArg(2, t_out);
    if (!whole) {
      k.setArg(10, static_cast<cl_long>((first - 1) * n)), k.setArg(11, static_cast<cl_long>(first * n));
      k.setArg(12, static_cast<cl_long>(first * n));
    }
    in_at = whole ? (first - 1) * row : 0, at = whole ? first * row : 0;
  }
  double step() {
    const auto t0 = Clock::now();
    const std::size_t row = n * sizeof(float);
    q.enqueueWriteBuffer(t_in, CL_FALSE, in_at, (units + 1) * row, temp.data() + (first - 1) * n);
    q.enqueueWriteBuffer(p_in, CL_FALSE, at, units * row, power.data() + first * n);
    q.enqueueNDRangeKernel(k, cl::NDRange(0, first), cl::NDRange(n, units));
    q.enqueueReadBuffer(t_out, CL_TRUE, at, units * row, out.data() + first * n);
    return ms_since(t0);
  }
};

// The two layouts' steps alternated, so that whatever else the machine runs hits both alike: each
// one's first step (allocation and first touch), the median of the others, its device bytes.
struct LayoutFigures {
  double first_ms = 0, step_ms = 0;
  std::uint64_t bytes = 0;
};
std::pair<LayoutFigures, LayoutFigures> run_layouts(const cl::Device& device, std::size_t n, std::size_t steps) {
  Layout slices(device, n, false), whole(device, n, true);
  LayoutFigures s{slices.step(), 0, slices.bytes}, w{whole.step(), 0, whole.bytes};
  std::vector<double> ts, tw;
  for (std::size_t i = 0; i < steps; ++i) ts.push_back(slices.step()), tw.push_back(whole.step());
  if (slices.out != whole.out) throw std::runtime_error("the two layouts computed different rows");
  s.step_ms = median(ts), w.step_ms = median(tw);
  return {s, w};
}

// "OK" where every temperature of `grid` is finite (the explicit step stays stable at every side:
// HotspotCoefficients), else the first cell that is not.
std::string finite_grid(const std::vector<float>& grid) {
  const auto bad = std::find_if(grid.begin(), grid.end(), [](float v) { return !std::isfinite(v); });
  return bad == grid.end() ? "OK" : "cell " + std::to_string(bad - grid.begin()) + " is " + std::to_string(*bad);
}

// The hotspot step in both styles through Sinew, `steps` steps of a loop.
struct LeafPair {
  sinew::Node slices, global;
  std::vector<float> temp0, power, temp;
  sinew::Vector<cl_float> t = sinew::vector<cl_float>(), p = sinew::vector<cl_float>(), next = sinew::vector<cl_float>();
  LeafPair(std::size_t n, std::size_t steps) : temp0(n * n), power(n * n, 0.001f), temp(n * n), steps(steps) {
    for (std::size_t i = 0; i < temp0.size(); ++i) temp0[i] = 323.0f + static_cast<float>(i % 1000) / 100.0f;
    t.unit(n).name("temp"), p.unit(n).name("power"), next.unit(n).name("next");
    const auto c = sinew::samples::HotspotCoefficients::of(n, n);
    const auto side = static_cast<cl_uint>(n);
    auto coefficients = [&](std::vector<sinew::Arg> a) {
      for (auto x : {sinew::scalar(side), sinew::scalar(side), sinew::scalar(c.step_div_cap), sinew::scalar(c.rx_inv),
                     sinew::scalar(c.ry_inv), sinew::scalar(c.rz_inv), sinew::scalar(c.amb)})
        a.push_back(x);
      return a;
    };
    auto base = coefficients({sinew::halo(t, 1, 1), sinew::in(p), sinew::out(next)});
    auto with_offset = base;
    with_offset.push_back(sinew::offset(next));
    auto slice_step = sinew::kernel_source(kSliceStep, "hotspot_slices", "slices.cl").args(with_offset).dims(2);
    auto global_step = sinew::samples::kernel("hotspot.cl", "hotspot_step").args(base).dims(2).global_indices();
    slices = sinew::loop(sinew::pipeline(slice_step, sinew::copy(next, t))).times(steps);
    global = sinew::loop(sinew::pipeline(global_step, sinew::copy(next, t))).times(steps);
  }
  // The calling thread's CPU time per step of each run, in microseconds, [global_style]: what the
  // host spends driving the steps (the calling thread drives a device alone's queue), without
  // the device's own time.
  std::vector<double> host_us[2];
  std::size_t steps = 0;
  Job job(sinew::Runtime& rt, bool global_style, const sinew::Config& config) {
    return {[this] { temp = temp0; },
            [&rt, this, global_style, config] {
              const double cpu0 = thread_cpu_ms();
              const double wall =
                  rt.execute(global_style ? global : slices, {{t, temp}, {p, power}}, with_config(config)).wall_ms;
              host_us[global_style].push_back((thread_cpu_ms() - cpu0) * 1000 / static_cast<double>(steps));
              return wall;
            },
            [this] { return finite_grid(temp); }};
  }
};

// The hand-written loop of the hotspot sample on one device: its kernel, buffers made once (in the
// first untimed reset, so that a device that cannot build or hold it gives its row an error instead
// of ending the program), the grids uploaded, `iterations` steps swapping the two temperature
// buffers, the result read back.
Job handwritten_hotspot(const cl::Device& device, sinew::samples::Hotspot& s) {
  struct State {
    cl::Context context;
    cl::CommandQueue q;
    cl::Kernel k;
    cl::Buffer grid[2], power;
    bool made = false;
  };
  auto st = std::make_shared<State>();
  const std::size_t n = s.size(), bytes = n * n * sizeof(float);
  auto make = [st, device, n, bytes] {
    st->context = cl::Context(device);
    st->q = cl::CommandQueue(st->context, device);
    cl::Program program(st->context, sinew::samples::kernel_text("hotspot.cl"));
    program.build({device});
    st->k = cl::Kernel(program, "hotspot_step");
    set_coefficients(st->k, 3, n);
    for (auto& g : st->grid) g = cl::Buffer(st->context, CL_MEM_READ_WRITE, bytes);
    st->power = cl::Buffer(st->context, CL_MEM_READ_ONLY, bytes);
    st->made = true;
  };
  return {[&s, st, make] {
            if (!st->made) make();
            s.bindings();
          },
          [st, &s, n, bytes] {
            st->q.enqueueWriteBuffer(st->grid[0], CL_FALSE, 0, bytes, s.start().data());
            st->q.enqueueWriteBuffer(st->power, CL_FALSE, 0, bytes, s.power().data());
            int cur = 0;
            for (std::size_t i = 0; i < s.iterations(); ++i, cur = 1 - cur) {
              st->k.setArg(0, st->grid[cur]), st->k.setArg(1, st->power), st->k.setArg(2, st->grid[1 - cur]);
              st->q.enqueueNDRangeKernel(st->k, cl::NullRange, cl::NDRange(n, n));
            }
            st->q.enqueueReadBuffer(st->grid[cur], CL_TRUE, 0, bytes, s.output().data());
            return kNaN;
          },
          [&s] { return s.compare_grid(s.output()).message; }};
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description own("What to run");
  own.add_options()("parts", po::value<Names>()->default_value(Names{{"layouts", "leaf", "hotspot"}}, "layouts,leaf,hotspot")
                                 ->value_name("a,b"),
                    "which parts: layouts (raw OpenCL, one device), leaf (Sinew, slices vs global), hotspot (Sinew vs "
                    "each device alone and hand-written)")(
      "side", po::value<std::size_t>()->default_value(4096)->value_name("N"), "grid side (--quick 256)")(
      "steps", po::value<std::size_t>()->default_value(100)->value_name("N"), "time steps per run (--quick 5)")(
      "cl-device", po::value<unsigned>()->default_value(0)->value_name("I"),
      "part layouts: the OpenCL device (all platforms' devices in order)")(
      "split", po::value<double>()->default_value(0.5, "0.5")->value_name("X"),
      "part leaf: the first device's share of the split (the rest evenly over the others)")(
      "rounds", po::value<unsigned>()->default_value(7)->value_name("N"), "interleaved rounds (--quick 2; part hotspot: this times --repeat)");
  Bench b({"bench_global_index", "kernels as they are written: global indices",
           "The layouts of a global-index leaf on a discrete device, a global-index leaf against the same kernel\n"
           "written for slices, and the hotspot sample against each device alone and a hand-written loop.",
           5, 2},
          argc, argv, own);
  clear_overrides(b.d.name, {"SINEW_CONFIG", "SINEW_STRATEGY"});
  const auto parts = b.vm["parts"].as<Names>().v;
  auto wants = [&](const char* p) { return std::find(parts.begin(), parts.end(), p) != parts.end(); };
  const std::size_t n = b.option("side", std::size_t{256}), steps = b.option("steps", std::size_t{5});
  const unsigned rounds = std::max(1u, b.option("rounds", 2u));
  b.csv({"part", "what", "config", "median_ms", "ratio", "extra", "check"});
  std::string md;
  bool failed = false;
  try {
    sinew::RuntimeOptions o;
    o.kb_path = ":memory:";
    auto rt = make_runtime(b.zero_copy_stand_in, o);
    md = b.header(rt.get());
    if (wants("layouts")) {
      const cl::Device device = device_at(b.vm["cl-device"].as<unsigned>());
      Table t({"layout", "first step ms", "step ms (median)", "device MB", "step / slices' step"});
      const auto [slices, whole] = run_layouts(device, n, std::max<std::size_t>(steps, 20));
      for (const auto& [name, f] : {std::pair{"slices moved to their place", slices}, std::pair{"whole extent", whole}}) {
        t.add({name, fmt("%.3f", f.first_ms), fmt("%.3f", f.step_ms), fmt("%.1f", f.bytes / 1048576.0),
               fmt("%.3f", f.step_ms / slices.step_ms)});
        b.csv().append({{"part", "layouts"}, {"what", name}, {"median_ms", num(f.step_ms)},
                        {"ratio", num(f.step_ms / slices.step_ms)}, {"extra", "first_ms=" + num(f.first_ms) +
                        " bytes=" + std::to_string(f.bytes)}, {"check", "OK"}});
      }
      md += "\n### Layouts of one partition (rows " + std::to_string(n / 2) + ".." + std::to_string(n) + " of " +
            std::to_string(n) + " x " + std::to_string(n) + ", " + device.getInfo<CL_DEVICE_NAME>() + ")\n\n" + t.str();
    }
    if (wants("leaf")) {
      const Roles r = Roles::of(*rt);
      std::vector<std::pair<std::string, sinew::Config>> plans;
      for (std::size_t d = 0; d < r.devices; ++d) plans.push_back({rt->devices()[d].id() + " alone", sinew::Config::single(d, r.devices)});
      if (r.devices > 1) {
        sinew::Config c;
        const double split = b.vm["split"].as<double>();
        for (std::size_t d = 0; d < r.devices; ++d) c.shares.push_back(d == 0 ? split : (1 - split) / double(r.devices - 1));
        plans.push_back({"split", c});
      }
      LeafPair pair(n, steps);
      Table t({"plan", "slices ms", "global ms", "global / slices (median of rounds)", "host us/step slices",
               "host us/step global"});
      for (const auto& [name, c] : plans) {
        pair.host_us[0].clear(), pair.host_us[1].clear();
        const Rounds x = head_to_head(pair.job(*rt, true, c), pair.job(*rt, false, c), rounds);
        const double host_slices = median(pair.host_us[0]), host_global = median(pair.host_us[1]);
        t.add({name + " (" + c.str() + ")", fmt("%.3f", median(x.b_ms)), fmt("%.3f", median(x.a_ms)), fmt("%.4f", x.ratio()),
               fmt("%.2f", host_slices), fmt("%.2f", host_global)});
        b.csv().append({{"part", "leaf"}, {"what", name}, {"config", c.str()}, {"median_ms", num(median(x.a_ms))},
                        {"ratio", num(x.ratio())},
                        {"extra", "slices_ms=" + num(median(x.b_ms)) + " host_us_per_step_slices=" + num(host_slices) +
                                      " host_us_per_step_global=" + num(host_global)},
                        {"check", x.check}});
        failed = failed || x.check != "OK";
      }
      md += "\n### A global-index leaf against the same kernel written for slices (" + std::to_string(n) + " x " +
            std::to_string(n) + ", " + std::to_string(steps) + " steps; must hold: within 2%; host us/step: the "
            "calling thread's CPU time per step, median of every run)\n\n" + t.str();
    }
    if (wants("hotspot")) {
      sinew::samples::Hotspot s;
      s.params.iterations = steps;
      s.prepare(n);
      const Planned planned = time_planned(*rt, s, true, b.timing());
      b.progress("hotspot: trained plan " + planned.last.config.str() + " " + planned.m.check);
      failed = failed || !planned.m.ok();
      // Every row in interleaved rounds (one run of each per round), so that what the machine does
      // meanwhile hits them alike: the trained plan as the knowledge base gives it, the same plan
      // given as RunOptions::config (a gap between the two is the planned path's, not the plan's),
      // each device alone as a pinned run (at its best known level, docs/decisions/060: the row
      // names it) and the hand-written loop on each OpenCL device.
      std::vector<std::string> names;
      std::vector<Job> jobs;
      sinew::RunOptions again;
      again.balance = false;
      names.push_back("Sinew, trained plan");
      jobs.push_back(sinew_job(*rt, s, again));
      names.push_back("Sinew, the trained plan given as RunOptions::config");
      jobs.push_back(sinew_job(*rt, s, with_config(planned.last.config)));
      std::vector<sinew::Report> alone(rt->devices().size());
      for (std::size_t d = 0; d < rt->devices().size(); ++d) {
        names.push_back("Sinew, " + rt->devices()[d].id() + " alone");
        jobs.push_back(sinew_job(*rt, s, on_device(d), &alone[d]));
      }
      std::vector<cl::Platform> platforms;
      cl::Platform::get(&platforms);
      for (auto& p : platforms) {
        std::vector<cl::Device> devices;
        p.getDevices(CL_DEVICE_TYPE_ALL, &devices);
        for (auto& d : devices) {
          names.push_back("hand-written, OpenCL device " + std::to_string(jobs.size() - 2 - alone.size()) + " (" +
                          d.getInfo<CL_DEVICE_NAME>() + ")");
          jobs.push_back(handwritten_hotspot(d, s));
        }
      }
      const unsigned hot_rounds = std::max(1u, rounds * b.timing().repeat);
      const Interleaved x = interleave(jobs, hot_rounds);
      failed = failed || x.check != "OK";
      for (std::size_t d = 0; d < alone.size(); ++d) names[2 + d] += " (" + alone[d].config.str() + ")";
      names[0] += " (" + planned.last.config.str() + ")";
      Table t({"run", "ms (median of rounds)", "Sinew's plan speed / this (median of rounds)"});
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        const double ms = x.check == "OK" ? median(x.ms[j]) : kNaN;
        const Stats ratio = ratios(x.ms[j], x.ms[0]);
        b.progress("hotspot: " + names[j] + ": " + fmt("%.3f", ms) + " ms " + x.check);
        t.add({names[j], x.check == "OK" ? fmt("%.3f", ms) : x.check, fmt("%.3f", ratio.median_ms)});
        b.csv().append({{"part", "hotspot"}, {"what", names[j]}, {"config", j == 0 ? planned.last.config.str() : ""},
                        {"median_ms", num(ms)}, {"ratio", num(ratio.median_ms)}, {"check", x.check}});
      }
      md += "\n### The hotspot sample (" + std::to_string(n) + " x " + std::to_string(n) + ", " + std::to_string(steps) +
            " steps, " + std::to_string(hot_rounds) + " interleaved rounds; goal: the plan's speed / the best single "
            "device and / hand-written >= 0.98)\n\n" + t.str();
    }
  } catch (const std::exception& e) {
    // What was measured before the error is still printed.
    std::cerr << "bench_global_index: " << e.what() << "\n";
    b.finish(md + "\n**Stopped by an error:** " + e.what() + "\n", true);
    return 2;
  }
  return b.finish(md, failed);
}
