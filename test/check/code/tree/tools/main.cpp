// tools/main.cpp — a program; its HOME read is no SINEW_ variable.
#include <cstdlib>

int main() { return std::getenv("HOME") ? 0 : 1; }
