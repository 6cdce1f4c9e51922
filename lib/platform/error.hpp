// platform/error.hpp — turning OpenCL failures into sinew::Error with context.
#pragma once

#include "platform/cl.hpp"

#include <sinew/error.hpp>

#include <string>
#include <type_traits>

namespace sinew::detail {

// What a status means beyond its name, for the codes outside the core standard (vendors'
// extensions: NVIDIA's -9999, ...), and what to do about it; "" where the name says it all.
struct StatusText {
  const char* meaning = "";
  const char* advice = "";
};
StatusText status_text(int status) noexcept;

[[noreturn]] void throw_error(errc code, std::string message, ErrorContext context = {});
// Rethrows a cl::Error (the bindings' exception) as sinew::Error with the given context; a status
// with advice (status_text) gives the fix where the context has none.
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
