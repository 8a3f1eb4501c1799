// Contextual auto-escaping, decided at build time: sets the Escaper of every <%= %> of a
// parsed template from the HTML context its literal text leaves it in (html_state.hpp),
// or refuses the template with the first value that no escaper makes safe, at that
// value's position. Code blocks are opaque except for their braces (code_flow.hpp): the
// branches of an if or switch each start from the context before it, a loop body also
// from the context its end leaves, and a value reached in contexts needing different
// escapers is refused. Partials and the layout's content must stand in element text.
// Raw output (<%== %>) is never refused and is assumed not to change the context.
// A value, partial or yield that no path reaches (after a break, continue or return)
// is refused: it has no context to be judged in.
// A template must also end in element text (every tag, attribute, comment and script
// it opens closed), on every path: it may be rendered into another one, whose next
// value would otherwise be judged in the wrong context. `end` is where it ends.
#pragma once
#include <optional>

#include "kilnc/diagnostic.hpp"
#include "kilnc/template_model.hpp"

namespace kiln::kilnc {

std::optional<Diagnostic> assign_escapers(Template& tpl, Pos end);

}  // namespace kiln::kilnc
