// The blog's one model: a post, its table mapping (kiln::db::Model), its form rules
// and its URLs; and a post as the index lists it, a second mapping of the same
// table without the body, so a page of titles never loads ten bodies. Values only: no I/O here; controllers load and save through
// kiln::db with a connection they own.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <kiln/form_reader.hpp>
#include <kiln/model.hpp>

namespace blog {

struct Post {
    int64_t id = 0;  // 0 until inserted
    std::string title;
    std::string body;
    int64_t created_at = 0;  // unix seconds, UTC
    int64_t updated_at = 0;
    int64_t author_id = 0;    // the kiln::auth::User who wrote it (0: before accounts)
    std::string author_name;  // their name when they wrote it
};

// A post in the index: what a list shows, read without its body.
struct PostListing {
    int64_t id = 0;
    std::string title;
    int64_t created_at = 0;
    std::string author_name;
};

inline constexpr size_t kTitleMaxChars = 200;

// Copies a submitted form into `post` (its id and times stay): the title trimmed,
// required and at most kTitleMaxChars characters (code points, as the table's
// CHECK counts them); the body required, kept as typed. Blank (only whitespace) is
// missing. Returns a message for each field that is wrong.
kiln::FieldErrors assign_from_form(Post& post, const kiln::Form& form);

inline std::string path_of(int64_t id) { return "/posts/" + std::to_string(id); }
inline std::string path_of(const Post& post) { return path_of(post.id); }
inline std::string path_of(const PostListing& post) { return path_of(post.id); }
inline std::string edit_path_of(const Post& post) { return path_of(post) + "/edit"; }

}  // namespace blog

template <>
struct kiln::db::Model<blog::Post> {
    static constexpr auto table = "posts";
    static constexpr auto fields = std::make_tuple(
        field("id", &blog::Post::id), field("title", &blog::Post::title), field("body", &blog::Post::body),
        field("created_at", &blog::Post::created_at), field("updated_at", &blog::Post::updated_at),
        field("author_id", &blog::Post::author_id), field("author_name", &blog::Post::author_name));
};

template <>
struct kiln::db::Model<blog::PostListing> {
    static constexpr auto table = "posts";
    static constexpr auto fields =
        std::make_tuple(field("id", &blog::PostListing::id), field("title", &blog::PostListing::title),
                        field("created_at", &blog::PostListing::created_at),
                        field("author_name", &blog::PostListing::author_name));
};
