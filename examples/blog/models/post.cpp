#include "models/post.hpp"

#include <utility>

namespace blog {

kiln::FieldErrors assign_from_form(Post& post, const kiln::Form& form) {
    kiln::FormReader in(form);
    in.text("title", post.title, {.max_chars = kTitleMaxChars});
    in.text("body", post.body, {.trim = false});
    return std::move(in).errors();
}

}  // namespace blog
