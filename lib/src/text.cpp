// Printable, short renderings of text from files and command lines (see text.h).
#include "splineview/text.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace sv {

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (Unicode 15, table 3-7) and its code point;
// 0 when the bytes there are not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t* cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // nothing beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  std::uint32_t v = c & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
  for (std::size_t k = 1; k < n; ++k) v = (v << 6) | (b(k) & 0x3Fu);
  *cp = v;
  return n;
}

// Code points that a terminal acts on or that reorder or break the line.
bool is_format_control(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 || cp == 0x200E ||
         cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void append_hex(std::string& out, unsigned char c) {
  static const char kDigits[] = "0123456789ABCDEF";
  out += "\\x";
  out += kDigits[c >> 4];
  out += kDigits[c & 0xF];
}

}  // namespace

std::string printable(std::string_view s, std::size_t max_len) {
  if (max_len < 4) max_len = 4;
  std::string out;
  std::size_t cut = 0;  // the longest prefix (at a piece boundary) that leaves room for "..."
  std::string piece;
  for (std::size_t i = 0; i < s.size();) {
    piece.clear();
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F)
        append_hex(piece, c);
      else if (c == '\\')
        piece = "\\\\";
      else
        piece = static_cast<char>(c);
      ++i;
    } else {
      std::uint32_t cp = 0;
      const std::size_t n = utf8_sequence(s, i, &cp);
      if (n == 0) {
        append_hex(piece, c);
        ++i;
      } else {
        for (std::size_t k = 0; k < n; ++k) {
          if (is_format_control(cp))
            append_hex(piece, static_cast<unsigned char>(s[i + k]));
          else
            piece += s[i + k];
        }
        i += n;
      }
    }
    if (out.size() + piece.size() <= max_len - 3) cut = out.size() + piece.size();
    out += piece;
    if (out.size() > max_len) {
      out.resize(cut);
      return out + "...";
    }
  }
  return out;
}

std::string short_number(std::string_view s, std::size_t max_len) {
  if (max_len < 8) max_len = 8;
  if (s.size() <= max_len) return printable(s, max_len);
  // Room for the first characters, "... (" and the length.
  const std::string tail = " (" + std::to_string(s.size()) + " characters)";
  // Each byte escapes to at most 4 characters, so the head is never cut short by printable().
  return printable(s.substr(0, max_len / 2), 2 * max_len) + "..." + tail;
}

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace sv
