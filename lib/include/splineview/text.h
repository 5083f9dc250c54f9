// Text from files and command lines made fit for a one-line message on a terminal. Every loader
// quotes what it read (a NRRD type, a .npy descr, a raw spec, a data file name) through these,
// so a file cannot move the cursor, set the window title, split a message over lines or fill the
// screen with 300 digits.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sv {

// `s` with every byte that a terminal could act on written as "\xNN" (two upper-case hex
// digits): bytes below 0x20 (so also \n, \r, \t, \v and ESC), DEL (0x7f), bytes that are not
// part of well-formed UTF-8 (stray continuation bytes, overlong forms, surrogates, beyond
// U+10FFFF, cut-off sequences), the C1 controls U+0080..U+009F and the Unicode line separators
// and bidirectional controls (U+2028, U+2029, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069),
// whose UTF-8 bytes are each escaped. A backslash is written "\\" so that the escapes cannot be
// forged. Well-formed printable UTF-8 passes through. When the result would be longer than
// `max_len` bytes (at least 4 are used), it is cut at a character or escape boundary and ends
// in "..." (the "..." included in `max_len`).
std::string printable(std::string_view s, std::size_t max_len = 80);

// A number (or anything else) as a user or a file wrote it, for echoing in a message: up to
// `max_len` (at least 8) characters it is printable(s); a longer text is shown as its first
// characters and its length, e.g. "123456789012... (300 characters)", never in full.
std::string short_number(std::string_view s, std::size_t max_len = 24);

// A double for a message: "%.6g" ("1e+308", "0.5", "-3"), "nan", "inf" or "-inf".
std::string format_number(double v);

}  // namespace sv
