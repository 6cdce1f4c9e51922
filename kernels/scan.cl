// scan.cl — the scan behind sinew::scan. The runtime prepends the definitions of SINEW_T (the
// element type) and SINEW_OP(a, b) (sum, min, max or the user's function). SINEW_OP is only
// ever applied as SINEW_OP(earlier, later), so an associative function need not commute.
//
// A partition of n elements is scanned in blocks of k * get_local_size(0) elements, one block per
// work-group (sinew_scan_blocks); the blocks' totals, scanned exclusively the same way (again and
// again until one block holds them all), are combined back into the blocks (sinew_scan_add).
// Once the partitions' totals have met on the host, sinew_scan_carry combines each partition with
// what comes before it.

// A work-group's block: loaded coalesced into `tile`, each work-item folds its k consecutive
// elements, the work-items' folds are scanned in `part` (Blelloch's work-efficient up-sweep and
// down-sweep; the local size is a power of two), and each work-item writes its elements' scans
// back through `tile`, stored coalesced. `sums[group]` gets the block's total.
__kernel void sinew_scan_blocks(__global const SINEW_T* in, __global SINEW_T* out, uint n,
                                __global SINEW_T* sums, __local SINEW_T* tile, __local SINEW_T* part,
                                SINEW_T identity, uint k, uint exclusive) {
  const uint lid = get_local_id(0);
  const uint size = get_local_size(0);
  const uint start = get_group_id(0) * size * k;
  for (uint j = 0; j < k; ++j) {
    const uint i = start + j * size + lid;
    tile[j * size + lid] = i < n ? in[i] : identity;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  SINEW_T acc = tile[lid * k];
  for (uint j = 1; j < k; ++j) acc = SINEW_OP(acc, tile[lid * k + j]);
  part[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = 1; d < size; d <<= 1) {
    const uint right = (lid + 1) * (d << 1) - 1;
    if (right < size) part[right] = SINEW_OP(part[right - d], part[right]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const SINEW_T total = part[size - 1];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) part[size - 1] = identity;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = size >> 1; d > 0; d >>= 1) {
    const uint right = (lid + 1) * (d << 1) - 1;
    if (right < size) {
      const SINEW_T left = part[right - d];
      part[right - d] = part[right];                 // the parent's prefix
      part[right] = SINEW_OP(part[right], left);     // the parent's prefix, then the left subtree
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  SINEW_T run = part[lid];
  for (uint j = 0; j < k; ++j) {
    const SINEW_T next = SINEW_OP(run, tile[lid * k + j]);
    tile[lid * k + j] = exclusive ? run : next;
    run = next;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint j = 0; j < k; ++j) {
    const uint i = start + j * size + lid;
    if (i < n) out[i] = tile[j * size + lid];
  }
  if (lid == 0) sums[get_group_id(0)] = total;
}

// Block g of `data` (blocks as in sinew_scan_blocks) combined with sums[g], the exclusive scan
// of the blocks' totals. Block 0's is the identity: it is left as it is.
__kernel void sinew_scan_add(__global SINEW_T* data, uint n, __global const SINEW_T* sums, uint k) {
  const uint group = get_group_id(0);
  if (group == 0) return;
  const uint lid = get_local_id(0);
  const uint size = get_local_size(0);
  const uint start = group * size * k;
  const SINEW_T carry = sums[group];
  for (uint j = 0; j < k; ++j) {
    const uint i = start + j * size + lid;
    if (i < n) data[i] = SINEW_OP(carry, data[i]);
  }
}

// Every element of a partition combined with its carry: the fold, in order, of `count` values
// (the host's carry for a built-in operator, count 1; the earlier partitions' totals for a user's
// function, which only the device can evaluate).
__kernel void sinew_scan_carry(__global SINEW_T* data, uint n, __global const SINEW_T* carries, uint count,
                               uint k) {
  SINEW_T carry = carries[0];
  for (uint c = 1; c < count; ++c) carry = SINEW_OP(carry, carries[c]);
  const uint size = get_local_size(0);
  const uint start = get_group_id(0) * size * k + get_local_id(0);
  for (uint j = 0; j < k; ++j) {
    const uint i = start + j * size;
    if (i < n) data[i] = SINEW_OP(carry, data[i]);
  }
}
