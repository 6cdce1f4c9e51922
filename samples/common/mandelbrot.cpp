// samples/common/mandelbrot.cpp — the Mandelbrot descriptor (issue 18): irregular rows for the
// dynamic schedule.
#include "common/descriptors.hpp"
#include "common/kernels.hpp"
#include "common/reference.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace sinew::samples {

std::string Mandelbrot::description() const {
  return "Mandelbrot escape-time counts of an N x N image whose upper half holds the set (the lower rows escape "
         "at once: irregular work per row), one kernel partitioned by rows";
}

std::size_t Mandelbrot::side_for(std::size_t size) const {
  const std::size_t n = size ? size : params.side;
  // 65535: side * side stays within the kernel's uint pixel offsets.
  if (n < 1 || n > 65535) throw std::invalid_argument("mandelbrot: an image side from 1 to 65535, not " + std::to_string(n));
  if (params.max_iter < 1) throw std::invalid_argument("mandelbrot: at least one iteration");
  return n;
}

// The counts and the reference's.
std::uint64_t Mandelbrot::host_bytes(std::size_t size) const {
  const std::size_t n = side_for(size);
  return saturating_product({2, n, n, sizeof(cl_uint)});
}

void Mandelbrot::prepare(std::size_t size) {
  const std::size_t n = side_for(size);
  params.side = n;
  reset_state(n);
  expected_.reset();
  out_v_ = sinew::vector<cl_uint>().unit(n).name("iterations");
  tree_ = sinew::samples::kernel("mandelbrot.cl", "mandelbrot")
              .args(sinew::out(out_v_), sinew::scalar(static_cast<cl_uint>(n)), sinew::offset(out_v_),
                    sinew::scalar(params.max_iter), sinew::scalar(kRe0), sinew::scalar(kIm0),
                    sinew::scalar(kSpan / static_cast<float>(n)))
              .dims(2);
  out_.assign(n * n, 0);
}

std::vector<Binding> Mandelbrot::bindings() {
  std::fill(out_.begin(), out_.end(), ~cl_uint{0});
  ran_ = true;
  return {Binding(out_v_, out_)};
}

Check Mandelbrot::compare() {
  const std::size_t n = size_;
  if (!expected_) {
    expected_ = std::vector<cl_uint>(n * n);
    reference::mandelbrot(*expected_, n, params.max_iter, kRe0, kIm0, kSpan / static_cast<float>(n));
  }
  Check c;
  c.tolerance = 0;
  c.measure = "pixels whose count differs";
  std::size_t wrong = 0, first = out_.size();
  for (std::size_t i = 0; i < out_.size(); ++i)
    if (out_[i] != (*expected_)[i]) {
      ++wrong;
      first = std::min(first, i);
    }
  c.max_error = static_cast<double>(wrong);
  std::ostringstream s;
  if (wrong) {
    s << wrong << " counts differ, the first at (" << first % n << ", " << first / n << "): got " << out_[first]
      << ", expected " << (*expected_)[first];
  } else {
    c.ok = true;
    s << "OK";
  }
  c.message = s.str();
  return c;
}

}  // namespace sinew::samples
