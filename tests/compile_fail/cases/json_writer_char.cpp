// expect: error use of deleted function.*value\(char\)
// A char is text or a number only its writer knows; JsonWriter wrote it as true.
#include <string>

#include <kiln/json_writer.hpp>

void write(std::string& out, char grade) { kiln::JsonWriter(out).value(grade); }
