// Everything a kiln application includes.
#pragma once
#include <kiln/app.hpp>
#include <kiln/escape.hpp>
#include <kiln/http_types.hpp>
#include <kiln/request.hpp>
#include <kiln/response.hpp>
#include <kiln/server.hpp>
