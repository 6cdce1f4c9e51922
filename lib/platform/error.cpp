// platform/error.cpp — error categories, sinew::Error and OpenCL status names.
#include "platform/error.hpp"

#include <sstream>

namespace sinew {

const char* opencl_status_name(int status) noexcept {
  switch (status) {
#define S(x) case x: return #x;
    S(CL_SUCCESS) S(CL_DEVICE_NOT_FOUND) S(CL_DEVICE_NOT_AVAILABLE) S(CL_COMPILER_NOT_AVAILABLE)
    S(CL_MEM_OBJECT_ALLOCATION_FAILURE) S(CL_OUT_OF_RESOURCES) S(CL_OUT_OF_HOST_MEMORY)
    S(CL_PROFILING_INFO_NOT_AVAILABLE) S(CL_MEM_COPY_OVERLAP) S(CL_IMAGE_FORMAT_MISMATCH)
    S(CL_IMAGE_FORMAT_NOT_SUPPORTED) S(CL_BUILD_PROGRAM_FAILURE) S(CL_MAP_FAILURE)
    S(CL_MISALIGNED_SUB_BUFFER_OFFSET) S(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    S(CL_COMPILE_PROGRAM_FAILURE) S(CL_LINKER_NOT_AVAILABLE) S(CL_LINK_PROGRAM_FAILURE)
    S(CL_DEVICE_PARTITION_FAILED) S(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) S(CL_INVALID_VALUE)
    S(CL_INVALID_DEVICE_TYPE) S(CL_INVALID_PLATFORM) S(CL_INVALID_DEVICE) S(CL_INVALID_CONTEXT)
    S(CL_INVALID_QUEUE_PROPERTIES) S(CL_INVALID_COMMAND_QUEUE) S(CL_INVALID_HOST_PTR)
    S(CL_INVALID_MEM_OBJECT) S(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) S(CL_INVALID_IMAGE_SIZE)
    S(CL_INVALID_SAMPLER) S(CL_INVALID_BINARY) S(CL_INVALID_BUILD_OPTIONS) S(CL_INVALID_PROGRAM)
    S(CL_INVALID_PROGRAM_EXECUTABLE) S(CL_INVALID_KERNEL_NAME) S(CL_INVALID_KERNEL_DEFINITION)
    S(CL_INVALID_KERNEL) S(CL_INVALID_ARG_INDEX) S(CL_INVALID_ARG_VALUE) S(CL_INVALID_ARG_SIZE)
    S(CL_INVALID_KERNEL_ARGS) S(CL_INVALID_WORK_DIMENSION) S(CL_INVALID_WORK_GROUP_SIZE)
    S(CL_INVALID_WORK_ITEM_SIZE) S(CL_INVALID_GLOBAL_OFFSET) S(CL_INVALID_EVENT_WAIT_LIST)
    S(CL_INVALID_EVENT) S(CL_INVALID_OPERATION) S(CL_INVALID_GL_OBJECT) S(CL_INVALID_BUFFER_SIZE)
    S(CL_INVALID_MIP_LEVEL) S(CL_INVALID_GLOBAL_WORK_SIZE) S(CL_INVALID_PROPERTY)
    S(CL_INVALID_IMAGE_DESCRIPTOR) S(CL_INVALID_COMPILER_OPTIONS) S(CL_INVALID_LINKER_OPTIONS)
    S(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef S
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL status";
  }
}

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
  std::string message = std::string("OpenCL call failed: ") + opencl_status_name(e.err());
  throw Error(std::error_code(e.err(), opencl_category()), std::move(message), std::move(context));
}

}  // namespace detail
}  // namespace sinew
