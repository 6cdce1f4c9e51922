// fake platform/error.hpp: OpenCL through platform/cl.hpp
#pragma once
#include "platform/cl.hpp"
#include <sinew/error.hpp>
