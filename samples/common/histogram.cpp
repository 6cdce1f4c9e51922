// samples/common/histogram.cpp — the Histogram descriptor: one map_reduce with a struct reducer.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Histogram::description() const {
  return "MapReduce of per-row 64-bin histograms (a struct) over an 8-bit grey image, partitioned by rows";
}

Histogram::Shape Histogram::shape_for(std::size_t size) const {
  const std::size_t w = size ? size : params.side, h = params.height ? params.height : w;
  if (w == 0 || h == 0 || w > 0xffffffffu || h > 0xffffffffu / w)
    throw std::invalid_argument("histogram: the image is 1 to 2^32-1 pixels, not " + std::to_string(w) + " x " +
                                std::to_string(h));
  return {w, h};
}

// The image and two histograms (the result, the reference); the partial ones stay on the devices.
std::uint64_t Histogram::host_bytes(std::size_t size) const {
  const Shape s = shape_for(size);
  return saturating_product({s.width, s.height}) + 2 * sizeof(Bins);
}

void Histogram::prepare(std::size_t size) {
  const Shape s = shape_for(size);
  params.side = s.width;
  reset_state(s.width);
  expected_.reset();
  width_ = s.width;

  // The partial histograms: one per row, so both vectors have `height` units. They are no binding:
  // they live on the devices and only the reduced histogram comes back.
  image_v_ = sinew::vector<cl_uchar>().unit(s.width).name("image");
  auto partial = sinew::vector<Bins>().name("row_histograms");
  total_ = sinew::result<Bins>("histogram");
  auto rows = sinew::samples::kernel("histogram.cl", "row_histogram")
                  .args(sinew::in(image_v_), sinew::out(partial), sinew::scalar(static_cast<cl_uint>(s.width)))
                  .range_of(partial);
  tree_ = sinew::map_reduce(rows, sinew::reduce::custom_source(partial, total_, kernel_text("histogram.cl"),
                                                               "histogram_add", Bins{}, "histogram.cl"));

  // A horizontal gradient with noise: every bin is used, unevenly.
  reference::Random rng(params.seed);
  image_.resize(s.width * s.height);
  for (std::size_t i = 0; i < image_.size(); ++i)
    image_[i] = static_cast<cl_uchar>((i % s.width) * 255 / s.width / 2 + (rng.byte() >> 1));
}

std::vector<Binding> Histogram::bindings() {
  for (auto& b : got_.bins) b = 0xffffffffu;  // no count: a result never written shows
  ran_ = true;
  return {Binding(image_v_, static_cast<const std::vector<cl_uchar>&>(image_)), Binding(total_, &got_)};
}

Check Histogram::compare() {
  if (!expected_) {  // the C++ reference: count every pixel into bin grey / 4
    expected_.emplace();
    for (auto& b : expected_->bins) b = 0;
    for (cl_uchar p : image_) expected_->bins[p >> 2]++;
  }
  Check c;
  c.tolerance = 0;
  c.measure = "max |got - expected| per bin (integer counts: bit-exact)";
  int first = -1;
  for (int b = 0; b < 64; ++b) {
    const double e = got_.bins[b] > expected_->bins[b] ? got_.bins[b] - expected_->bins[b]
                                                       : expected_->bins[b] - got_.bins[b];
    if (e > 0 && first < 0) first = b;
    c.max_error = std::max(c.max_error, e);
  }
  c.ok = first < 0;
  std::ostringstream s;
  if (c.ok)
    s << "OK";
  else
    s << "bin " << first << ": got " << got_.bins[first] << ", expected " << expected_->bins[first];
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
