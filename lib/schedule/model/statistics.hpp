// schedule/model/statistics.hpp — the robust centres that training, derivation, the balancer
// and the bench harness summarise times with. One rule for no values: each returns NaN for an
// empty input (no time is not a time of 0 ms); callers that may pass none say what they want then.
#pragma once

#include <vector>

namespace sinew::detail {

// The middle value; of an even count, the mean of the two middle ones. By selection, not a sort
// (the balancer takes medians of up to 96 values many times a run).
double median(std::vector<double> values);

// The q-quantile (q clamped to [0, 1]), linear between the order statistics around
// q * (count - 1): q = 0 the least value, 1 the largest.
double quantile(std::vector<double> values, double q);

// The mean of the middle half (the values beyond the lowest and highest quarter, count / 4 each
// side), and the median of four values or fewer: robust to one run in four that swings far,
// nearer the mean's efficiency than the median over many runs.
double interquartile_mean(std::vector<double> values);

}  // namespace sinew::detail
