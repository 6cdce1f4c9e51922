// fake samples/common/sample.hpp (tools-level)
#pragma once
#include <sinew/tree.hpp>
