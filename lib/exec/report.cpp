// exec/report.cpp — what a run did: its Report (plan, partitions, each device's host-timed end,
// profiled device times per partition and kernel, results) and its Chrome trace; Report::str.
#include "exec/run.hpp"
#include "exec/trace.hpp"

#include <cstring>
#include <iomanip>
#include <limits>
#include <sstream>

namespace sinew::detail {
namespace {

// Profiling start/end of an event in ns; false for events without profiling (some libraries').
bool times_of(const TimedEvent& te, cl_ulong& s, cl_ulong& e) {
  try {
    s = te.event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
    e = te.event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
  } catch (const cl::Error&) {
    return false;
  }
  return e >= s;
}

// Each partition as it ran, with its profiled device times (Report::partitions, kernels).
void add_partitions(RunState& run, Report& rep) {
  std::map<std::pair<std::string, std::size_t>, KernelTiming> kernels;
  for (auto& ps : run.workers.parts) {
    PartitionReport pr;
    pr.index = ps.part->index;
    pr.device = ps.part->device;
    pr.device_name = ps.worker->info().name;
    pr.sub_device = ps.part->sub_device;
    pr.queue = ps.part->queue;
    pr.first = ps.part->first;
    pr.units = ps.part->units;
    cl_ulong first = std::numeric_limits<cl_ulong>::max(), last = 0;
    for (auto& te : ps.events) {
      cl_ulong s = 0, e = 0;
      if (!times_of(te, s, e)) continue;
      first = std::min(first, s);
      last = std::max(last, e);
      const double ms = static_cast<double>(e - s) * 1e-6;
      if (te.kernel) {
        pr.kernel_ms += ms;
        auto& kt = kernels[{*te.path, pr.index}];
        kt.node = *te.path;
        kt.partition = pr.index;
        ++kt.launches;
        kt.ms += ms;
      } else {
        pr.transfer_ms += ms;
      }
    }
    if (last > first) pr.ms = static_cast<double>(last - first) * 1e-6;
    rep.partitions.push_back(pr);
  }
  for (auto& [k, v] : kernels) rep.kernels.push_back(v);
}

// The chunks each device took (Report::chunks, chunk_units) and the decomposition's "taken:"
// line: each device's chunks and units, then what the schedule says it did beyond them
// (ScheduleRun::taken_notes); the ranges queues took from each other's (Report::steals).
void add_chunks(RunState& run, Report& rep) {
  rep.chunks.assign(run.env.infos.size(), 0);
  rep.chunk_units.assign(run.env.infos.size(), 0);
  for (const auto& ps : run.workers.parts) {
    ++rep.chunks.at(ps.part->device);
    rep.chunk_units.at(ps.part->device) += ps.part->units;
  }
  std::ostringstream taken;
  taken << "  taken:";
  for (std::size_t d = 0; d < rep.chunks.size(); ++d)
    if (rep.chunks[d])
      taken << " " << run.env.infos[d].id() << " " << rep.chunks[d] << " chunk(s), " << rep.chunk_units[d] << " units;";
  taken << run.schedule.run->taken_notes(run.env.infos);
  rep.decomposition += taken.str() + "\n";
  const auto& queues = run.schedule.run->queues();
  auto queue_of = [](const Partition& q) { return q.sub_device ? q.sub_device : q.queue; };
  for (const Handover& h : run.schedule.run->handovers()) {
    const Partition& thief = queues.at(h.thief);
    const Partition& victim = queues.at(h.victim);
    rep.steals.push_back({thief.device, victim.device, queue_of(thief), queue_of(victim), h.range.first, h.range.units});
  }
}

Report build_report(RunState& run) {
  Report rep;
  rep.config = run.dec.config;
  rep.iterations = run.record.iterations;
  rep.profiled = run.profile;
  rep.results = run.reductions->results;
  rep.exchanges = run.record.exchanges;
  rep.copies = run.record.copies();
  rep.loop_copies = run.record.loop_copies();
  rep.copy_threads = run.record.copy_threads;
  rep.levels = run.record.levels();
  rep.whole_leaves = run.whole_leaves.runs();
  rep.decomposition = run.dec.explained.empty() ? run.dec.explain(run.env.infos) : run.dec.explained;
  rep.device_ms.assign(run.env.infos.size(), 0.0);
  double begin = std::numeric_limits<double>::max();
  for (auto& w : run.workers.list) begin = std::min(begin, w.host_start_ms);
  for (auto& w : run.workers.list) {
    double& d = rep.device_ms.at(w.runtime_index);
    d = std::max(d, w.host_end_ms - begin);
  }
  const auto allocated = run.buffers.allocated();
  rep.device_bytes.assign(run.env.infos.size(), 0);
  for (std::size_t i = 0; i < run.env.devices.size() && i < rep.device_bytes.size(); ++i)
    if (auto it = allocated.find(&run.env.devices[i]->info()); it != allocated.end()) rep.device_bytes[i] = it->second;
  add_partitions(run, rep);
  if (run.schedule.takes_chunks()) add_chunks(run, rep);
  return rep;
}

// Device clocks differ from the host's: each worker's events are placed from when its thread
// began, taking the first command's queued time (its start where the driver gives no queued
// time) as that moment, so the gap between enqueueing and running shows. The host's own work
// (preparation, each thread enqueueing then waiting, the report) is on a "host" row.
std::vector<TraceRecord> trace_records(RunState& run, double joined_ms, double end_ms) {
  std::vector<TraceRecord> out;
  auto host = [&](std::string name, std::string thread, double from_ms, double to_ms) {
    out.push_back({std::move(name), "host", "host", std::move(thread), from_ms * 1e3, (to_ms - from_ms) * 1e3});
  };
  host("prepare", "request", 0, run.record.prepared_ms);
  host("join, combine", "request", joined_ms, end_ms);
  for (auto& w : run.workers.list) {
    cl_ulong base = std::numeric_limits<cl_ulong>::max();
    for (PartState* ps : w.parts)
      for (auto& te : ps->events) {
        cl_ulong s, e;
        if (!times_of(te, s, e)) continue;
        cl_ulong queued = s;
        try {
          queued = std::min(s, te.event.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>());
        } catch (const cl::Error&) {
        }
        base = std::min(base, queued);
      }
    const auto& info = w.info();
    std::string thread = info.discrete ? "queue " + std::to_string(w.queue_index)
                                       : "sub-device " + std::to_string(w.sub_device);
    const std::string who = info.id() + " " + thread;
    host("enqueue", who, w.host_start_ms, w.host_enqueued_ms);
    if (run.schedule.takes_chunks())  // which chunk this queue took when (an instant on its host row)
      for (PartState* ps : w.parts)
        host("take chunk #" + std::to_string(ps->part->index) + ": units [" + std::to_string(ps->part->first) + ", " +
                 std::to_string(ps->part->first + ps->part->units) + ")",
             who, ps->taken_ms, ps->taken_ms + 0.001);
    host("wait", who, w.host_enqueued_ms, w.host_end_ms);
    for (PartState* ps : w.parts)
      for (auto& te : ps->events) {
        cl_ulong s, e;
        if (!times_of(te, s, e)) continue;
        out.push_back({*te.path + " #" + std::to_string(ps->part->index), te.kernel ? "kernel" : "transfer",
                       info.id() + " " + info.name, thread, w.host_start_ms * 1e3 + static_cast<double>(s - base) * 1e-3,
                       static_cast<double>(e - s) * 1e-3});
      }
  }
  return out;
}

}  // namespace

Report report(RunState& run, double joined_ms) {
  Report rep = build_report(run);
  rep.wall_ms = run.now_ms();
  if (!run.env.trace.empty()) write_chrome_trace(run.env.trace, trace_records(run, joined_ms, rep.wall_ms), run.env.log);
  return rep;
}

}  // namespace sinew::detail

namespace sinew {
namespace {

// Scalars as numbers (as Report::str prints numbers), OpenCL vectors lane by lane "(1, 2, 3, 4)",
// structs by their size.
std::string value_text(const Value& v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3);
  auto lanes = [&](auto zero) {
    using T = decltype(zero);
    for (unsigned i = 0; i < v.type.lanes; ++i) {
      T x;
      std::memcpy(&x, v.bytes.data() + i * sizeof(T), sizeof(T));
      s << (i ? ", " : v.type.lanes > 1 ? "(" : "") << +x;
    }
    if (v.type.lanes > 1) s << ")";
  };
  switch (v.type.scalar) {
    case ScalarKind::i8: lanes(cl_char{}); break;
    case ScalarKind::u8: lanes(cl_uchar{}); break;
    case ScalarKind::i16: lanes(cl_short{}); break;
    case ScalarKind::u16: lanes(cl_ushort{}); break;
    case ScalarKind::f32: lanes(float{}); break;
    case ScalarKind::f64: lanes(double{}); break;
    case ScalarKind::i32: lanes(cl_int{}); break;
    case ScalarKind::u32: lanes(cl_uint{}); break;
    case ScalarKind::i64: lanes(cl_long{}); break;
    case ScalarKind::u64: lanes(cl_ulong{}); break;
    default: s << v.bytes.size() << " bytes"; break;
  }
  return s.str();
}

}  // namespace

std::string_view to_string(TrainingEnd end) noexcept {
  switch (end) {
    case TrainingEnd::none: return "none";
    case TrainingEnd::completed: return "completed";
    case TrainingEnd::executions: return "executions";
    case TrainingEnd::time: return "time";
  }
  return "?";
}

std::string Report::str() const {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3);
  s << "run";
  if (!tree.empty()) s << " of '" << tree << "'";
  s << ": " << wall_ms << " ms wall, config " << config.str() << " (" << to_string(provenance) << ")";
  if (iterations) s << ", " << iterations << " loop iteration(s)";
  s << "\n";
  if (training_end != TrainingEnd::none) {
    s << "  measured plans first: " << training_executions << " executions, " << training_seconds << " s";
    if (training_build_seconds > 0)
      s << " (" << training_build_seconds << " s building programs, first launches included)";
    if (training_budget_seconds > 0) s << " of a time budget of " << training_budget_seconds << " s";
    s << "; ended by: " << to_string(training_end) << "\n";
  }
  if (model_choice)
    s << "  training's model chose " << model_choice->config.str() << ": predicted " << model_choice->predicted_ms
      << " ms, measured " << model_choice->measured_ms << " ms\n";
  for (std::size_t d = 0; d < device_ms.size(); ++d)
    if (device_ms[d] > 0) s << "  device " << d << ": " << device_ms[d] << " ms to finish\n";
  for (std::size_t d = 0; d < chunks.size(); ++d)
    if (chunks[d]) s << "  device " << d << ": took " << chunks[d] << " chunk(s), " << chunk_units[d] << " units\n";
  for (const auto& p : partitions) {
    s << "  partition " << p.index << " on device " << p.device << " (" << p.device_name << ")"
      << " units [" << p.first << ", " << p.first + p.units << ")";
    if (profiled)
      s << ": busy " << p.ms << " ms, kernels " << p.kernel_ms << " ms, transfers " << p.transfer_ms << " ms";
    s << "\n";
  }
  if (!profiled && !partitions.empty()) s << "  (device times per partition and kernel: RunOptions::profile)\n";
  for (const auto& k : kernels)
    s << "    " << k.node << " @" << k.partition << ": " << k.ms << " ms over " << k.launches << " launch(es)\n";
  if (!exchanges.empty()) {
    std::uint64_t bytes = 0, host = 0, boundary = 0;
    for (const auto& e : exchanges) {
      bytes += e.bytes;
      host += e.host_bytes;
      boundary += e.boundary_bytes;
    }
    s << "  halo exchanges: " << exchanges.size() << ", " << bytes << " bytes between partitions (" << host
      << " through the host), " << boundary << " bytes of boundary\n";
  }
  auto copies_line = [&](const char* what, const Copies& c, double per) {
    auto one = [&](const char* name, const CopyCount& n) {
      s << " " << name << " " << static_cast<double>(n.count) / per << " (" << static_cast<double>(n.bytes) / per
        << " B)";
    };
    s << "  " << what << ":";
    one("to device", c.to_device), one("to host", c.to_host), one("within host", c.host);
    one("within device", c.device), one("values", c.values);
    s << "\n";
  };
  copies_line("executor's copies", copies, 1);
  if (copy_threads > 1)  // (1 where the run staged nothing)
    s << "  staged copies between pageable memory and the pinned ring: " << copy_threads << " threads each\n";
  if (iterations) copies_line("of them per loop iteration", loop_copies, static_cast<double>(iterations));
  for (const auto& l : levels) {
    s << "  " << l.node << " level " << l.level << ": " << l.subproblems << " x " << l.subproblem
      << " elements on device" << (l.devices.size() > 1 ? "s" : "");
    for (std::size_t i = 0; i < l.devices.size(); ++i) s << (i ? ", " : " ") << l.devices[i];
    s << ", " << l.ms << " ms";
    if (l.bytes) s << ", " << l.bytes << " bytes moved";
    s << "\n";
  }
  for (const auto& w : whole_leaves)
    s << "  " << w.node << " whole on device " << w.device << ", " << w.launches << " launch"
      << (w.launches == 1 ? "" : "es") << ": " << w.gathered_bytes << " bytes gathered, " << w.scattered_bytes
      << " scattered back (" << w.host_bytes << " through the host)\n";
  for (const auto& [name, v] : results) s << "  result " << name << " = " << value_text(v) << "\n";
  return s.str();
}

}  // namespace sinew
