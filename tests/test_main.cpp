// Catch2 2.x needs one translation unit to define main; Catch2 3.x brings its own
// main in Catch2WithMain, but we define it here for both, so the two build alike.
#if CT3D_CATCH2_MAJOR >= 3
#include <catch2/catch_session.hpp>
int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
#else
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#endif
