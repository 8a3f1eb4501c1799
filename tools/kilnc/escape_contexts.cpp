#include "kilnc/escape_contexts.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "kilnc/code_flow.hpp"
#include "kilnc/html_state.hpp"
#include "kilnc/layout_check.hpp"

namespace kiln::kilnc {
namespace {

// Every context the analysis meets is numbered once (Contexts): the sets it merges and
// compares are sets of small numbers, and what a text or a value does to a context is
// worked out once per node and context, however often a loop or branch comes back to it.
using ContextId = uint32_t;
using States = std::vector<ContextId>;  // the contexts a point of the template may be reached in

class Contexts {
public:
    ContextId id(HtmlState h) {
        auto [it, fresh] = ids_.try_emplace(std::move(h), static_cast<ContextId>(states_.size()));
        if (fresh) states_.push_back(&it->first);
        return it->second;
    }
    const HtmlState& operator[](ContextId id) const { return *states_[id]; }

private:
    std::map<HtmlState, ContextId> ids_;
    std::vector<const HtmlState*> states_;  // by id; a map's keys stay where they are
};

// Limits that keep pathological templates (thousands of nested loops) cheap. Past one,
// the analysis gives up and refuses the template's values: never a guess.
// Work, in all: an event followed costs the square of the states it is followed in (at
// least one), a byte of text an eighth of the states. The largest templates kiln ships
// take under 600; half a megabyte of markup and 20,000 values stay under the bound
// (kilnc_contexts_test). The slowest pathological template the fuzzer has found (nested
// loops, each finding new contexts) gives up in about 5 ms (release build, with its parsing).
constexpr size_t kMaxWork = 1 << 17;
constexpr int kMaxDepth = 200;         // nested blocks followed
constexpr int kMaxLoopRounds = 6;      // passes over a loop body to reach a fixed point
constexpr size_t kMaxStates = 32;      // contexts one point may be reached in (templates: 1 to 3)
constexpr const char* kGaveUp = "kilnc gave up following the HTML context through this template (too many nested "
                                "blocks or loops, or contexts too large to follow): split it into partials";

void add(States& s, ContextId h) {
    if (std::find(s.begin(), s.end(), h) == s.end()) s.push_back(h);
}

States merged(States a, const States& b) {
    for (ContextId h : b) add(a, h);
    return a;
}

// One escaper safe in both contexts, if there is one: attribute escaping is also right in
// text (it refuses only markup values), percent-encoding anywhere in a URL.
std::optional<Escaper> join(Escaper a, Escaper b) {
    if (a == b) return a;
    auto either = [&](Escaper x, Escaper y) { return (a == x && b == y) || (a == y && b == x); };
    if (either(Escaper::Text, Escaper::Attr)) return Escaper::Attr;
    if (either(Escaper::Url, Escaper::UrlPart)) return Escaper::UrlPart;
    return std::nullopt;
}

const char* describe(Escaper e) {
    switch (e) {
        case Escaper::Text: return "element text";
        case Escaper::Attr: return "an attribute value";
        case Escaper::Url: return "the start of a URL";
        case Escaper::UrlPart: return "the middle of a URL";
        case Escaper::Js: return "a script";
        case Escaper::JsAttr: return "an event handler";
    }
    return "?";
}

struct Event {
    enum Kind : uint8_t {
        Text, Value, Markup, Open, Close, Case, Break, Continue, Return, MaybeBreak, MaybeContinue, MaybeReturn
    } kind;
    Block block;
    size_t node;
};

// What the analysis concluded for one node.
struct Outcome {
    bool judged = false;
    Escaper escaper = Escaper::Text;
    std::string error;
};

class Analysis {
public:
    explicit Analysis(Template& tpl) : tpl_(tpl), outcome_(tpl.body.size()) {
        for (size_t n = 0; n < tpl.body.size(); ++n) {
            const Node& node = tpl.body[n];
            switch (node.kind) {
                case NodeKind::Text: events_.push_back({Event::Text, Block::Plain, n}); break;
                case NodeKind::Output:
                    events_.push_back({is_content_expression(node.code.code) ? Event::Markup : Event::Value,
                                       Block::Plain, n});
                    break;
                case NodeKind::Render:
                case NodeKind::Yield: events_.push_back({Event::Markup, Block::Plain, n}); break;
                case NodeKind::RawOutput:  // printed as is, unjudged; but a layout's page is judged as yield is
                    if (is_content_expression(node.code.code)) events_.push_back({Event::Markup, Block::Plain, n});
                    break;
                case NodeKind::Code:
                    for (const FlowEvent& f : scan_code_flow(node.code.code)) {
                        if (f.kind == FlowKind::Refused) {
                            if (!refused_) refused_ = Diagnostic{node.pos, f.why};
                            continue;
                        }
                        static constexpr Event::Kind kKinds[] = {
                            Event::Open,   Event::Close,      Event::Case,          Event::Break,
                            Event::Continue, Event::Return, Event::MaybeBreak, Event::MaybeContinue,
                            Event::MaybeReturn};
                        events_.push_back({kKinds[static_cast<int>(f.kind)], f.block, n});
                    }
                    break;
            }
        }
        next_case_.assign(events_.size() + 1, events_.size());
        for (size_t i = events_.size(); i-- > 0;)
            next_case_[i] = events_[i].kind == Event::Case ? i : next_case_[i + 1];
        match_.assign(events_.size(), events_.size());  // an unclosed block runs to the end
        std::vector<size_t> open;
        for (size_t i = 0; i < events_.size(); ++i) {
            if (events_[i].kind == Event::Open) {
                open.push_back(i);
            } else if (events_[i].kind == Event::Close && !open.empty()) {
                match_[open.back()] = i;
                open.pop_back();
            }
        }
    }

    std::optional<Diagnostic> run(Pos end) {
        if (refused_) return refused_;
        const States last = merged(run(0, events_.size(), States{contexts_.id(HtmlState{})}, Frame{}, 0), returns_);
        for (size_t n = 0; n < tpl_.body.size(); ++n) {
            Node& node = tpl_.body[n];
            const bool raw_page = node.kind == NodeKind::RawOutput && is_content_expression(node.code.code);
            if (node.kind != NodeKind::Output && node.kind != NodeKind::Render && node.kind != NodeKind::Yield &&
                !raw_page)
                continue;
            Outcome& o = outcome_[n];
            if (!o.error.empty()) return Diagnostic{node.pos, o.error};
            if (gave_up_)  // not judged in every context it may be reached in
                return Diagnostic{node.pos, kGaveUp};
            if (!o.judged)
                return Diagnostic{node.pos, "no path through the code blocks reaches this (it follows a break, "
                                            "continue or return): remove it"};
            node.escaper = o.escaper;
        }
        // Rendered into another template (a partial, or a page into its layout), one
        // that ended in a script or an attribute would put the next value there, while
        // kilnc judges it in element text.
        if (gave_up_)
            return Diagnostic{end, kGaveUp};
        for (ContextId h : last)
            if (std::string err = contexts_[h].end_error(); !err.empty()) return Diagnostic{end, err};
        return std::nullopt;
    }

private:
    void refuse(size_t node, std::string message) {
        if (outcome_[node].error.empty()) outcome_[node].error = std::move(message);
    }

    void judge_value(size_t node, const States& states) {
        Outcome& o = outcome_[node];
        for (ContextId h : states) {
            const Verdict& v = verdict(h);
            if (!v.error.empty()) {
                refuse(node, v.error);
            } else if (!o.judged) {
                o.judged = true;
                o.escaper = v.escaper;
            } else if (auto j = join(o.escaper, v.escaper)) {
                o.escaper = *j;
            } else {
                refuse(node, std::string("this value stands in ") + describe(o.escaper) + " or in " +
                                 describe(v.escaper) + ", depending on which branch of the code above runs: open "
                                 "and close each tag and attribute within one branch");
            }
        }
    }

    void judge_markup(size_t node, const States& states) {
        const Node& n = tpl_.body[node];
        if (states.empty()) return;  // not reached: judged nowhere, like a value
        std::string what = n.kind == NodeKind::Render ? "the partial '" + n.ref.path + "'"
                           : n.kind == NodeKind::Yield     ? std::string("<%@ yield %> (the page)")
                           : n.kind == NodeKind::RawOutput ? std::string("the page (<%== content %>)")
                                                           : std::string("the page (<%= content %>)");
        outcome_[node].judged = true;
        for (ContextId h : states)
            if (std::string err = contexts_[h].markup_error(what); !err.empty()) refuse(node, std::move(err));
    }

    const Verdict& verdict(ContextId h) {
        if (h >= verdicts_.size()) verdicts_.resize(h + 1);  // (a deque: the references given out stay)
        if (!verdicts_[h]) verdicts_[h] = contexts_[h].value();
        return *verdicts_[h];
    }

    // Takes each of `s` past event i (a text or a value), in place: the context after it
    // is `step` applied to a copy the first time, remembered after that.
    template <class Step>
    void advance(size_t i, States& s, Step&& step) {
        size_t kept = 0;
        for (ContextId h : s) {  // writes s[kept], kept <= the index read
            const StepKey key{i, h};
            auto it = after_.find(key);
            if (it == after_.end()) {
                HtmlState c = contexts_[h];
                step(c);
                work_ += c.bytes() / 8;  // a new context is kept: its bytes count like text's
                it = after_.emplace(key, contexts_.id(std::move(c))).first;
            }
            if (std::find(s.begin(), s.begin() + kept, it->second) == s.begin() + kept) s[kept++] = it->second;
        }
        s.resize(kept);
    }

    // Where jumps go: the states at the top of the enclosing switch (its case labels
    // enter there), and the sets that `break` and `continue` add their states to.
    struct Frame {
        const States* cases = nullptr;
        States* breaks = nullptr;
        States* continues = nullptr;
    };

    // Follows events [i, end) from `s`; returns the states at `end` (none after a jump).
    States run(size_t i, size_t end, States s, const Frame& f, int depth) {
        if (depth > kMaxDepth) gave_up_ = true;
        while (i < end && !gave_up_) {
            if (s.empty() && next_case_[i] >= end) break;  // nothing from here on is reached
            const Event& e = events_[i];
            work_ += std::max<size_t>(s.size() * s.size(), 1);
            if (work_ > kMaxWork || s.size() > kMaxStates) gave_up_ = true;
            switch (e.kind) {
                case Event::Text: {
                    const std::string& text = tpl_.body[e.node].text;
                    work_ += text.size() * s.size() / 8;
                    if (work_ > kMaxWork) gave_up_ = true;
                    advance(i, s, [&](HtmlState& c) {
                        std::vector<LateError> late;
                        c.feed(text, late);
                        for (LateError& l : late) refuse(l.value, std::move(l.message));
                    });
                    break;
                }
                case Event::Value: {
                    judge_value(e.node, s);
                    advance(i, s, [&](HtmlState& c) { c.after_value(e.node); });
                    break;
                }
                case Event::Markup: judge_markup(e.node, s); break;
                case Event::Case:
                    if (f.cases) s = merged(std::move(s), *f.cases);
                    break;
                case Event::Break:
                case Event::Continue:
                    if (States* to = e.kind == Event::Break ? f.breaks : f.continues) {
                        *to = merged(std::move(*to), s);
                        s.clear();  // nothing runs after the jump, up to the next label
                    }
                    break;
                case Event::MaybeBreak:
                case Event::MaybeContinue:  // the states go on, and may also jump
                    if (States* to = e.kind == Event::MaybeBreak ? f.breaks : f.continues) *to = merged(std::move(*to), s);
                    break;
                case Event::Return:  // the template ends here: its end must be element text too
                case Event::MaybeReturn:
                    returns_ = merged(std::move(returns_), s);
                    if (e.kind == Event::Return) s.clear();
                    break;
                case Event::Close: break;  // one without its '{': nothing to follow
                case Event::Open: i = block(i, end, s, f, depth + 1); continue;
            }
            ++i;
        }
        return s;
    }

    // The block opened at event i (and, for an if, its else branches); updates `s` to
    // the states after it and returns the next event.
    size_t block(size_t i, size_t end, States& s, const Frame& f, int depth) {
        const size_t close = std::min(match_[i], end);
        const size_t next = close < end ? close + 1 : end;
        switch (events_[i].block) {
            case Block::Plain: s = run(i + 1, close, std::move(s), f, depth); return next;
            case Block::Switch: {
                const States top = s;
                States breaks;
                States out = run(i + 1, close, s, {&top, &breaks, f.continues}, depth);
                s = merged(merged(std::move(out), breaks), top);  // or no label matched
                return next;
            }
            case Block::Loop: {
                // The body is entered from where the template reaches the loop, from where
                // its end leaves off and from each `continue`, until no new context
                // appears; the loop ends there or at a `break`. Contexts never interact,
                // so each pass follows only the contexts the previous one found new.
                States in = s, fresh = s, breaks;
                for (int round = 0; !fresh.empty(); ++round) {
                    if (round == kMaxLoopRounds) fresh = {contexts_.id(HtmlState::lost())};  // its values are refused
                    States continues;
                    States out = merged(run(i + 1, close, fresh, {f.cases, &breaks, &continues}, depth), continues);
                    fresh.clear();
                    for (ContextId h : out)
                        if (std::find(in.begin(), in.end(), h) == in.end()) add(fresh, h), in.push_back(h);
                    if (round == kMaxLoopRounds) break;
                }
                s = merged(std::move(in), breaks);
                return next;
            }
            case Block::If:
            case Block::ElseIf:
            case Block::Else: {
                const States top = s;
                States ends = run(i + 1, close, top, f, depth);
                size_t k = next;
                bool last_else = false;
                while (!last_else && k < end && events_[k].kind == Event::Open &&
                       (events_[k].block == Block::ElseIf || events_[k].block == Block::Else)) {
                    const size_t c = std::min(match_[k], end);
                    ends = merged(std::move(ends), run(k + 1, c, top, f, depth));
                    last_else = events_[k].block == Block::Else;
                    k = c < end ? c + 1 : end;
                }
                // Or no branch ran: unless an else ends a chain that began with its if
                // (an else whose if kilnc did not see may follow a branch it missed).
                const bool whole = last_else && events_[i].block == Block::If;
                s = whole ? std::move(ends) : merged(std::move(ends), top);
                return k;
            }
        }
        return next;
    }

    Template& tpl_;
    Contexts contexts_;
    std::deque<std::optional<Verdict>> verdicts_;  // by context
    struct StepKey {
        size_t event;
        ContextId context;
        bool operator==(const StepKey&) const = default;
    };
    struct StepHash {
        size_t operator()(const StepKey& k) const { return k.event * 0x9e3779b97f4a7c15u ^ k.context; }
    };
    std::unordered_map<StepKey, ContextId, StepHash> after_;  // the context after an event, from one before it
    std::vector<Event> events_;
    std::vector<size_t> match_;  // Open event -> its Close event
    std::vector<size_t> next_case_;  // event -> the first case label at or after it (a way back in after a jump)
    std::vector<Outcome> outcome_;
    States returns_;  // where a `return` may end the template
    std::optional<Diagnostic> refused_;  // a code block kilnc cannot follow
    size_t work_ = 0;
    bool gave_up_ = false;
};

}  // namespace

std::optional<Diagnostic> assign_escapers(Template& tpl, Pos end) { return Analysis(tpl).run(end); }

}  // namespace kiln::kilnc
