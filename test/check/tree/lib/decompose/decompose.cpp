// fake decompose/decompose.cpp: THE VIOLATION (decompose -> exec)
#include "decompose/decompose.hpp"
#include "exec/executor.hpp"
