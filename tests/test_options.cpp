// The user's options (ops/options/options.h) and the tests' forced forms (ops/options/forced_form.h):
// parsed from their text, errors that name the option and what it takes, and each
// forced form's choices at the places it names.
#include "catch.h"
#include "ops/options/form_choice.h"
#include "ops/options/options.h"

namespace {

using ct3d::FormChoice;
using ct3d::FormSwitch;

// Restores every option's default when a test case ends, however it ends.
struct DefaultsAfter {
  ~DefaultsAfter() {
    for (const char* name :
         {"max_capability", "winograd", "winograd_workspace_mib", "cpu_isa", "force_form"}) {
      ct3d::set_option(name, "");
    }
  }
};

}  // namespace

TEST_CASE("options: set from their text, an empty value restores the default", "[options]") {
  DefaultsAfter restore;
  ct3d::set_option("max_capability", "8.0");
  CHECK(ct3d::options().max_capability == 80);
  ct3d::set_option("max_capability", "90");
  CHECK(ct3d::options().max_capability == 90);
  ct3d::set_option("max_capability", "");
  CHECK(ct3d::options().max_capability == 0);

  ct3d::set_option("winograd", "off");
  CHECK(ct3d::options().winograd == ct3d::WinogradUse::kOff);
  CHECK(ct3d::form_choice(FormSwitch::kWinograd) == FormChoice::kNever);
  ct3d::set_option("winograd", "auto");
  CHECK(ct3d::form_choice(FormSwitch::kWinograd) == FormChoice::kRule);

  ct3d::set_option("winograd_workspace_mib", "512");
  CHECK(ct3d::options().winograd_workspace_mib == 512);
  ct3d::set_option("cpu_isa", "generic");
  CHECK(ct3d::options().cpu_isa == ct3d::CpuIsa::kGeneric);
  CHECK_THAT(ct3d::describe_options(), CT3D_CONTAINS("winograd_workspace_mib=512\n"));
  CHECK_THAT(ct3d::describe_options(), CT3D_CONTAINS("cpu_isa=generic\n"));
}

TEST_CASE("options: a bad name or value names the option and what it takes", "[options]") {
  DefaultsAfter restore;
  REQUIRE_THROWS_WITH(ct3d::set_option("winograd_tiles", "4x4"),
                      CT3D_CONTAINS("ct3d has no option 'winograd_tiles'; its options are "
                                    "max_capability, winograd,"));
  REQUIRE_THROWS_WITH(ct3d::set_option("winograd", "1"),
                      CT3D_CONTAINS("ct3d option winograd (CT3D_WINOGRAD): expected auto or "
                                    "off, got '1'"));
  REQUIRE_THROWS_WITH(ct3d::set_option("max_capability", "nine"),
                      CT3D_CONTAINS("expected a compute capability such as 8.0"));
  REQUIRE_THROWS_WITH(ct3d::set_option("winograd_workspace_mib", "0"),
                      CT3D_CONTAINS("a whole number of MiB, at least 1"));
  REQUIRE_THROWS_WITH(ct3d::set_option("cpu_isa", "avx2"), CT3D_CONTAINS("auto or generic"));
  REQUIRE_THROWS_WITH(ct3d::set_option("force_form", "tap-colums"),
                      CT3D_CONTAINS("no form named 'tap-colums'; the forms are cpu-direct,"));
  // A refused value leaves the option as it was.
  CHECK(ct3d::options().winograd == ct3d::WinogradUse::kAuto);
  CHECK(ct3d::options().forced_count == 0);
}

TEST_CASE("forced forms: the named form on, its family's others off, the rest the rule's",
          "[options]") {
  DefaultsAfter restore;
  for (int w = 0; w < static_cast<int>(FormSwitch::kCount); ++w) {
    CHECK(ct3d::form_choice(static_cast<FormSwitch>(w)) == FormChoice::kRule);
  }
  ct3d::set_option("force_form", "tap-columns-flat");
  CHECK(ct3d::form_choice(FormSwitch::kTapRows) == FormChoice::kAlways);
  CHECK(ct3d::form_choice(FormSwitch::kTapColumns) == FormChoice::kAlways);
  CHECK(ct3d::form_choice(FormSwitch::kTapColumnsFlat) == FormChoice::kAlways);
  CHECK(ct3d::form_choice(FormSwitch::kTapColumnsLines) == FormChoice::kNever);
  CHECK(ct3d::form_choice(FormSwitch::kShiftedWindow) == FormChoice::kNever);
  CHECK(ct3d::form_choice(FormSwitch::kWinograd) == FormChoice::kNever);
  CHECK(ct3d::form_choice(FormSwitch::kTapColumnsBoxes) == FormChoice::kAlways);
  CHECK(ct3d::form_choice(FormSwitch::kWgradWgmma) == FormChoice::kRule);
  CHECK(ct3d::form_choice(FormSwitch::kCpuDirect) == FormChoice::kRule);

  ct3d::set_option("force_form", "cpu-gather");
  CHECK(ct3d::form_choice(FormSwitch::kCpuDirect) == FormChoice::kNever);
  CHECK(ct3d::form_choice(FormSwitch::kCpuScatter) == FormChoice::kNever);
  CHECK(ct3d::form_choice(FormSwitch::kWinograd) == FormChoice::kRule);

  ct3d::set_option("force_form", "wgrad-wgmma-16");
  CHECK(ct3d::form_choice(FormSwitch::kWgradWgmma) == FormChoice::kAlways);
  CHECK(ct3d::form_choice(FormSwitch::kWgradPositions32) == FormChoice::kNever);

  // Forcing Winograd on wins over the user's winograd=off (the tests' hook).
  ct3d::set_option("winograd", "off");
  ct3d::set_option("force_form", "winograd");
  CHECK(ct3d::form_choice(FormSwitch::kWinograd) == FormChoice::kAlways);
  CHECK(ct3d::forced_form_name(ct3d::options().forced_forms[0]) == std::string("winograd"));

  // One form off, the others the rules': the planner's next choice where it was chosen.
  ct3d::set_option("winograd", "auto");
  ct3d::set_option("force_form", "no-tap-columns");
  CHECK(ct3d::form_choice(FormSwitch::kTapColumns) == FormChoice::kNever);
  CHECK(ct3d::form_choice(FormSwitch::kTapRows) == FormChoice::kRule);
  CHECK(ct3d::form_choice(FormSwitch::kShiftedWindow) == FormChoice::kRule);
  CHECK(ct3d::form_choice(FormSwitch::kWinograd) == FormChoice::kRule);

  // A list: each form's settings in turn, a later one overriding an earlier one's.
  ct3d::set_option("force_form", "tap-columns,half-widened,tap-rows");
  CHECK(ct3d::options().forced_count == 3);
  CHECK(ct3d::form_choice(FormSwitch::kTapColumns) == FormChoice::kNever);
  CHECK(ct3d::form_choice(FormSwitch::kTapRows) == FormChoice::kAlways);
  CHECK(ct3d::form_choice(FormSwitch::kHalfWindow) == FormChoice::kNever);
  CHECK(ct3d::form_choice(FormSwitch::kHalfWgrad) == FormChoice::kNever);
  CHECK_THAT(ct3d::describe_options(),
             CT3D_CONTAINS("force_form=tap-columns,half-widened,tap-rows\n"));
  REQUIRE_THROWS_WITH(ct3d::set_option("force_form", "gather,gather,gather,gather,gather"),
                      CT3D_CONTAINS("comma-separated"));
}
