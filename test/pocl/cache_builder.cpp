// Test helper process: builds one program through a ProgramCache in the given directory and
// prints "builds disk_hits corrupt" so tests can run several processes at once on one cache.
#include "platform/device.hpp"

#include <iostream>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  try {
    sinew::detail::ProgramCache cache(argv[1]);
    std::vector<cl::Platform> platforms;
    cl::Platform::get(&platforms);
    std::vector<cl::Device> devices;
    platforms.at(0).getDevices(CL_DEVICE_TYPE_ALL, &devices);
    cl::Context ctx(devices.at(0));
    auto program = cache.get(ctx, {devices.at(0)}, {argv[2], "<cache test>"}, "");
    cl::Kernel k(program, "cached");  // the program really holds the kernel
    auto s = cache.stats();
    std::cout << s.builds << " " << s.disk_hits << " " << s.corrupt_files << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
