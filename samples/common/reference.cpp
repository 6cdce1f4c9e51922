// samples/common/reference.cpp — plain C++ references of the sample kernels.
#include "common/reference.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sinew::samples::reference {

std::uint64_t Random::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float Random::uniform(float lo, float hi) {
  // 24 random bits: every value is exactly representable as a float.
  const float u = static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * u;
}

// ----- filters.cl -------------------------------------------------------------------------

std::uint32_t hash32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

int noise(std::uint32_t pixel, std::uint32_t channel, std::uint32_t seed, int factor) {
  const std::uint32_t h = hash32(pixel * 3U + channel + seed * 0x9e3779b9U);
  const int sum = static_cast<int>(h & 0xffU) + static_cast<int>((h >> 8) & 0xffU) +
                  static_cast<int>((h >> 16) & 0xffU) + static_cast<int>(h >> 24);
  return ((sum - 510) * factor) / 148;
}

namespace {
cl_uchar add_noise(cl_uchar v, std::uint32_t pixel, std::uint32_t channel, std::uint32_t seed, int factor) {
  return static_cast<cl_uchar>(std::clamp(static_cast<int>(v) + noise(pixel, channel, seed, factor), 0, 255));
}
cl_uchar solarise_one(cl_uchar v, int threshold) {
  return static_cast<int>(v) >= threshold ? static_cast<cl_uchar>(255 - v) : v;
}
}  // namespace

void gaussian_noise(std::span<cl_uchar4> image, int factor, std::uint32_t seed) {
  for (std::size_t i = 0; i < image.size(); ++i) {
    const auto pixel = static_cast<std::uint32_t>(i);
    for (std::uint32_t c = 0; c < 3; ++c) image[i].s[c] = add_noise(image[i].s[c], pixel, c, seed, factor);
  }
}

void solarise(std::span<cl_uchar4> image, int threshold) {
  for (auto& p : image)
    for (int c = 0; c < 3; ++c) p.s[c] = solarise_one(p.s[c], threshold);
}

void mirror(std::span<cl_uchar4> image, std::size_t width) {
  for (std::size_t line = 0; line + width <= image.size(); line += width)
    std::reverse(image.begin() + static_cast<std::ptrdiff_t>(line),
                 image.begin() + static_cast<std::ptrdiff_t>(line + width));
}

// ----- nbody.cl ------------------------------------------------------------------------------

void nbody(std::span<cl_float4> pos, std::span<cl_float4> vel, std::size_t steps, double dt, double eps2) {
  const std::size_t n = pos.size();
  std::vector<double> p(4 * n), v(4 * n), next(4 * n);
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < 4; ++c) {
      p[4 * i + c] = pos[i].s[c];
      v[4 * i + c] = vel[i].s[c];
    }
  // Bodies are independent within a step: split them over the host's threads (the reference of
  // a large benchmark would otherwise take minutes).
  auto advance = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      double a[3] = {0, 0, 0};
      for (std::size_t j = 0; j < n; ++j) {
        const double d[3] = {p[4 * j] - p[4 * i], p[4 * j + 1] - p[4 * i + 1], p[4 * j + 2] - p[4 * i + 2]};
        const double inv = 1.0 / std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2);
        const double f = p[4 * j + 3] * inv * inv * inv;
        for (int c = 0; c < 3; ++c) a[c] += f * d[c];
      }
      for (int c = 0; c < 3; ++c) {
        v[4 * i + c] += a[c] * dt;
        next[4 * i + c] = p[4 * i + c] + v[4 * i + c] * dt;
      }
      next[4 * i + 3] = p[4 * i + 3];
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::size_t chunk = (n + threads - 1) / threads;
  for (std::size_t s = 0; s < steps; ++s) {
    std::vector<std::thread> pool;
    for (std::size_t begin = chunk; begin < n; begin += chunk)
      pool.emplace_back(advance, begin, std::min(n, begin + chunk));
    advance(0, std::min(n, chunk));
    for (auto& t : pool) t.join();
    std::swap(p, next);
  }
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < 4; ++c) {
      pos[i].s[c] = static_cast<float>(p[4 * i + c]);
      vel[i].s[c] = static_cast<float>(v[4 * i + c]);
    }
}

// ----- prefix_sum (sinew::scan) --------------------------------------------------------------

void prefix_sum(std::span<const cl_float> in, bool exclusive, std::vector<double>& sums, std::vector<double>& magnitudes) {
  sums.resize(in.size());
  magnitudes.resize(in.size());
  double sum = 0, magnitude = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (exclusive) {
      sums[i] = sum;
      magnitudes[i] = magnitude;
    }
    sum += in[i];
    magnitude += std::fabs(static_cast<double>(in[i]));
    if (!exclusive) {
      sums[i] = sum;
      magnitudes[i] = magnitude;
    }
  }
}

// ----- saxpy.cl ------------------------------------------------------------------------------

void saxpy(float a, std::span<const cl_float> x, std::span<cl_float> y) {
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = std::fma(a, x[i], y[i]);
}

// ----- segmentation.cl -----------------------------------------------------------------------

void segmentation(std::span<const cl_uchar> in, std::span<cl_uchar> out, cl_uchar lo, cl_uchar hi) {
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = in[i] < lo ? 0 : in[i] > hi ? 255 : 128;
}

// ----- FFT -----------------------------------------------------------------------------------

void fft(std::span<cl_float2> data, std::size_t length, bool inverse) {
  if (length == 0 || (length & (length - 1)) != 0)
    throw std::invalid_argument("reference::fft needs a power-of-two length, not " + std::to_string(length));
  std::vector<std::complex<double>> x(length);
  const double pi = std::acos(-1.0);
  const double sign = inverse ? 1.0 : -1.0;
  for (std::size_t t = 0; t + length <= data.size(); t += length) {
    for (std::size_t i = 0; i < length; ++i) x[i] = {data[t + i].s[0], data[t + i].s[1]};
    // Iterative radix-2 Cooley-Tukey: bit reversal, then butterflies of growing span.
    for (std::size_t i = 1, j = 0; i < length; ++i) {
      std::size_t bit = length >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(x[i], x[j]);
    }
    for (std::size_t len = 2; len <= length; len <<= 1) {
      const double angle = sign * 2 * pi / static_cast<double>(len);
      for (std::size_t i = 0; i < length; i += len)
        for (std::size_t k = 0; k < len / 2; ++k) {
          const std::complex<double> w = std::polar(1.0, angle * static_cast<double>(k));
          const auto u = x[i + k], v = x[i + k + len / 2] * w;
          x[i + k] = u + v;
          x[i + k + len / 2] = u - v;
        }
    }
    const double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
    for (std::size_t i = 0; i < length; ++i) {
      data[t + i].s[0] = static_cast<float>(x[i].real() * scale);
      data[t + i].s[1] = static_cast<float>(x[i].imag() * scale);
    }
  }
}

}  // namespace sinew::samples::reference

namespace sinew::samples::reference {

// ----- heat.cl / sobel.cl ----------------------------------------------------------------------

std::vector<float> hot_disc_plate(std::size_t n, std::uint64_t seed) {
  Random rng(seed);
  std::vector<float> plate(n * n);
  const double mid = (static_cast<double>(n) - 1) / 2, radius = static_cast<double>(n) / 4;
  for (std::size_t y = 0; y < n; ++y)
    for (std::size_t x = 0; x < n; ++x) {
      const double dx = static_cast<double>(x) - mid, dy = static_cast<double>(y) - mid;
      const float noise = rng.uniform(0, 10);
      plate[y * n + x] = dx * dx + dy * dy <= radius * radius ? 100.0f : noise;
    }
  return plate;
}

void heat(std::span<double> u, std::size_t n, std::size_t iterations, double alpha, double wall,
          std::vector<double>& residuals) {
  std::vector<double> next(u.size());
  residuals.clear();
  auto at = [&](std::ptrdiff_t x, std::ptrdiff_t y) {
    const auto s = static_cast<std::ptrdiff_t>(n);
    return x < 0 || y < 0 || x >= s || y >= s ? wall : u[static_cast<std::size_t>(y) * n + static_cast<std::size_t>(x)];
  };
  for (std::size_t it = 0; it < iterations; ++it) {
    double change = 0;
    for (std::size_t y = 0; y < n; ++y)
      for (std::size_t x = 0; x < n; ++x) {
        const auto sx = static_cast<std::ptrdiff_t>(x), sy = static_cast<std::ptrdiff_t>(y);
        const double here = u[y * n + x];
        const double v = here + alpha * (at(sx, sy - 1) + at(sx, sy + 1) + at(sx - 1, sy) + at(sx + 1, sy) - 4 * here);
        next[y * n + x] = v;
        change = std::max(change, std::fabs(v - here));
      }
    std::copy(next.begin(), next.end(), u.begin());
    residuals.push_back(change);
  }
}

namespace {
// The 3x3 neighbourhood of sobel.cl: rows and columns clamped to the image.
struct Clamped {
  std::span<const cl_uchar> image;
  std::ptrdiff_t side;
  int operator()(std::ptrdiff_t x, std::ptrdiff_t y) const {
    x = std::clamp<std::ptrdiff_t>(x, 0, side - 1);
    y = std::clamp<std::ptrdiff_t>(y, 0, side - 1);
    return image[static_cast<std::size_t>(y * side + x)];
  }
};
}  // namespace

std::size_t sobel(std::span<const cl_uchar> in, std::span<cl_uchar> edges, std::size_t side, unsigned threshold) {
  const auto s = static_cast<std::ptrdiff_t>(side);
  std::vector<cl_uchar> blurred(in.size());
  const Clamped a{in, s};
  for (std::ptrdiff_t y = 0; y < s; ++y)
    for (std::ptrdiff_t x = 0; x < s; ++x) {
      const int sum = a(x - 1, y - 1) + 2 * a(x, y - 1) + a(x + 1, y - 1) + 2 * a(x - 1, y) + 4 * a(x, y) +
                      2 * a(x + 1, y) + a(x - 1, y + 1) + 2 * a(x, y + 1) + a(x + 1, y + 1);
      blurred[static_cast<std::size_t>(y * s + x)] = static_cast<cl_uchar>((sum + 8) / 16);
    }
  const Clamped b{blurred, s};
  std::size_t count = 0;
  for (std::ptrdiff_t y = 0; y < s; ++y)
    for (std::ptrdiff_t x = 0; x < s; ++x) {
      const int gx = (b(x + 1, y - 1) + 2 * b(x + 1, y) + b(x + 1, y + 1)) - (b(x - 1, y - 1) + 2 * b(x - 1, y) + b(x - 1, y + 1));
      const int gy = (b(x - 1, y + 1) + 2 * b(x, y + 1) + b(x + 1, y + 1)) - (b(x - 1, y - 1) + 2 * b(x, y - 1) + b(x + 1, y - 1));
      const bool edge = std::min(std::abs(gx) + std::abs(gy), 255) >= static_cast<int>(threshold);
      edges[static_cast<std::size_t>(y * s + x)] = edge ? 255 : 0;
      count += edge;
    }
  return count;
}

void mandelbrot(std::span<cl_uint> out, std::size_t side, cl_uint max_iter, float re0, float im0, float step) {
  for (std::size_t row = 0; row < side; ++row)
    for (std::size_t x = 0; x < side; ++x) {
      // The same float operations in the same order as the kernel; volatile keeps the compiler
      // from fusing or reordering them (x86-64's baseline has no FMA, but -march=native does).
      const float cr = re0 + step * static_cast<float>(x), ci = im0 + step * static_cast<float>(row);
      volatile float zr = 0.0f, zi = 0.0f;
      cl_uint n = 0;
      while (n < max_iter) {
        const float zr2 = zr * zr, zi2 = zi * zi;
        if (zr2 + zi2 > 4.0f) break;
        volatile float twice = 2.0f * zr;
        const float t = zr2 - zi2 + cr;
        zi = twice * zi + ci;
        zr = t;
        ++n;
      }
      out[row * side + x] = n;
    }
}

}  // namespace sinew::samples::reference
