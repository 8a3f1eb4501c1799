#include "kilnc/lexer.hpp"

namespace kiln::kilnc {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

class Lexer {
public:
    explicit Lexer(std::string_view src) : src_(src) {}

    LexResult run() {
        while (i_ < src_.size()) {
            if (starts_with("<%%")) {
                start_text();
                text_ += "<%";
                advance(3);
            } else if (starts_with("<%")) {
                if (!tag()) return std::move(result_);
            } else {
                start_text();
                text_ += src_[i_];
                advance(1);
            }
        }
        flush_text();
        return std::move(result_);
    }

private:
    bool starts_with(std::string_view s) const { return src_.substr(i_, s.size()) == s; }

    void advance(size_t n) {
        for (; n > 0 && i_ < src_.size(); --n, ++i_) {
            if (src_[i_] == '\n') {
                ++pos_.line;
                pos_.col = 1;
                line_start_ = i_ + 1;
            } else {
                ++pos_.col;
            }
        }
    }

    void start_text() {
        if (text_.empty()) text_pos_ = pos_;
    }

    void flush_text() {
        if (text_.empty()) return;
        result_.tokens.push_back(Token{TokenKind::Text, std::move(text_), text_pos_, {}, {}});
        text_.clear();
    }

    // At "<%": reads one tag; false (with result_.error set) if it is not closed.
    bool tag() {
        const size_t start = i_, line_start = line_start_;
        const Pos start_pos = pos_;
        TokenKind kind = TokenKind::Code;
        size_t marker = 2;
        if (starts_with("<%==")) kind = TokenKind::RawOutput, marker = 4;
        else if (starts_with("<%=")) kind = TokenKind::Output, marker = 3;
        else if (starts_with("<%#")) kind = TokenKind::Comment, marker = 3;
        else if (starts_with("<%@")) kind = TokenKind::Directive, marker = 3;
        advance(marker);
        Token t{kind, {}, start_pos, pos_, indent_for(src_.substr(line_start, i_ - line_start))};
        while (true) {
            if (i_ >= src_.size()) {
                result_.error = Diagnostic{start_pos, "unclosed '<%' tag: no '%>' before the end of the file"};
                return false;
            }
            if (starts_with("%%>")) {
                t.text += "%>";
                advance(3);
            } else if (starts_with("%>")) {
                advance(2);
                break;
            } else {
                t.text += src_[i_];
                advance(1);
            }
        }
        if (kind == TokenKind::Code || kind == TokenKind::Comment || kind == TokenKind::Directive)
            trim_line(line_start, start);
        flush_text();
        result_.tokens.push_back(std::move(t));
        return true;
    }

    // Just after a non-output tag whose line starts at `line_start` and the tag at
    // `tag_start`: if only blanks stand before the tag on its line and after it up to
    // the line break, drops them and the line break.
    void trim_line(size_t line_start, size_t tag_start) {
        for (size_t k = line_start; k < tag_start; ++k)
            if (!is_blank(src_[k])) return;
        // No tag stands between the line start and this one, so those blanks are the
        // tail of the pending text.
        const size_t indent_len = tag_start - line_start;
        if (text_.size() < indent_len) return;
        size_t j = i_;
        while (j < src_.size() && is_blank(src_[j])) ++j;
        size_t eol = 0;
        if (j == src_.size()) eol = 0;
        else if (src_[j] == '\n') eol = 1;
        else if (src_[j] == '\r' && j + 1 < src_.size() && src_[j + 1] == '\n') eol = 2;
        else return;
        text_.resize(text_.size() - indent_len);
        advance(j - i_ + eol);
    }

    std::string_view src_;
    size_t i_ = 0;
    size_t line_start_ = 0;
    Pos pos_;
    std::string text_;
    Pos text_pos_;
    LexResult result_;
};

}  // namespace

LexResult lex(std::string_view source) { return Lexer(source).run(); }

std::string indent_for(std::string_view line_prefix) {
    std::string out;
    // Every tag of a line reads its prefix: at most the bytes kMaxIndent characters of
    // UTF-8 take, so a long line of tags (or of continuation bytes, which add nothing)
    // costs no more per tag.
    for (char c : line_prefix.substr(0, 4 * kMaxIndent)) {
        if (out.size() == kMaxIndent) break;
        auto b = static_cast<unsigned char>(c);
        if (c == '\t') out += '\t';
        else if ((b & 0xC0) != 0x80) out += ' ';  // not a UTF-8 continuation byte
    }
    return out;
}

}  // namespace kiln::kilnc
