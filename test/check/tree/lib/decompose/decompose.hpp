// fake decompose/decompose.hpp
#pragma once
#include "tree/nodes.hpp"
