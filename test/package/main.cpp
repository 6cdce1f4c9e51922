// test/package/main.cpp — builds a one-kernel tree against an installed Sinew and prints it.
// Needs no OpenCL device: describing a tree never touches one.
#include <sinew/sinew.hpp>

#include <iostream>

int main() {
  auto data = sinew::vector<cl_float>(1024).name("data");
  auto twice = sinew::kernel_source(R"CL(
      __kernel void twice(__global float* v, float factor) {
        size_t i = get_global_id(0);
        v[i] *= factor;
      })CL", "twice", "package test")
                   .args(sinew::inout(data), sinew::scalar(2.0f));
  std::cout << "sinew " << sinew::version << '\n' << twice.dump();
  return twice.dump().find("twice") == std::string::npos ? 1 : 0;
}
