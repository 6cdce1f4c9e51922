// pagerank.cl — PageRank by power iteration on a graph given as CSR of in-links, nodes (rows)
// partitioned; the ranks and out-degrees are read whole by the update. One iteration: the dangling
// nodes' rank mass (a reduction), then every node's new rank, which takes that mass spread over
// every node as a value, and its change (reduced to the iteration's L1 change); the new ranks
// become the ranks.

// The rank held by nodes without out-links (spread over every node by the update).
__kernel void pagerank_dangling(__global const float* rank, __global const uint* out_degree, __global float* mass) {
  const uint i = get_global_id(0);
  mass[i] = out_degree[i] == 0 ? rank[i] : 0.0f;
}

// next[i] = (1 - d) / n + d * (sum over in-links u of rank[u] / out_degree[u] + dangling / n).
__kernel void pagerank_update(__global const int* in_start, __global const int* sources,
                              __global const float* rank, __global const uint* out_degree,
                              __global float* next, __global float* change, __global const float* dangling,
                              uint first, uint count, uint n, float damping) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  const uint node = first + i;
  float sum = 0.0f;
  for (int k = in_start[node]; k < in_start[node + 1]; ++k) sum += rank[sources[k]] / (float)out_degree[sources[k]];
  const float value = (1.0f - damping) / (float)n + damping * (sum + dangling[0] / (float)n);
  next[i] = value;
  change[i] = fabs(value - rank[node]);
}
