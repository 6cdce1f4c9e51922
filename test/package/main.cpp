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
  if (twice.dump().find("twice") == std::string::npos) return 1;
  // Plans name schedules and items that their owners register while static objects are made: a
  // program that reads plans without running a tree sees them too (a static libsinew included).
  std::vector<sinew::DeviceInfo> devices(2);
  for (std::size_t i = 0; i < devices.size(); ++i) devices[i].index = i;
  for (const char* plan : {"schedule=dynamic,min_chunk=64", "schedule=steal,least_range=1:64", "crossover=2"})
    std::cout << plan << " -> " << sinew::Config::parse(plan, devices).str() << '\n';
  return 0;
}
