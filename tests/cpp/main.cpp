// Catch2 v2's main, compiled once as its own translation unit (it is slow to compile under em++).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
