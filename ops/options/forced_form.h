// The forms the tests pin through their one hook, CT3D_FORCE_FORM=<form>[,<form>...]
// (or ct3d.set_option("force_form", ...); form_choice.h answers the places that ask).
// Each form of the table (forced_form.cpp) sets the choices that lead to it: its own switch on wherever it takes the problem,
// the other forms of its family off (so a problem the form does not take runs on the
// family's baseline). A switch the forced form does not name stays with the rule.
#pragma once

#include <string>

namespace ct3d {

// The places where a rule chooses between forms.
enum class FormSwitch {
  kNone,              // no place (the table's unused settings)
  kCpuDirect,         // the CPU's direct stride-1 correlation
  kCpuScatter,        // the CPU's input-stationary forward (never: the gathering GEMM)
  kWinograd,          // Winograd F(m, r) around the CUDA engine
  kWidthReuse,        // the wgmma width-tap reuse mainloop
  kShiftedWindow,     // the shifted-window GEMM
  kTapRows,           // its tap-rows form
  kTapColumns,        // the tap-rows form's tap-columns variant
  kTapColumnsBoxes,   // ... its window read by TMA boxes from the source
  kTapColumnsLines,   // ... its window read in line tiles
  kTapColumnsFlat,    // ... its window read in flat tiles
  kStridedLines,      // the strided-lines form
  kWgradWgmma,        // the wgmma weight gradient (never: mma.sync)
  kWgradPositions32,  // its float32 stages of 32 positions everywhere (never: 16)
  kSharedStaging,     // the all-gradients call's grad_output staged once for both
  kHalfWindow,        // float16 / bfloat16 shifted-window and tap-rows forms
  kHalfGather,        // float16 / bfloat16 gathering GEMM
  kHalfWgrad,         // float16 / bfloat16 weight gradient on wgmma
  kCount,
};

enum class FormChoice { kNever, kAlways, kRule };

// Form `form`'s choice at `where`, or `otherwise` where it names none.
FormChoice forced_setting(int form, FormSwitch where, FormChoice otherwise);

// The index of a form in the table by its name; raises an error listing the names.
int forced_form_index(const std::string& name);
const char* forced_form_name(int index);

}  // namespace ct3d
