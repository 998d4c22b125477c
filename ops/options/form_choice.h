// What the places that choose between kernel forms ask: the choice the forced forms
// (option force_form, forced_form.h) make there, in the order given, or the rule's.
#pragma once

#include "ops/options/forced_form.h"

namespace ct3d {

// kRule where no forced form names `where`; Winograd also kNever where the user's
// option winograd is off and no forced form names it.
FormChoice form_choice(FormSwitch where);

}  // namespace ct3d
