// sinew/error.hpp — the one error type of Sinew.
//
// Every failure reaches the user as sinew::Error, a std::system_error whose code is either an
// OpenCL status (opencl_category()) or a Sinew condition (sinew_category()). It carries where it
// happened: the OpenCL API call, the tree node, the argument, the device and, for kernel build
// failures, the kernel file and the full build log. Errors raised while a request runs reach the
// caller through the request's future.
#pragma once

#include <string>
#include <system_error>

namespace sinew {

/// Conditions that are not OpenCL status codes.
enum class errc {
  invalid_tree = 1,   ///< the tree is malformed (empty pipeline, loop without predicate, ...)
  invalid_argument,   ///< an argument or binding does not fit its kernel or its vector
  no_device,          ///< no OpenCL platform, or no device matches the selection
  build_failure,      ///< a kernel did not compile; build_log() holds the compiler's output
  io,                 ///< a file could not be read or written
  library,            ///< CLBlast or clFFT reported a failure
  knowledge_base,     ///< the knowledge base could not be used
};

/// The category of OpenCL status codes (CL_OUT_OF_RESOURCES, ...): their names as messages.
const std::error_category& opencl_category() noexcept;
/// The category of Sinew's own conditions (errc).
const std::error_category& sinew_category() noexcept;
/// `e` in sinew_category(), so that an errc compares with an Error's code().
std::error_code make_error_code(errc e) noexcept;

/// Where an error happened; every field is optional.
struct ErrorContext {
  std::string api_call;     ///< e.g. "clEnqueueNDRangeKernel"
  std::string node;         ///< tree node path, e.g. "pipeline/kernel 'solarise'"
  std::string argument;     ///< e.g. "argument 1 'threshold'"
  std::string device;       ///< device name
  std::string kernel_file;  ///< for build failures
  std::string build_log;    ///< for build failures
  std::string fix;          ///< what the user can do about it
};

/// The one exception Sinew throws: a std::system_error (code() in opencl_category() or
/// sinew_category()) that says where it happened and what to do about it.
class Error : public std::system_error {
 public:
  /// An error with `code`, a one-line `message` and what is known of where it happened.
  Error(std::error_code code, std::string message, ErrorContext context = {});

  /// Where it happened.
  const ErrorContext& context() const noexcept { return context_; }
  /// The one-line message, without the context.
  const std::string& message() const noexcept { return message_; }
  /// The OpenCL call that failed ("" when none did).
  const std::string& api_call() const noexcept { return context_.api_call; }
  /// The tree node's path ("" when no node is concerned).
  const std::string& node() const noexcept { return context_.node; }
  /// The argument concerned, e.g. "argument 1 'threshold'".
  const std::string& argument() const noexcept { return context_.argument; }
  /// The device's name ("" when no device is concerned).
  const std::string& device() const noexcept { return context_.device; }
  /// A kernel's full build log (errc::build_failure).
  const std::string& build_log() const noexcept { return context_.build_log; }
  /// The message, the condition, then every known field of the context, one per line.
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string message_;
  ErrorContext context_;
  std::string what_;
};

/// The symbolic name of an OpenCL status code, e.g. "CL_OUT_OF_RESOURCES".
const char* opencl_status_name(int status) noexcept;

}  // namespace sinew

/// \cond INTERNAL
template <>
struct std::is_error_code_enum<sinew::errc> : std::true_type {};
/// \endcond
