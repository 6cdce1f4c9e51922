// fake platform/hash.hpp: no OpenCL
#pragma once
#include <cstdint>
