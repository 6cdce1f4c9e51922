// samples/common/segmentation.cpp — the Segmentation descriptor (paper §4): a Map over z-slices.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Segmentation::description() const {
  return "Map of a three-class threshold segmentation over a 3D grey image, partitioned by z-slices";
}

Segmentation::Volume Segmentation::volume_for(std::size_t size) const {
  const std::size_t n = size ? size : params.voxels;
  std::size_t w = params.width, h = params.height;
  if (w == 0 || h == 0) {
    const std::size_t side = n >= 256 * 256 * 8 ? 256 : 64;
    w = w ? w : side;
    h = h ? h : side;
  }
  if (w % 4 || h == 0 || n == 0 || n % (w * h))
    throw std::invalid_argument("segmentation: " + std::to_string(n) + " voxels are not whole slices of " +
                                std::to_string(w) + " x " + std::to_string(h) +
                                " (the width must be a multiple of 4; the default plane is 256 x 256 from 8 slices "
                                "of it, else 64 x 64)");
  if (n > 0xffffffffu) throw std::invalid_argument("segmentation: at most 2^32-1 voxels, not " + std::to_string(n));
  return {n, w, h};
}

// The volume, the classes and the reference's classes: a byte per voxel each.
std::uint64_t Segmentation::host_bytes(std::size_t size) const { return saturating_product({3, volume_for(size).voxels}); }

void Segmentation::prepare(std::size_t size) {
  const Volume v = volume_for(size);
  const std::size_t n = v.voxels, w = v.width, h = v.height;
  params.voxels = n;
  reset_state(n);
  expected_.reset();
  width_ = w;
  height_ = h;

  // A unit is one z-slice; the kernel's range is (width/4, height, slices).
  in_v_ = sinew::vector<cl_uchar>().unit(w * h).name("volume");
  out_v_ = sinew::vector<cl_uchar>().unit(w * h).name("classes");
  tree_ = sinew::map(sinew::samples::kernel("segmentation.cl", "segmentation")
                         .args(sinew::in(in_v_), sinew::out(out_v_), sinew::scalar(params.lo),
                               sinew::scalar(params.hi), sinew::scalar(static_cast<cl_uint>(w)),
                               sinew::scalar(static_cast<cl_uint>(h)), sinew::count(in_v_))
                         .dims(3, w)
                         .elements_per_thread(4));

  // Diagonal bands plus noise: all three classes, in every slice.
  reference::Random rng(params.seed);
  in_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t x = i % w, y = (i / w) % h, z = i / (w * h);
    in_[i] = static_cast<cl_uchar>(((x ^ y) + 7 * z + (rng.byte() & 31)) & 255);
  }
  out_.assign(n, 0);
}

std::vector<Binding> Segmentation::bindings() {
  std::fill(out_.begin(), out_.end(), cl_uchar{1});  // not a class: a voxel left unwritten shows
  ran_ = true;
  return {Binding(in_v_, static_cast<const std::vector<cl_uchar>&>(in_)), Binding(out_v_, out_)};
}

Check Segmentation::compare() {
  if (!expected_) {
    expected_.emplace(in_.size());
    reference::segmentation(in_, *expected_, params.lo, params.hi);
  }
  Check c;
  c.tolerance = 0;
  c.measure = "max |got - expected| (integer kernel: bit-exact)";
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < out_.size(); ++i) {
    const int got = out_[i], want = (*expected_)[i];
    if (got == want) continue;
    if (mismatches++ == 0) {
      std::ostringstream s;
      s << "voxel (" << i % width_ << ", " << (i / width_) % height_ << ", " << i / (width_ * height_) << "): got "
        << got << ", expected " << want << " (input " << int(in_[i]) << ")";
      c.message = s.str();
    }
    c.max_error = std::max<double>(c.max_error, std::abs(got - want));
  }
  c.ok = mismatches == 0;
  if (c.ok)
    c.message = "OK";
  else
    c.message += " (" + std::to_string(mismatches) + " voxels differ)";
  return c;
}

}  // namespace sinew::samples
