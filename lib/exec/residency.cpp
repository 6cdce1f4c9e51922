// exec/residency.cpp — a run's resident arrays (see residency.hpp).
#include "exec/residency.hpp"

#include "exec/run.hpp"
#include "exec/transfer.hpp"
#include "platform/error.hpp"

#include <cstring>
#include <stdexcept>

namespace sinew::detail {

namespace {

bool same_place(const ArrayPiece& p, const Worker& w) {
  return p.context() == w.context() && p.device() == w.cl_device();
}

// The bytes of `piece` that no other place holds up to date.
ByteRanges only_in(const ArrayState& array, const ArrayPiece& piece) {
  ByteRanges elsewhere = array.host_valid;
  for (const ArrayPiece& other : array.pieces)
    if (&other != &piece) elsewhere.add(other.valid);
  ByteRanges out = piece.valid;
  out.remove(elsewhere);
  return out;
}

}  // namespace

Residency::~Residency() {
  if (committed_ || accesses_.empty()) return;
  try {
    rollback();
  } catch (...) {
  }
}

// A vector keeps its slices on the devices where each partition's slice is a buffer of its own
// from the first leaf to the last.
bool Residency::keeps_slices(const VectorUse& u) const {
  if (!u.partitioned || u.read_halo || u.read_whole || run_.schedule.takes_chunks()) return false;
  for (const NodeImpl* copy : run_.an.swap_copies)
    for (const auto& arg : copy->args)
      if (arg.vector.get() == u.vector.get()) return false;
  return true;
}

void Residency::place() {
  for (const auto& u : run_.an.vectors) {
    if (!u.bound()) continue;
    const Binding& b = run_.bindings[static_cast<std::size_t>(u.binding)];
    if (b.array) place_use(u, *b.array);
  }
}

void Residency::place_use(const VectorUse& u, ArrayState& array) {
  // (lost() only after a failure; the vector's name made only for an error)
  if (array.may_have_lost() && !array.lost().empty()) array.require_intact("vector '" + u.vector->name + "'");
  if (!keeps_slices(u)) {
    Access a{.array = &array, .vector = u.vector.get(), .first = 0, .end = array.bytes(), .read = true,
             .written = u.written};
    place_host(a);
    accesses_.push_back(std::move(a));
    return;
  }
  for (PartState& ps : run_.workers.parts) {
    const std::size_t first = RunState::slice_offset(ps, u);
    Access a{.array = &array, .part = &ps, .vector = u.vector.get(), .first = first,
             .end = first + RunState::slice_bytes(ps, u), .read = u.read_partitioned, .written = u.written};
    if (ps.worker->zero_copy) {
      place_host(a);
    } else {
      place_piece(a);
      by_slice_[{&ps, u.vector.get()}] = accesses_.size();
    }
    accesses_.push_back(std::move(a));
  }
}

// The host copy used in place: up to date where the run reads it, and what it writes copied
// aside where a failed run must find it again.
void Residency::place_host(Access& a) {
  ArrayState& array = *a.array;
  if (a.read) run_.record.count_transfer(CopyKind::to_host, array.bring_home(a.first, a.end));
  if (a.written && array.options().keep_last_good)
    a.host_backup.assign(array.host() + a.first, array.host() + a.end);
}

// The partition's piece: the one its device keeps with exactly its bytes, else a new one; the
// moves that bring it up to date where the run reads it; its last good copy where it writes it.
void Residency::place_piece(Access& a) {
  ArrayState& array = *a.array;
  Worker& w = *a.part->worker;
  for (ArrayPiece& p : array.pieces)
    if (same_place(p, w) && p.first == a.first && p.end == a.end) a.piece = &p;
  if (!a.piece) {
    ArrayPiece p{.context = w.context, .device = w.cl_device, .device_name = w.info().name, .first = a.first,
                 .end = a.end};
    p.buffer = cl::Buffer(w.context, CL_MEM_READ_WRITE, std::max<std::size_t>(1, p.bytes()));
    array.pieces.push_back(std::move(p));
    a.piece = &array.pieces.back();
    a.created = true;
  }
  ArrayPiece& piece = *a.piece;
  const bool keep = array.options().keep_last_good && !a.created;
  a.into_spare = keep && a.written && !a.read;
  a.backed_up = keep && a.written && a.read && !only_in(array, piece).empty();
  if ((a.into_spare || a.backed_up) && !piece.spare())
    piece.spare = cl::Buffer(w.context, CL_MEM_READ_WRITE, std::max<std::size_t>(1, piece.bytes()));
  a.part->slices[a.vector] = a.into_spare ? piece.spare : piece.buffer;
  if (!a.read) return;
  ByteRanges missing = piece.valid.missing(a.first, a.end);
  for (const ArrayPiece& other : array.pieces) {
    if (missing.empty()) break;
    if (&other == &piece || other.context() != w.context()) continue;
    const auto wanted = missing.ranges();  // (a copy: the loop removes from `missing`)
    for (const auto& [first, end] : wanted) {
      const ByteRanges held = other.valid.within(first, end);
      for (const auto& r : held.ranges()) {
        a.moves.push_back({&other, r.first, r.second});
        missing.remove(r.first, r.second);
      }
    }
  }
  // What no piece of this context holds comes from the host copy, brought up to date first from
  // the pieces of other contexts.
  for (const auto& [first, end] : missing.ranges()) {
    run_.record.count_transfer(CopyKind::to_host, array.bring_home(first, end));
    a.moves.push_back({nullptr, first, end});
  }
}

bool Residency::holds(const PartState& ps, const VectorUse& u) const {
  return by_slice_.count({&ps, u.vector.get()}) > 0;
}

void Residency::fill(PartState& ps) {
  static const std::string label = "resident";
  started_ = true;
  Worker& w = *ps.worker;
  for (const auto& [key, index] : by_slice_) {
    if (key.first != &ps) continue;
    Access& a = accesses_[index];
    ArrayPiece& piece = *a.piece;
    cl_call([&] { return ErrorContext{.api_call = "resident array", .device = w.info().name}; }, [&] {
      if (a.backed_up) {
        cl::Event ev;
        w.queue().enqueueCopyBuffer(piece.buffer, piece.spare, 0, 0, piece.bytes(), nullptr, run_.event_of(ev));
        run_.track(ps, ev, &label, false);
        run_.record.count_copy(w, CopyKind::on_device, piece.bytes());
        a.backup_enqueued = true;
      }
      for (const Move& m : a.moves) {
        if (!m.source) {
          to_device(run_, ps, piece.buffer, m.first - a.first, a.array->host() + m.first, m.end - m.first, &label);
          continue;
        }
        cl::Event ev;
        w.queue().enqueueCopyBuffer(m.source->buffer, piece.buffer, m.first - m.source->first, m.first - a.first,
                                    m.end - m.first, nullptr, run_.event_of(ev));
        run_.track(ps, ev, &label, false);
        run_.record.count_copy(w, CopyKind::on_device, m.end - m.first);
      }
    });
  }
}

void Residency::commit() {
  committed_ = true;
  std::vector<const ArrayPiece*> used;
  std::vector<ArrayState*> arrays;
  for (Access& a : accesses_) {
    if (std::find(arrays.begin(), arrays.end(), a.array) == arrays.end()) arrays.push_back(a.array);
    if (!a.piece) {
      if (a.written) {
        a.array->host_valid.add(a.first, a.end);
        a.array->invalidate(a.first, a.end, nullptr);
      }
      continue;
    }
    used.push_back(a.piece);
    if (a.into_spare) std::swap(a.piece->buffer, a.piece->spare);
    if (a.read || a.written) a.piece->valid.add(a.first, a.end);
    if (a.written) a.array->invalidate(a.first, a.end, a.piece);
  }
  for (ArrayState* array : arrays) array->drop_redundant(used);
}

void Residency::forget() {
  if (!committed_) throw std::logic_error("sinew: a run's residency forgotten before it committed");
  accesses_.clear();
  by_slice_.clear();
  committed_ = false;
  started_ = false;
}

void Residency::rollback() {
  for (Access& a : accesses_)
    if (a.created) a.array->pieces.remove_if([&](const ArrayPiece& p) { return &p == a.piece; });
  if (!started_) return;
  std::vector<ArrayState*> arrays;
  for (Access& a : accesses_) {
    if (std::find(arrays.begin(), arrays.end(), a.array) == arrays.end()) arrays.push_back(a.array);
    if (!a.written || a.created) continue;  // (a new piece is gone: the places it was filled from hold it)
    if (!a.piece) {
      if (!a.host_backup.empty()) {
        std::memcpy(a.array->host() + a.first, a.host_backup.data(), a.host_backup.size());
      } else {
        a.array->host_valid.remove(a.first, a.end);
      }
    } else if (a.backed_up) {
      // The spare holds the piece as it was once its copy was enqueued; before that the kernels
      // never ran on this partition and the piece is as it was.
      if (a.backup_enqueued) std::swap(a.piece->buffer, a.piece->spare);
    } else if (!a.into_spare) {
      a.piece->valid.remove(a.first, a.end);
    }
  }
  for (ArrayState* array : arrays) {
    const ByteRanges gone = array->lost();
    const std::size_t element = array->type().size;
    array->note_failure("a run failed after " + std::to_string(array->runs_completed()) + " runs completed; " +
                        (gone.empty() ? std::string("the array keeps its contents from before it")
                                      : std::to_string(gone.bytes() / element) + " elements it wrote are lost"));
  }
}

}  // namespace sinew::detail
