// Names the generators derive from what the user typed: "post" (or "Post",
// "blog_post", "BlogPost", "blog-post") becomes the snake_case singular, its plural,
// the C++ class name, the controller file stem and the URL. Pure functions over
// ASCII; English plurals by the usual suffix rules plus a few irregular words.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kiln::gen {

// True for a C++ identifier [A-Za-z_][A-Za-z0-9_]* that is not a keyword.
bool is_identifier(std::string_view s);
bool is_cpp_keyword(std::string_view s);

// "BlogPost", "blog-post", "blog_post" -> "blog_post". nullopt unless the result is
// [a-z][a-z0-9]*(_[a-z0-9]+)* (no empty words, no leading digit).
std::optional<std::string> to_snake(std::string_view name);
// "blog_post" -> "BlogPost".
std::string camelize(std::string_view snake);
// "blog_post" -> "Blog post" (labels and headings).
std::string humanize(std::string_view snake);
// Plural and singular of the last word of a snake_case name: post -> posts,
// category -> categories, box -> boxes, person -> people; singularize inverts them.
std::string pluralize(std::string_view snake);
std::string singularize(std::string_view snake);

struct Names {
    std::string singular;    // post: variables, model header models/post.hpp
    std::string plural;      // posts: table, views/posts/, URL /posts
    std::string class_name;  // Post
    std::string human;       // "Post"
    std::string human_plural;// "Posts"
    std::string controller;  // posts_controller: controllers/posts_controller.{hpp,cpp}
    std::string url;         // /posts
};

// Names of a resource from its singular name as typed; an error message (naming the
// input) if it is not a usable name: not an identifier, a C++ keyword, or a name the
// generated code itself uses (app, kiln, std, views, ...).
struct NamesResult {
    std::optional<Names> names;
    std::string error;
};
NamesResult resource_names(std::string_view typed);
// Names of a controller (`kiln generate controller pages home`): the name as typed is
// the plural (pages -> /pages, views/pages/); singular is derived.
NamesResult controller_names(std::string_view typed);

}  // namespace kiln::gen
