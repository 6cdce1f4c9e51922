// fake exec/executor.hpp
#pragma once
#include "decompose/decompose.hpp"
#include <clblast.h>
