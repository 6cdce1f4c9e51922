// samples/common/descriptors.hpp — the typed descriptors of the benchmark samples (and of the
// histogram sample, which is no benchmark).
//
// Each class is the one description of its benchmark: its parameters, its tree, its input data,
// its C++ reference and its check. The sample programs set parameters from their flags; tests,
// benchmarks and training reach the same classes by name through sample.hpp's registry.
// Change a `params` field, then call prepare() again for it to take effect.
#pragma once

#include "common/sample.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sinew::samples {

// What every descriptor shares: size, tree, the run/check sequence.
class SampleBase : public Sample {
 public:
  std::size_t size() const override { return size_; }
  const Node& tree() const override { return tree_; }
  Report run(Runtime& rt, const RunOptions& options = {}) override;
  Check check() override;

 protected:
  // Checks the outputs of the last run; only called after a run.
  virtual Check compare() = 0;
  // Called by prepare(): forget the previous run and reference.
  void reset_state(std::size_t size);

  std::size_t size_ = 0;
  Node tree_;
  bool ran_ = false;
};

// ---------------------------------------------------------------------------------------------
// Filter Pipeline (paper §4): Gaussian noise -> solarise -> mirror on an RGBA image, in place.
// Pipeline skeleton; unit of partitioning = one image line. Integer kernels: bit-exact.
struct FilterPipelineParams {
  std::size_t side = 1024;   // width, pixels; even (mirror swaps pixel pairs)
  std::size_t height = 0;    // lines; 0: side (a square image)
  cl_int noise_factor = 16;  // standard deviation of the noise, in 0..255 levels
  cl_int threshold = 192;    // solarise: channels >= threshold are inverted
  cl_uint seed = 2024;       // noise seed
};

class FilterPipeline final : public SampleBase {
 public:
  explicit FilterPipeline(FilterPipelineParams p = {}) : params(p) {}
  FilterPipelineParams params;

  std::string name() const override { return "filter_pipeline"; }
  std::string description() const override;
  std::string size_unit() const override { return "pixels: N for N x N, or WIDTHxHEIGHT"; }
  Sizes sizes() const override { return {64, 1024, 4096}; }
  // prepare(N): an N x N image; prepare("WxH"): W pixels wide, H lines (params.side, .height).
  using SampleBase::prepare;
  void prepare(std::size_t size) override;
  std::string size_text() const override;
  std::size_t width() const { return size_; }
  std::size_t height() const { return height_; }
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 2 * input_.size() * sizeof(cl_uchar4); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  const std::vector<cl_uchar4>& input() const { return input_; }
  const std::vector<cl_uchar4>& output() const { return image_; }

 protected:
  Check compare() override;
  void prepare_text(const std::string& size) override;
  std::uint64_t host_bytes_text(const std::string& size) const override;

 private:
  struct Shape {
    std::size_t width = 0, height = 0;
  };
  // The image prepare(size) makes (size 0: params' shape), checked; throws std::invalid_argument.
  Shape shape_for(std::size_t size) const;
  static void check_shape(const Shape& shape);
  // "WIDTHxHEIGHT" read (not yet checked); throws std::invalid_argument naming the forms.
  static Shape read_shape(const std::string& size);
  static std::uint64_t shape_bytes(const Shape& shape);

  std::size_t height_ = 0;
  Vector<cl_uchar4> img_;
  std::vector<cl_uchar4> input_, image_;
  std::optional<std::vector<cl_uchar4>> expected_;
};

// ---------------------------------------------------------------------------------------------
// FFT (paper §4): a batch of 1D complex FFTs, forward then inverse (Pipeline of two clFFT
// leaves); unit of partitioning = one transform (65536 points = 512 KB by default). The round
// trip must give the input back: max |out - in| / max |in| <= 1e-3. With roundtrip = false the
// tree is the forward transform alone, checked against a double-precision radix-2 FFT:
// max |out - ref| / max |ref| <= 1e-4 (length must then be a power of two).
struct FftParams {
  std::size_t transforms = 64;  // number of transforms (64 x 512 KB = 32 MB)
  std::size_t length = 65536;   // points per transform: a product of 2, 3, 5, 7, 11, 13
  bool roundtrip = true;
};

class Fft final : public SampleBase {
 public:
  explicit Fft(FftParams p = {}) : params(p) {}
  FftParams params;

  std::string name() const override { return "fft"; }
  std::string description() const override;
  std::string size_unit() const override;
  Sizes sizes() const override { return {4, 64, 1024}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 2 * input_.size() * sizeof(cl_float2); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  const std::vector<cl_float2>& input() const { return input_; }
  const std::vector<cl_float2>& output() const { return data_; }

 protected:
  Check compare() override;

 private:
  // The number of transforms prepare(size) makes, with the parameters checked.
  std::size_t transforms_for(std::size_t size) const;

  Vector<cl_float2> vec_;
  std::vector<cl_float2> input_, data_;
  std::optional<std::vector<cl_float2>> expected_;  // forward-only mode
};

// ---------------------------------------------------------------------------------------------
// N-Body (paper §4): `steps` direct-sum steps in a Loop. Positions are replicated to every device
// (sinew::whole); each device advances its slice of bodies into `newpos`, then copy(newpos, pos)
// brings the step's result back into the replicated vector. Unit = one body. Single precision,
// checked against a double-precision reference: the largest position error over the largest
// displacement, and the largest velocity error over the largest speed, must be <= 1e-3 (positions
// may in addition differ by the float rounding of `steps` updates, steps * FLT_EPSILON * |pos|).
struct NbodyParams {
  std::size_t bodies = 4096;
  std::size_t steps = 10;
  float dt = 0.01f;
  float softening = 0.05f;  // eps; the kernel adds eps^2 to every squared distance
  std::uint32_t seed = 7;
};

class Nbody final : public SampleBase {
 public:
  explicit Nbody(NbodyParams p = {}) : params(p) {}
  NbodyParams params;

  std::string name() const override { return "nbody"; }
  std::string description() const override;
  std::string size_unit() const override { return "bodies"; }
  Sizes sizes() const override { return {256, 4096, 65536}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 4 * pos0_.size() * sizeof(cl_float4); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  const std::vector<cl_float4>& positions() const { return pos_; }
  const std::vector<cl_float4>& velocities() const { return vel_; }

 protected:
  Check compare() override;

 private:
  // The number of bodies prepare(size) makes, with the parameters checked.
  std::size_t bodies_for(std::size_t size) const;

  Vector<cl_float4> pos_v_, vel_v_, newpos_v_;
  std::vector<cl_float4> pos0_, vel0_, pos_, vel_;
  std::optional<std::vector<cl_float4>> expected_pos_, expected_vel_;
};

// ---------------------------------------------------------------------------------------------
// Saxpy (paper §4): y = a*x + y over float vectors, a Map. mode "kernel" runs saxpy.cl, mode
// "blas" CLBlast's axpy. Unit = one element. Error per element: |got - ref| / (|a*x| + |y|),
// accepted up to 4 * FLT_EPSILON (the kernel uses fma and is normally exact).
struct SaxpyParams {
  std::size_t elements = 1000000;
  float a = 2.5f;
  std::string mode = "kernel";  // "kernel" | "blas"
  std::uint32_t seed = 11;
};

class Saxpy final : public SampleBase {
 public:
  explicit Saxpy(SaxpyParams p = {}) : params(std::move(p)) {}
  SaxpyParams params;

  // "saxpy", or "saxpy_blas" in blas mode (the registry knows both).
  std::string name() const override;
  std::string description() const override;
  std::string size_unit() const override { return "elements"; }
  Sizes sizes() const override { return {65536, 1000000, 50000000}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 3 * x_.size() * sizeof(cl_float); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;
  bool use_pinned_memory(Runtime& rt) override {
    pinned_from_ = &rt;
    return true;
  }

  std::span<const cl_float> output() const { return y_; }

 protected:
  Check compare() override;

 private:
  // The number of elements prepare(size) makes, with the parameters checked.
  std::size_t elements_for(std::size_t size) const;

  Vector<cl_float> x_v_, y_v_;
  std::vector<cl_float> y0_;
  Runtime* pinned_from_ = nullptr;
  std::vector<cl_float> x_vec_, y_vec_;        // the bound data, in ordinary memory ...
  PinnedVector<cl_float> x_pin_, y_pin_;       // ... or in pinned memory
  std::span<cl_float> x_, y_;                  // whichever is in use
};

// ---------------------------------------------------------------------------------------------
// Prefix sum: sinew::scan of a float vector into a second one (the input is kept), inclusive or
// exclusive. Unit = one element. Each device scans its slice, the slices' totals meet on the
// host and a second pass adds each slice's carry. Checked against a double-precision scan:
// max |got - ref| / (the sum of |x| over the elements combined), accepted up to 1e-5 (float
// rounding grows with the depth of the scan's combination tree, a few dozen operations).
struct PrefixSumParams {
  std::size_t elements = 1000000;
  bool exclusive = false;
  std::uint32_t seed = 17;
};

class PrefixSum final : public SampleBase {
 public:
  explicit PrefixSum(PrefixSumParams p = {}) : params(p) {}
  PrefixSumParams params;

  std::string name() const override { return "prefix_sum"; }
  std::string description() const override;
  std::string size_unit() const override { return "elements"; }
  Sizes sizes() const override { return {100003, 1000000, 100000000}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 2 * x_.size() * sizeof(cl_float); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  std::span<const cl_float> output() const { return y_; }

 protected:
  Check compare() override;

 private:
  std::size_t elements_for(std::size_t size) const;

  Vector<cl_float> x_v_, y_v_;
  std::vector<cl_float> x_, y_;
};

// ---------------------------------------------------------------------------------------------
// Mergesort (sinew::divide_and_conquer, the HPU paper's example): keys sorted in place, leaves
// by a bitonic network in local memory, levels by a parallel k-way merge (kernels/mergesort.cl).
// Check: equal to std::sort of the same keys, element for element. `key`: "uint" or "float".
struct MergesortParams {
  std::size_t elements = 1 << 20;
  std::string key = "uint";
  std::size_t fanout = 2;
  std::size_t leaf_size = 1024;  // a power of two (the bitonic leaf); 1024 keys fit any local memory
  std::uint32_t seed = 5;
};

class Mergesort final : public SampleBase {
 public:
  explicit Mergesort(MergesortParams p = {}) : params(p) {}
  MergesortParams params;

  std::string name() const override { return params.key == "float" ? "mergesort_float" : "mergesort"; }
  std::string description() const override;
  std::string size_unit() const override { return "keys"; }
  Sizes sizes() const override { return {100003, 1 << 20, std::size_t{1} << 28}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 2 * keys_.size() * 4; }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

 protected:
  Check compare() override;

 private:
  std::size_t elements_for(std::size_t size) const;

  Vector<cl_uint> uint_v_;
  Vector<cl_float> float_v_;
  std::vector<cl_uint> keys_, original_;  // float keys are kept as their bits
  std::vector<cl_uint> sorted_;           // std::sort's order of original_, made by the first compare()
};

// Maximum subarray sum (Bentley's problem; CLRS's divide-and-conquer example) of n floats: every
// element a summary (sum, best prefix, best suffix, best) of one element, joined k at a time; the
// answer is the first element's best. Its combine is one join per subproblem, where mergesort's
// merges every element: the opposite end of the crossover model. Check: Kadane's algorithm in
// double, relative error <= 1e-4 of the sum of |x|.
struct MaxSubarrayParams {
  std::size_t elements = 1 << 20;
  std::size_t fanout = 4;
  std::size_t leaf_size = 256;
  std::uint32_t seed = 11;
};

class MaxSubarray final : public SampleBase {
 public:
  explicit MaxSubarray(MaxSubarrayParams p = {}) : params(p) {}
  MaxSubarrayParams params;

  std::string name() const override { return "max_subarray"; }
  std::string description() const override;
  std::string size_unit() const override { return "elements"; }
  Sizes sizes() const override { return {100003, 1 << 20, std::size_t{1} << 26}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return summaries_.size() * sizeof(cl_float4); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

 protected:
  Check compare() override;

 private:
  std::size_t elements_for(std::size_t size) const;

  Vector<cl_float4> v_;
  std::vector<cl_float> x_;
  std::vector<cl_float4> summaries_;
};

// ---------------------------------------------------------------------------------------------
// Segmentation (paper §4): a 3D grey image (width x height x depth uchar voxels) classified by
// two thresholds into 0 / 128 / 255, a Map. Unit = one z-slice (width*height voxels), kernel
// range dims(3, width). Integer kernel: bit-exact. `size` counts voxels (= bytes); the plane is
// 256 x 256 for volumes of at least 8 slices of it, else 64 x 64, unless params set it.
struct SegmentationParams {
  std::size_t voxels = 8u << 20;  // 8 MB
  std::size_t width = 0;          // 0: chosen from the size as above; must be a multiple of 4
  std::size_t height = 0;
  cl_uchar lo = 85, hi = 170;
  std::uint32_t seed = 3;
};

class Segmentation final : public SampleBase {
 public:
  explicit Segmentation(SegmentationParams p = {}) : params(p) {}
  SegmentationParams params;

  std::string name() const override { return "segmentation"; }
  std::string description() const override;
  std::string size_unit() const override { return "voxels (bytes)"; }
  Sizes sizes() const override { return {64 * 64 * 16, 8u << 20, 60u << 20}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 2 * in_.size(); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  std::size_t width() const { return width_; }
  std::size_t height() const { return height_; }
  const std::vector<cl_uchar>& output() const { return out_; }

 protected:
  Check compare() override;

 private:
  struct Volume {
    std::size_t voxels = 0, width = 0, height = 0;
  };
  // The volume prepare(size) makes (size 0: params' voxels), checked.
  Volume volume_for(std::size_t size) const;

  Vector<cl_uchar> in_v_, out_v_;
  std::vector<cl_uchar> in_, out_;
  std::size_t width_ = 0, height_ = 0;
  std::optional<std::vector<cl_uchar>> expected_;
};

// ---------------------------------------------------------------------------------------------
// Histogram: the 64-bin histogram of an 8-bit grey image (width x height), one map_reduce over a
// struct type. Each work-item counts one row into a 64-bin partial histogram (a struct of 64
// cl_uint, unit = one row); a custom reducer (histogram_add, given as source text) adds them bin
// by bin into the image's histogram. Integer counts: bit-exact.
struct HistogramParams {
  std::size_t side = 2048;   // width, pixels
  std::size_t height = 0;    // rows; 0: as many as the width (a square image)
  std::uint32_t seed = 5;
};

class Histogram final : public SampleBase {
 public:
  struct Bins {  // histogram64 in histogram.cl
    cl_uint bins[64];
  };

  explicit Histogram(HistogramParams p = {}) : params(p) {}
  HistogramParams params;

  std::string name() const override { return "histogram"; }
  std::string description() const override;
  std::string size_unit() const override { return "image side (pixels): N for N x N"; }
  Sizes sizes() const override { return {64, 2048, 8192}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return image_.size(); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  const std::vector<cl_uchar>& image() const { return image_; }
  const Bins& output() const { return got_; }

 protected:
  Check compare() override;

 private:
  struct Shape {
    std::size_t width = 0, height = 0;
  };
  Shape shape_for(std::size_t size) const;

  Vector<cl_uchar> image_v_;
  std::vector<cl_uchar> image_;
  std::size_t width_ = 0;
  Result<Bins> total_;
  Bins got_{};
  std::optional<Bins> expected_;
};


// ---------------------------------------------------------------------------------------------
// Heat (issue 17): `iterations` Jacobi sweeps of the 2D heat equation on a side x side float grid
// whose edges are held at the fixed temperature `wall`, in a Loop that also stops once the
// largest change of a sweep falls below `tolerance`. Unit = one grid row. The sweep reads u with
// sinew::halo(u, 1, 1, wall) (Boundary::constant: the rows beyond the top and bottom edges are
// the wall), writes unew and a per-row max |unew - u| that a map_reduce reduces with
// reduce::max; copy(unew, u) closes the iteration, so between devices only the halo rows move.
// Checked against a double-precision reference run for as many iterations as the devices ran:
// max |u - ref| / max |u0| <= 8 * FLT_EPSILON * (iterations + 1) (Jacobi with alpha <= 1/4 does
// not amplify errors, so each sweep adds at most a few roundings of the largest temperature).
struct HeatParams {
  std::size_t side = 1024;     // grid side, cells
  std::size_t iterations = 0;  // most sweeps; 0: the size's own (default_iterations)
  float alpha = 0.2f;          // diffusion number dt*k/dx^2, in (0, 1/4] for stability
  float wall = 0.0f;           // the edges' fixed temperature
  float tolerance = 1e-4f;     // stop once max |unew - u| < tolerance (0: never early)
  std::uint32_t seed = 5;
};

// heat.cl's one Jacobi sweep over an n x n grid, as Heat's loop and Stencil2d's runs use it: reads
// `u` with a halo of one row at the wall temperature (every edge held at `wall`), writes `unew`
// and each row's max |unew - u| into `rowdiff`; one work-group per row.
Kernel heat_sweep(const Vector<cl_float>& u, const Vector<cl_float>& unew, const Vector<cl_float>& rowdiff,
                  std::size_t n, float alpha, float wall);
// Heat sweeps' grid `u` against the double reference `ref`: the largest |u - ref| / scale (a NaN
// ends the search and is the answer), the cell where, and the scale: max |u0| and |wall|, 1 where
// both are 0. As Heat and Stencil2d check their results.
struct HeatError {
  double max = 0;
  std::size_t worst = 0;
  double scale = 1;
};
HeatError heat_error(std::span<const cl_float> u, std::span<const double> ref, std::span<const cl_float> u0, float wall);

class Heat final : public SampleBase {
 public:
  explicit Heat(HeatParams p = {}) : params(p) {}
  HeatParams params;

  std::string name() const override { return "heat"; }
  std::string description() const override;
  std::string size_unit() const override { return "grid side: N for N x N cells"; }
  Sizes sizes() const override { return {64, 1024, 2048}; }
  // The sweeps a size runs unless params.iterations says otherwise: 100 up to 64, 200 up to
  // 1024, 500 beyond (2048 x 2048 for 500 iterations is the benchmark of issue 17).
  static std::size_t default_iterations(std::size_t side);
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 2 * u_.size() * sizeof(cl_float); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  const std::vector<cl_float>& output() const { return u_; }
  // Of the last run: the sweeps it made and the last sweep's max |unew - u|.
  std::size_t iterations_run() const { return sweeps_->count; }
  float residual() const { return residual_; }

 protected:
  Check compare() override;

 private:
  std::size_t side_for(std::size_t size) const;

  Vector<cl_float> u_v_, unew_v_, rowdiff_v_;
  Result<cl_float> residual_r_;
  std::vector<cl_float> u0_, u_;
  std::size_t max_iterations_ = 0;
  // Counted by the loop predicate, which runs once after every sweep; shared with the tree. The
  // runtime may run the tree before the run that bindings() was made for (training, or the
  // screening of a device's levels on a pinned run's first use, on copies of the data): a sweep
  // whose max change is above the last one's, or equals the first one's, starts another run (the
  // explicit scheme with fixed walls is a convex combination of neighbours, and so are the changes
  // of one sweep to the next: within a run they never grow) and the count starts over.
  struct Sweeps {
    std::size_t count = 0;
    cl_float first = 0, last = 0;
  };
  std::shared_ptr<Sweeps> sweeps_ = std::make_shared<Sweeps>();
  cl_float residual_ = 0;
  std::size_t checked_iterations_ = 0;  // the iterations `expected_` is for
  std::optional<std::vector<double>> expected_;
  std::vector<double> expected_residuals_;  // max |unew - u| of each reference sweep
};

// ---------------------------------------------------------------------------------------------
// Sobel (issue 17): an 8-bit grey image through blur (3x3 binomial) -> Sobel (|gx| + |gy|) ->
// threshold, a Pipeline whose last stage is a map_reduce counting the edge pixels
// (reduce::sum of per-row counts). Unit = one image row. Blur and Sobel read with
// sinew::halo(v, 1, 1, Boundary::clamp); the blurred image is a channel the blur writes on each
// device, so the Sobel stage gets its halo rows from the neighbouring partitions. Integer kernels:
// the edge image and the count are bit-exact.
struct SobelParams {
  std::size_t side = 1024;   // width and height, pixels
  cl_uint threshold = 96;    // an edge: |gx| + |gy| >= threshold (of 0..255, saturated)
  std::uint32_t seed = 9;
};

class Sobel final : public SampleBase {
 public:
  explicit Sobel(SobelParams p = {}) : params(p) {}
  SobelParams params;

  std::string name() const override { return "sobel"; }
  std::string description() const override;
  std::string size_unit() const override { return "image side: N for N x N pixels"; }
  Sizes sizes() const override { return {64, 1024, 4096}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 2 * in_.size(); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  const std::vector<cl_uchar>& edges() const { return edges_; }
  cl_uint edge_count() const { return count_; }

 protected:
  Check compare() override;

 private:
  std::size_t side_for(std::size_t size) const;

  Vector<cl_uchar> in_v_, blurred_v_, magnitude_v_, edges_v_;
  Vector<cl_uint> counts_v_;
  Result<cl_uint> count_r_;
  std::vector<cl_uchar> in_, edges_;
  cl_uint count_ = 0;
  std::optional<std::vector<cl_uchar>> expected_;
  std::size_t expected_count_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Mandelbrot (issue 18): escape-time counts of a side x side image over a view whose upper half
// holds the set, so a row's cost depends on where it is (the lower rows escape at once): the
// irregular work the dynamic schedule (schedule=dynamic) deals out as the devices get ready. One
// kernel leaf; unit of partitioning = one image row. Float arithmetic without contraction on both
// sides: bit-exact.
struct MandelbrotParams {
  std::size_t side = 2048;
  cl_uint max_iter = 512;
};

class Mandelbrot final : public SampleBase {
 public:
  explicit Mandelbrot(MandelbrotParams p = {}) : params(p) {}
  MandelbrotParams params;

  std::string name() const override { return "mandelbrot"; }
  std::string description() const override;
  std::string size_unit() const override { return "image side: N for N x N pixels"; }
  Sizes sizes() const override { return {64, 2048, 8192}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return out_.size() * sizeof(cl_uint); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  const std::vector<cl_uint>& iterations() const { return out_; }
  // The view: pixel (x, row) is re0 + step * x + i (im0 + step * row).
  static constexpr float kRe0 = -2.6f, kIm0 = -1.25f, kSpan = 5.0f;

 protected:
  Check compare() override;

 private:
  std::size_t side_for(std::size_t size) const;

  Vector<cl_uint> out_v_;
  std::vector<cl_uint> out_;
  std::optional<std::vector<cl_uint>> expected_;
};

// ---------------------------------------------------------------------------------------------
// Stencil2d (issue 18, Tascell's 5-point 2D stencil): `sweeps` Jacobi sweeps of the heat plate,
// each one run of a tree that reads the grid with a halo of one row and writes the next grid
// (heat.cl's heat_sweep, with a map_reduce max of the sweep's change), the two grids swapped
// between runs. A sweep's partitions read only the grid its run does not write, so they are
// independent and the dynamic schedule may deal its rows out; the heat sample's loop, whose
// sweeps exchange halos inside one tree, may not. Checked as the heat sample is, against
// double-precision sweeps.
struct Stencil2dParams {
  std::size_t side = 1024;    // grid side, cells
  std::size_t sweeps = 20;    // runs of the one-sweep tree
  float alpha = 0.2f;         // as HeatParams
  float wall = 0.0f;
  std::uint32_t seed = 5;
};

class Stencil2d final : public SampleBase {
 public:
  explicit Stencil2d(Stencil2dParams p = {}) : params(p) {}
  Stencil2dParams params;

  std::string name() const override { return "stencil2d"; }
  std::string description() const override;
  std::string size_unit() const override { return "grid side: N for N x N cells"; }
  Sizes sizes() const override { return {64, 1024, 4096}; }
  void prepare(std::size_t size) override;
  // The first sweep's bindings (the starting plate into the other grid); run() makes the rest.
  std::vector<Binding> bindings() override;
  // params.sweeps runs of the tree, the grids swapped between them: the last run's Report, its
  // wall time the runs' sum.
  Report run(Runtime& rt, const RunOptions& options = {}) override;
  std::size_t bytes() const override { return 2 * a_.size() * sizeof(cl_float); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  // The grid after the last run's sweeps, and that sweep's max |unew - u|.
  const std::vector<cl_float>& output() const { return swept_ % 2 ? b_ : a_; }
  float residual() const { return residual_; }

 protected:
  Check compare() override;

 private:
  std::size_t side_for(std::size_t size) const;
  std::vector<Binding> sweep_bindings(std::size_t sweep);

  Vector<cl_float> u_v_, unew_v_, rowdiff_v_;
  Result<cl_float> residual_r_;
  std::vector<cl_float> u0_, a_, b_;
  std::size_t swept_ = 0;  // sweeps of the last run
  cl_float residual_ = 0;
  std::size_t checked_sweeps_ = 0;
  std::optional<std::vector<double>> expected_;
  std::vector<double> expected_residuals_;
};

// ---------------------------------------------------------------------------------------------
// Matmul (issue 18, a Tascell workload): C = A * B, n x n single precision, one CLBlast gemm leaf
// per chunk of rows (A and C partitioned by rows, one row per unit; B whole on every device). With
// the dynamic schedule each chunk is a block of rows, at least min_chunk of them. Checked against
// a double-precision product, within 2 n FLT_EPSILON of the sum of |a_ij b_jk| per element.
struct MatmulParams {
  std::size_t n = 1024;
  std::uint32_t seed = 18;
};

class Matmul final : public SampleBase {
 public:
  explicit Matmul(MatmulParams p = {}) : params(p) {}
  MatmulParams params;

  std::string name() const override { return "matmul"; }
  std::string description() const override;
  std::string size_unit() const override { return "matrix side: N for N x N matrices"; }
  Sizes sizes() const override { return {64, 1024, 2048}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 3 * a_.size() * sizeof(cl_float); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

 protected:
  Check compare() override;

 private:
  std::size_t side_for(std::size_t size) const;

  Vector<cl_float> a_v_, b_v_, c_v_;
  std::vector<cl_float> a_, b_, c_;
  std::optional<std::vector<double>> expected_, magnitude_;
};

// The check of a product C = A * B of n x n matrices against a double-precision one (computed
// into `expected` and `magnitude`, the sum of |a_ij b_jk| per element, when they are empty):
// within 2 n FLT_EPSILON of the magnitude per element. Matmul's and Blockmm's.
Check check_product(std::size_t n, const std::vector<cl_float>& a, const std::vector<cl_float>& b,
                    const std::vector<cl_float>& c, std::optional<std::vector<double>>& expected,
                    std::optional<std::vector<double>>& magnitude);

// ---------------------------------------------------------------------------------------------
// Block matrix product (issue 43, Tascell's recursive block matmul): C = A * B, n x n single
// precision, over blocks of `block` rows (A and C partitioned by rows, granule `block` rows; B
// whole on every device), with per-device kernel variants (sinew::variants): CLBlast's gemm on
// GPU partitions, blocked_gemm (kernels/blockmm.cl: block x block tiles in local memory) on CPU
// partitions. Under schedule=steal a queue runs its block rows in pieces and idle queues steal
// the upper half of what another has left, block rows at a time: the paper's recursive halving.
// `variants` "both" (the default), or "gemm" / "blocked" for one implementation everywhere (the
// comparison). Checked as Matmul: within 2 n FLT_EPSILON of sum |a_ij b_jk| per element, whichever
// variant computed it (the variants' stated tolerance).
struct BlockmmParams {
  std::size_t n = 1024;
  std::size_t block = 16;           // rows per block and the CPU kernel's tile side; divides n
  std::string variants = "both";    // both, gemm or blocked
  std::uint32_t seed = 43;
};

class Blockmm final : public SampleBase {
 public:
  explicit Blockmm(BlockmmParams p = {}) : params(p) {}
  BlockmmParams params;

  std::string name() const override { return "blockmm"; }
  std::string description() const override;
  std::string size_unit() const override { return "matrix side: N for N x N matrices, a multiple of the block"; }
  Sizes sizes() const override { return {64, 1024, 4096}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 3 * a_.size() * sizeof(cl_float); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

 protected:
  Check compare() override { return check_product(size_, a_, b_, c_, expected_, magnitude_); }

 private:
  std::size_t side_for(std::size_t size) const;

  Vector<cl_float> a_v_, b_v_, c_v_;
  std::vector<cl_float> a_, b_, c_;
  std::optional<std::vector<double>> expected_, magnitude_;
};

// ---------------------------------------------------------------------------------------------
// Hotspot (issue 40, Rodinia's HotSpot): the thermal simulation of a chip, `iterations` time steps
// over a side x side grid of temperatures heated by a power map, its kernel (hotspot.cl) written
// for the whole grid as the suite writes it (global row and column, boundary tests on them) and
// run unchanged with Kernel::global_indices(): loop(pipeline(hotspot_step(halo(temp, 1, 1),
// in(power) -> out(next)), copy(next, temp))). Checked against a double-precision reference,
// within 8 FLT_EPSILON x (steps + 1) of max |temp|.
struct HotspotParams {
  std::size_t side = 1024;
  std::size_t iterations = 0;  // 0: 20 up to a side of 64, else 100
  std::uint32_t seed = 40;
};

// The chip's constants per grid cell, as Rodinia's HotSpot derives them from its 16 mm x 16 mm,
// 0.5 mm thick chip and the grid's side.
struct HotspotCoefficients {
  float step_div_cap = 0, rx_inv = 0, ry_inv = 0, rz_inv = 0, amb = 80.0f;
  static HotspotCoefficients of(std::size_t rows, std::size_t cols);
};

class Hotspot final : public SampleBase {
 public:
  explicit Hotspot(HotspotParams p = {}) : params(p) {}
  HotspotParams params;

  std::string name() const override { return "hotspot"; }
  std::string description() const override;
  std::string size_unit() const override { return "grid side: N for N x N cells"; }
  Sizes sizes() const override { return {64, 1024, 4096}; }
  static std::size_t default_iterations(std::size_t side) { return side <= 64 ? 20 : 100; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 2 * temp_.size() * sizeof(cl_float); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

  // The time steps a run makes, the starting temperatures and the power map (for hand-written
  // baselines over the same data), the last run's temperatures.
  std::size_t iterations() const { return iterations_; }
  const std::vector<cl_float>& start() const { return temp0_; }
  const std::vector<cl_float>& power() const { return power_; }
  std::vector<cl_float>& output() { return temp_; }
  // A grid of temperatures after iterations() steps from start() against the reference.
  Check compare_grid(const std::vector<cl_float>& grid);

 protected:
  Check compare() override { return compare_grid(temp_); }

 private:
  std::size_t side_for(std::size_t size) const;

  Vector<cl_float> temp_v_, power_v_, next_v_;
  std::vector<cl_float> temp0_, temp_, power_;
  std::size_t iterations_ = 0;
  std::optional<std::vector<double>> expected_;
};

// Periodic (issue 40): diffusion on a grid periodic in y, as a simulation code steps it in two
// kernels (periodic.cl): the stencil over the interior rows (global indices, a halo of one row),
// then the ghost rows refreshed from the opposite edge, a leaf that writes rows other than its own
// and so runs whole (Kernel::whole_range()): each step the stencil runs split by the plan, then
// wrap runs as one partition on the plan's whole device, `next` gathered from the partitions and
// scattered back before the next step's halo exchange:
// loop(pipeline(diffuse(halo(u, 1, 1) -> out(next)), wrap(inout(next)).whole_range(), copy(next, u))).
// Checked against a double-precision reference, within 8 FLT_EPSILON x (steps + 1) of max |u0|.
struct PeriodicParams {
  std::size_t side = 1024;
  std::size_t steps = 50;
  float k = 0.2f;  // diffusion number, in (0, 0.25]
  std::uint32_t seed = 41;
};

class Periodic final : public SampleBase {
 public:
  explicit Periodic(PeriodicParams p = {}) : params(p) {}
  PeriodicParams params;

  std::string name() const override { return "periodic"; }
  std::string description() const override;
  std::string size_unit() const override { return "grid side: N for N x N cells (two of the rows are ghosts)"; }
  Sizes sizes() const override { return {64, 1024, 4096}; }
  void prepare(std::size_t size) override;
  std::vector<Binding> bindings() override;
  std::size_t bytes() const override { return 2 * u_.size() * sizeof(cl_float); }
  using SampleBase::host_bytes;
  std::uint64_t host_bytes(std::size_t size) const override;

 protected:
  Check compare() override;

 private:
  std::size_t side_for(std::size_t size) const;

  Vector<cl_float> u_v_, next_v_;
  std::vector<cl_float> u0_, u_;
  std::optional<std::vector<double>> expected_;
};

}  // namespace sinew::samples
