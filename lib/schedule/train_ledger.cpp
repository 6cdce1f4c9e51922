// schedule/train_ledger.cpp — a training's budget, its measured points and its clock.
#include "schedule/train_ledger.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace sinew::detail {

TrainingLedger::TrainingLedger(std::size_t executions, Progress progress, TimeBudget time)
    : total_(executions), limit_(executions), time_(time), progress_(std::move(progress)) {}

TrainingLedger::TrainingLedger(const TrainingResult& trained, std::size_t executions, Progress progress,
                               TimeBudget time)
    : TrainingLedger(executions, std::move(progress), time) {
  spent_ = trained.executions;
  points_ = trained.points;
  program_build_seconds_ = trained.build_seconds - trained.first_run_seconds;
  first_run_seconds_ = trained.first_run_seconds;
  started_ -= std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(trained.seconds));
  time_over_ = trained.end == TrainingEnd::time;
  stopped_ = trained.end == TrainingEnd::time || trained.end == TrainingEnd::executions;
}

void TrainingLedger::into(TrainingResult& r) const {
  r.executions = spent_;
  r.points = points_;
  r.seconds = seconds();
  r.end = end();
  r.budget_seconds = budget_seconds();
  r.build_seconds = build_seconds();
  r.first_run_seconds = first_run_seconds_;
}

Measurement TrainingLedger::run(const Measure& measure, const Config& c) {
  Measurement m = measure(c);
  program_build_seconds_ += m.build_ms / 1000;
  const double run_ms = m.time_ms - m.build_ms;
  auto [first, new_plan] = first_runs_.try_emplace(c.str(), run_ms);
  if (!new_plan && first->second) {
    first_run_seconds_ += std::max(0.0, *first->second - run_ms) / 1000;
    first->second.reset();
  }
  return m;
}

bool TrainingLedger::take(std::size_t runs, double each_ms) {
  if (!points_.empty() && !time_over_ && out_of_time(static_cast<double>(runs) * each_ms / 1000)) {
    time_over_ = stopped_ = true;
    note(stop_line());
  }
  if (phase_over_ || (!points_.empty() && (time_over_ || spent_ + runs > limit_))) {
    phase_over_ = true;
    return false;
  }
  spent_ += runs;
  return true;
}

bool TrainingLedger::out_of_time(double ahead_s) const {
  return time_.limited() && budget_clock() + ahead_s >= budget_seconds();
}

double TrainingLedger::budget_seconds() const {
  return time_.seconds(points_.empty() ? 0 : fastest().time_ms);
}

TrainingEnd TrainingLedger::end() const {
  return time_over_ ? TrainingEnd::time : stopped_ ? TrainingEnd::executions : TrainingEnd::completed;
}

std::string TrainingLedger::stop_line() const {
  std::ostringstream line;
  line << std::fixed << std::setprecision(1);
  if (time_over_)
    line << "stopped: the time budget of " << budget_seconds() << " s is spent"
         << (budget_clock() < budget_seconds() ? " but for less than the next runs take" : "") << " ("
         << budget_clock() << " s measuring, " << seconds() << " s in all" << builds_text() << ", " << spent_
         << " executions)";
  else
    line << "stopped: the budget of " << total_ << " executions is spent";
  return line.str();
}

std::string TrainingLedger::builds_text() const {
  if (build_seconds() <= 0) return "";
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << " with " << program_build_seconds_ << " s building programs and "
       << first_run_seconds_ << " s in plans' first runs beyond their second";
  return text.str();
}

std::string TrainingLedger::status() const {
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << budget_clock() << " s";
  if (time_.limited()) line << " of " << budget_seconds() << " s";
  line << ", " << spent_ << "/" << total_ << " executions";
  return line.str();
}

const TrainingPoint& TrainingLedger::add(TrainingPoint p) {
  points_.push_back(std::move(p));
  return points_.back();
}

bool TrainingLedger::measured(const Config& c) const { return find(c) != nullptr; }

const TrainingPoint* TrainingLedger::find(const Config& c) const {
  auto it = std::find_if(points_.begin(), points_.end(), [&](const TrainingPoint& p) { return p.config == c; });
  return it == points_.end() ? nullptr : &*it;
}

const TrainingPoint& TrainingLedger::fastest() const {
  return *std::min_element(points_.begin(), points_.end(),
                           [](const TrainingPoint& a, const TrainingPoint& b) { return a.time_ms < b.time_ms; });
}

std::vector<std::pair<Config, double>> TrainingLedger::ranked() const {
  std::vector<std::pair<Config, std::vector<double>>> times;
  for (const auto& p : points_) {
    auto it = std::find_if(times.begin(), times.end(), [&](const auto& e) { return e.first == p.config; });
    if (it == times.end()) times.emplace_back(p.config, std::vector<double>{p.time_ms});
    else it->second.push_back(p.time_ms);
  }
  std::vector<std::pair<Config, double>> out;
  for (auto& [c, t] : times) out.emplace_back(c, median(t));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

void TrainingLedger::keep_only(const Config& c, const TrainingPoint& kept) {
  const TrainingPoint copy = kept;  // `kept` may be one of c's points
  std::erase_if(points_, [&](const TrainingPoint& p) { return p.config == c; });
  points_.push_back(copy);
}

void TrainingLedger::note(const std::string& line) const {
  if (progress_) progress_(line);
}

double TrainingLedger::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

}  // namespace sinew::detail
