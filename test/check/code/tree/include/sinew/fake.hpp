// sinew/fake.hpp — a public header whose comments state what holds.
#pragma once

namespace fake {

/// The units of a plan, at least one.
int units();

}  // namespace fake
