// Test models for the compiled test templates (tests/views/app): a post, and a type
// printed through the to_html() extension point of kiln/view.hpp.
#pragma once
#include <kiln/view.hpp>

#include <string>
#include <vector>

namespace test_models {

struct Post {
    std::string title;
    std::string url;
    std::string author;
};

// Prints as escaped text through to_html().
struct Money {
    long cents;
};
inline std::string to_html(const Money& m) {
    return std::to_string(m.cents / 100) + "." + (m.cents % 100 < 10 ? "0" : "") + std::to_string(m.cents % 100) +
           " <EUR>";
}

// Prints as markup through to_html().
struct Badge {
    std::string label;
};
inline kiln::Html to_html(const Badge& b) {
    return kiln::Html::trusted("<b>" + kiln::html_escape(b.label) + "</b>");
}

struct Node {
    std::string name;
    std::vector<Node> children;
};

}  // namespace test_models
