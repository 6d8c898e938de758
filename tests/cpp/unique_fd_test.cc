#include "libmkb/core/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <utility>

namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

}  // namespace

TEST_CASE("a UniqueFd closes what it holds, once, and hands it on when moved or released") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  {
    mkb::UniqueFd a(fds[0]);
    CHECK(a.valid());
    mkb::UniqueFd b(std::move(a));
    CHECK_FALSE(a.valid());
    CHECK(b.get() == fds[0]);
    CHECK(IsOpen(fds[0]));
  }
  CHECK_FALSE(IsOpen(fds[0]));  // closed by b, not twice by a

  mkb::UniqueFd w(fds[1]);
  const int raw = w.release();
  CHECK_FALSE(w.valid());
  CHECK(IsOpen(raw));
  mkb::UniqueFd again;
  again.reset(raw);
  again.reset(raw);  // the same descriptor again: kept, not closed
  CHECK(IsOpen(raw));
  mkb::UniqueFd other;
  other = std::move(again);
  CHECK(IsOpen(raw));
  other.reset();
  CHECK_FALSE(IsOpen(raw));
}
