// bench/bench_mpi.cpp — issue 20's MPI figures; run it under mpirun (as root in containers:
// --allow-run-as-root --oversubscribe), once per rank count.
//
// Part 1, the exchanges: the MPI calls sinew::Cluster makes for each kind of exchange, timed on
// their own over the job's ranks, for payloads from --min-bytes to --max-bytes (x4 steps):
//   scatter     the root's vector of B bytes split evenly over the ranks (Iscatterv, root in place)
//   gather      the same back to the root (Igatherv)
//   bcast       a vector read whole, B bytes to every rank (Ibcast)
//   allgatherv  a replica re-synchronised in a loop: every rank's B/P bytes to every rank, in
//               place in a whole-sized vector (Iallgatherv)
//   halo        B bytes each way between neighbouring ranks (Irecv + Isend with rank-1 and rank+1)
// and, independent of B, the agreement after each step (Iallreduce of one int) and a loop
// predicate's combination (Iallgather of one 8-byte value). Each time is the slowest rank's,
// between two barriers; the median and the least of --repeat. Rows "exchange,<kind>,<ranks>,
// <bytes>,<median us>,<least us>". From the least times (the exchange without other processes'
// interference), per kind, a latency and bandwidth model t(B) = alpha + B / bw: alpha = the least
// time at the smallest size, bw = the median over the sizes B >= 1 MB of B / (t(B) - alpha); rows
// "model,<kind>,<ranks>,<alpha us>,<bw GB/s>".
//
// Part 2, the samples (--samples): each at --size (small, standard, large, a number or a
// shaped size such as 4096x4096), or at its own size from --sizes name=size,... (which overrides
// --size for the samples it names: "--sizes saxpy=50000000,filter_pipeline=4096,nbody=65536"
// runs each where the GPU machine's devices do real work), end to end, the root running it alone with a Runtime of its own (--baseline-devices: its devices,
// e.g. "all"; unset: the environment's SINEW_DEVICES) against the Cluster over every rank
// (each rank's devices from its own environment: mpirun -x SINEW_DEVICES=... per rank, or MPMD
// "mpirun -np 1 -x SINEW_DEVICES=gpu bench_mpi ... : -np 1 -x SINEW_DEVICES=cpu bench_mpi ...").
// Both take the best of --repeat runs after --warmup (the baseline's first run trains its plan in
// an in-memory knowledge base; the Cluster's rank balancer moves the shares only after about 7
// runs, so --rank-shares a,b,... fixes them where the runs are few: the baseline's device
// shares, say, to compare the same split with and without MPI). Rows
// "sample,<name>,<size>,<ranks>,<one process ms>,<cluster ms>,<cluster/one>,<shares>,<check>":
// the cost of going through MPI for that sample, and whether the Cluster's output equals the
// sample's reference. --distributed 1 then runs the same split again with each rank binding its
// own blocks of the data (sinew::distributed: no scatter, no gather; every rank prepared the same
// data and binds its units of its copy; a vector binding whose size is not a whole number of
// elements per unit stays the root's), rows "distributed,<name>,<size>,<ranks>,<one process
// ms>,<cluster ms>,<cluster/one>,<shares>,<check>", the check after the blocks are gathered to
// the root outside the timed runs ("refused: ..." where the Cluster refuses such a binding).
// The default list takes in a scan (prefix_sum: one total per partition
// crosses between ranks) and divide and conquer (mergesort, max_subarray: the levels above the
// crossover run on the root's device, every rank's part crossing to it and back).
#include "common/descriptors.hpp"

#include <sinew/sinew.hpp>

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

int rank = 0, ranks = 1;

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One exchange's time: the slowest rank's, between barriers; median and least of `repeat`.
template <class F>
std::pair<double, double> timed(int repeat, F&& exchange) {
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now_us();
    MPI_Request request = MPI_REQUEST_NULL;
    exchange(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    double mine = now_us() - t0, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front()};
}

std::size_t bytes_of(const std::string& text) {
  std::size_t at = 0;
  double n = std::stod(text, &at);
  const std::string unit = text.substr(at);
  if (unit == "K" || unit == "KB") n *= 1 << 10;
  else if (unit == "M" || unit == "MB") n *= 1 << 20;
  else if (unit == "G" || unit == "GB") n *= 1 << 30;
  else if (!unit.empty()) throw std::invalid_argument("a size like 1K, 64M or 1G, not '" + text + "'");
  return static_cast<std::size_t>(n);
}

void exchanges(std::size_t min_bytes, std::size_t max_bytes, int repeat) {
  // Whole-sized on every rank (a bcast or allgatherv target); the root's is also the scatter source.
  std::vector<unsigned char> whole(max_bytes, 1), part(max_bytes / ranks + 1), halo_out(max_bytes, 2),
      halo_in(2 * max_bytes);
  std::map<std::string, std::vector<std::pair<std::size_t, double>>> least;  // per kind: (bytes, least us)
  auto row = [&](const std::string& kind, std::size_t bytes, std::pair<double, double> t) {
    least[kind].emplace_back(bytes, t.second);
    if (rank == 0) std::printf("exchange,%s,%d,%zu,%.2f,%.2f\n", kind.c_str(), ranks, bytes, t.first, t.second);
  };
  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    const int reps = bytes >= (64u << 20) ? std::max(1, std::min(repeat, 3)) : repeat;
    std::vector<int> counts(ranks), displs(ranks);
    for (int r = 0, at = 0; r < ranks; ++r) {
      counts[r] = static_cast<int>(bytes / ranks + (r == ranks - 1 ? bytes % ranks : 0));
      displs[r] = std::exchange(at, at + counts[r]);
    }
    row("scatter", bytes, timed(reps, [&](MPI_Request* q) {
          MPI_Iscatterv(whole.data(), counts.data(), displs.data(), MPI_BYTE,
                        rank == 0 ? MPI_IN_PLACE : part.data(), counts[rank], MPI_BYTE, 0, MPI_COMM_WORLD, q);
        }));
    row("gather", bytes, timed(reps, [&](MPI_Request* q) {
          MPI_Igatherv(rank == 0 ? MPI_IN_PLACE : part.data(), counts[rank], MPI_BYTE, whole.data(), counts.data(),
                       displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD, q);
        }));
    row("bcast", bytes, timed(reps, [&](MPI_Request* q) {
          MPI_Ibcast(whole.data(), static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD, q);
        }));
    row("allgatherv", bytes, timed(reps, [&](MPI_Request* q) {
          MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, whole.data(), counts.data(), displs.data(), MPI_BYTE,
                          MPI_COMM_WORLD, q);
        }));
    if (ranks > 1)
      row("halo", bytes, timed(reps, [&](MPI_Request* q) {
            // Four requests; the caller's is the last, the others waited for here.
            MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
            const int n = static_cast<int>(bytes);
            if (rank > 0) {
              MPI_Irecv(halo_in.data(), n, MPI_BYTE, rank - 1, 1, MPI_COMM_WORLD, &r[0]);
              MPI_Isend(halo_out.data(), n, MPI_BYTE, rank - 1, 2, MPI_COMM_WORLD, &r[1]);
            }
            if (rank + 1 < ranks) {
              MPI_Irecv(halo_in.data() + max_bytes, n, MPI_BYTE, rank + 1, 2, MPI_COMM_WORLD, &r[2]);
              MPI_Isend(halo_out.data(), n, MPI_BYTE, rank + 1, 1, MPI_COMM_WORLD, q);
            }
            MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
          }));
  }
  int mine = rank, lowest = 0;
  row("agreement", sizeof(int), timed(repeat * 10, [&](MPI_Request* q) {
        MPI_Iallreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, q);
      }));
  double value = rank, all[1024];
  row("predicate", sizeof(double), timed(repeat * 10, [&](MPI_Request* q) {
        MPI_Iallgather(&value, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD, q);
      }));
  if (rank != 0) return;
  for (const auto& [kind, points] : least) {
    const double alpha = points.front().second;
    std::vector<double> bw;  // GB/s at each size from 1 MB: B / (t - alpha)
    for (const auto& [bytes, us] : points)
      if (bytes >= (1u << 20) && us > alpha) bw.push_back(static_cast<double>(bytes) / ((us - alpha) * 1e3));
    std::sort(bw.begin(), bw.end());
    std::printf("model,%s,%d,%.2f,%.3f\n", kind.c_str(), ranks, alpha, bw.empty() ? 0.0 : bw[bw.size() / 2]);
  }
}

// Prepares `s` at `size`: a named size of the sample's, else as the sample reads a size given as
// text (a number, or a shape such as 4096x2048; the sample refuses one it cannot run).
void prepare_at(sinew::samples::Sample& s, const std::string& size) {
  const auto sizes = s.sizes();
  if (size == "small") return s.prepare(sizes.small);
  if (size == "standard") return s.prepare(sizes.standard);
  if (size == "large") return s.prepare(sizes.large);
  s.prepare(size);
}

std::vector<std::string> list(const std::string& text);

// --sizes "name=size,...": each named sample's own size.
std::map<std::string, std::string> sample_sizes(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& item : list(text)) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument("--sizes wants name=size items, comma-separated, not '" + item + "'");
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

// The sample's bindings as each rank's own blocks (sinew::distributed) of the units `shares` gave
// it: a vector binding whose size is a whole number of elements per unit (of the tree's units)
// is split so; the others stay the root's. Every rank prepared the same data, and binds its block
// in its own copy.
std::vector<sinew::Binding> blocks_of(std::vector<sinew::Binding> bindings, const sinew::ClusterReport& split) {
  std::size_t units = 0;
  for (const auto& s : split.shares) units += s.units;
  const auto& mine = split.shares[rank];
  for (auto& b : bindings) {
    if (!b.vector || !units || b.elements % units) continue;
    const std::size_t unit_bytes = b.elements / units * b.type.size;
    b.data = static_cast<unsigned char*>(b.data) + mine.first * unit_bytes;
    b.elements = mine.units * (b.elements / units);
    b.distributed = true;
  }
  return bindings;
}

// Every rank's blocks of `bindings` (blocks_of) into the root's whole vectors, for its check.
void gather_blocks(const std::vector<sinew::Binding>& whole, const std::vector<sinew::Binding>& blocks) {
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (!blocks[i].distributed) continue;
    const int mine = static_cast<int>(blocks[i].elements * blocks[i].type.size);
    std::vector<int> counts(ranks), displs(ranks);
    MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 1; r < ranks; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : blocks[i].data, mine, MPI_BYTE, whole[i].data, counts.data(), displs.data(),
                MPI_BYTE, 0, MPI_COMM_WORLD);
  }
}

void samples(const std::vector<std::string>& names, const std::string& size, const std::map<std::string, std::string>& own,
             const std::string& baseline_devices, int warmup, int repeat, bool distributed,
             const std::vector<double>& rank_shares) {
  sinew::ClusterOptions co;
  co.rank_shares = rank_shares;
  co.runtime.kb_path = ":memory:";
  co.runtime.quiet = true;
  sinew::Cluster cluster(co);
  sinew::RuntimeOptions ro;
  ro.kb_path = ":memory:";
  ro.quiet = true;
  if (!baseline_devices.empty()) ro.devices = baseline_devices;
  std::unique_ptr<sinew::Runtime> alone;
  if (rank == 0) alone = std::make_unique<sinew::Runtime>(ro);
  for (const auto& [name, at] : own)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw std::invalid_argument("--sizes names '" + name + "', which --samples does not run");
  for (const auto& name : names) {
    auto sample = sinew::samples::find(name);
    if (!sample) throw std::invalid_argument("no sample '" + name + "' (see `sinew samples`)");
    const auto it = own.find(name);
    prepare_at(*sample, it != own.end() ? it->second : size);
    double one = 0;
    if (rank == 0)
      for (int r = 0; r < warmup + repeat; ++r) {
        const double ms = sample->run(*alone).wall_ms;
        if (r >= warmup) one = r == warmup ? ms : std::min(one, ms);
      }
    MPI_Barrier(MPI_COMM_WORLD);
    double best = 0;
    sinew::ClusterReport last;
    for (int r = 0; r < warmup + repeat; ++r) {
      last = cluster.run(sample->tree(), sample->bindings());
      if (r >= warmup) best = r == warmup ? last.wall_ms : std::min(best, last.wall_ms);
    }
    std::ostringstream shares;
    for (const auto& s : last.shares) shares << (s.rank ? " " : "") << s.share;
    if (rank == 0) {
      const auto check = sample->check();
      std::printf("sample,%s,%s,%d,%.3f,%.3f,%.3f,%s,%s\n", name.c_str(), sample->size_text().c_str(), ranks, one, best,
                  one > 0 ? best / one : 0.0, shares.str().c_str(), check.ok ? "OK" : check.message.c_str());
      std::fflush(stdout);
    }
    if (!distributed) continue;
    // The same split with each rank's data its own (no scatter, no gather): what MPI costs when
    // the data stay distributed.
    // (bindings() afresh for each run, as above: a sample may reset its inputs there.)
    std::vector<sinew::Binding> whole, blocks;
    double kept = 0;
    std::string refused;
    try {
      for (int r = 0; r < warmup + repeat; ++r) {
        whole = sample->bindings();
        blocks = blocks_of(whole, last);
        const double ms = cluster.run(sample->tree(), blocks).wall_ms;
        if (r >= warmup) kept = r == warmup ? ms : std::min(kept, ms);
      }
    } catch (const sinew::Error& e) {  // every rank's, alike: a vector the heuristic split wrongly
      refused = e.what();
    }
    if (refused.empty()) gather_blocks(whole, blocks);
    if (rank != 0) continue;
    sinew::samples::Check check;
    if (refused.empty()) check = sample->check();
    else check.message = "refused: " + refused;
    std::printf("distributed,%s,%s,%d,%.3f,%.3f,%.3f,%s,%s\n", name.c_str(), sample->size_text().c_str(), ranks, one,
                kept, one > 0 && kept > 0 ? kept / one : 0.0, shares.str().c_str(),
                check.ok ? "OK" : check.message.c_str());
    std::fflush(stdout);
  }
}

std::vector<std::string> list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);  // the Cluster's level
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::map<std::string, std::string> o = {{"min-bytes", "1K"}, {"max-bytes", "256M"}, {"repeat", "5"},
                                          {"warmup", "3"}, {"exchanges", "1"}, {"size", "small"}, {"sizes", ""},
                                          {"samples", "saxpy,filter_pipeline,histogram,heat,nbody,prefix_sum,mergesort,max_subarray"},
                                          {"baseline-devices", ""}, {"distributed", "0"},
                                          {"rank-shares", ""}};
  int rc = 0;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help") {
        if (rank == 0)
          std::cout << "bench_mpi [--exchanges 0|1] [--min-bytes 1K] [--max-bytes 256M] [--repeat 5] [--warmup 3]\n"
                       "          [--samples a,b,...|none] [--size small|standard|large|N|WxH]\n"
                       "          [--sizes name=size,...] [--baseline-devices SPEC] [--distributed 0|1]\n"
                       "          [--rank-shares a,b,...]\n"
                       "  under mpirun; see the header of bench/bench_mpi.cpp\n";
        MPI_Finalize();
        return 0;
      }
      if (a.rfind("--", 0) != 0 || !o.count(a.substr(2)) || i + 1 >= argc)
        throw std::invalid_argument("unknown or incomplete option '" + a + "' (see --help)");
      o[a.substr(2)] = argv[++i];
    }
    const int repeat = std::max(1, std::stoi(o["repeat"]));
    std::vector<double> shares;
    for (const auto& item : list(o["rank-shares"])) shares.push_back(std::stod(item));
    if (rank == 0) std::printf("# bench_mpi over %d rank(s)\n", ranks);
    if (o["exchanges"] == "1") exchanges(bytes_of(o["min-bytes"]), bytes_of(o["max-bytes"]), repeat);
    if (o["samples"] != "none")
      samples(list(o["samples"]), o["size"], sample_sizes(o["sizes"]), o["baseline-devices"],
              std::max(0, std::stoi(o["warmup"])), repeat, o["distributed"] == "1", shares);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_mpi (rank %d): %s\n", rank, e.what());
    rc = 2;
  }
  if (rc) MPI_Abort(MPI_COMM_WORLD, rc);
  MPI_Finalize();
  return 0;
}
