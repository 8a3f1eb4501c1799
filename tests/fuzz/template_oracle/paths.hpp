// The template oracle's own reading of a template's code blocks (kilnc's is
// tools/kilnc/code_flow.cpp, which this must not share): a small grammar of C++
// statements whose control flow is certain (`if (c) {`, `} else if (c) {`, `} else {`,
// `for (...) {`, `while (c) {`, `switch (k) {`, `case 1:`, `default:`, `break;`,
// `continue;`, `return;`, `if (c) break;`, a plain `n++;` or `auto s = "}";`, `{`, `}`),
// and random runs through it. A template whose code falls outside the grammar has no
// paths: the oracle says nothing about it.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "kilnc/template_model.hpp"

namespace kiln::oracle {

class TemplatePaths {
public:
    TemplatePaths();
    ~TemplatePaths();
    TemplatePaths(TemplatePaths&&) noexcept;
    TemplatePaths& operator=(TemplatePaths&&) noexcept;
    // nullopt: a code block outside the grammar, or braces that do not pair up.
    static std::optional<TemplatePaths> read(const kilnc::Template& tpl);
    // One run a compiled template could take (every choice from `seed`): the indices
    // of the body nodes it prints, in order (Text, Output, RawOutput, Render, Yield).
    // nullopt when the run would print more than `max_nodes` of them, or take more than
    // 64 times as many statements.
    std::optional<std::vector<size_t>> run(uint64_t seed, size_t max_nodes) const;

    struct Stmt;
    using Seq = std::vector<Stmt>;

private:
    std::vector<Stmt> body_;
};

}  // namespace kiln::oracle
