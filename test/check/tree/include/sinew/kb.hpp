// fake public header (kb): no OpenCL
#pragma once
#include <sinew/error.hpp>
