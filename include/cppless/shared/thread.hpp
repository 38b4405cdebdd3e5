// cppless/shared/thread.hpp — the old home of the cloud threads, which need no Redis: they are in
// cppless/cloud_thread.hpp now. These names are kept for code written against them.
#pragma once

#include <cppless/cloud_thread.hpp>

namespace cppless::shared {

using thread [[deprecated("renamed cppless::cloud_thread (cppless/cloud_thread.hpp)")]] = cppless::cloud_thread;
using cppless::invoke_all;
using cppless::parallel_for;

}  // namespace cppless::shared
