#include "models/post.hpp"

namespace blog {
namespace {

bool blank(std::string_view s) {
    return s.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos;
}

size_t utf8_chars(std::string_view s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // count every byte but continuation bytes
    return n;
}

}  // namespace

PostErrors validate(const Post& post) {
    PostErrors e;
    if (blank(post.title))
        e.title = "Title can't be blank";
    else if (utf8_chars(post.title) > kTitleMaxChars)
        e.title = "Title is too long (at most " + std::to_string(kTitleMaxChars) + " characters)";
    if (blank(post.body)) e.body = "Body can't be blank";
    return e;
}

}  // namespace blog
