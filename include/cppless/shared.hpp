// cppless/shared.hpp — shared objects for stateful functions (the Crucial design), kept in Redis:
// counter, atomic<T>, best<V, P>, barrier, latch, semaphore, future<T>, map<K, V>, queue<T>, all
// linearizable, named under a per-run namespace, usable from the host and from offloaded
// functions; with Crucial's cloud threads, invoke_all and parallel_for (cppless/cloud_thread.hpp).
// Link cppless::shared. See docs/shared-objects.md.
#pragma once

#include <cppless/shared/errors.hpp>
#include <cppless/shared/store.hpp>
#include <cppless/cloud_thread.hpp>
