// Passwords in memory: every copy kiln makes of one is overwritten before its memory
// is freed, whichever way the code holding it ends (a return, a throw, a refusal
// before any hash). A string of up to 15 bytes keeps them inside the object
// (libstdc++'s small-string optimisation), and moving it copies them, leaving them in
// the object moved from: so kiln's copies are made with secret_copy, whose bytes are
// on the heap, and a move hands the buffer over. (What the app passes in, and the
// request's form it came from, are the app's.)
#pragma once
#include <sodium.h>

#include <algorithm>
#include <string>
#include <string_view>

namespace kiln::auth {

// A copy of `text` with its bytes on the heap, however short it is.
inline std::string secret_copy(std::string_view text) {
    std::string out;
    out.reserve(std::max<size_t>(text.size(), 16));  // past the 15 bytes kept inline
    out.assign(text);
    return out;
}

// Overwrites `text` (a parameter's copy, a local) when the scope ends.
class WipeOnExit {
public:
    explicit WipeOnExit(std::string& text) : text_(text) {}
    WipeOnExit(const WipeOnExit&) = delete;
    WipeOnExit& operator=(const WipeOnExit&) = delete;
    ~WipeOnExit() { sodium_memzero(text_.data(), text_.size()); }

private:
    std::string& text_;
};

// A copy of a password that owns itself, wiped when it goes.
struct WipedText {
    std::string text;
    WipedText() = default;
    WipedText(const WipedText&) = delete;
    WipedText& operator=(const WipedText&) = delete;
    ~WipedText() { sodium_memzero(text.data(), text.size()); }
};

}  // namespace kiln::auth
