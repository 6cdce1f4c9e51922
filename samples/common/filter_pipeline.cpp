// samples/common/filter_pipeline.cpp — the Filter Pipeline descriptor (paper §4).
#include "common/descriptors.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string FilterPipeline::description() const {
  return "Pipeline of three image filters (Gaussian noise, solarise, mirror) on an RGBA image, partitioned "
         "by lines";
}

void FilterPipeline::prepare(std::size_t size) {
  if (size) params.side = size;
  const std::size_t side = params.side;
  if (side < 2 || side % 2 || side > 65534)
    throw std::invalid_argument("filter_pipeline: the image side must be even, between 2 and 65534 (mirror swaps "
                                "pixel pairs; pixel indices are 32-bit), not " + std::to_string(side));
  reset_state(side);
  expected_.reset();

  // One vector, modified in place by every stage; a unit is one image line.
  img_ = sinew::vector<cl_uchar4>().unit(side).name("image");
  auto noise = sinew::kernel("filters.cl", "gaussian_noise")
                   .args(sinew::inout(img_), sinew::scalar(params.noise_factor), sinew::scalar(params.seed),
                         sinew::offset(img_), sinew::count(img_))
                   .elements_per_thread(2);
  auto solarise = sinew::kernel("filters.cl", "solarise")
                      .args(sinew::inout(img_), sinew::scalar(params.threshold), sinew::count(img_));
  auto mirror = sinew::kernel("filters.cl", "mirror")
                    .args(sinew::inout(img_), sinew::scalar(static_cast<cl_uint>(side)), sinew::count(img_))
                    .dims(2)
                    .elements_per_thread(2);
  tree_ = sinew::pipeline(noise, solarise, mirror);

  // A picture with gradients and noise, so every filter has something to change.
  reference::Random rng(params.seed ^ 0x5eedU);
  input_.resize(side * side);
  for (std::size_t y = 0; y < side; ++y)
    for (std::size_t x = 0; x < side; ++x) {
      cl_uchar4& p = input_[y * side + x];
      p.s[0] = static_cast<cl_uchar>((x * 255) / (side - 1));
      p.s[1] = static_cast<cl_uchar>((y * 255) / (side - 1));
      p.s[2] = rng.byte();
      p.s[3] = 255;
    }
  image_.assign(input_.size(), cl_uchar4{});
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
    reference::mirror(*expected_, params.side);
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
        s << "pixel (x " << i % params.side << ", line " << i / params.side << ") channel " << ch << ": got " << got
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
