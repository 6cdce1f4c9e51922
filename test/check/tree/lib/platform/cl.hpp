// fake platform/cl.hpp
#pragma once
#include <CL/opencl.hpp>
