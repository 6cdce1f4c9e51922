// runtime/source_chain.hpp — sources tried in order, the first that answers giving the answer:
// where a request's plan comes from (runtime/plan_source.hpp) and where a Cluster's rank shares
// come from (runtime/cluster_split.cpp).
//
// A Source is any class with
//   std::optional<Answer> offer(const Request&) const;   // nothing: it does not answer
//   std::string_view name() const;                        // for errors and tests
// The chain owns its sources; adding one is a line where the chain is made.
#pragma once

#include "platform/error.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sinew::detail {

template <class Source>
class SourceChain {
 public:
  SourceChain& add(std::unique_ptr<Source> source) {
    sources_.push_back(std::move(source));
    return *this;
  }

  // The first source's answer, with the source that gave it. A chain none of whose sources
  // answers is the library's mistake (every chain ends with one that always answers).
  template <class Request>
  auto first(const Request& request) const {
    using Answer = typename decltype(std::declval<const Source&>().offer(request))::value_type;
    struct Answered {
      const Source* source;
      Answer answer;
    };
    for (const auto& s : sources_)
      if (auto answer = s->offer(request)) return Answered{s.get(), std::move(*answer)};
    throw_error(errc::library, "no source answered (a chain of " + std::to_string(sources_.size()) + " sources)",
                {.node = "runtime", .fix = "report this as a bug in Sinew"});
  }

  std::vector<std::string_view> names() const {
    std::vector<std::string_view> out;
    for (const auto& s : sources_) out.push_back(s->name());
    return out;
  }

 private:
  std::vector<std::unique_ptr<Source>> sources_;
};

}  // namespace sinew::detail
