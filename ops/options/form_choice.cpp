#include "ops/options/form_choice.h"

#include "ops/options/options.h"

namespace ct3d {

FormChoice form_choice(FormSwitch where) {
  const Options& o = options();
  FormChoice choice = FormChoice::kRule;
  for (int i = 0; i < o.forced_count; ++i) {
    choice = forced_setting(o.forced_forms[i], where, choice);
  }
  if (where == FormSwitch::kWinograd && choice == FormChoice::kRule &&
      o.winograd == WinogradUse::kOff) {
    return FormChoice::kNever;
  }
  return choice;
}

}  // namespace ct3d
