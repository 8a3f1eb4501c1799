// Everything a kiln application includes.
#pragma once
#include <kiln/app.hpp>
#include <kiln/cookie.hpp>
#include <kiln/csrf.hpp>
#include <kiln/db.hpp>
#include <kiln/escape.hpp>
#include <kiln/files.hpp>
#include <kiln/form.hpp>
#include <kiln/http_types.hpp>
#include <kiln/json.hpp>
#include <kiln/model.hpp>
#include <kiln/request.hpp>
#include <kiln/response.hpp>
#include <kiln/security_headers.hpp>
#include <kiln/server.hpp>
#include <kiln/session.hpp>
#include <kiln/view.hpp>
