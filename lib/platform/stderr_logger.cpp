// platform/stderr_logger.cpp — the default Logger: the library's lines on stderr, a training's
// progress rewritten in place where stderr is a terminal.
#include <sinew/options.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

namespace sinew {

namespace {

// Whether stderr is a terminal that understands a carriage return and "erase the line".
bool stderr_is_terminal() {
  if (::isatty(STDERR_FILENO) != 1) return false;
  const char* term = std::getenv("TERM");
  return !term || std::strcmp(term, "dumb") != 0;
}

// The terminal's width in characters, 80 where it does not say.
std::size_t terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

Logger stderr_logger() {
  const bool terminal = stderr_is_terminal();
  return [terminal](LogLevel level, const std::string& line) {
    static std::mutex mutex;
    static bool progress_shown = false;  // a progress line waits on the terminal, unterminated
    std::lock_guard lock(mutex);
    const std::string text = "sinew: " + std::string(level == LogLevel::warning ? "warning: " : "") + line;
    if (!terminal) {
      std::cerr << text << std::endl;
      return;
    }
    // "\r\033[K": back to the line's start, and erase it.
    if (level == LogLevel::progress) {
      // A line wider than the terminal would wrap, and the next one would rewrite only its last row.
      const std::size_t width = terminal_columns() - 1;
      std::cerr << "\r\033[K" << (text.size() > width ? text.substr(0, width) : text) << std::flush;
      progress_shown = true;
      return;
    }
    if (progress_shown) std::cerr << "\r\033[K";
    progress_shown = false;
    std::cerr << text << std::endl;
  };
}

}  // namespace sinew
