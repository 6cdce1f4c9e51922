// platform/status.cpp — OpenCL status codes by name, and for the codes outside the core standard
// (extensions, vendors' own) what they mean and what to do.
#include "platform/error.hpp"

#include <algorithm>
#include <array>

namespace sinew {
namespace {

// Every code a driver may return beyond the core standard's that names its cause. NVIDIA's
// driver returns -9999 when a kernel accessed an address outside every allocation (CUDA's
// illegal address): the queue is lost with it.
struct KnownStatus {
  int status;
  const char* name;
  const char* meaning;
  const char* advice;
};
constexpr const char* kFindTheAccess =
    "run the tree with SINEW_POISON_CHECK=1 on a PoCL CPU device driven like a GPU "
    "(SINEW_DISCRETE=cpu:0 SINEW_DEVICES=cpu:0): the check names the vector and the element a kernel "
    "reads or writes outside its slice and declared halo; a kernel that indexes by global position "
    "needs Kernel::global_indices(), one that reads its neighbours sinew::halo(v, before, after)";
constexpr std::array kExtensions{
    KnownStatus{-69, "CL_INVALID_PIPE_SIZE", "", ""},
    KnownStatus{-70, "CL_INVALID_DEVICE_QUEUE", "", ""},
    KnownStatus{-71, "CL_INVALID_SPEC_ID", "", ""},
    KnownStatus{-72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED", "", ""},
    KnownStatus{-1000, "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR", "cl_khr_gl_sharing", ""},
    KnownStatus{-1001, "CL_PLATFORM_NOT_FOUND_KHR", "the ICD loader found no OpenCL platform",
                "install an OpenCL driver (an ICD file under /etc/OpenCL/vendors), or check OCL_ICD_VENDORS"},
    KnownStatus{-1057, "CL_DEVICE_PARTITION_FAILED_EXT", "cl_ext_device_fission", ""},
    KnownStatus{-1058, "CL_INVALID_PARTITION_COUNT_EXT", "cl_ext_device_fission", ""},
    KnownStatus{-1059, "CL_INVALID_PARTITION_NAME_EXT", "cl_ext_device_fission", ""},
    KnownStatus{-1092, "CL_EGL_RESOURCE_NOT_ACQUIRED_KHR", "cl_khr_egl_image", ""},
    KnownStatus{-1093, "CL_INVALID_EGL_OBJECT_KHR", "cl_khr_egl_image", ""},
    KnownStatus{-1094, "CL_INVALID_ACCELERATOR_INTEL", "cl_intel_accelerator", ""},
    KnownStatus{-1095, "CL_INVALID_ACCELERATOR_TYPE_INTEL", "cl_intel_accelerator", ""},
    KnownStatus{-1096, "CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL", "cl_intel_accelerator", ""},
    KnownStatus{-1097, "CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL", "cl_intel_accelerator", ""},
    KnownStatus{-1098, "CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL", "cl_intel_va_api_media_sharing", ""},
    KnownStatus{-1099, "CL_INVALID_VA_API_MEDIA_SURFACE_INTEL", "cl_intel_va_api_media_sharing", ""},
    KnownStatus{-1100, "CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL", "cl_intel_va_api_media_sharing", ""},
    KnownStatus{-1101, "CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL", "cl_intel_va_api_media_sharing", ""},
    KnownStatus{-9999, "CL_NV_ILLEGAL_ADDRESS",
                "NVIDIA: a kernel accessed memory outside its buffers (an illegal address); the queue is lost",
                kFindTheAccess},
};

// The core standard's codes with what to do where the name alone does not say.
constexpr std::array kAdvised{
    KnownStatus{-5, "CL_OUT_OF_RESOURCES",
                "the device could not run the command; after a kernel, NVIDIA's driver also reports an access "
                "outside the kernel's buffers this way",
                kFindTheAccess},
    KnownStatus{-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST", "a command it waited for failed",
                "look for the first error of the run's other queues (the command that failed first)"},
};

const KnownStatus* find(int status) {
  auto in = [&](const auto& table) -> const KnownStatus* {
    auto it = std::find_if(table.begin(), table.end(), [&](const KnownStatus& k) { return k.status == status; });
    return it == table.end() ? nullptr : &*it;
  };
  if (const KnownStatus* k = in(kExtensions)) return k;
  return in(kAdvised);
}

}  // namespace

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
    default: break;
  }
  const KnownStatus* k = find(status);
  return k ? k->name : "unknown OpenCL status (outside the standard and its known extensions)";
}

namespace detail {

StatusText status_text(int status) noexcept {
  const KnownStatus* k = find(status);
  if (!k) return {};
  return {k->meaning, k->advice};
}

}  // namespace detail
}  // namespace sinew
