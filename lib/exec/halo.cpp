// exec/halo.cpp — halo buffers: layout, filling from the host, exchanges (see halo.hpp).
#include "exec/halo.hpp"

#include "exec/exchanger.hpp"
#include "exec/transfer.hpp"
#include "platform/error.hpp"

#include <algorithm>
#include <optional>

namespace sinew::detail {
namespace {

// A run of halo-buffer units and where they come from: the vector's units from `src` on, or
// (src < 0) the boundary's constant element.
struct Piece {
  std::ptrdiff_t src = 0;
  std::size_t dst = 0;    // first unit within the halo buffer
  std::size_t units = 0;
};

void add(std::vector<Piece>& out, std::ptrdiff_t src, std::size_t dst, std::size_t units) {
  if (!out.empty()) {
    Piece& p = out.back();
    const bool follows = p.dst + p.units == dst &&
                         ((src < 0 && p.src < 0) || (src >= 0 && p.src >= 0 && p.src + std::ptrdiff_t(p.units) == src));
    if (follows) {
      p.units += units;
      return;
    }
  }
  out.push_back({src, dst, units});
}

// The pieces that fill the vector's units [lo, hi) (lo may be negative, hi past the end) into
// the halo buffer from unit `at` on. Beyond the edges: the clamped unit, the constant, or
// nothing (Boundary::none).
void pieces_of(std::vector<Piece>& out, const VectorUse& u, std::ptrdiff_t lo, std::ptrdiff_t hi, std::size_t at) {
  const auto total = static_cast<std::ptrdiff_t>(u.units);
  auto outside = [&](std::ptrdiff_t x) {
    const std::size_t dst = at + static_cast<std::size_t>(x - lo);
    switch (u.boundary) {
      case Boundary::none: break;
      case Boundary::clamp: add(out, x < 0 ? 0 : total - 1, dst, 1); break;
      case Boundary::zero:
      case Boundary::constant: add(out, -1, dst, 1); break;
    }
  };
  for (std::ptrdiff_t x = lo; x < std::min<std::ptrdiff_t>(hi, 0); ++x) outside(x);
  const std::ptrdiff_t in_lo = std::max<std::ptrdiff_t>(lo, 0), in_hi = std::min(hi, total);
  if (in_hi > in_lo) add(out, in_lo, at + static_cast<std::size_t>(in_lo - lo), static_cast<std::size_t>(in_hi - in_lo));
  for (std::ptrdiff_t x = std::max(lo, total); x < hi; ++x) outside(x);
}

std::size_t unit_bytes(const VectorUse& u) { return u.vector->unit * u.vector->type.size; }

// The range of units a partition's halo buffer holds: [first - before, first + units + after).
std::pair<std::ptrdiff_t, std::ptrdiff_t> extent(const PartState& ps, const VectorUse& u) {
  const auto first = static_cast<std::ptrdiff_t>(ps.part->first);
  return {first - static_cast<std::ptrdiff_t>(u.halo_before),
          first + static_cast<std::ptrdiff_t>(ps.part->units + u.halo_after)};
}

const std::string& label(RunState& run, const std::string& text) { return run.labels.try_emplace(text, text).first->second; }

// The partition holding unit `x` (partitions in unit order, none empty).
PartState& holder(RunState& run, std::size_t x) {
  auto it = std::upper_bound(run.by_unit.begin(), run.by_unit.end(), x,
                             [](std::size_t unit, const PartState* p) { return unit < p->part->first; });
  return **std::prev(it);
}

// Copies this process's units [x, x + n) of `v` to `to` (blocking: after the leaves that wrote them).
void read_units(RunState& run, const VectorUse& u, std::size_t x, std::size_t n, unsigned char* to) {
  const std::size_t ub = unit_bytes(u);
  for (const std::size_t end = x + n; x < end;) {
    PartState& q = holder(run, x);
    const std::size_t k = std::min(end, q.part->first + q.part->units) - x;
    q.worker->queue().enqueueReadBuffer(q.slices.at(u.vector.get()), CL_TRUE, (x - q.part->first) * ub, k * ub, to);
    to += k * ub;
    x += k;
  }
}

// A run split over processes (RunState::exchanger): the other processes' units next to this
// one's, which its halos hold, exchanged for this process's edge units.
struct Remote {
  std::size_t first = 0, end = 0;  // the units this process runs
  std::vector<unsigned char> before, after;

  Remote(RunState& run, const VectorUse& u) {
    Exchanger& ex = *run.exchanger;
    first = ex.first;
    end = ex.first + ex.units;
    const std::size_t ub = unit_bytes(u);
    const bool previous = first > 0, next = end < u.units;
    std::vector<unsigned char> head(previous ? u.halo_after * ub : 0), tail(next ? u.halo_before * ub : 0);
    before.resize(previous ? u.halo_before * ub : 0);
    after.resize(next ? u.halo_after * ub : 0);
    if (!head.empty()) read_units(run, u, first, u.halo_after, head.data());
    if (!tail.empty()) read_units(run, u, end - u.halo_before, u.halo_before, tail.data());
    ex.exchange_halo(u, head.data(), tail.data(), before.data(), after.data());
  }
  // Where unit x (another process's) lies in `before` or `after`, and how many units from it on do.
  std::pair<const unsigned char*, std::size_t> at(std::size_t x, std::size_t until, const VectorUse& u) const {
    const std::size_t ub = unit_bytes(u);
    if (x < first) return {before.data() + (x + u.halo_before - first) * ub, std::min(until, first) - x};
    return {after.data() + (x - end) * ub, until - x};
  }
};

}  // namespace

void allocate_halo(RunState& run, PartState& ps, const VectorUse& u) {
  Worker& w = *ps.worker;
  const std::size_t ub = unit_bytes(u);
  const auto [lo, hi] = extent(ps, u);
  const VectorState* v = u.vector.get();
  if (w.zero_copy && u.bound() && !u.written && lo >= 0 && hi <= static_cast<std::ptrdiff_t>(u.units)) {
    // Inside the vector and never written: the host memory itself, halo included.
    ps.halos[v] = cl::Buffer(w.context, CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY, static_cast<std::size_t>(hi - lo) * ub,
                             run.host_of(u) + static_cast<std::size_t>(lo) * ub);
    ps.halo_in_place.insert(v);
    return;
  }
  cl::Buffer& halo = ps.halos[v] = run.chunk_buffer(ps, v, RunState::kHaloRole, u.halo_before + u.halo_after);
  // The slice inside it, where the device allows a sub-buffer there (its origin must be a
  // multiple of the base address alignment; and a poisoned halo buffer is a sub-buffer already,
  // which cannot have its own).
  const std::size_t origin = u.halo_before * ub;
  if (u.slice_used() && !run.host_slice(ps, u) && origin % w.base_alignment() == 0 && ps.part->units &&
      (!run.poison || w.zero_copy)) {
    cl_buffer_region region{origin, ps.part->units * ub};
    ps.slices[v] = halo.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
    ps.halo_holds_slice.insert(v);
  }
}

void upload_halo(RunState& run, PartState& ps, const VectorUse& u) {
  const VectorState* v = u.vector.get();
  if (ps.halo_in_place.count(v)) return;
  static const std::string upload_path = "upload";
  const std::size_t ub = unit_bytes(u);
  const auto [lo, hi] = extent(ps, u);
  std::vector<Piece> pieces;
  pieces_of(pieces, u, lo, hi, 0);
  const cl::Buffer& halo = ps.halos.at(v);
  for (const Piece& p : pieces) {
    // The fill holds the widest side's units; a piece beyond an edge is at most that wide.
    const char* from = p.src < 0 ? reinterpret_cast<const char*>(run.halo_fill.at(v).data())
                                 : run.host_of(u) + static_cast<std::size_t>(p.src) * ub;
    to_device(run, ps, halo, p.dst * ub, from, p.units * ub, &upload_path);
  }
  ps.halo_filled.insert(halo.get());
  // The twin a swapping loop copy brings (PartState::Swap) gets the constant boundary now too.
  for (auto& [copy, swap] : ps.swaps) {
    if (!swap.twin() || copy->args[1].vector.get() != v) continue;
    for (const Piece& p : pieces)
      if (p.src < 0)
        to_device(run, ps, swap.twin, p.dst * ub, run.halo_fill.at(v).data(), p.units * ub, &upload_path);
    ps.halo_filled.insert(swap.twin.get());
  }
}

void exchange_halo(RunState& run, const VectorState* v, const std::string& reader, std::size_t iteration) {
  const VectorUse& u = run.an.use(v);
  const std::size_t ub = unit_bytes(u);
  HaloExchange record{v->name, reader, iteration, 0, 0, 0};
  const std::string& path = label(run, "halo '" + v->name + "'");
  std::vector<std::vector<unsigned char>> through_host;  // kept until the copies have run
  bool enqueued = false;
  std::optional<Remote> remote;
  cl_call({.api_call = "halo exchange", .node = reader, .argument = "vector '" + v->name + "'"}, [&] {
    if (run.exchanger) remote.emplace(run, u);
    for (PartState* ps : run.by_unit) {
      Worker& w = *ps->worker;
      const cl::Buffer& halo = ps->halos.at(v);
      cl::CommandQueue& queue = w.queue();
      auto track = [&](cl::Event& ev) { run.track(*ps, ev, &path, false); };
      // The slice itself, where it is a buffer of its own.
      if (!ps->halo_holds_slice.count(v)) {
        cl::Event ev;
        run.count_copy(w, CopyKind::on_device, run.slice_bytes(*ps, u));
        queue.enqueueCopyBuffer(ps->slices.at(v), halo, 0, u.halo_before * ub, run.slice_bytes(*ps, u), nullptr,
                                run.event_of(ev));
        track(ev);
        enqueued = true;
      }
      const auto [lo, hi] = extent(*ps, u);
      const auto first = static_cast<std::ptrdiff_t>(ps->part->first);
      const auto end = first + static_cast<std::ptrdiff_t>(ps->part->units);
      const bool filled = !ps->halo_filled.insert(halo.get()).second;
      std::vector<Piece> pieces;
      pieces_of(pieces, u, lo, first, 0);
      pieces_of(pieces, u, end, hi, u.halo_before + ps->part->units);
      for (const Piece& p : pieces) {
        const std::size_t bytes = p.units * ub;
        const std::ptrdiff_t unit = lo + static_cast<std::ptrdiff_t>(p.dst);  // where in the vector it stands
        std::uint64_t& counted =
            unit < 0 || unit >= static_cast<std::ptrdiff_t>(u.units) ? record.boundary_bytes : record.bytes;
        if (p.src < 0 && filled) continue;  // a constant: written once
        enqueued = true;
        if (p.src < 0) {
          cl::Event ev;
          run.count_copy(w, CopyKind::to_device, bytes);
          queue.enqueueWriteBuffer(halo, CL_FALSE, p.dst * ub, bytes, run.halo_fill.at(v).data(), nullptr,
                                   run.event_of(ev));
          track(ev);
          counted += bytes;
          continue;
        }
        // A piece may span several partitions: copy from each what it holds.
        for (std::size_t x = static_cast<std::size_t>(p.src), to = p.dst; x < static_cast<std::size_t>(p.src) + p.units;) {
          if (remote && (x < remote->first || x >= remote->end)) {  // another process's units
            const auto [data, n] = remote->at(x, static_cast<std::size_t>(p.src) + p.units, u);
            cl::Event ev;
            queue.enqueueWriteBuffer(halo, CL_FALSE, to * ub, n * ub, data, nullptr, run.event_of(ev));
            track(ev);
            counted += n * ub;
            record.host_bytes += n * ub;
            x += n;
            to += n;
            continue;
          }
          PartState& q = holder(run, x);
          const std::size_t n = std::min(static_cast<std::size_t>(p.src) + p.units, q.part->first + q.part->units) - x;
          const cl::Buffer& from = q.slices.at(v);
          const std::size_t at = (x - q.part->first) * ub;
          cl::Event ev;
          if (q.worker->context() == w.context()) {
            run.count_copy(w, CopyKind::on_device, n * ub);
            queue.enqueueCopyBuffer(from, halo, at, to * ub, n * ub, nullptr, run.event_of(ev));
          } else {
            auto& host = through_host.emplace_back(n * ub);
            run.count_copy(*q.worker, CopyKind::to_host, n * ub);
            run.count_copy(w, CopyKind::to_device, n * ub);
            q.worker->queue().enqueueReadBuffer(from, CL_TRUE, at, n * ub, host.data());
            queue.enqueueWriteBuffer(halo, CL_FALSE, to * ub, n * ub, host.data(), nullptr, run.event_of(ev));
            record.host_bytes += n * ub;
          }
          track(ev);
          counted += n * ub;
          x += n;
          to += n;
        }
      }
    }
    // The next leaves of every queue may overwrite what was copied from: all copies end first.
    // (One worker: its in-order queue runs them before its next leaf.)
    if (run.workers.size() > 1 || !through_host.empty() || remote)
      for (auto& w : run.workers) w.queue().finish();
  });
  if (enqueued) run.exchanges.push_back(std::move(record));
}

}  // namespace sinew::detail
