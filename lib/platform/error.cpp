// platform/error.cpp — error categories and sinew::Error (OpenCL status names: status.cpp).
#include "platform/error.hpp"

#include <sstream>

namespace sinew {

namespace {

class OpenclCategory : public std::error_category {
 public:
  const char* name() const noexcept override { return "opencl"; }
  std::string message(int status) const override {
    return std::string(opencl_status_name(status)) + " (" + std::to_string(status) + ")";
  }
};

class SinewCategory : public std::error_category {
 public:
  const char* name() const noexcept override { return "sinew"; }
  std::string message(int e) const override {
    switch (static_cast<errc>(e)) {
      case errc::invalid_tree: return "invalid tree";
      case errc::invalid_argument: return "invalid argument";
      case errc::no_device: return "no usable OpenCL device";
      case errc::build_failure: return "kernel build failure";
      case errc::io: return "input/output failure";
      case errc::library: return "library failure";
      case errc::knowledge_base: return "knowledge base failure";
      case errc::user_code: return "exception from the program's own code";
    }
    return "sinew error " + std::to_string(e);
  }
};

std::string compose(const std::string& message, std::error_code code, const ErrorContext& c) {
  std::ostringstream s;
  s << message << " [" << code.category().name() << ": " << code.message() << "]";
  auto field = [&](const char* label, const std::string& v) {
    if (!v.empty()) s << "\n  " << label << ": " << v;
  };
  field("node", c.node);
  field("argument", c.argument);
  field("device", c.device);
  field("OpenCL call", c.api_call);
  field("kernel file", c.kernel_file);
  field("fix", c.fix);
  if (!c.build_log.empty()) s << "\n  build log:\n" << c.build_log;
  return s.str();
}

}  // namespace

const std::error_category& opencl_category() noexcept {
  static const OpenclCategory c;
  return c;
}
const std::error_category& sinew_category() noexcept {
  static const SinewCategory c;
  return c;
}
std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), sinew_category()}; }

Error::Error(std::error_code code, std::string message, ErrorContext context)
    : std::system_error(code, message), message_(std::move(message)), context_(std::move(context)),
      what_(compose(message_, code, context_)) {}

namespace detail {

void throw_error(errc code, std::string message, ErrorContext context) {
  throw Error(make_error_code(code), std::move(message), std::move(context));
}

void throw_cl(const cl::Error& e, ErrorContext context) {
  if (context.api_call.empty() && e.what()) context.api_call = e.what();
  const StatusText text = status_text(e.err());
  if (context.fix.empty()) context.fix = text.advice;
  std::string message = std::string("OpenCL call failed: ") + opencl_status_name(e.err());
  if (*text.meaning) message += std::string(" (") + text.meaning + ")";
  throw Error(std::error_code(e.err(), opencl_category()), std::move(message), std::move(context));
}

}  // namespace detail
}  // namespace sinew
