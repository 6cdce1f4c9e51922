// fake public header (tree)
#pragma once
#include <sinew/types.hpp>
