// fake public header (platform)
#pragma once
#include <string>
