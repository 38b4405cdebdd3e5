// cppless/archive/std_types.hpp — codecs for the fundamental types and the standard library, one
// header per family under archive/types/ (as cereal keeps one header per type). Part of
// <cppless/archive.hpp>; the byte layout of each is listed in archive/core.hpp.
#pragma once

#include "cppless/archive/types/arithmetic.hpp"
#include "cppless/archive/types/array.hpp"
#include "cppless/archive/types/associative.hpp"
#include "cppless/archive/types/atomic.hpp"
#include "cppless/archive/types/bitset.hpp"
#include "cppless/archive/types/chrono.hpp"
#include "cppless/archive/types/complex.hpp"
#include "cppless/archive/types/memory.hpp"
#include "cppless/archive/types/optional.hpp"
#include "cppless/archive/types/polymorphic.hpp"
#include "cppless/archive/types/sequence.hpp"
#include "cppless/archive/types/string.hpp"
#include "cppless/archive/types/tuple.hpp"
#include "cppless/archive/types/variant.hpp"
#include "cppless/archive/types/vector.hpp"
