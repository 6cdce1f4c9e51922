// fake tools/main.cpp: tools may include everything, samples' headers included
#include <sinew/tree.hpp>
#include "local.hpp"
#include "exec/executor.hpp"
#include "common/sample.hpp"
