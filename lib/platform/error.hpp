// platform/error.hpp — turning OpenCL failures into sinew::Error with context.
#pragma once

#include "platform/cl.hpp"

#include <sinew/error.hpp>

#include <string>
#include <type_traits>

namespace sinew::detail {

[[noreturn]] void throw_error(errc code, std::string message, ErrorContext context = {});
// Rethrows a cl::Error (the bindings' exception) as sinew::Error with the given context.
[[noreturn]] void throw_cl(const cl::Error& e, ErrorContext context = {});

// Runs f; any cl::Error it throws becomes a sinew::Error carrying `context`.
template <class F>
decltype(auto) cl_call(const ErrorContext& context, F&& f) {
  try {
    return f();
  } catch (const cl::Error& e) {
    throw_cl(e, context);
  }
}

// The same, with the context made only if f fails (`where` returns an ErrorContext): for the
// calls made per partition and per command, where building the strings cost more than the call.
template <class W, class F>
  requires std::is_invocable_r_v<ErrorContext, W>
decltype(auto) cl_call(W&& where, F&& f) {
  try {
    return f();
  } catch (const cl::Error& e) {
    throw_cl(e, where());
  }
}

}  // namespace sinew::detail
