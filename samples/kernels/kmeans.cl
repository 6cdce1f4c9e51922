// kmeans.cl — Lloyd's k-means on 2D integer points, KMEANS_K clusters, one loop iteration: the
// clusters' sums and counts of the current labels (one struct per unit of points, reduced by
// add_stats), then every point labelled with its nearest centre (sum / count), computed from that
// reduction's value; the changed labels counted. The centres are computed in double from integer
// sums, so every device (and the C++ reference) chooses the same cluster for every point.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF  // the same roundings as the C++ reference: no fused multiply-adds

#ifndef KMEANS_K
#define KMEANS_K 8
#endif

typedef struct {
  int sum_x[KMEANS_K];
  int sum_y[KMEANS_K];
  int count[KMEANS_K];
} kmeans_stats;

kmeans_stats add_stats(kmeans_stats a, kmeans_stats b) {
  for (int c = 0; c < KMEANS_K; ++c) {
    a.sum_x[c] += b.sum_x[c];
    a.sum_y[c] += b.sum_y[c];
    a.count[c] += b.count[c];
  }
  return a;
}

// One work-item per unit of `per_unit` points: that unit's sums and counts by label.
__kernel void kmeans_accumulate(__global const int2* points, __global const uint* labels,
                                __global kmeans_stats* stats, uint per_unit) {
  const uint u = get_global_id(0);
  kmeans_stats s;
  for (int c = 0; c < KMEANS_K; ++c) s.sum_x[c] = s.sum_y[c] = s.count[c] = 0;
  for (uint i = u * per_unit; i < (u + 1) * per_unit; ++i) {
    const uint c = labels[i];
    s.sum_x[c] += points[i].x;
    s.sum_y[c] += points[i].y;
    s.count[c] += 1;
  }
  stats[u] = s;
}

// One work-item per unit: each point's nearest centre (ties to the lower cluster; an empty cluster
// has no centre), the unit's changed labels counted.
__kernel void kmeans_assign(__global const int2* points, __global uint* labels, __global uint* changed,
                            __global const kmeans_stats* stats, uint per_unit) {
  const uint u = get_global_id(0);
  uint moved = 0;
  for (uint i = u * per_unit; i < (u + 1) * per_unit; ++i) {
    uint best = labels[i];
    double best_distance = INFINITY;
    for (int c = 0; c < KMEANS_K; ++c) {
      if (stats->count[c] == 0) continue;
      const double dx = points[i].x - (double)stats->sum_x[c] / stats->count[c];
      const double dy = points[i].y - (double)stats->sum_y[c] / stats->count[c];
      const double d = dx * dx + dy * dy;
      if (d < best_distance) {
        best_distance = d;
        best = (uint)c;
      }
    }
    moved += best != labels[i];
    labels[i] = best;
  }
  changed[u] = moved;
}
