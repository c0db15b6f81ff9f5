// Percent-encoding (RFC 3986, section 2.1) of a value placed in a URL: a path segment such as
// GitLab's "group%2Fproject", or a query parameter's value.
//
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace tr {

// `text` with every byte but the unreserved ones (ALPHA, DIGIT, "-", ".", "_", "~") written as
// %XX, upper-case hex: "a b/c" -> "a%20b%2Fc".
std::string PercentEncode(std::string_view text);

}  // namespace tr
