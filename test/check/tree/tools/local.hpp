// fake tools/local.hpp
#pragma once
