// exec/halo.cpp — halo buffers: layout, filling from the host, exchanges (see halo.hpp).
#include "exec/halo.hpp"

#include "exec/run.hpp"
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

// The partition holding unit `x` (partitions in unit order, none empty).
PartState& holder_of(const std::vector<PartState*>& by_unit, std::size_t x) {
  auto it = std::upper_bound(by_unit.begin(), by_unit.end(), x,
                             [](std::size_t unit, const PartState* p) { return unit < p->part->first; });
  return **std::prev(it);
}

}  // namespace

std::pair<const unsigned char*, std::size_t> RemoteUnits::at(std::size_t x, std::size_t until, const VectorUse& u) const {
  const std::size_t ub = unit_bytes(u);
  if (x < first) return {before.data() + (x + u.halo_before - first) * ub, std::min(until, first) - x};
  return {after.data() + (x - end) * ub, until - x};
}

const std::string& Halos::label(const std::string& text) { return labels_.try_emplace(text, text).first->second; }

void Halos::read_units(const VectorUse& u, std::size_t x, std::size_t n, unsigned char* to) {
  const std::size_t ub = unit_bytes(u);
  for (const std::size_t end = x + n; x < end;) {
    PartState& q = holder_of(by_unit_, x);
    const std::size_t k = std::min(end, q.part->first + q.part->units) - x;
    q.worker->queue().enqueueReadBuffer(q.slices.at(u.vector.get()), CL_TRUE, (x - q.part->first) * ub, k * ub, to);
    to += k * ub;
    x += k;
  }
}

void Halos::plan() {
  for (auto& ps : run_.workers.parts) by_unit_.push_back(&ps);
  std::sort(by_unit_.begin(), by_unit_.end(),
            [](const PartState* a, const PartState* b) { return a->part->first < b->part->first; });
  for (const auto& u : run_.an.vectors) {
    if (!u.read_halo || u.fill.empty()) continue;
    // The boundary's element over the widest side: every piece beyond an edge is written from it.
    auto& fill = fill_[u.vector.get()];
    const std::size_t elements = std::max(u.halo_before, u.halo_after) * u.vector->unit;
    for (std::size_t i = 0; i < elements; ++i) fill.insert(fill.end(), u.fill.begin(), u.fill.end());
  }
}

void Halos::allocate(PartState& ps, const VectorUse& u) {
  RunState& run = run_;
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
  cl::Buffer& halo = ps.halos[v] = run.buffers.chunk_buffer(ps, v, BufferLedger::kHaloRole, u.halo_before + u.halo_after);
  // The slice inside it, where the device allows a sub-buffer there (its origin must be a
  // multiple of the base address alignment; and a poisoned halo buffer is a sub-buffer already,
  // which cannot have its own).
  const std::size_t origin = u.halo_before * ub;
  if (u.slice_used() && !run.host_slice(ps, u) && origin % w.base_alignment() == 0 && ps.part->units &&
      (!run.buffers.poison() || w.zero_copy)) {
    cl_buffer_region region{origin, ps.part->units * ub};
    ps.slices[v] = halo.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
    ps.halo_holds_slice.insert(v);
  }
}

void Halos::upload(PartState& ps, const VectorUse& u) {
  RunState& run = run_;
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
    const char* from = p.src < 0 ? reinterpret_cast<const char*>(fill_.at(v).data())
                                 : run.host_of(u) + static_cast<std::size_t>(p.src) * ub;
    to_device(run, ps, halo, p.dst * ub, from, p.units * ub, &upload_path);
  }
  ps.halo_filled.insert(halo.get());
  // The twin a swapping loop copy brings (PartState::Swap) gets the constant boundary now too.
  for (auto& [copy, swap] : ps.swaps) {
    if (!swap.twin() || copy->args[1].vector.get() != v) continue;
    for (const Piece& p : pieces)
      if (p.src < 0)
        to_device(run, ps, swap.twin, p.dst * ub, fill_.at(v).data(), p.units * ub, &upload_path);
    ps.halo_filled.insert(swap.twin.get());
  }
}

// One exchange as it goes: what it moved, for the report, and what it must keep until its copies
// have run.
struct Halos::Exchange {
  HaloExchange record;
  const std::string* path = nullptr;
  std::vector<std::vector<unsigned char>> through_host;  // kept until the copies have run
  std::vector<cl::Buffer> between_devices;               // likewise
  std::optional<RemoteUnits> remote;
  bool enqueued = false;
};

// Two devices of one shared context: the source's device copies the units into a buffer of their
// size, and the reader's device copies that into its halo once the first copy has ended. A copy
// on the reader's queue straight from the source's slice would make a driver that keeps each
// buffer on one device at a time move the whole slice there and back every exchange
// (docs/decisions/174); the small buffer is all that moves.
void Halos::copy_between_devices(PartState& ps, const cl::Buffer& halo, PartState& source, const cl::Buffer& from,
                                 std::size_t from_offset, std::size_t to_offset, std::size_t bytes, cl::Event& ev,
                                 Exchange& x) {
  RunState& run = run_;
  cl::Buffer& middle = x.between_devices.emplace_back(ps.worker->context, CL_MEM_READ_WRITE, bytes);
  cl::Event copied;
  run.record.count_copy(*source.worker, CopyKind::on_device, bytes);
  run.record.count_copy(*ps.worker, CopyKind::on_device, bytes);
  source.worker->queue().enqueueCopyBuffer(from, middle, from_offset, 0, bytes, nullptr, &copied);
  source.worker->queue().flush();
  const std::vector<cl::Event> after{copied};
  ps.worker->queue().enqueueCopyBuffer(middle, halo, 0, to_offset, bytes, &after, run.event_of(ev));
}

// The vector's units [src, src + units) into `ps`'s halo buffer from unit `dst` on: from the
// partitions that hold them (on the device within a context, through the host between contexts),
// or from another process's units that `x.remote` brought. They may span several partitions:
// each gives what it holds.
void Halos::copy_units(PartState& ps, const VectorUse& u, std::size_t src, std::size_t dst, std::size_t units,
                       std::uint64_t& counted, Exchange& x) {
  RunState& run = run_;
  const VectorState* v = u.vector.get();
  const std::size_t ub = unit_bytes(u);
  Worker& w = *ps.worker;
  const cl::Buffer& halo = ps.halos.at(v);
  const std::size_t until = src + units;
  for (std::size_t at_unit = src, to = dst; at_unit < until;) {
    cl::Event ev;
    std::size_t n = 0;
    if (x.remote && (at_unit < x.remote->first || at_unit >= x.remote->end)) {  // another process's units
      const auto [data, count] = x.remote->at(at_unit, until, u);
      n = count;
      w.queue().enqueueWriteBuffer(halo, CL_FALSE, to * ub, n * ub, data, nullptr, run.event_of(ev));
      x.record.host_bytes += n * ub;
    } else {
      PartState& q = holder_of(by_unit_, at_unit);
      n = std::min(until, q.part->first + q.part->units) - at_unit;
      const cl::Buffer& from = q.slices.at(v);
      const std::size_t offset = (at_unit - q.part->first) * ub;
      if (q.worker->context() == w.context() && q.worker->runtime_index != w.runtime_index) {
        copy_between_devices(ps, halo, q, from, offset, to * ub, n * ub, ev, x);
      } else if (q.worker->context() == w.context()) {
        run.record.count_copy(w, CopyKind::on_device, n * ub);
        w.queue().enqueueCopyBuffer(from, halo, offset, to * ub, n * ub, nullptr, run.event_of(ev));
      } else {
        auto& host = x.through_host.emplace_back(n * ub);
        run.record.count_copy(*q.worker, CopyKind::to_host, n * ub);
        run.record.count_copy(w, CopyKind::to_device, n * ub);
        q.worker->queue().enqueueReadBuffer(from, CL_TRUE, offset, n * ub, host.data());
        w.queue().enqueueWriteBuffer(halo, CL_FALSE, to * ub, n * ub, host.data(), nullptr, run.event_of(ev));
        x.record.host_bytes += n * ub;
      }
    }
    run.track(ps, ev, x.path, false);
    counted += n * ub;
    at_unit += n;
    to += n;
  }
}

void Halos::refresh(PartState& ps, const VectorUse& u, Exchange& x) {
  RunState& run = run_;
  const VectorState* v = u.vector.get();
  const std::size_t ub = unit_bytes(u);
  Worker& w = *ps.worker;
  const cl::Buffer& halo = ps.halos.at(v);
  // The slice itself, where it is a buffer of its own.
  if (!ps.halo_holds_slice.count(v)) {
    cl::Event ev;
    run.record.count_copy(w, CopyKind::on_device, RunState::slice_bytes(ps, u));
    w.queue().enqueueCopyBuffer(ps.slices.at(v), halo, 0, u.halo_before * ub, RunState::slice_bytes(ps, u), nullptr,
                                run.event_of(ev));
    run.track(ps, ev, x.path, false);
    x.enqueued = true;
  }
  const auto [lo, hi] = extent(ps, u);
  const auto first = static_cast<std::ptrdiff_t>(ps.part->first);
  const auto end = first + static_cast<std::ptrdiff_t>(ps.part->units);
  const bool filled = !ps.halo_filled.insert(halo.get()).second;
  std::vector<Piece> pieces;
  pieces_of(pieces, u, lo, first, 0);
  pieces_of(pieces, u, end, hi, u.halo_before + ps.part->units);
  for (const Piece& p : pieces) {
    const std::ptrdiff_t unit = lo + static_cast<std::ptrdiff_t>(p.dst);  // where in the vector it stands
    std::uint64_t& counted =
        unit < 0 || unit >= static_cast<std::ptrdiff_t>(u.units) ? x.record.boundary_bytes : x.record.bytes;
    if (p.src < 0 && filled) continue;  // a constant: written once
    x.enqueued = true;
    if (p.src >= 0) {
      copy_units(ps, u, static_cast<std::size_t>(p.src), p.dst, p.units, counted, x);
      continue;
    }
    const std::size_t bytes = p.units * ub;
    cl::Event ev;
    run.record.count_copy(w, CopyKind::to_device, bytes);
    w.queue().enqueueWriteBuffer(halo, CL_FALSE, p.dst * ub, bytes, fill_.at(v).data(), nullptr, run.event_of(ev));
    run.track(ps, ev, x.path, false);
    counted += bytes;
  }
}

void Halos::exchange(const VectorState* v, const std::string& reader, std::size_t iteration) {
  RunState& run = run_;
  const VectorUse& u = run.an.use(v);
  Exchange x;
  x.record = {v->name, reader, iteration, 0, 0, 0};
  x.path = &label("halo '" + v->name + "'");
  cl_call({.api_call = "halo exchange", .node = reader, .argument = "vector '" + v->name + "'"}, [&] {
    x.remote = remote_units(u);
    for (PartState* ps : by_unit_) refresh(*ps, u, x);
    // The next leaves of every queue may overwrite what was copied from: all copies end first.
    // (One worker: its in-order queue runs them before its next leaf.)
    if (run.workers.list.size() > 1 || !x.through_host.empty() || x.remote)
      for (auto& w : run.workers.list) w.queue().finish();
  });
  if (x.enqueued) run.record.exchanges.push_back(std::move(x.record));
}

}  // namespace sinew::detail
