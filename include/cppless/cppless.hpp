// cppless/cppless.hpp — everything a user of cppless needs, in one include.
#pragma once

#include <cppless/archive.hpp>
#include <cppless/config.hpp>
#include <cppless/dispatch.hpp>
#include <cppless/error.hpp>
#include <cppless/graph.hpp>
#include <cppless/instance.hpp>
#include <cppless/local.hpp>
#include <cppless/worker.hpp>
