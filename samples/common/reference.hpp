// samples/common/reference.hpp — plain C++ references of the sample kernels, and input data.
//
// No Sinew and no OpenCL calls here (only the cl_* types): the references are what the kernels
// are judged against, so they are written as directly as possible. Integer references match
// samples/kernels/filters.cl and samples/kernels/segmentation.cl bit for bit.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl_platform.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sinew::samples::reference {

// ----- deterministic input data (the same on every platform and standard library) ------------

// splitmix64: a small, portable generator for input data.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [lo, hi).
  float uniform(float lo, float hi);
  std::uint8_t byte() { return static_cast<std::uint8_t>(next() >> 56); }

 private:
  std::uint64_t state_;
};

// ----- filters.cl -------------------------------------------------------------------------

std::uint32_t hash32(std::uint32_t x);
// The noise added to channel `channel` of pixel `pixel` (index in the whole image).
int noise(std::uint32_t pixel, std::uint32_t channel, std::uint32_t seed, int factor);
void gaussian_noise(std::span<cl_uchar4> image, int factor, std::uint32_t seed);
void solarise(std::span<cl_uchar4> image, int threshold);
void mirror(std::span<cl_uchar4> image, std::size_t width);

// ----- nbody.cl ------------------------------------------------------------------------------

// `steps` semi-implicit Euler steps of softened direct-sum gravity, in double precision.
void nbody(std::span<cl_float4> pos, std::span<cl_float4> vel, std::size_t steps, double dt, double eps2);

// ----- saxpy.cl ------------------------------------------------------------------------------

void saxpy(float a, std::span<const cl_float> x, std::span<cl_float> y);

// ----- prefix_sum (sinew::scan) --------------------------------------------------------------

// The inclusive or exclusive prefix sum of `in` in double precision, and beside it the sum of
// the magnitudes each result combines (the scale its float rounding is judged against).
void prefix_sum(std::span<const cl_float> in, bool exclusive, std::vector<double>& sums, std::vector<double>& magnitudes);

// ----- segmentation.cl -----------------------------------------------------------------------

void segmentation(std::span<const cl_uchar> in, std::span<cl_uchar> out, cl_uchar lo, cl_uchar hi);

// ----- heat.cl / sobel.cl ---------------------------------------------------------------------

// The heat sample's starting plate, n x n: 0..10 degrees of noise (Random(seed)) with a hot disc
// of 100 degrees in the middle (a quarter of n in radius).
std::vector<float> hot_disc_plate(std::size_t n, std::uint64_t seed);
// `iterations` Jacobi sweeps of heat_sweep over the n x n grid u (every edge held at `wall`), in
// double precision; residuals gets each sweep's max |unew - u|.
void heat(std::span<double> u, std::size_t n, std::size_t iterations, double alpha, double wall,
          std::vector<double>& residuals);
// blur -> sobel -> threshold of sobel.cl over the side x side image `in`: the edge image (0 or
// 255 per pixel); returns the number of edge pixels.
std::size_t sobel(std::span<const cl_uchar> in, std::span<cl_uchar> edges, std::size_t side, unsigned threshold);

// ----- mandelbrot.cl ---------------------------------------------------------------------------

// Escape-time counts (at most max_iter) of the side x side image whose pixel (x, row) is the
// point re0 + step * x + i (im0 + step * row), in float arithmetic without contraction, as
// mandelbrot.cl computes them.
void mandelbrot(std::span<cl_uint> out, std::size_t side, cl_uint max_iter, float re0, float im0, float step);

// ----- FFT -----------------------------------------------------------------------------------

// In-place forward (sign -1) or inverse (sign +1, scaled by 1/length) complex FFT of each
// `length`-point transform of `data`, in double precision. length must be a power of two.
void fft(std::span<cl_float2> data, std::size_t length, bool inverse);

}  // namespace sinew::samples::reference
