// samples/common/sobel.cpp — the Sobel descriptor (issue 17): blur -> Sobel -> threshold -> count,
// a pipeline whose stencil stages read halo rows.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Sobel::description() const {
  return "Pipeline of blur -> Sobel -> threshold on a grey image (halo of 1 row per stencil) with a map_reduce "
         "sum counting the edge pixels, partitioned by rows";
}

std::size_t Sobel::side_for(std::size_t size) const {
  const std::size_t n = size ? size : params.side;
  // 65535: side * side stays within the kernels' uint indices.
  if (n < 1 || n > 65535) throw std::invalid_argument("sobel: an image side from 1 to 65535, not " + std::to_string(n));
  if (params.threshold > 255) throw std::invalid_argument("sobel: a threshold from 0 to 255");
  return n;
}

// The input, the edge image and the reference's edge image (the reference's blurred scratch image
// lives only while it runs).
std::uint64_t Sobel::host_bytes(std::size_t size) const {
  const std::size_t n = side_for(size);
  return saturating_product({3, n, n, sizeof(cl_uchar)});
}

void Sobel::prepare(std::size_t size) {
  const std::size_t n = side_for(size);
  params.side = n;
  reset_state(n);
  expected_.reset();

  // A unit is one row of n pixels (counts: one count per row). blurred and magnitude are channels:
  // they stay on the devices, and the Sobel stage's halo rows of `blurred` come from the
  // neighbouring partitions.
  in_v_ = sinew::vector<cl_uchar>().unit(n).name("image");
  blurred_v_ = sinew::vector<cl_uchar>().unit(n).name("blurred");
  magnitude_v_ = sinew::vector<cl_uchar>().unit(n).name("magnitude");
  edges_v_ = sinew::vector<cl_uchar>().unit(n).name("edges");
  counts_v_ = sinew::vector<cl_uint>().name("row_counts");
  count_r_ = sinew::result<cl_uint>("edge_pixels");
  const auto width = static_cast<cl_uint>(n);
  // Boundary::clamp: beyond the image's top and bottom rows stand copies of them, as the kernels
  // clamp columns, the usual edge rule of image filters (no dark frame of false edges).
  auto blur = sinew::samples::kernel("sobel.cl", "blur")
                  .args(sinew::halo(in_v_, 1, 1, Boundary::clamp), sinew::out(blurred_v_), sinew::scalar(width))
                  .range_of(blurred_v_)
                  .dims(2);
  auto sobel = sinew::samples::kernel("sobel.cl", "sobel")
                   .args(sinew::halo(blurred_v_, 1, 1, Boundary::clamp), sinew::out(magnitude_v_), sinew::scalar(width))
                   .range_of(magnitude_v_)
                   .dims(2);
  auto threshold = sinew::samples::kernel("sobel.cl", "threshold")
                       .args(sinew::in(magnitude_v_), sinew::out(edges_v_), sinew::out(counts_v_), sinew::scalar(width),
                             sinew::scalar(params.threshold), sinew::count(counts_v_))
                       .range_of(counts_v_);
  tree_ = sinew::pipeline(blur, sobel, sinew::map_reduce(threshold, sinew::reduce::sum(counts_v_, count_r_)));

  // Shapes on a gentle gradient with noise: discs and boxes of different grey levels give edges
  // of every orientation and contrast; the blur keeps the noise below the threshold.
  reference::Random rng(params.seed);
  in_.resize(n * n);
  struct Disc {
    double x, y, r;
    int level;
  };
  std::vector<Disc> discs;
  for (int i = 0; i < 6; ++i)
    discs.push_back({rng.uniform(0, 1) * static_cast<double>(n), rng.uniform(0, 1) * static_cast<double>(n),
                     (0.05 + 0.15 * rng.uniform(0, 1)) * static_cast<double>(n), 40 + static_cast<int>(rng.byte() % 200)});
  for (std::size_t y = 0; y < n; ++y)
    for (std::size_t x = 0; x < n; ++x) {
      int v = static_cast<int>(60 * (x + y) / (2 * n)) + 30;
      for (const Disc& d : discs) {
        const double dx = static_cast<double>(x) - d.x, dy = static_cast<double>(y) - d.y;
        if (dx * dx + dy * dy <= d.r * d.r) v = d.level;
      }
      if ((x / 8 + y / 8) % 16 == 3) v = 255 - v;  // thin diagonal stripes
      v += static_cast<int>(rng.byte() % 16) - 8;
      in_[y * n + x] = static_cast<cl_uchar>(std::clamp(v, 0, 255));
    }
  edges_.assign(n * n, 0);
}

std::vector<Binding> Sobel::bindings() {
  std::fill(edges_.begin(), edges_.end(), cl_uchar{0});
  count_ = ~cl_uint{0};
  ran_ = true;
  return {Binding(in_v_, std::span<const cl_uchar>(in_)), Binding(edges_v_, edges_), Binding(count_r_, &count_)};
}

Check Sobel::compare() {
  const std::size_t n = size_;
  if (!expected_) {
    expected_ = std::vector<cl_uchar>(in_.size());
    expected_count_ = reference::sobel(in_, *expected_, n, params.threshold);
  }
  Check c;
  c.tolerance = 0;
  c.measure = "pixels of the edge image that differ, and |count - ref|";
  std::size_t wrong = 0, first = in_.size();
  for (std::size_t i = 0; i < in_.size(); ++i)
    if (edges_[i] != (*expected_)[i]) {
      ++wrong;
      first = std::min(first, i);
    }
  c.max_error = static_cast<double>(wrong);
  std::ostringstream s;
  if (wrong) {
    s << wrong << " edge pixels differ, the first at (" << first % n << ", " << first / n << "): got "
      << int(edges_[first]) << ", expected " << int((*expected_)[first]);
  } else if (count_ != expected_count_) {
    c.max_error = std::max<double>(count_, expected_count_) - std::min<double>(count_, expected_count_);
    s << "edge pixel count " << count_ << ", expected " << expected_count_;
  } else {
    c.ok = true;
    s << "OK";
  }
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
