// cppless/shared.hpp — shared objects for stateful functions (the Crucial design), kept in Redis:
// counter, atomic<T>, best<V, P>, barrier, latch, semaphore, write_once<T>, map<K, V>, queue<T>,
// list<T>, byte_array and user-defined types (custom.hpp), all linearizable, named under a
// namespace, on one Redis server or a Redis Cluster, usable from the host and from offloaded
// functions; with Crucial's cloud threads, invoke_all and parallel_for (cppless/cloud_thread.hpp).
// Link cppless::shared. See docs/shared-objects.md.
#pragma once

#include <cppless/shared/errors.hpp>
#include <cppless/shared/store.hpp>
#include <cppless/cloud_thread.hpp>
