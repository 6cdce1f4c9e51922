// samples/common/kernels.hpp — the samples' OpenCL C kernels (samples/kernels/*.cl), embedded into
// the samples at build time (library sinew_sample_kernels; the library embeds only its own).
//
//   auto saxpy = sinew::samples::kernel("saxpy.cl", "saxpy");   // a kernel leaf, as sinew::kernel
//   sinew::reduce::custom_source(pairs, best, sinew::samples::kernel_text("argmax.cl"),
//                                "argmax_pair", identity, "argmax.cl");
//
// Both are the public API over the embedded text: kernel(file, entry) is
// sinew::kernel_source(kernel_text(file), entry, file), so a tree's signature is the same as
// when the text is read from a file. An unknown file throws sinew::Error (errc::io) naming the
// files there are.
#pragma once

#include <sinew/tree.hpp>

#include <string>
#include <vector>

namespace sinew::samples {

// The kernel `entry` of the samples' kernel file `file` (a name such as "filters.cl").
Kernel kernel(const std::string& file, const std::string& entry);
// The text of the samples' kernel file `file`.
const std::string& kernel_text(const std::string& file);
// The names of the samples' kernel files, sorted.
std::vector<std::string> kernel_files();

}  // namespace sinew::samples
