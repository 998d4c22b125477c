// One include for Catch2 2.x (single header) and 3.x (split headers).
#pragma once

#if CT3D_CATCH2_MAJOR >= 3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif

// "message contains" matcher under both major versions.
#if CT3D_CATCH2_MAJOR >= 3
#define CT3D_CONTAINS(text) Catch::Matchers::ContainsSubstring(text)
#else
#define CT3D_CONTAINS(text) Catch::Contains(text)
#endif
