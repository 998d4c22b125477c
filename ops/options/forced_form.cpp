#include "ops/options/forced_form.h"

#include <string>

#include "ops/common/error_message.h"

namespace ct3d {
namespace {

struct Setting {
  FormSwitch where;
  FormChoice choice;
};

constexpr int kMaxSettings = 10;

struct ForcedForm {
  const char* name;
  Setting settings[kMaxSettings];
};

using S = FormSwitch;
constexpr FormChoice kOn = FormChoice::kAlways, kOff = FormChoice::kNever;

// The CUDA forward's forms off but the one named: the gathering GEMM, the family's
// baseline, takes what the named form does not.
#define CT3D_OTHER_FORWARD_FORMS_OFF                                                              \
  {S::kWinograd, kOff}, {S::kStridedLines, kOff}, {S::kShiftedWindow, kOff}, {S::kTapRows, kOff}, \
  {                                                                                               \
    S::kWidthReuse, kOff                                                                          \
  }
#define CT3D_TAP_COLUMNS_ON \
  CT3D_OTHER_FORWARD_FORMS_OFF, {S::kTapRows, kOn}, { S::kTapColumns, kOn }

// A setting named twice counts at its last place (the tap forms turn the tap rows back on).
constexpr ForcedForm kForms[] = {
    {"cpu-direct", {{S::kCpuDirect, kOn}}},
    {"cpu-gather", {{S::kCpuDirect, kOff}, {S::kCpuScatter, kOff}}},
    {"cpu-scatter", {{S::kCpuDirect, kOff}, {S::kCpuScatter, kOn}}},
    {"gather", {CT3D_OTHER_FORWARD_FORMS_OFF}},
    {"width-reuse", {CT3D_OTHER_FORWARD_FORMS_OFF, {S::kWidthReuse, kOn}}},
    {"shifted-window", {CT3D_OTHER_FORWARD_FORMS_OFF, {S::kShiftedWindow, kOn}}},
    {"tap-rows", {CT3D_OTHER_FORWARD_FORMS_OFF, {S::kTapRows, kOn}, {S::kTapColumns, kOff}}},
    {"tap-columns", {CT3D_TAP_COLUMNS_ON}},
    // The window's reads: from the staged planes, or by TMA from the source in window
    // boxes, line tiles, flat tiles.
    {"tap-columns-staged", {CT3D_TAP_COLUMNS_ON, {S::kTapColumnsBoxes, kOff}}},
    {"tap-columns-boxes",
     {CT3D_TAP_COLUMNS_ON,
      {S::kTapColumnsBoxes, kOn},
      {S::kTapColumnsLines, kOff},
      {S::kTapColumnsFlat, kOff}}},
    {"tap-columns-lines",
     {CT3D_TAP_COLUMNS_ON,
      {S::kTapColumnsBoxes, kOn},
      {S::kTapColumnsLines, kOn},
      {S::kTapColumnsFlat, kOff}}},
    {"tap-columns-flat",
     {CT3D_TAP_COLUMNS_ON,
      {S::kTapColumnsBoxes, kOn},
      {S::kTapColumnsLines, kOff},
      {S::kTapColumnsFlat, kOn}}},
    {"strided-lines", {CT3D_OTHER_FORWARD_FORMS_OFF, {S::kStridedLines, kOn}}},
    {"winograd", {{S::kWinograd, kOn}}},
    {"wgrad-mma-sync", {{S::kWgradWgmma, kOff}}},
    {"wgrad-wgmma", {{S::kWgradWgmma, kOn}}},
    {"wgrad-wgmma-16", {{S::kWgradWgmma, kOn}, {S::kWgradPositions32, kOff}}},
    {"wgrad-wgmma-32", {{S::kWgradWgmma, kOn}, {S::kWgradPositions32, kOn}}},
    {"shared-staging", {{S::kSharedStaging, kOn}}},
    {"unshared-staging", {{S::kSharedStaging, kOff}}},
    {"half-gather", {{S::kHalfWindow, kOff}}},
    {"half-wgrad", {{S::kHalfWgrad, kOn}}},
    {"half-widened", {{S::kHalfWindow, kOff}, {S::kHalfGather, kOff}, {S::kHalfWgrad, kOff}}},
    // One form off, the rules choosing among the rest: what the planner takes next where
    // the form is chosen (bench/forms_table.py times each form against it).
    {"no-winograd", {{S::kWinograd, kOff}}},
    {"no-strided-lines", {{S::kStridedLines, kOff}}},
    {"no-shifted-window", {{S::kShiftedWindow, kOff}}},
    {"no-tap-columns", {{S::kTapColumns, kOff}}},
    {"no-tap-rows", {{S::kTapRows, kOff}}},
    {"no-width-reuse", {{S::kWidthReuse, kOff}}},
    {"no-half-gather", {{S::kHalfGather, kOff}}},
};

#undef CT3D_TAP_COLUMNS_ON
#undef CT3D_OTHER_FORWARD_FORMS_OFF

constexpr int kFormCount = static_cast<int>(sizeof(kForms) / sizeof(kForms[0]));

}  // namespace

FormChoice forced_setting(int form, FormSwitch where, FormChoice otherwise) {
  TORCH_INTERNAL_ASSERT(form >= 0 && form < kFormCount);
  // Settings past a form's last are {kNone, kNever}: they name no place.
  FormChoice choice = otherwise;
  for (const Setting& setting : kForms[form].settings) {
    if (setting.where == where) choice = setting.choice;
  }
  return choice;
}

int forced_form_index(const std::string& name) {
  std::string names;
  for (int i = 0; i < kFormCount; ++i) {
    if (name == kForms[i].name) return i;
    if (i > 0) names += ", ";
    names += kForms[i].name;
  }
  TORCH_CHECK(false, detail::message("ct3d option force_form (CT3D_FORCE_FORM): no form named '",
                                     name, "'; the forms are ", names));
}

const char* forced_form_name(int index) {
  TORCH_INTERNAL_ASSERT(index >= 0 && index < kFormCount);
  return kForms[index].name;
}

}  // namespace ct3d
