// test/unit/kb_cli_test.cpp — `sinew kb list/show/export/import/clear` on a temporary knowledge
// base (the built sinew binary, no OpenCL device needed).
#include <sinew/kb.hpp>

#include "kb/json.hpp"
#include "kb/kb_test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>

#include <cstdlib>

namespace {

using kbtest::config;
using kbtest::entry;
using kbtest::key;
using kbtest::read_file;
using kbtest::run;
using kbtest::TempDir;

struct Result {
  int status;
  std::string out, err;
};

// Runs `sinew <args>` with `env` prepended (VAR=value ...), capturing both streams.
Result sinew_cli(const TempDir& dir, const std::string& args, const std::string& env = "") {
  std::string out = dir.file("stdout"), err = dir.file("stderr");
  std::string command = "env -u SINEW_KB " + env + " '" + std::string(SINEW_CLI) + "' " + args + " >'" + out +
                        "' 2>'" + err + "'";
  int rc = std::system(command.c_str());
  Result r{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, read_file(out), read_file(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void populate(const std::string& path) {
  auto kb = sinew::KnowledgeBase::open(path, {.log = {}});
  ASSERT_TRUE(kb->persistent());
  auto a = key("aaaa000000000001");
  kb->describe_tree(a.tree, "filters", "pipeline\n  kernel 'noise'");
  auto id = kb->store_entry(entry(a, {{"width", 1024}, {"height", 768}}, config({0.25, 0.75}, "L2", 2), 12.5));
  auto derived = entry(a, {{"width", 2048}, {"height", 768}}, config({0.25, 0.75}, "L2", 2), 12.5, sinew::Provenance::derived);
  derived.source = id;
  kb->store_entry(derived);
  for (int i = 0; i < 15; ++i) kb->record_run(run(a, {{"width", 1024}, {"height", 768}}, config({0.25, 0.75}, "L2", 2), 20 + i));
  kb->store_entry(entry(key("aaaa000000000002"), {{"n", 1}}, config({1, 0}), 1));
  kb->store_entry(entry(key("bbbb000000000003"), {{"n", 1}}, config({1, 0}), 1));
}

TEST(KbCli, ListOnAMissingFileCreatesNothing) {
  TempDir dir;
  auto r = sinew_cli(dir, "kb list --kb '" + dir.file("none.sqlite") + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "no knowledge base at")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.sqlite")));
}

// Commands that only read never move, create or convert a file: on a corrupt file `kb list`,
// `kb show` and `kb export` report it and exit non-zero, the file left where and as it was (they
// used to move it aside and say they went on in memory while exiting 1).
TEST(KbCli, ReadingCommandsLeaveABadFileAsItIs) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  kbtest::write_file(path, std::string(8192, 'z'));
  for (const char* command : {"kb list", "kb show aaaa", "kb export"}) {
    auto r = sinew_cli(dir, std::string(command) + " --kb '" + path + "'");
    EXPECT_NE(r.status, 0) << command;
    EXPECT_NE(r.err.find("cannot be read"), std::string::npos) << command << ": " << r.err;
    EXPECT_EQ(r.err.find("in-memory"), std::string::npos) << command << ": " << r.err;
    EXPECT_EQ(kbtest::read_file(path), std::string(8192, 'z')) << command;
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
    EXPECT_EQ(names, (std::vector<std::string>{"kb.sqlite"})) << command;
  }
}

// A 0-byte file (just created by a process that has not written its schema yet) reads as an
// empty knowledge base: list and export exit 0, show finds no tree as in any knowledge base
// without it, and the file stays 0 bytes with nothing created beside it.
TEST(KbCli, ReadingCommandsOnAnEmptyFileSeeAnEmptyKnowledgeBase) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  kbtest::write_file(path, "");
  auto list = sinew_cli(dir, "kb list --kb '" + path + "'");
  EXPECT_EQ(list.status, 0) << list.err;
  auto exported = sinew_cli(dir, "kb export --kb '" + path + "'");
  EXPECT_EQ(exported.status, 0) << exported.err;
  EXPECT_TRUE(contains(exported.out, "\"entries\"")) << exported.out;
  auto show = sinew_cli(dir, "kb show aaaa --kb '" + path + "'");
  EXPECT_TRUE(contains(show.err, "no tree")) << show.err;
  for (const Result* r : {&list, &exported, &show}) {
    EXPECT_FALSE(contains(r->err, "no such table")) << r->err;
    EXPECT_FALSE(contains(r->err, "OpenCL")) << r->err;
  }
  EXPECT_EQ(kbtest::read_file(path), "");
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"kb.sqlite"}));
}

TEST(KbCli, ListShowExportClearImport) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  populate(path);
  const std::string kb = " --kb '" + path + "'";

  auto list = sinew_cli(dir, "kb list" + kb);
  EXPECT_EQ(list.status, 0) << list.err;
  EXPECT_TRUE(contains(list.out, "3 trees")) << list.out;
  EXPECT_TRUE(contains(list.out, "aaaa000000000001  filters")) << list.out;

  // SINEW_KB instead of --kb.
  auto by_env = sinew_cli(dir, "kb list", "SINEW_KB='" + path + "'");
  EXPECT_EQ(by_env.out, list.out);

  auto show = sinew_cli(dir, "kb show aaaa000000000001" + kb);
  EXPECT_EQ(show.status, 0) << show.err;
  EXPECT_TRUE(contains(show.out, "filters")) << show.out;
  EXPECT_TRUE(contains(show.out, "| pipeline")) << show.out;
  EXPECT_TRUE(contains(show.out, "width=1024, height=768")) << show.out;
  EXPECT_TRUE(contains(show.out, "derived from #1")) << show.out;
  EXPECT_TRUE(contains(show.out, "{fission=L2, overlap=2, shares=[0.25, 0.75]}")) << show.out;
  EXPECT_TRUE(contains(show.out, "15 runs with width=1024, height=768 (the last 10)")) << show.out;
  auto all = sinew_cli(dir, "kb show aaaa000000000001 --runs 0" + kb);
  EXPECT_TRUE(contains(all.out, "15 runs with width=1024, height=768:")) << all.out;

  auto ambiguous = sinew_cli(dir, "kb show aaaa" + kb);
  EXPECT_EQ(ambiguous.status, 1);
  EXPECT_TRUE(contains(ambiguous.err, "starts 2 trees")) << ambiguous.err;
  auto unknown = sinew_cli(dir, "kb show ffff" + kb);
  EXPECT_EQ(unknown.status, 1);
  EXPECT_TRUE(contains(unknown.err, "no tree")) << unknown.err;
  EXPECT_EQ(sinew_cli(dir, "kb show" + kb).status, 2);

  const std::string exported = dir.file("export.json");
  auto ex = sinew_cli(dir, "kb export --out '" + exported + "'" + kb);
  EXPECT_EQ(ex.status, 0) << ex.err;
  auto json = read_file(exported);
  EXPECT_TRUE(contains(json, "\"format\": \"sinew-knowledge-base\"")) << json;
  auto to_stdout = sinew_cli(dir, "kb export --tree bbbb" + kb);
  EXPECT_TRUE(contains(to_stdout.out, "bbbb000000000003"));
  EXPECT_FALSE(contains(to_stdout.out, "aaaa000000000001"));

  auto one = sinew_cli(dir, "kb clear --tree aaaa000000000002" + kb);
  EXPECT_EQ(one.status, 0) << one.err;
  EXPECT_TRUE(contains(one.out, "removed 1 entry, 0 runs and 0 events")) << one.out;
  auto clear = sinew_cli(dir, "kb clear" + kb);
  EXPECT_EQ(clear.status, 0) << clear.err;
  EXPECT_TRUE(contains(clear.out, "removed 3 entries, 15 runs and 0 events")) << clear.out;
  EXPECT_TRUE(contains(sinew_cli(dir, "kb list" + kb).out, "0 trees"));

  auto import = sinew_cli(dir, "kb import '" + exported + "'" + kb);
  EXPECT_EQ(import.status, 0) << import.err;
  EXPECT_TRUE(contains(import.out, "imported 4 entries, 15 runs and 0 events")) << import.out;
  EXPECT_EQ(sinew_cli(dir, "kb list" + kb).out, list.out);
  auto again = sinew_cli(dir, "kb import '" + exported + "'" + kb);
  EXPECT_TRUE(contains(again.out, "already there")) << again.out;

  auto bad = dir.file("bad.json");
  kbtest::write_file(bad, "{\"format\": 1");
  auto rejected = sinew_cli(dir, "kb import '" + bad + "'" + kb);
  EXPECT_EQ(rejected.status, 1);
  EXPECT_TRUE(contains(rejected.err, "line 1")) << rejected.err;
}

namespace json = sinew::detail::kb::json;

const json::Value& member(const json::Value& v, std::string_view key) {
  static const json::Value missing;
  const json::Value* m = v.find(key);
  EXPECT_NE(m, nullptr) << "no member '" << key << "' in " << json::dump(v);
  return m ? *m : missing;
}

// `kb list --json` and `kb show --json` print what the tables show as JSON that parses, numbers
// with every digit; without a knowledge base, list prints an empty list and says why on stderr.
TEST(KbCli, ListAndShowAsJson) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  populate(path);
  const std::string kb = " --kb '" + path + "'";

  auto list = sinew_cli(dir, "kb list --json" + kb);
  ASSERT_EQ(list.status, 0) << list.err;
  const json::Value listed = json::parse(list.out);
  EXPECT_EQ(member(listed, "knowledge_base").string(), path);
  const auto& trees = member(listed, "trees").array();
  ASSERT_EQ(trees.size(), 3u) << list.out;
  // The most recently used first: populate() wrote the trees within a second or over several, so
  // the test finds its tree by name rather than by place.
  const json::Value* filters = nullptr;
  for (const json::Value& t : trees)
    if (member(t, "tree").string() == "aaaa000000000001") filters = &t;
  ASSERT_NE(filters, nullptr) << list.out;
  for (std::size_t i = 1; i < trees.size(); ++i)  // ISO times: their text order is their time order
    EXPECT_GE(member(trees[i - 1], "updated").string(), member(trees[i], "updated").string()) << list.out;
  EXPECT_EQ(member(*filters, "label").string(), "filters");
  EXPECT_EQ(member(*filters, "entries").number(), 2);
  EXPECT_EQ(member(*filters, "runs").number(), 15);

  auto show = sinew_cli(dir, "kb show aaaa000000000001 --json" + kb);
  ASSERT_EQ(show.status, 0) << show.err;
  const json::Value shown = json::parse(show.out);
  EXPECT_EQ(member(shown, "tree").string(), "aaaa000000000001");
  const auto& entries = member(shown, "entries").array();
  ASSERT_EQ(entries.size(), 2u) << show.out;
  EXPECT_EQ(member(entries[0], "config").string(), "{fission=L2, overlap=2, shares=[0.25, 0.75]}");
  EXPECT_EQ(member(entries[0], "time_ms").number(), 12.5);
  EXPECT_EQ(member(member(entries[0], "features"), "width").number(), 1024);
  EXPECT_EQ(member(entries[1], "provenance").string(), "derived");
  EXPECT_EQ(member(entries[1], "source").number(), member(entries[0], "id").number());
  const auto& runs = member(shown, "runs").array();
  ASSERT_EQ(runs.size(), 15u) << "every run, not the last 10 of the table";
  EXPECT_EQ(member(runs[14], "time_ms").number(), 34);

  auto none = sinew_cli(dir, "kb list --json --kb '" + dir.file("none.sqlite") + "'");
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(member(json::parse(none.out), "trees").array().size(), 0u) << none.out;
  EXPECT_TRUE(contains(none.err, "no knowledge base at")) << none.err;
}

// `kb plot` writes an SVG document (well-formed: one root, balanced tags) with a point per device
// and run and the stored plan ringed; `-o -` prints it.
TEST(KbCli, PlotWritesAnSvgOfTheMeasuredPoints) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  populate(path);
  const std::string svg = dir.file("plot.svg");
  auto r = sinew_cli(dir, "kb plot aaaa000000000001 --kb '" + path + "' -o '" + svg + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "wrote " + svg)) << r.out;
  const std::string text = read_file(svg);
  ASSERT_EQ(text.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << text.substr(0, 200);
  EXPECT_TRUE(contains(text, "</svg>\n"));
  auto count = [&](const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<text"), count("</text>"));
  // Two inputs (width 1024: trained, 15 runs; width 2048: derived, no run), a panel each.
  EXPECT_EQ(count("<circle"), 15u * 2 + 2 * 2) << "a point per device and run, a ring per device of each stored plan";
  EXPECT_EQ(count("fill=\"none\" stroke-width=\"2\""), 2u * 2) << "the stored plans' rings";
  EXPECT_TRUE(contains(text, "stored plan: {fission=L2, overlap=2, shares=[0.25, 0.75]}"));
  EXPECT_TRUE(contains(text, "width=1024")) << "the panel names its input";

  auto stdout_svg = sinew_cli(dir, "kb plot aaaa000000000001 -o - --kb '" + path + "'");
  EXPECT_EQ(stdout_svg.status, 0) << stdout_svg.err;
  EXPECT_EQ(stdout_svg.out, text);
  auto unknown = sinew_cli(dir, "kb plot cccc --kb '" + path + "'");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_TRUE(contains(unknown.err, "no tree")) << unknown.err;
}

TEST(KbCli, UnusableFileIsAnError) {
  TempDir dir;
  const std::string path = dir.file("kb.sqlite");
  kbtest::write_file(path, std::string(4096, '\x01'));
  auto r = sinew_cli(dir, "kb list --kb '" + path + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "corrupt")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(KbCli, Usage) {
  TempDir dir;
  EXPECT_EQ(sinew_cli(dir, "kb").status, 2);
  auto help = sinew_cli(dir, "kb --help");
  EXPECT_EQ(help.status, 0);
  for (const char* c : {"list", "show", "export", "import", "clear"}) EXPECT_TRUE(contains(help.out, c)) << c;
  EXPECT_EQ(sinew_cli(dir, "kb frobnicate").status, 2);
  EXPECT_EQ(sinew_cli(dir, "kb show --help").status, 0);
}

}  // namespace
