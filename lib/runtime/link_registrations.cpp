// runtime/link_registrations.cpp — one symbol that reaches every object registering a plug-in
// while the library's static objects are made.
//
// Schedule names and plan items register themselves from their owners' files
// (platform/plan_items.hpp). A program linked against a static libsinew gets an object only when
// it refers to one of its symbols, so a program that reads plans without running a tree (the
// knowledge base's import, Config::parse) would see only the static schedule. Static links of
// sinew::sinew (and pkg-config's --static flags) carry --undefined=sinew_link_registrations
// (lib/CMakeLists.txt, cmake/Package.cmake): this object, and through it every registering
// object, is always linked. A new self-registering file adds one reference here.
#include "decompose/schedule_policy.hpp"

#include <sinew/tree.hpp>

extern "C" const void* sinew_link_registrations() {
  static const void* const reached[] = {
      // The schedule registry, and through its built-in list each policy with its plan items.
      reinterpret_cast<const void*>(&sinew::detail::schedule_policies),
      // Divide and conquer's plan items (crossover, upper).
      reinterpret_cast<const void*>(&sinew::divide_and_conquer),
  };
  return reached;
}
