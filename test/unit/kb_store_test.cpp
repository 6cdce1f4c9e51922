// test/unit/kb_store_test.cpp — storing and reading: runs, entries (one current per key and
// features), events, trees, validation, export/import/clear, and use from several threads.
#include <sinew/error.hpp>
#include <sinew/kb.hpp>
#include <sinew/tree.hpp>
#include <sinew/version.hpp>

#include "kb/kb_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

namespace {

using kbtest::config;
using kbtest::entry;
using kbtest::key;
using kbtest::run;
using kbtest::TempDir;
using sinew::KbFeatures;
using sinew::KnowledgeBase;

std::unique_ptr<KnowledgeBase> open_file(const TempDir& dir) {
  auto kb = KnowledgeBase::open(dir.file("kb.sqlite"), {.log = {}});
  EXPECT_TRUE(kb->persistent()) << kb->warning();
  return kb;
}

template <class F>
sinew::errc error_of(F&& f) {
  try {
    f();
  } catch (const sinew::Error& e) {
    return sinew::errc(e.code().value());
  }
  return sinew::errc{};
}

TEST(KbStore, MemoryKnowledgeBaseWorks) {
  auto kb = KnowledgeBase::memory();
  EXPECT_FALSE(kb->persistent());
  EXPECT_EQ(kb->warning(), "");
  EXPECT_EQ(kb->path(), ":memory:");
  auto id = kb->store_entry(entry(key(), {{"n", 1}}, config({1, 0}), 1));
  EXPECT_TRUE(kb->entry(id).has_value());
}

TEST(KbStore, RunsAreKeptInOrderAndFoundWhateverTheFeatureOrder) {
  TempDir dir;
  auto kb = open_file(dir);
  auto k = key();
  KbFeatures f = {{"width", 1024}, {"height", 768}};
  for (int i = 0; i < 5; ++i) kb->record_run(run(k, f, config({0.1 * i, 1 - 0.1 * i}, "L2", 2), 10.0 + i));
  kb->record_run(run(k, {{"width", 2048}, {"height", 768}}, config({0.5, 0.5}), 20));
  kb->record_run(run(key("ffffffffffffffff"), f, config({0.5, 0.5}), 30));

  auto runs = kb->runs(k, {{"height", 768}, {"width", 1024}});  // order does not matter
  ASSERT_EQ(runs.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(runs[i].time_ms, 10.0 + i);
    EXPECT_EQ(runs[i].config, config({0.1 * i, 1 - 0.1 * i}, "L2", 2));  // shares round-trip exactly
    EXPECT_EQ(runs[i].features, f);                                        // stored in the caller's order
    EXPECT_EQ(runs[i].partition_ms, (std::vector<double>{(10.0 + i) * 0.9, 10.0 + i}));
    EXPECT_EQ(runs[i].purpose, "training");
    EXPECT_FALSE(runs[i].created.empty());
    EXPECT_EQ(runs[i].key, k);
  }
  EXPECT_EQ(kb->runs_for_tree(k.tree).size(), 6u);

  // An entry's runs: those of its key and features.
  auto id = kb->store_entry(entry(k, f, config({0.3, 0.7}), 11));
  EXPECT_EQ(kb->runs(id).size(), 5u);
  EXPECT_TRUE(kb->runs(id + 100).empty());
}

TEST(KbStore, OneCurrentEntryPerKeyAndFeatures) {
  TempDir dir;
  auto kb = open_file(dir);
  auto k = key();
  KbFeatures f = {{"n", 1 << 20}};
  auto id = kb->store_entry(entry(k, f, config({0.4, 0.6}, "L3", 1), 5.0));
  ASSERT_TRUE(kb->add_executions(id, 3));
  auto first = kb->entry(id);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->executions, 3);
  EXPECT_EQ(first->provenance, sinew::Provenance::trained);
  EXPECT_EQ(first->strategy, "even_split");
  EXPECT_EQ(first->precision, 0.05);
  EXPECT_EQ(first->quality, 3u);
  EXPECT_EQ(first->created, first->updated);

  // The balancer moves shares: same entry, new plan; executions and created stay.
  auto balanced = *first;
  balanced.config = config({0.45, 0.55}, "L3", 1);
  balanced.provenance = sinew::Provenance::balanced;
  balanced.time_ms = 4.5;
  balanced.executions = 0;  // ignored on update
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(kb->store_entry(balanced), id);
  auto second = kb->find(k, f);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->id, id);
  EXPECT_EQ(second->config, balanced.config);
  EXPECT_EQ(second->provenance, sinew::Provenance::balanced);
  EXPECT_EQ(second->time_ms, 4.5);
  EXPECT_EQ(second->executions, 3);
  EXPECT_EQ(second->created, first->created);
  EXPECT_GT(second->updated, first->updated);
  EXPECT_EQ(kb->entries(k).size(), 1u);

  // Other features, device sets or libraries are other entries.
  EXPECT_FALSE(kb->find(k, {{"n", (1 << 20) + 1}}).has_value());
  EXPECT_FALSE(kb->find(k, {{"m", 1 << 20}}).has_value());
  EXPECT_FALSE(kb->find(k, {}).has_value());
  auto other_devices = k;
  other_devices.devices = "cpu:0 Other CPU";
  auto other_library = k;
  other_library.library = "9.9.9";
  EXPECT_FALSE(kb->find(other_devices, f).has_value());
  auto id2 = kb->store_entry(entry(other_devices, f, config({1}), 9));
  auto id3 = kb->store_entry(entry(other_library, f, config({0.5, 0.5}), 9));
  auto id4 = kb->store_entry(entry(k, {{"n", 2 << 20}}, config({0.5, 0.5}), 9));
  EXPECT_NE(id2, id);
  EXPECT_NE(id3, id);
  EXPECT_EQ(kb->entries(k).size(), 2u);  // id and id4
  EXPECT_EQ(kb->entries_for_tree(k.tree).size(), 4u);
  EXPECT_TRUE(kb->entries(key("0000000000000000")).empty());

  EXPECT_FALSE(kb->add_executions(12345));
}

TEST(KbStore, DivideAndConquerPlanItemsAreStored) {
  TempDir dir;
  auto kb = open_file(dir);
  auto k = key();
  KbFeatures f = {{"n", 1 << 24}};
  auto c = config({0.0, 1.0});
  c.set("crossover", "7").set("upper", "0");
  auto id = kb->store_entry(entry(k, f, c, 5.0));
  auto found = kb->find(k, f);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, id);
  EXPECT_EQ(found->config, c);
  EXPECT_EQ(found->config.item("crossover"), "7");
  EXPECT_EQ(found->config.item("upper"), "0");
}

TEST(KbStore, DerivedEntryKeepsItsSource) {
  auto kb = KnowledgeBase::memory();
  auto k = key();
  auto src = kb->store_entry(entry(k, {{"n", 1000}}, config({0.2, 0.8}), 3));
  auto derived = entry(k, {{"n", 1100}}, config({0.2, 0.8}), 3, sinew::Provenance::derived);
  derived.source = src;
  auto id = kb->store_entry(derived);
  auto e = kb->entry(id);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->provenance, sinew::Provenance::derived);
  EXPECT_EQ(e->source, src);

  auto bad = entry(k, {{"n", 1200}}, config({1, 0}), 3, sinew::Provenance::derived);
  bad.source = 999;  // no such entry
  EXPECT_EQ(error_of([&] { kb->store_entry(bad); }), sinew::errc::knowledge_base);
}

TEST(KbStore, BadValuesAreRejectedWithInvalidArgument) {
  auto kb = KnowledgeBase::memory();
  auto k = key();
  auto ok = entry(k, {{"n", 1}}, config({0.5, 0.5}), 1);
  auto invalid = [&](sinew::KbEntry e) { return error_of([&] { kb->store_entry(e); }); };
  auto e = ok;
  e.time_ms = std::nan("");
  EXPECT_EQ(invalid(e), sinew::errc::invalid_argument);
  e = ok;
  e.provenance = sinew::Provenance::knowledge_base;  // not a provenance a stored plan can have
  EXPECT_EQ(invalid(e), sinew::errc::invalid_argument);
  e = ok;
  e.features = {{"n", 1}, {"n", 2}};
  EXPECT_EQ(invalid(e), sinew::errc::invalid_argument);
  e = ok;
  e.features = {{"n", std::numeric_limits<double>::infinity()}};
  EXPECT_EQ(invalid(e), sinew::errc::invalid_argument);
  e = ok;
  e.config.shares = {};
  EXPECT_EQ(invalid(e), sinew::errc::invalid_argument);
  e = ok;
  e.config.shares = {-0.5, 1.5};
  EXPECT_EQ(invalid(e), sinew::errc::invalid_argument);
  e = ok;
  e.config.overlap = 0;
  EXPECT_EQ(invalid(e), sinew::errc::invalid_argument);
  e = ok;
  e.key.tree = "";
  EXPECT_EQ(invalid(e), sinew::errc::invalid_argument);

  auto r = run(k, {{"n", 1}}, config({1, 0}), 1);
  r.purpose = "fun";
  EXPECT_EQ(error_of([&] { kb->record_run(r); }), sinew::errc::invalid_argument);
  r = run(k, {{"n", 1}}, config({1, 0}), 1);
  r.partition_ms = {1, std::nan("")};
  EXPECT_EQ(error_of([&] { kb->record_run(r); }), sinew::errc::invalid_argument);
  r = run(k, {{"n", 1}}, config({1, 0}), 1);
  r.device_ms = {1};  // one time for two shares
  EXPECT_EQ(error_of([&] { kb->record_run(r); }), sinew::errc::invalid_argument);

  sinew::KbEvent ev;
  ev.entry = kb->store_entry(ok);
  ev.before = ev.after = config({1, 0});
  ev.level = 3;
  EXPECT_EQ(error_of([&] { kb->record_event(ev); }), sinew::errc::invalid_argument);
  EXPECT_EQ(invalid(ok), sinew::errc{});  // and the good one passes
}

TEST(KbStore, EventsBelongToTheirEntry) {
  auto kb = KnowledgeBase::memory();
  auto id = kb->store_entry(entry(key(), {{"n", 1}}, config({0.5, 0.5}), 1));
  sinew::KbEvent ev;
  ev.entry = id;
  ev.execution = 42;
  ev.level = 2;
  ev.before = config({0.5, 0.5}, "L2", 2);
  ev.after = config({0.6, 0.4}, "L2", 2);
  ev.time_ms = 7.25;
  ev.partition_ms = {3, 7.25};
  ev.deviation = 0.41;
  ev.lbt = 0.9;
  auto eid = kb->record_event(ev);
  auto events = kb->events(id);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].id, eid);
  EXPECT_EQ(events[0].execution, 42);
  EXPECT_EQ(events[0].level, 2);
  EXPECT_EQ(events[0].before, ev.before);
  EXPECT_EQ(events[0].after, ev.after);
  EXPECT_EQ(events[0].partition_ms, ev.partition_ms);
  EXPECT_EQ(events[0].deviation, 0.41);
  EXPECT_EQ(events[0].lbt, 0.9);
  EXPECT_FALSE(events[0].created.empty());

  ev.entry = id + 1;  // no such entry
  EXPECT_EQ(error_of([&] { kb->record_event(ev); }), sinew::errc::knowledge_base);
}

TEST(KbStore, TreesListCountsAndPrefixes) {
  auto kb = KnowledgeBase::memory();
  auto a = key("aaaa000000000001");
  auto b = key("aaaa000000000002");
  auto c = key("cccc000000000003");
  auto ea = kb->store_entry(entry(a, {{"n", 1}}, config({1, 0}), 1));
  kb->store_entry(entry(a, {{"n", 2}}, config({1, 0}), 1));
  for (int i = 0; i < 3; ++i) kb->record_run(run(a, {{"n", 1}}, config({1, 0}), 1));
  kb->record_run(run(b, {{"n", 1}}, config({1, 0}), 1));  // runs only: training was interrupted
  kb->describe_tree(c.tree, "saxpy", "kernel 'saxpy'");  // described, nothing stored yet
  sinew::KbEvent ev;
  ev.entry = ea;
  ev.before = ev.after = config({1, 0});
  kb->record_event(ev);

  auto trees = kb->trees();
  ASSERT_EQ(trees.size(), 3u);
  std::map<std::string, sinew::KbTreeSummary> by_tree;
  for (const auto& t : trees) by_tree[t.tree] = t;
  EXPECT_EQ(by_tree[a.tree].entries, 2);
  EXPECT_EQ(by_tree[a.tree].runs, 3);
  EXPECT_EQ(by_tree[a.tree].events, 1);
  EXPECT_EQ(by_tree[b.tree].entries, 0);
  EXPECT_EQ(by_tree[b.tree].runs, 1);
  EXPECT_EQ(by_tree[c.tree].label, "saxpy");
  EXPECT_EQ(by_tree[c.tree].description, "kernel 'saxpy'");
  EXPECT_EQ(by_tree[c.tree].entries, 0);

  // Describing again: unchanged is a no-op, a new label replaces the old one.
  kb->describe_tree(c.tree, "saxpy", "kernel 'saxpy'");
  kb->describe_tree(a.tree, "filters", "pipeline");
  kb->describe_tree(a.tree, "filters v2", "pipeline");
  for (const auto& t : kb->trees()) by_tree[t.tree] = t;
  EXPECT_EQ(by_tree[c.tree].label, "saxpy");
  EXPECT_EQ(by_tree[a.tree].label, "filters v2");
  EXPECT_EQ(kb->trees().size(), 3u);

  EXPECT_EQ(kb->match_trees("aaaa"), (std::vector<std::string>{a.tree, b.tree}));
  EXPECT_EQ(kb->match_trees("cc"), (std::vector<std::string>{c.tree}));
  EXPECT_EQ(kb->match_trees("%"), std::vector<std::string>{});  // no LIKE wildcards
  EXPECT_EQ(kb->match_trees("").size(), 3u);
}

TEST(KbStore, ClearOneTreeOrEverything) {
  auto kb = KnowledgeBase::memory();
  auto a = key("aaaa000000000001");
  auto b = key("bbbb000000000002");
  auto ea = kb->store_entry(entry(a, {{"n", 1}}, config({1, 0}), 1));
  kb->store_entry(entry(b, {{"n", 1}}, config({1, 0}), 1));
  kb->record_run(run(a, {{"n", 1}}, config({1, 0}), 1));
  kb->record_run(run(a, {{"n", 1}}, config({1, 0}), 1));
  kb->record_run(run(b, {{"n", 1}}, config({1, 0}), 1));
  sinew::KbEvent ev;
  ev.entry = ea;
  ev.before = ev.after = config({1, 0});
  kb->record_event(ev);
  kb->describe_tree(a.tree, "a", "");

  auto removed = kb->clear(a.tree);
  EXPECT_EQ(removed.entries, 1);
  EXPECT_EQ(removed.runs, 2);
  EXPECT_EQ(removed.events, 1);
  EXPECT_EQ(removed.total(), 4);
  EXPECT_TRUE(kb->entries_for_tree(a.tree).empty());
  EXPECT_EQ(kb->entries_for_tree(b.tree).size(), 1u);
  ASSERT_EQ(kb->trees().size(), 1u);

  removed = kb->clear();
  EXPECT_EQ(removed.entries, 1);
  EXPECT_EQ(removed.runs, 1);
  EXPECT_TRUE(kb->trees().empty());
  EXPECT_EQ(kb->clear().total(), 0);
}

// A knowledge base with a bit of everything, over two trees.
void populate(KnowledgeBase& kb) {
  auto a = key("aaaa000000000001");
  auto b = key("bbbb000000000002");
  kb.describe_tree(a.tree, "filters", "pipeline\n  kernel 'noise'\n  kernel \"mirror\"\t\u00e9");
  auto ea = kb.store_entry(entry(a, {{"width", 1024}, {"height", 1024}}, config({1.0 / 3, 2.0 / 3}, "L2", 3), 12.75));
  auto derived = entry(a, {{"width", 2048}, {"height", 1024}}, config({1.0 / 3, 2.0 / 3}, "L2", 3), 12.75, sinew::Provenance::derived);
  derived.source = ea;
  auto ed = kb.store_entry(derived);
  kb.add_executions(ed, 17);
  for (int i = 0; i < 4; ++i)
    kb.record_run(run(a, {{"width", 1024}, {"height", 1024}}, config({0.1 * i, 1 - 0.1 * i}, "L2", 3), 13 + i));
  kb.record_run(run(a, {{"width", 2048}, {"height", 1024}}, config({1.0 / 3, 2.0 / 3}, "L2", 3), 25, "execution"));
  sinew::KbEvent ev;
  ev.entry = ed;
  ev.execution = 9;
  ev.before = config({1.0 / 3, 2.0 / 3}, "L2", 3);
  ev.after = config({0.4, 0.6}, "L2", 3);
  ev.time_ms = 25;
  ev.partition_ms = {25, 18};
  ev.deviation = 0.3;
  ev.lbt = 1;
  kb.record_event(ev);
  kb.store_entry(entry(b, {{"n", 1e9}}, config({0, 1}, "none", 4), 1e-3, sinew::Provenance::manual));
  kb.record_run(run(b, {{"n", 1e9}}, config({0, 1}, "none", 4), 1e-3, "balancing"));
}

// An export without its "exported" time stamp.
std::string stable(std::string json) {
  auto at = json.find("\"exported\"");
  return json.erase(at, json.find('\n', at) - at);
}

TEST(KbStore, ExportClearImportRoundTrip) {
  TempDir dir;
  auto kb = open_file(dir);
  populate(*kb);
  auto before = kb->export_json();
  auto entries_before = kb->entries_for_tree("aaaa000000000001");
  auto runs_before = kb->runs_for_tree("aaaa000000000001");
  auto events_before = kb->events(entries_before[1].id);

  auto removed = kb->clear();
  EXPECT_EQ(removed.entries, 3);
  EXPECT_EQ(removed.runs, 6);
  EXPECT_EQ(removed.events, 1);
  EXPECT_TRUE(kb->trees().empty());

  auto imported = kb->import_json(before);
  EXPECT_EQ(imported.entries, 3);
  EXPECT_EQ(imported.runs, 6);
  EXPECT_EQ(imported.events, 1);
  EXPECT_EQ(stable(kb->export_json()), stable(before));

  // Field by field, not only as text.
  auto entries_after = kb->entries_for_tree("aaaa000000000001");
  ASSERT_EQ(entries_after.size(), entries_before.size());
  for (std::size_t i = 0; i < entries_after.size(); ++i) {
    const auto& x = entries_before[i];
    const auto& y = entries_after[i];
    EXPECT_EQ(x.key, y.key);
    EXPECT_EQ(x.features, y.features);
    EXPECT_EQ(x.config, y.config);
    EXPECT_EQ(x.time_ms, y.time_ms);
    EXPECT_EQ(x.provenance, y.provenance);
    EXPECT_EQ(x.executions, y.executions);
    EXPECT_EQ(x.created, y.created);
    EXPECT_EQ(x.updated, y.updated);
    EXPECT_EQ(x.source.has_value(), y.source.has_value());
  }
  EXPECT_EQ(entries_after[1].source, entries_after[0].id);
  auto runs_after = kb->runs_for_tree("aaaa000000000001");
  ASSERT_EQ(runs_after.size(), runs_before.size());
  for (std::size_t i = 0; i < runs_after.size(); ++i) {
    EXPECT_EQ(runs_after[i].config, runs_before[i].config);
    EXPECT_EQ(runs_after[i].time_ms, runs_before[i].time_ms);
    EXPECT_EQ(runs_after[i].partition_ms, runs_before[i].partition_ms);
    EXPECT_EQ(runs_after[i].created, runs_before[i].created);
  }
  auto events_after = kb->events(entries_after[1].id);
  ASSERT_EQ(events_after.size(), 1u);
  EXPECT_EQ(events_after[0].after, events_before[0].after);
  EXPECT_EQ(kb->trees().front().description, kb->trees().front().description);
  bool described = false;
  for (const auto& t : kb->trees())
    if (t.tree == "aaaa000000000001")
      described = t.description == "pipeline\n  kernel 'noise'\n  kernel \"mirror\"\t\u00e9";
  EXPECT_TRUE(described);

  // Importing again adds nothing.
  EXPECT_EQ(kb->import_json(before).total(), 0);
  EXPECT_EQ(stable(kb->export_json()), stable(before));
}

TEST(KbStore, ImportMergesIntoAnotherKnowledgeBase) {
  auto source = KnowledgeBase::memory();
  populate(*source);
  auto one_tree = source->export_json("aaaa000000000001");

  auto target = KnowledgeBase::memory();
  // Something already there shifts ids, and one entry exists in a newer and one in an older form.
  auto k = key("aaaa000000000001");
  target->store_entry(entry(key("dddd000000000004"), {{"n", 1}}, config({1, 0}), 1));
  target->store_entry(entry(key("dddd000000000004"), {{"n", 2}}, config({1, 0}), 1));
  auto counts = target->import_json(one_tree);
  EXPECT_EQ(counts.entries, 2);
  EXPECT_EQ(counts.runs, 5);
  EXPECT_EQ(counts.events, 1);
  EXPECT_TRUE(target->entries_for_tree("bbbb000000000002").empty());  // only the exported tree

  auto base = target->find(k, {{"width", 1024}, {"height", 1024}});
  auto derived = target->find(k, {{"width", 2048}, {"height", 1024}});
  ASSERT_TRUE(base && derived);
  EXPECT_EQ(derived->source, base->id);  // remapped to this knowledge base's ids
  EXPECT_EQ(derived->executions, 17);
  EXPECT_EQ(target->events(derived->id).size(), 1u);

  // A newer local plan survives an older import; an older one is replaced by a newer import.
  auto newer = *base;
  newer.config = config({0.5, 0.5}, "L2", 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  target->store_entry(newer);
  EXPECT_EQ(target->import_json(one_tree).total(), 0);
  EXPECT_EQ(target->find(k, {{"width", 1024}, {"height", 1024}})->config, newer.config);

  auto newest = *derived;
  newest.config = config({0.9, 0.1}, "L2", 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  source->store_entry(newest);
  auto counts2 = target->import_json(source->export_json("aaaa000000000001"));
  EXPECT_EQ(counts2.entries, 1);
  EXPECT_EQ(target->find(k, {{"width", 2048}, {"height", 1024}})->config, newest.config);
}

TEST(KbStore, ImportRejectsMalformedDocumentsAndChangesNothing) {
  auto kb = KnowledgeBase::memory();
  populate(*kb);
  auto good = kb->export_json();
  auto count = [&] { return kb->export_json().size(); };
  auto before = count();
  auto message = [&](const std::string& text) {
    try {
      kb->import_json(text);
    } catch (const sinew::Error& e) {
      EXPECT_EQ(e.code(), sinew::errc::invalid_argument);
      return std::string(e.message());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("{\"format\": \"sinew-knowledge-base\",\n \"entries\": [}").find("line 2, column"), std::string::npos);
  EXPECT_NE(message("[]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(message("{\"format\": \"something\"}").find("not a Sinew knowledge base export"), std::string::npos);

  auto broken = good;
  broken.replace(broken.find("\"provenance\": \"derived\""), 23, "\"provenance\": \"magic\"");
  EXPECT_NE(message(broken).find("entries[1]"), std::string::npos) << message(broken);
  broken = good;
  broken.replace(broken.find("\"time_ms\""), 9, "\"time_xx\"");
  EXPECT_NE(message(broken).find("has no \"time_ms\""), std::string::npos) << message(broken);

  // Plans the runtime could not use are refused with its own rules (a plan with fission L9 or
  // overlap 1024 once made every later run of that input fail), the whole file with them.
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return message(text);
  };
  EXPECT_NE(with("\"fission\": \"L2\"", "\"fission\": \"L9\"").find("no fission configuration"), std::string::npos);
  EXPECT_NE(with("\"overlap\": 3", "\"overlap\": 1024").find("outside 1..16"), std::string::npos);
  EXPECT_NE(with("\"shares\": [0, 1]", "\"shares\": [0.25, 0.5]").find("add up to 0.75"), std::string::npos);
  EXPECT_NE(with("\"shares\": [0, 1]", "\"shares\": [0.25, 0.25, 0.5]").find("3 shares for 2 devices"),
            std::string::npos);
  EXPECT_NE(with("\"label\": \"", "\"label\": \"\xff").find("UTF-8"), std::string::npos);
  // Plan items (platform/plan_items.hpp) this version does not know are refused, not dropped.
  EXPECT_NE(with("\"overlap\": 3", "\"overlap\": 3, \"plan\": {\"warp_speed\": \"9\"}")
                .find("plan item 'warp_speed' is unknown"),
            std::string::npos);
  EXPECT_NE(with("\"overlap\": 3", "\"overlap\": 3, \"plan\": [1]").find("plan is not a JSON object"),
            std::string::npos);
  EXPECT_EQ(count(), before);
}

TEST(KbStore, SeveralThreadsShareOneKnowledgeBase) {
  TempDir dir;
  auto kb = open_file(dir);
  auto k = key();
  auto id = kb->store_entry(entry(k, {{"n", 0}}, config({1, 0}), 1));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        kb->record_run(run(k, {{"n", double(t)}}, config({1, 0}), i));
        kb->add_executions(id);
        kb->store_entry(entry(k, {{"n", double(t + 1)}}, config({1, 0}), i));
        (void)kb->entries(k);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(kb->runs_for_tree(k.tree).size(), 200u);
  EXPECT_EQ(kb->entry(id)->executions, 200);
  EXPECT_EQ(kb->entries(k).size(), 5u);
}

TEST(KbStore, RunsRecordedInOneBatchAreAllOrNothing) {
  TempDir dir;
  auto kb = open_file(dir);
  auto k = key();
  const KbFeatures f = {{"n", 1}};
  const auto id = kb->store_entry(entry(k, f, config({1, 0}), 1));
  std::vector<sinew::KbRun> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(run(k, f, config({1, 0}), 1.0 + i, "execution"));
  runs[1].created = "2001-02-03T04:05:06.789Z";  // a given time is kept
  kb->record_runs(runs, {{id, 3}, {id + 1000, 2}});  // an entry that does not exist is skipped
  auto stored = kb->runs(id);
  ASSERT_EQ(stored.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(stored[i].time_ms, 1.0 + i);
  EXPECT_EQ(stored[1].created, "2001-02-03T04:05:06.789Z");
  EXPECT_FALSE(stored[0].created.empty());
  EXPECT_EQ(kb->entry(id)->executions, 3);

  runs[2].time_ms = std::numeric_limits<double>::quiet_NaN();  // checked before anything is written
  EXPECT_EQ(error_of([&] { kb->record_runs(runs, {{id, 3}}); }), sinew::errc::invalid_argument);
  EXPECT_EQ(kb->runs(id).size(), 3u);
  EXPECT_EQ(kb->entry(id)->executions, 3);
}

}  // namespace

namespace {

TEST(KbKey, DeviceSetSignatureNamesEveryDeviceInOrder) {
  sinew::DeviceInfo cpu;
  cpu.kind = sinew::DeviceKind::cpu;
  cpu.name = "Test CPU";
  cpu.platform = "PoCL";
  cpu.platform_version = "OpenCL 3.0 PoCL 5.0";
  cpu.driver_version = "5.0";
  cpu.compute_units = 16;
  sinew::DeviceInfo gpu = cpu;
  gpu.index = 1;
  gpu.kind = sinew::DeviceKind::gpu;
  gpu.name = "Test GPU";
  gpu.driver_version = "550.54";
  gpu.compute_units = 132;
  gpu.discrete = true;

  auto s = sinew::device_set_signature({cpu, gpu});
  EXPECT_EQ(s, "cpu:0 Test CPU (PoCL, OpenCL 3.0 PoCL 5.0, driver 5.0, 16 CUs); "
               "gpu:0 Test GPU (PoCL, OpenCL 3.0 PoCL 5.0, driver 550.54, 132 CUs)");
  EXPECT_NE(sinew::device_set_signature({gpu, cpu}), s);  // order is part of it (shares follow it)
  auto newer_driver = gpu;
  newer_driver.driver_version = "555.1";
  EXPECT_NE(sinew::device_set_signature({cpu, newer_driver}), s);
  auto emulated = cpu;
  emulated.discrete = true;
  EXPECT_EQ(sinew::device_set_signature({emulated}), "cpu:0 Test CPU (PoCL, OpenCL 3.0 PoCL 5.0, driver 5.0, 16 CUs) discrete");

  auto k = sinew::make_kb_key("0123456789abcdef", {cpu, gpu});
  EXPECT_EQ(k.tree, "0123456789abcdef");
  EXPECT_EQ(k.devices, s);
  EXPECT_EQ(k.library, std::string(sinew::version));
}

}  // namespace

// ----- imported plans the tree cannot run ----------------------------------------------------

namespace {

const char* kKernels = R"CL(
__kernel void stencil(__global const int* in, __global int* out, uint width) {}
__kernel void scale(__global int* v) {}
__kernel void leaf(__global SINEW_T* d, uint n, uint leaf) {}
__kernel void merge(__global const SINEW_T* s, __global SINEW_T* d, uint n, uint run, uint k) {}
)CL";

// An export of one entry of `tree` with `plan`, with the tree's description when `described`.
std::string export_of(const sinew::Node& tree, const std::string& plan, bool described) {
  auto kb = KnowledgeBase::memory();
  const auto k = key(tree.signature());
  if (described) kb->describe_tree(k.tree, tree.label(), tree.dump());
  auto e = entry(k, {{"n", 4096}}, config({0.5, 0.5}), 1);
  std::vector<sinew::DeviceInfo> devices(2);
  for (std::size_t i = 0; i < 2; ++i) devices[i].index = i;
  e.config = sinew::Config::parse(plan, devices);
  kb->store_entry(e);
  return kb->export_json();
}

}  // namespace

// A dynamic plan for a tree whose partitions meet mid-run (halos the tree writes, divide and
// conquer, a scan, a loop's predicate) made every later run of the tree fail: refused at import
// when the export or the knowledge base describes the tree, naming the entry, the tree and why.
TEST(KbImport, DynamicPlansForTreesWhosePartitionsMeetAreRefused) {
  using namespace sinew;
  auto I = sinew::vector<cl_int>().unit(8).name("img");
  auto O = sinew::vector<cl_int>().unit(8).name("out");
  auto sweep = kernel_source(kKernels, "stencil", "k.cl").args(halo(I, 1, 1), out(O), scalar(cl_uint(8))).dims(2);
  const Node halo_loop = loop(pipeline(sweep, copy(O, I))).times(4);
  auto v = sinew::vector<cl_uint>().name("keys");
  const Node sort = divide_and_conquer(v, kernel_source(kKernels, "leaf", "k.cl"), kernel_source(kKernels, "merge", "k.cl"));
  const Node prefix = scan(v, scan_op::sum());
  auto s = sinew::vector<cl_int>().name("s");
  const Node streamable = kernel_source(kKernels, "scale", "k.cl").args(inout(s));
  const Node halo_read_only = pipeline(sweep);  // reads a halo of a vector it does not write

  auto refusal = [](const std::string& json, KnowledgeBase& into) {
    try {
      into.import_json(json);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
      return std::string(e.message());
    }
    return std::string("accepted");
  };
  for (const Node* tree : {&halo_loop, &sort, &prefix})
    for (const char* plan : {"schedule=dynamic", "schedule=dynamic,min_chunk=64"}) {
      auto target = KnowledgeBase::memory();
      const std::string why = refusal(export_of(*tree, plan, true), *target);
      EXPECT_NE(why.find("dynamic"), std::string::npos) << tree->label() << ": " << why;
      EXPECT_NE(why.find("entries[0]"), std::string::npos) << why;
      EXPECT_NE(why.find(tree->label()), std::string::npos) << why;
      EXPECT_TRUE(target->entries_for_tree(tree->signature()).empty()) << "nothing is imported";
      // The tree described by the knowledge base imported into, not by the export.
      auto described = KnowledgeBase::memory();
      described->describe_tree(tree->signature(), tree->label(), tree->dump());
      EXPECT_NE(refusal(export_of(*tree, plan, false), *described).find("dynamic"), std::string::npos);
    }
  EXPECT_NE(refusal(export_of(halo_loop, "schedule=dynamic", true), *KnowledgeBase::memory()).find("halo"),
            std::string::npos);
  // Trees whose partitions never meet take a dynamic plan; an undescribed tree's plan is imported
  // (the runtime plans afresh if it cannot run it), and so is a static plan of any tree.
  for (const Node* tree : {&streamable, &halo_read_only})
    EXPECT_EQ(refusal(export_of(*tree, "schedule=dynamic", true), *KnowledgeBase::memory()), "accepted")
        << tree->label() << "\n" << tree->dump();
  EXPECT_EQ(refusal(export_of(halo_loop, "schedule=dynamic", false), *KnowledgeBase::memory()), "accepted");
  EXPECT_EQ(refusal(export_of(sort, "0=0.5", true), *KnowledgeBase::memory()), "accepted");
}

// A run's per-device times are kept, exported and imported as they were; a run without them reads
// back without them.
TEST(KbStore, RunsKeepTheirDeviceTimesThroughExportAndImport) {
  auto kb = KnowledgeBase::memory();
  auto k = key();
  auto timed = run(k, {{"n", 1}}, config({0.25, 0.75}), 12);
  timed.device_ms = {11.5, 12.0};
  kb->record_run(timed);
  kb->record_run(run(k, {{"n", 2}}, config({1, 0}), 20));
  auto check = [&](KnowledgeBase& from) {
    const auto one = from.runs(k, {{"n", 1}});
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].device_ms, (std::vector<double>{11.5, 12.0}));
    const auto two = from.runs(k, {{"n", 2}});
    ASSERT_EQ(two.size(), 1u);
    EXPECT_TRUE(two[0].device_ms.empty());
  };
  check(*kb);
  kb->store_entry(entry(k, {{"n", 1}}, config({0.25, 0.75}), 12));
  auto copy = KnowledgeBase::memory();
  copy->import_json(kb->export_json());
  check(*copy);
}
