// exec/transfer.hpp — moving a run's data: host <-> device for each partition's slices (pinned
// staging for pageable memory on discrete devices, straight DMA for pinned memory, nothing on
// zero-copy CPU devices). The replicas of vectors read whole: exec/replicas.hpp.
#pragma once

#include "exec/staging.hpp"
#include "exec/worker.hpp"

#include <string>
#include <vector>

namespace sinew::detail {

class RunState;

// Host -> device into `buf` at `offset` for a partition of a discrete device; returns once `host`
// has been read (or the DMA is queued).
void to_device(RunState& run, PartState& ps, const cl::Buffer& buf, std::size_t offset, const void* host,
               std::size_t bytes, const std::string* label);
// Device -> host; the data is in `host` once the worker's queue has finished.
// `later`: a staged download is only begun (the worker's results ring) and appended there, for
// finish_downloads().
void to_host(RunState& run, PartState& ps, const cl::Buffer& buf, std::size_t offset, void* host, std::size_t bytes,
             const std::string* label, std::vector<Staging::Pending>* later = nullptr);
// Whether host memory goes through pinned staging (pageable memory, staged transfer mode).
bool staged(const RunState& run, const void* host, std::size_t bytes);
// Every bound partitioned vector moves between host and discrete devices without staging.
bool all_direct(const RunState& run);

// The partition's slices of the vectors it reads, before its leaves (discrete devices only).
void upload(RunState& run, PartState& ps);
// The partition's slices of the vectors it writes, after its leaves: read back (discrete
// devices), mapped (zero-copy devices whose buffers are not the host memory itself), or nothing.
// `later`: staged downloads only begun (see to_host).
void download(RunState& run, PartState& ps, std::vector<Staging::Pending>* later = nullptr);
// The downloads download() began for `ps`, finished in order: their data is in host memory.
void finish_downloads(RunState& run, PartState& ps, std::vector<Staging::Pending>& later);
// A failed run's begun downloads: their ring slots are free again.
void abandon_downloads(Worker& w, std::vector<Staging::Pending>& later);
// The zero-copy results download() left mapped, unmapped once the queue has finished.
void unmap_deferred(Worker& w);

}  // namespace sinew::detail
