// fake tree/nodes.hpp
#pragma once
#include <sinew/tree.hpp>
#include "platform/error.hpp"
