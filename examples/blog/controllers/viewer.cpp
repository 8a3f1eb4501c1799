#include "controllers/viewer.hpp"

namespace blog {

kiln::Task<Viewer> viewer_of(kiln::auth::Accounts& accounts, kiln::Request& req) {
    Viewer v;
    v.user = co_await accounts.current_user(req);
    if (v.user) {
        v.name = v.user->name;
        v.token = kiln::csrf_token(req);
    }
    co_return v;
}

}  // namespace blog
