// bench/common/versus.cpp — Sinew against hand-written OpenCL (see versus.hpp).
#include "versus.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>
#include <sstream>

namespace bench {

namespace {

const std::string kSplit = "split", kSplitPinned = "split-pinned-user";

bool same_share(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) < 1e-9; }

std::string label(const std::string& variant, double share, unsigned overlap) {
  return variant + (std::isnan(share) ? "" : " cpu " + pct(share)) + (overlap ? " ovl " + std::to_string(overlap) : "");
}

}  // namespace

po::options_description versus_options() {
  po::options_description o("Sinew against hand-written OpenCL");
  o.add_options()("overlaps", po::value<Counts>()->default_value(Counts{{1, 2, 4}}, "1,2,4")->value_name("a,b"),
                  "Sinew GPU overlap levels tried GPU-only (--quick 1,2); the fastest is used for the splits")(
      "queues", po::value<unsigned>()->default_value(3)->value_name("N"), "hand-written GPU pipeline: in-order queues")(
      "chunk-mb", po::value<unsigned>()->default_value(8)->value_name("N"),
      "hand-written GPU pipeline: MB of each array per chunk")(
      "no-sinew", po::bool_switch(), "the hand-written side only")("no-handwritten", po::bool_switch(),
                                                                   "Sinew's side only")(
      "no-pinned-splits", po::bool_switch(), "skip the split sweeps with the user's data in pinned memory");
  return o;
}

std::vector<std::string> versus_columns() {
  auto c = measurement_columns();
  c.insert(c.begin(), "kind");
  for (const char* x : {"gb_per_s", "ratio", "rows"}) c.push_back(x);
  return c;
}

VersusFlags::VersusFlags(const Bench& b)
    : hw{std::size_t(std::max(1u, b.vm["chunk-mb"].as<unsigned>())) << 20, std::max(1u, b.vm["queues"].as<unsigned>())},
      sinew(!b.vm["no-sinew"].as<bool>()),
      handwritten(!b.vm["no-handwritten"].as<bool>()),
      pinned_splits(!b.vm["no-pinned-splits"].as<bool>()) {
  for (std::size_t v : b.option<Counts>("overlaps", Counts{{1, 2}}).v) {
    if (v < 1 || v > 16) b.fail("--overlaps", "levels are 1..16");
    overlaps.push_back(static_cast<unsigned>(v));
  }
}

Versus::Versus(Bench& b, const VersusFlags& f, sinew::Runtime* rt, hw::Env* env)
    : b_(b), f_(f), rt_(rt), env_(env), pair_(rt ? Roles::of(*rt).pair() : Roles::Pair{}) {
  b_.csv(versus_columns());
}

sinew::RunOptions Versus::plan(double cpu_share, unsigned overlap) const {
  sinew::Config cfg;
  cfg.shares.assign(rt_->devices().size(), 0.0);
  cfg.shares.at(pair_.cpu) = cpu_share;
  cfg.shares.at(pair_.gpu) += 1.0 - cpu_share;
  cfg.overlap = overlap;
  cfg.fission = "none";
  return with_config(cfg);
}

const Versus::Row* Versus::find(const CaseRows& c, const std::string& impl, const std::string& variant,
                                double share) const {
  for (const auto& r : c.rows)
    if (r.impl == impl && r.variant == variant && same_share(r.share, share)) return &r;
  return nullptr;
}

const Versus::Row* Versus::best(const CaseRows& c, const std::string& impl, const std::string& variant,
                                bool interior) const {
  const Row* b = nullptr;
  for (const auto& r : c.rows)
    if (r.impl == impl && r.variant == variant && r.m.ok() && (!interior || (r.share > 1e-9 && r.share < 1 - 1e-9)) &&
        (!b || r.m.median_ms < b->m.median_ms))
      b = &r;
  return b;
}

void Versus::add(CaseRows& c, Row r, const Job& job) {
  const Csv::Row key = {{"kind", "time"},
                        {"case", c.c.name}, {"size", std::to_string(c.c.size)}, {"impl", r.impl},
                        {"variant", r.variant}, {"cpu_share", num(r.share)},
                        {"overlap", r.overlap ? std::to_string(r.overlap) : ""}};
  r.m = Bench::stats(b_.measure(key, job, b_.timing(), [&](Csv::Row& f, const Stats& m) {
    if (r.bytes > 0 && m.ok()) f["gb_per_s"] = num(r.bytes / m.median_ms / 1e6);
  }));
  failed_ = failed_ || !r.m.ok();
  c.rows.push_back(std::move(r));
}

void Versus::ratio(const CaseRows& c, const std::string& what, const Row* s, const Row* h) {
  if (!s || !h || !s->m.ok() || !h->m.ok()) return;
  const double r = s->m.median_ms / h->m.median_ms;
  const std::string rows = label(s->variant, s->share, s->overlap) + " | " + label(h->variant, h->share, h->overlap);
  b_.csv().append({{"kind", "ratio"},
                   {"case", c.c.name}, {"size", std::to_string(c.c.size)}, {"impl", "sinew/handwritten"},
                   {"variant", what}, {"median_ms", num(s->m.median_ms)}, {"ratio", num(r)},
                   {"rows", rows + "; handwritten_ms " + num(h->m.median_ms)}, {"check", "OK"}});
  ratios_.add({c.c.name + " " + count_label(c.c.size), what, fmt("%.2f", r), fmt("%.3f", s->m.median_ms),
               fmt("%.3f", h->m.median_ms), rows});
}

void Versus::run(const Case& cs) {
  cases_.push_back({cs, {}});
  CaseRows& c = cases_.back();
  b_.progress(cs.name + " " + cs.label);
  const auto pinned_shares = f_.pinned_splits ? cs.pinned_shares : std::vector<double>{};
  auto row = [&](const char* impl, const std::string& variant, double share = kNaN, unsigned ovl = 0) {
    return Row{impl, variant, share, ovl, cs.bytes, {}};
  };
  if (env_ && cs.hw) {
    const unsigned q = f_.hw.queues;
    if (env_->has_cpu()) add(c, row("handwritten", "cpu-zero-copy"), cs.hw->split(1, false));
    add(c, row("handwritten", "gpu-naive"), cs.hw->naive_gpu());
    add(c, row("handwritten", "gpu-pinned", kNaN, q), cs.hw->split(0, false));
    add(c, row("handwritten", "gpu-pinned-user", kNaN, q), cs.hw->split(0, true));
    if (env_->has_cpu()) {
      for (double s : cs.shares) add(c, row("handwritten", kSplit, s, q), cs.hw->split(s, false));
      for (double s : pinned_shares) add(c, row("handwritten", kSplitPinned, s, q), cs.hw->split(s, true));
    }
  }
  if (rt_ && cs.sample) {
    PinnedCopies copies(*rt_);  // the pinned variants' data when the sample cannot keep it pinned
    auto sinew = [&](const std::string& variant, double share, unsigned ovl, const sinew::RunOptions& o,
                     bool pinned = false) {
      sinew::Report last;
      auto& s = pinned && cs.pinned_sample ? *cs.pinned_sample : *cs.sample;
      add(c, row("sinew", variant, share, ovl),
          sinew_job(*rt_, s, o, &last, pinned && !cs.pinned_sample ? &copies : nullptr));
      if (b_.verbose && c.rows.back().m.ok()) std::cerr << "sinew " << variant << ": " << last.str();
      // A run pinned to a device (RunOptions::device) picks its own level: the row shows it.
      if (variant == "gpu-device" && c.rows.back().m.ok()) c.rows.back().overlap = last.config.overlap;
    };
    const auto& p = pair_;
    if (p.has_cpu) sinew("cpu", kNaN, 0, on_device(p.cpu));
    if (p.has_gpu)
      for (unsigned ov : f_.overlaps)
        if (p.gpu_discrete || ov == 1)  // overlap queues exist on discrete devices only
          sinew("gpu", kNaN, ov, plan(0, ov));
    // The GPU as a user pinning a run to it gets it (RunOptions::device): its best known level.
    if (p.has_gpu) sinew("gpu-device", kNaN, 0, on_device(p.gpu));
    const Row* g = best(c, "sinew", "gpu");
    const unsigned ov = g ? g->overlap : 1;
    if (p.has_gpu) sinew("gpu-pinned-user", kNaN, ov, plan(0, ov), true);
    if (p.two) {
      for (double s : cs.shares) sinew(kSplit, s, ov, plan(s, ov));
      for (double s : pinned_shares) sinew(kSplitPinned, s, ov, plan(s, ov), true);
    }
  }

  ratio(c, "cpu-only", find(c, "sinew", "cpu"), find(c, "handwritten", "cpu-zero-copy"));
  const Row* sg = best(c, "sinew", "gpu");
  ratio(c, "gpu-only vs pinned staging", sg, find(c, "handwritten", "gpu-pinned"));
  ratio(c, "gpu-only vs naive", sg, find(c, "handwritten", "gpu-naive"));
  ratio(c, "gpu-only, both data pinned", find(c, "sinew", "gpu-pinned-user"),
        find(c, "handwritten", "gpu-pinned-user"));
  for (double s : cs.ratio_shares)
    ratio(c, "split " + pct(s) + " cpu", find(c, "sinew", kSplit, s), find(c, "handwritten", kSplit, s));
  ratio(c, "best split (each its own best)", best(c, "sinew", kSplit), best(c, "handwritten", kSplit));
  for (double s : f_.pinned_splits ? cs.ratio_pinned_shares : std::vector<double>{})
    ratio(c, "split " + pct(s) + " cpu, data pinned", find(c, "sinew", kSplitPinned, s),
          find(c, "handwritten", kSplitPinned, s));
  ratio(c, "best split, data pinned (each its own best)", best(c, "sinew", kSplitPinned),
        best(c, "handwritten", kSplitPinned));
  // Each side's best split with both devices at work against its faster device alone (the user's
  // data pinned): above 1 the split pays.
  for (const std::string impl : {"handwritten", "sinew"}) {
    const Row* sp = best(c, impl, kSplitPinned, /*interior=*/true);
    const Row* single = nullptr;
    for (const Row* r : {find(c, impl, impl == "sinew" ? "cpu" : "cpu-zero-copy"), find(c, impl, "gpu-pinned-user")})
      if (r && r->m.ok() && (!single || r->m.median_ms < single->m.median_ms)) single = r;
    if (!sp || !single) continue;
    const double v = single->m.median_ms / sp->m.median_ms;
    const std::string rows =
        label(sp->variant, sp->share, sp->overlap) + " | " + label(single->variant, kNaN, single->overlap);
    b_.csv().append({{"kind", "speedup"},
                     {"case", cs.name}, {"size", std::to_string(cs.size)}, {"impl", impl},
                     {"variant", "best pinned split vs best single device"}, {"median_ms", num(sp->m.median_ms)},
                     {"ratio", num(v)}, {"rows", rows + "; single_ms " + num(single->m.median_ms)}, {"check", "OK"}});
    speedups_.add({cs.name + " " + count_label(cs.size), impl, fmt("%.2f", v), fmt("%.3f", sp->m.median_ms),
                   fmt("%.3f", single->m.median_ms), rows});
  }
}

std::string Versus::sweep(const CaseRows& c, const std::string& variant) const {
  std::set<double> shares;
  for (const auto& r : c.rows)
    if (r.variant == variant) shares.insert(r.share);
  if (shares.empty()) return "";
  const Row* hb = best(c, "handwritten", variant);
  const Row* sb = best(c, "sinew", variant);
  auto ms = [](const Row* r, const Row* b) {
    return !r ? std::string("-") : !r->m.ok() ? r->m.check : fmt("%.3f", r->m.median_ms) + (r == b ? " *" : "");
  };
  auto gbps = [&](const Row* r) {
    return r && r->m.ok() && r->bytes > 0 ? fmt("%.2f", r->bytes / r->m.median_ms / 1e6) : "-";
  };
  Table t({"cpu", "hand-written ms", "IQR", "GB/s", "Sinew ms", "IQR", "GB/s", "Sinew / hand-written"});
  for (double s : shares) {
    const Row* h = find(c, "handwritten", variant, s);
    const Row* w = find(c, "sinew", variant, s);
    t.add({pct(s), ms(h, hb), h && h->m.ok() ? fmt("%.3f", h->m.iqr_ms) : "-", gbps(h), ms(w, sb),
           w && w->m.ok() ? fmt("%.3f", w->m.iqr_ms) : "-", gbps(w),
           h && w && h->m.ok() && w->m.ok() ? fmt("%.2f", w->m.median_ms / h->m.median_ms) : "-"});
  }
  return "Split sweep, the user's data " + std::string(variant == kSplit ? "pageable" : "pinned") + " (`" + variant +
         "`; cpu = the CPU device's share of the work; * = fastest of its column):\n\n" + t.str() + "\n";
}

std::string Versus::markdown() const {
  std::ostringstream md;
  if (env_)
    md << "Hand-written side: CPU " << env_->cpu_description() << "; GPU " << env_->gpu_description()
       << "; GPU pipeline " << f_.hw.queues << " queues, " << (f_.hw.chunk_bytes >> 20) << " MB chunks per array.  \n";
  if (rt_)
    md << "Sinew side: CPU `" << rt_->devices().at(pair_.cpu).id() << "`, GPU `" << rt_->devices().at(pair_.gpu).id()
       << "`" << (pair_.two ? "" : " (no CPU+GPU pair: no splits)") << ".  \n";
  md << "Medians of " << b_.repeat << " timed runs after " << std::max(1u, b_.warmup)
     << " warm-up run(s); IQR = q75 - q25 of the runs; exec ms = Sinew's Report::wall_ms. Variants and ratios: "
        "docs/BENCHMARKS.md.\n\n";
  for (const auto& c : cases_) {
    md << "### " << c.c.name << ", " << c.c.label << "\n\n";
    Table t({"impl", "variant", "ovl", "median ms", "IQR ms", "min ms", "max ms", "GB/s", "exec ms", "check"});
    for (const auto& r : c.rows)
      if (r.variant != kSplit && r.variant != kSplitPinned)
        t.add({r.impl, r.variant, r.overlap ? std::to_string(r.overlap) : "-", fmt("%.3f", r.m.median_ms),
               fmt("%.3f", r.m.iqr_ms), fmt("%.3f", r.m.min_ms), fmt("%.3f", r.m.max_ms),
               r.bytes > 0 && r.m.ok() ? fmt("%.2f", r.bytes / r.m.median_ms / 1e6) : "-", fmt("%.3f", r.m.inner_ms),
               r.m.check});
    md << t.str() << "\n" << sweep(c, kSplit) << sweep(c, kSplitPinned);
  }
  if (!ratios_.empty())
    md << "### Ratios Sinew / hand-written (median wall times; above 1: Sinew slower)\n\n" << ratios_.str() << "\n";
  if (!speedups_.empty())
    md << "### Split speedups, each side on its own\n\nThe faster device alone / the best split with both devices at "
          "work (0% < cpu < 100%), the user's data pinned; above 1: the split pays.\n\n"
       << speedups_.str() << "\n";
  return md.str();
}

}  // namespace bench
