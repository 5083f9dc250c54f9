// Error type used at every API boundary of the core: carries a human sentence that names the
// input and the problem. Libraries throw; only executables decide how to exit.
#pragma once

#include <stdexcept>
#include <string>

namespace sv {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace sv
