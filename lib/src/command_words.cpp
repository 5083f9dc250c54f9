#include "splineview/command_words.h"

#include <cstring>

namespace sv {

namespace {

std::string column(std::size_t i) {
  return "column " + std::to_string(i + 1);
}

// Characters a shell gives a meaning of its own outside quotes.
bool is_operator(char c) {
  return c != '\0' && std::strchr(";|&<>()`$", c) != nullptr;
}

std::string shown_char(char c) {
  return std::string("'") + c + "'";
}

}  // namespace

std::string split_command_words(std::string_view line, std::vector<std::string>& words) {
  words.clear();
  std::string word;
  bool in_word = false;  // a word has started (it may still be empty: '')
  const std::size_t n = line.size();
  std::size_t i = 0;
  while (i < n) {
    const char c = line[i];
    if (c == '\0') return "a NUL byte at " + column(i);
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      ++i;
      continue;
    }
    if (c == '#' && !in_word) break;  // a comment to the end of the line
    in_word = true;
    if (c == '\\') {
      if (i + 1 >= n)
        return "a backslash at the end of the line (a command cannot continue on the next "
               "line)";
      if (line[i + 1] == '\0') return "a NUL byte at " + column(i + 1);
      word += line[i + 1];
      i += 2;
      continue;
    }
    if (c == '\'') {
      const std::size_t close = line.find('\'', i + 1);
      if (close == std::string_view::npos)
        return "unterminated single quote (opened at " + column(i) + ")";
      const std::string_view inner = line.substr(i + 1, close - i - 1);
      if (inner.find('\0') != std::string_view::npos)
        return "a NUL byte at " + column(i + 1 + inner.find('\0'));
      word.append(inner);
      i = close + 1;
      continue;
    }
    if (c == '"') {
      const std::size_t open = i++;
      bool closed = false;
      while (i < n) {
        const char d = line[i];
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\0') return "a NUL byte at " + column(i);
        if (d == '\\' && i + 1 < n && std::strchr("\"\\$`", line[i + 1]) != nullptr &&
            line[i + 1] != '\0') {
          word += line[i + 1];
          i += 2;
          continue;
        }
        if (d == '$' || d == '`')
          return shown_char(d) + " inside double quotes at " + column(i) +
                 " (batch lines have no substitutions; write \\" + d + " or use single quotes)";
        word += d;
        ++i;
      }
      if (!closed) return "unterminated double quote (opened at " + column(open) + ")";
      continue;
    }
    if (is_operator(c))
      return "unquoted " + shown_char(c) + " at " + column(i) +
             " (a batch line is one simple command: no pipes, redirections, lists, "
             "substitutions or variables; quote it or write \\" +
             c + " to pass it as text)";
    word += c;
    ++i;
  }
  if (in_word) words.push_back(std::move(word));
  return {};
}

}  // namespace sv
