// Passwords in memory: every copy kiln makes of one is overwritten before its memory
// is freed, whichever way the code holding it ends (a return, a throw, a refusal
// before any hash). Copies are never moved from: a short string's bytes stay in the
// buffer it was moved from (the small-string optimisation copies them).
#pragma once
#include <sodium.h>

#include <string>

namespace kiln::auth {

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
