// samples/common/filter_pipeline.cpp — the Filter Pipeline descriptor (paper §4): an image of
// any even width and any height (prepare(N) for N x N, prepare("WIDTHxHEIGHT") otherwise).
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string FilterPipeline::description() const {
  return "Pipeline of three image filters (Gaussian noise, solarise, mirror) on an RGBA image, partitioned "
         "by lines";
}

FilterPipeline::Shape FilterPipeline::shape_for(std::size_t size) const {
  Shape shape;
  if (size) {  // a plain number is a square image
    shape = {size, size};
  } else {
    shape = {params.side, params.height ? params.height : params.side};
  }
  check_shape(shape);
  return shape;
}

void FilterPipeline::check_shape(const Shape& shape) {
  const std::size_t width = shape.width, height = shape.height;
  if (width < 2 || width % 2 || width > 65534)
    throw std::invalid_argument("filter_pipeline: the image width must be even, between 2 and 65534 (mirror swaps "
                                "pixel pairs; pixel indices are 32-bit), not " + std::to_string(width));
  if (height < 1 || height > 65535)  // with width <= 65534, every pixel index then fits in 32 bits
    throw std::invalid_argument("filter_pipeline: the image height must be between 1 and 65535 lines (pixel indices "
                                "are 32-bit), not " + std::to_string(height));
}

// The input picture, the bound image and the reference's image.
std::uint64_t FilterPipeline::shape_bytes(const Shape& shape) {
  return saturating_product({3, shape.width, shape.height, sizeof(cl_uchar4)});
}

std::uint64_t FilterPipeline::host_bytes(std::size_t size) const { return shape_bytes(shape_for(size)); }

void FilterPipeline::prepare(std::size_t size) {
  const Shape shape = shape_for(size);
  const std::size_t width = shape.width, height = shape.height;
  if (size) {
    params.side = size;
    params.height = 0;
  }
  reset_state(width);
  height_ = height;
  expected_.reset();

  // One vector, modified in place by every stage; a unit is one image line. The width is a
  // knowledge-base feature: with the vector's size (width x height) it tells shapes apart, so
  // 2048x512 does not pass for 1024x1024 and derivation measures how far apart shapes are.
  img_ = sinew::vector<cl_uchar4>().unit(width).name("image");
  auto noise = sinew::samples::kernel("filters.cl", "gaussian_noise")
                   .args(sinew::inout(img_), sinew::scalar(params.noise_factor), sinew::scalar(params.seed),
                         sinew::offset(img_), sinew::count(img_))
                   .elements_per_thread(2);
  auto solarise = sinew::samples::kernel("filters.cl", "solarise")
                      .args(sinew::inout(img_), sinew::scalar(params.threshold), sinew::count(img_));
  auto mirror = sinew::samples::kernel("filters.cl", "mirror")
                    .args(sinew::inout(img_), sinew::scalar(static_cast<cl_uint>(width)).as_feature("width"),
                          sinew::count(img_))
                    .dims(2)
                    .elements_per_thread(2);
  tree_ = sinew::pipeline(noise, solarise, mirror);

  // A picture with gradients and noise, so every filter has something to change.
  reference::Random rng(params.seed ^ 0x5eedU);
  input_.resize(width * height);
  for (std::size_t y = 0; y < height; ++y)
    for (std::size_t x = 0; x < width; ++x) {
      cl_uchar4& p = input_[y * width + x];
      p.s[0] = static_cast<cl_uchar>((x * 255) / (width - 1));
      p.s[1] = static_cast<cl_uchar>(height > 1 ? (y * 255) / (height - 1) : 0);
      p.s[2] = rng.byte();
      p.s[3] = 255;
    }
  image_.assign(input_.size(), cl_uchar4{});
}

FilterPipeline::Shape FilterPipeline::read_shape(const std::string& size) {
  // WIDTHxHEIGHT: two positive integers around one 'x'.
  const auto cross = size.find_first_of("xX");
  auto number = [&](std::size_t from, std::size_t to, std::size_t& out) {
    const char* first = size.data() + from;
    const char* last = size.data() + to;
    auto [stop, ec] = std::from_chars(first, last, out);
    return from < to && ec == std::errc() && stop == last && out > 0;
  };
  Shape shape;
  if (cross == std::string::npos || !number(0, cross, shape.width) || !number(cross + 1, size.size(), shape.height))
    throw std::invalid_argument("filter_pipeline: a size is N (an N x N image) or WIDTHxHEIGHT in pixels, e.g. "
                                "1024x2048 (1024 wide, 2048 lines); not '" + size + "'");
  return shape;
}

void FilterPipeline::prepare_text(const std::string& size) {
  if (size.find_first_of("xX") == std::string::npos) return SampleBase::prepare_text(size);  // N: a square image
  const Shape shape = read_shape(size);
  check_shape(shape);
  const FilterPipelineParams before = params;
  params.side = shape.width;
  params.height = shape.height;
  try {
    prepare(std::size_t{0});
  } catch (...) {
    params = before;  // a rejected size leaves the parameters as they were
    throw;
  }
}

std::uint64_t FilterPipeline::host_bytes_text(const std::string& size) const {
  if (size.find_first_of("xX") == std::string::npos) return SampleBase::host_bytes_text(size);
  const Shape shape = read_shape(size);
  check_shape(shape);
  return shape_bytes(shape);
}

std::string FilterPipeline::size_text() const {
  if (!size_) return {};
  return height_ == size_ ? std::to_string(size_) : std::to_string(size_) + "x" + std::to_string(height_);
}

std::vector<Binding> FilterPipeline::bindings() {
  image_ = input_;
  ran_ = true;
  return {Binding(img_, image_)};
}

Check FilterPipeline::compare() {
  if (!expected_) {
    expected_ = input_;
    reference::gaussian_noise(*expected_, params.noise_factor, params.seed);
    reference::solarise(*expected_, params.threshold);
    reference::mirror(*expected_, size_);
  }
  Check c;
  c.tolerance = 0;
  c.measure = "max |got - expected| over all channels (integer kernels: bit-exact)";
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < image_.size(); ++i)
    for (int ch = 0; ch < 4; ++ch) {
      const int got = image_[i].s[ch], want = (*expected_)[i].s[ch];
      if (got == want) continue;
      if (mismatches++ == 0) {
        std::ostringstream s;
        s << "pixel (x " << i % size_ << ", line " << i / size_ << ") channel " << ch << ": got " << got
          << ", expected " << want;
        c.message = s.str();
      }
      c.max_error = std::max<double>(c.max_error, std::abs(got - want));
    }
  c.ok = mismatches == 0;
  if (c.ok)
    c.message = "OK";
  else
    c.message += " (" + std::to_string(mismatches) + " channel values differ)";
  return c;
}

}  // namespace sinew::samples
