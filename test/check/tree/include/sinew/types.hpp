// fake public header (platform): reaches OpenCL
#pragma once
#include <CL/cl_platform.h>
